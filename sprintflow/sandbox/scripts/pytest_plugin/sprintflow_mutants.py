"""A pytest plugin that judges many mutants in one pytest process: collect once, fork per mutant.

Loaded only by the mutation runner (``mutate_python.py``), through ``PYTEST_PLUGINS``, into the
project's own test command; it imports nothing of sprintflow. With ``SPRINTFLOW_MUTANTS`` naming
the runner's job it replaces pytest's run loop:

0. the files tests were collected from are written to the job's ``collected``, and the mutants the
   runner then chose (of the other changed files) are read from its ``mutants``;
1. *clean* children (forks of the collected session, one per core, the tests dealt out among them in
   turn; all in one child again when a part fails) run every collected test on the unmutated code,
   recording which functions of the changed files each test calls, in its own thread and in any it
   starts; unless all pass, no mutant is judged here (the runner then runs the test command per
   mutant instead);
2. per mutant, the mutated file is written (for any process the tests start), and a child patches
   the code objects of the functions the mutant changed into the functions already in memory, then
   runs the tests that called them until one fails: killed. Past its deadline the child is killed:
   timeout. A function none of whose mutants was killed so gets the other tests too (one may run
   it in a process of its own, which reads the mutant on disk), in the clean run's parts side by
   side, stopped as soon as one part kills it; all passing: survived. A mutant
   outside any function (module level, a class body), or of one that ran while the tests were
   collected, cannot be patched in: ``unpatched``, left to the runner.

Only the first pytest process of the command takes the job (an exclusive claim file), so a
command that runs pytest twice judges in one and tests normally in the other. The report, written
atomically, is ``{"clean": null | why not, "statuses": {"<mutant id>": status}}``.

Why fork: a test command costs one interpreter start and one collection (most of a small suite's
time); a fork of the collected session costs milliseconds, so a mutant costs only the tests that reach
its code, and a survivor the rest of the tests.
"""

import gc
import json
import os
import signal
import sys
import threading
import time
import types
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol

JOB_ENV = "SPRINTFLOW_MUTANTS"
_PASSED, _FAILED, _UNPATCHED, _BROKE = 0, 1, 3, 4
"""A child's exit codes; a child that died otherwise (a signal, the code under test exiting) was killed."""
_STATUS = {_PASSED: "survived", _FAILED: "killed", _UNPATCHED: "unpatched", _BROKE: "error"}
_POLL_S = 0.002


_IMPORT_CALLS: set[tuple[str, int]] = set()
"""The changed functions that ran while the tests were collected (their modules imported)."""


def _watch_collection():
    """Record which changed functions run before the tests do: a mutant of one of them cannot be
    patched in after the fact (the module keeps what the function computed at import)."""
    try:
        files = json.loads(Path(os.environ[JOB_ENV]).read_text(encoding="utf-8"))["files"]
    except (KeyError, OSError, ValueError):
        return
    sys.setprofile(_recorder({str(Path(rel).resolve()) for rel in files}, lambda: _IMPORT_CALLS))


def _recorder(changed, record):
    """A profile function adding the key of every function of the ``changed`` files that is called to
    the set ``record()`` gives (None: not now)."""
    known = {}

    def profile(frame, event, arg):
        if event == "call" and (into := record()) is not None:
            code = frame.f_code
            hit = known.get(code.co_filename)
            if hit is None:
                hit = known[code.co_filename] = _resolved(code.co_filename) in changed
            if hit:
                into.add(_key(code))

    return profile


def pytest_collection_finish(session):
    sys.setprofile(None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    job_path = os.environ.get(JOB_ENV)
    if not job_path:
        return None
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    try:
        os.close(os.open(job["claim"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None  # another pytest process of this command judges the mutants
    report = {"clean": None, "statuses": {}}
    try:
        # The files tests were collected from are the tests; the runner chooses the mutants without them.
        _write(job["collected"], sorted({_resolved(str(item.path)) for item in session.items}))
        job["mutants"] = _mutants(job)
        _judge(session, job, report)
    finally:
        _write(job["report"], report)
    return True


def _mutants(job):
    """The mutants the runner wrote once it read the collected files (none if it never does)."""
    path, deadline = Path(job["mutants"]), time.monotonic() + float(job["budget"])
    while not path.is_file():
        if time.monotonic() >= deadline:
            return []
        time.sleep(_POLL_S)
    return json.loads(path.read_text(encoding="utf-8"))


def _judge(session, job, report):
    items = list(session.items)
    if not job["mutants"]:
        return
    if session.testsfailed or not items:
        report["clean"] = "collection failed" if session.testsfailed else "no test collected"
        return
    deadline = time.monotonic() + float(job["budget"])
    changed = {str(Path(rel).resolve()): rel for rel in job["files"]}
    clean = _clean_run(items, changed, job, deadline)
    if isinstance(clean, str):
        report["clean"] = clean
        return
    calls, parts = clean
    functions, statuses = _functions_in_memory(changed), report["statuses"]
    killed, survivors = set(), []
    for mutant in job["mutants"]:
        if time.monotonic() >= deadline:
            break
        prepared = _prepared(mutant, functions)
        if prepared is None:
            statuses[str(mutant["id"])] = "unpatched"
            continue
        reached = [item for item, called in zip(items, calls, strict=True) if prepared[1] in called]
        status = _run_mutant(mutant, prepared, [reached], job, deadline) if reached else "survived"
        statuses[str(mutant["id"])] = status
        if status == "killed":
            killed.add(prepared[1])
        elif status == "survived":
            survivors.append((mutant, prepared))
    # A function none of whose mutants the tests that call it killed: the other tests get their turn
    # with each (one may run the function in a process of its own, which reads the mutant on disk), in
    # the parts the clean run passed in side by side, so no failure there comes of running them so.
    for mutant, prepared in survivors:
        others = [[items[i] for i in part if prepared[1] not in calls[i]] for part in parts]
        if prepared[1] not in killed and any(others) and time.monotonic() < deadline:
            statuses[str(mutant["id"])] = _run_mutant(mutant, prepared, [o for o in others if o], job, deadline)


def _clean_run(items, changed, job, deadline):
    """Which changed functions each test calls (a set per item) and the parts (item indexes) the
    tests passed in, or why the clean run did not pass.

    The tests run in parts, a fork each, side by side on the cores there are (the clean run costs as
    much as the tests themselves, and every mutant waits for it). A part that fails there (a
    test that needs one before it, two parts on one port) proves nothing against the code: the tests
    then run again in one fork, in their order, and only that run can say they do not pass."""
    parts = _parts(len(items))
    if len(parts) > 1 and not isinstance(clean := _clean_parts(items, parts, changed, job, deadline), str):
        return clean
    return _clean_parts(items, [range(len(items))], changed, job, deadline)


def _parts(count):
    """The item indexes dealt out in turn to one part per usable core (at most four, none of fewer than
    two items), so a file of slow tests is shared out as well as the rest."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    number = max(1, min(cores, 4, count // 2))
    return [range(first, count, number) for first in range(number)]


def _clean_parts(items, parts, changed, job, deadline):
    """The clean run of ``parts`` side by side: the calls of each test and the parts, or why not."""
    out = Path(job["report"]).with_suffix(".calls.json")

    def child(part, path):
        def body():
            calls = [set() for _ in part]
            current = [None]
            # Threads too: a test often serves the code under test from a thread of its own (an HTTP
            # server, a worker pool). A fork holds no thread but its own, so every thread the tests
            # start is one threading.setprofile reaches; a call seen in a thread a test left running
            # is counted to the test then running, which only gives a mutant one more test.
            profile = _recorder(changed, lambda: current[0])
            sys.setprofile(profile)
            threading.setprofile(profile)
            for slot, index in enumerate(part):
                current[0] = calls[slot]
                if not _passes(items[index], items[part[slot + 1]] if slot + 1 < len(part) else None):
                    return _FAILED
            threading.setprofile(None)
            sys.setprofile(None)
            # A thread a test left running records no more, and each set is copied in one step (in C,
            # under the GIL) before it is read: a set that grows while it is listed raises.
            current[0] = None
            _write(str(path), [sorted(map(list, set(c))) for c in calls])
            return _PASSED
        return body

    paths = [out.with_suffix(f".{number}.json") for number in range(len(parts))]
    timeout = min(float(job["cleanTimeout"]), max(1.0, deadline - time.monotonic()))
    statuses = _in_children([child(part, path) for part, path in zip(parts, paths, strict=True)], timeout)
    failed = next((status for status in statuses if status != "survived"), None)
    if failed is not None or not all(path.is_file() for path in paths):
        return {"killed": "the tests do not all pass when run here", "timeout": "the tests ran out of time"
                }.get(failed or "", "the tests could not run here")
    calls = [set() for _ in items]
    for part, path in zip(parts, paths, strict=True):
        for index, called in zip(part, json.loads(path.read_text(encoding="utf-8")), strict=True):
            calls[index] = {tuple(key) for key in called}
    return calls, parts


def _prepared(mutant, functions):
    """The mutant's file, the key of the function it changed and the patches that put it in memory;
    None when it cannot be put there (outside any function, or in one that ran at import: what that
    computed stays in the module)."""
    path = Path(mutant["file"]).resolve()
    targets = _changed_code(path.read_text(encoding="utf-8"), mutant["source"], str(path))
    if targets is None or targets[0] in _IMPORT_CALLS:
        return None
    innermost, codes = targets
    patches = [(function, codes[key]) for key in codes for function in functions.get((str(path), *key), ())]
    return (path, innermost, patches) if patches else None


def _run_mutant(mutant, prepared, groups, job, deadline):
    """The mutant's status when each group of tests runs against it in a child of its own, side by side:
    killed when a test of any group failed."""
    path, _, patches = prepared

    def child(tests):
        def body():
            try:
                for function, code in patches:
                    function.__code__ = code
            except ValueError:  # the mutant changed what the function closes over
                return _UNPATCHED
            for index, item in enumerate(tests):
                if not _passes(item, tests[index + 1] if index + 1 < len(tests) else None):
                    return _FAILED
            return _PASSED
        return body

    original = path.read_text(encoding="utf-8")
    path.write_text(mutant["source"], encoding="utf-8")
    try:
        statuses = _in_children([child(tests) for tests in groups],
                                min(float(job["mutantTimeout"]), max(0.5, deadline - time.monotonic())))
    finally:
        path.write_text(original, encoding="utf-8")
    return next(s for s in ("killed", "timeout", "unpatched", "error", "survived") if s in statuses)


def _passes(item, nextitem):
    # Only whether it failed matters here: pytest's failure report (a traceback with source and
    # values) costs more than most tests, so a child's items make none.
    item.repr_failure = item._repr_failure_py = _no_repr
    return not any(report.failed for report in runtestprotocol(item, nextitem=nextitem, log=False))


def _no_repr(excinfo, style=None):
    return "failed"


def _in_children(bodies, timeout):
    """Run each of ``bodies`` in a fork of this process, all at once; the status of each: "survived" (the
    tests passed), "killed" (one failed, or the child died), "timeout", "unpatched" or "error".

    Once one is killed the rest are "stopped": a failure anywhere decides both a mutant (killed) and a
    clean run (not passing side by side), so their other tests are only cost."""
    sys.stdout.flush()
    sys.stderr.flush()
    pids = [_fork(body) for body in bodies]
    statuses = {}
    ends = time.monotonic() + timeout
    while len(statuses) < len(pids):
        for pid in pids:
            if pid not in statuses and (ended := os.waitpid(pid, os.WNOHANG))[0]:
                status = ended[1]
                statuses[pid] = _STATUS.get(os.WEXITSTATUS(status), "killed") if os.WIFEXITED(status) else "killed"
        running, killed = [pid for pid in pids if pid not in statuses], "killed" in statuses.values()
        if running and (killed or time.monotonic() > ends):
            status = "stopped" if killed else "timeout"
            for pid in running:
                _kill(pid)
                statuses[pid] = status
        if len(statuses) < len(pids):
            time.sleep(_POLL_S)
    return [statuses[pid] for pid in pids]


def _fork(body):
    pid = os.fork()
    if pid == 0:
        code = _BROKE  # our harness failed, not a test: no verdict either way
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = body()
        finally:
            os._exit(code)
    return pid


def _kill(pid):
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    os.waitpid(pid, 0)


def _changed_code(original, mutated, filename):
    """The key of the innermost function the mutant changed and the new code object of it and of each
    function around it; None when the change is outside every function or does not compile."""
    try:
        old, new = _codes(compile(original, filename, "exec")), _codes(compile(mutated, filename, "exec"))
    except (SyntaxError, ValueError):
        return None
    changed = [key for key, code in new.items() if key not in old or _shallow(old[key]) != _shallow(code)]
    if len(changed) != 1 or not new[changed[0]].co_flags & _FUNCTION_FLAG:
        return None
    innermost = changed[0]
    around = {key: code for key, code in new.items()
              if code.co_flags & _FUNCTION_FLAG and _encloses(code, new[innermost])}
    return innermost, around


_FUNCTION_FLAG = 0x02  # CO_NEWLOCALS: a function's code, not a module's or a class body's


def _codes(code, found=None):
    found = {} if found is None else found
    found[_key(code)] = code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _codes(const, found)
    return found


def _encloses(outer, inner):
    return outer is inner or any(isinstance(c, types.CodeType) and _encloses(c, inner) for c in outer.co_consts)


def _shallow(code):
    """What a code object does itself (nested code objects by name only)."""
    consts = tuple(("code", _key(c)) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars


def _key(code):
    return getattr(code, "co_qualname", code.co_name), code.co_firstlineno


def _functions_in_memory(changed):
    """Every function object defined in a changed file, by (file, qualified name, first line)."""
    found, resolved = {}, {}
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType):
            name = obj.__code__.co_filename
            filename = resolved.get(name) or resolved.setdefault(name, _resolved(name))
            if filename in changed:
                found.setdefault((filename, *_key(obj.__code__)), []).append(obj)
    return found


def _resolved(filename):
    try:
        return str(Path(filename).resolve())
    except (OSError, RuntimeError, ValueError):
        return filename


def _write(path, data):
    partial = f"{path}.partial"
    Path(partial).write_text(json.dumps(data), encoding="utf-8")
    os.replace(partial, path)


if JOB_ENV in os.environ:
    _watch_collection()
