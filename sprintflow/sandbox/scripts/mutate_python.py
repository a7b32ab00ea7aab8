"""Judge cosmic-ray's mutants of the changed lines, within a budget, and write what each did.

This file runs *inside the sandbox*, beside the code under test, with the Python that has
cosmic-ray (the sandbox image's, or sprintflow's own for the local executor): it imports nothing
of sprintflow. ``python3 mutate_python.py JOB.json`` reads the job the judge wrote::

    {"files": {"src/app.py": [[3, 9]]}, "commands": ["python3 -m pytest -q", "python3 heldout.py"],
     "maxMutants": 24, "budget": 180, "mutantTimeout": 13, "seed": 7,
     "report": ".sprintflow-mutation/report.json"}

and writes ``report`` as ``{"tool": "cosmic-ray 8.7.0", "inProcess": "judged" | why not, "testFiles":
[...], "mutants": [{"file", "line", "function", "operator", "status"}]}``. ``files`` are every
changed Python file; the ones the first command's pytest collected tests from (``testFiles``) are
the tests, all others are mutated. Mutants are spread over the changed functions, every function
getting one before any gets two; the ones left when the budget runs out are ``not-run``.

Two ways to judge a mutant, the fast one first:

* in one run of the first command (``pytest_plugin/sprintflow_mutants.py``, loaded through
  ``PYTEST_PLUGINS``): collected once (which also tells the test files), a fork per mutant runs the
  tests that reach its function;
* cosmic-ray's own ``mutate_and_test``: the mutant written to its file, the commands run, the file
  restored. For what the first could not judge (a command that is not pytest, a mutant outside any
  function or of one that ran at import, unmutated tests that fail in one process), and, with the
  other commands (held-out evals), for every survivor of a function none of whose mutants the first
  killed (that survivor decides the verdict).
"""

import importlib.util
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

UNAVAILABLE = 3
"""The exit code that says cosmic-ray is missing here (the judge then judges without it)."""

# Operators whose mutants duplicate another's on ordinary code (bit shifts, matrix products, `is`).
_REDUNDANT = re.compile(r"core/ReplaceBinaryOperator_.*_(BitAnd|BitOr|BitXor|LShift|RShift|Pow|FloorDiv|Mod|MatMult)$"
                        r"|core/ReplaceComparisonOperator_.*_(Is|IsNot)$"
                        r"|core/ReplaceBinaryOperator_(BitAnd|BitOr|BitXor|LShift|RShift|Pow|FloorDiv|Mod|MatMult)_")


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    if importlib.util.find_spec("cosmic_ray") is None:  # found, not imported: pytest starts first
        print(f"cosmic-ray is not installed for {sys.executable}: pip install 'cosmic-ray>=8.7,<9'")
        return UNAVAILABLE
    # A mutant keeps its file's size and often its second: no byte code of a changed file may stand in
    # for it. None is written (the tests run with PYTHONDONTWRITEBYTECODE), and any already there goes;
    # the rest of the byte code (pytest's, the standard library's) stays, or every test process would
    # compile it all again (seconds each).
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    ranges = {rel: [tuple(r) for r in lines] for rel, lines in job["files"].items()}
    for rel in ranges:
        for stale in (Path(rel).parent / "__pycache__").glob(f"{Path(rel).stem}.*.pyc"):
            stale.unlink()
    deadline = time.monotonic() + float(job["budget"])
    run = _OnePytest(job, deadline)  # pytest starts and collects while cosmic-ray loads and finds the mutations
    candidates = [spec for spec in _mutations(ranges) if _wanted(spec, ranges)]
    # A changed file is a test only when the runner collected tests from it; every other one is mutated,
    # whatever its name (untested code in ``src/test_util.py`` or a ``conftest.py`` is code under test).
    tests = run.collected()
    chosen = _spread([spec for spec in candidates if spec.module_path.as_posix() not in tests],
                     int(job["maxMutants"]), random.Random(job["seed"]))
    in_process = run.judge(chosen)
    killed_functions = {_function(spec) for index, spec in enumerate(chosen) if in_process.get(index) == "killed"}
    mutants = [_judged(spec, in_process.get(index), _function(spec) in killed_functions, job, deadline)
               for index, spec in enumerate(chosen)]
    report = {"tool": f"cosmic-ray {version('cosmic-ray')}", "inProcess": in_process.get("clean", "judged"),
              "testFiles": sorted(tests), "mutants": mutants}
    Path(job["report"]).write_text(json.dumps(report), encoding="utf-8")
    return 0


def _mutations(ranges):
    """Every mutation cosmic-ray's operators make of the files (its ``init`` without its work database,
    whose imports cost most of a second)."""
    from cosmic_ray.ast import ast_nodes, get_ast_from_path
    from cosmic_ray.ast.ast_query import ASTQuery
    from cosmic_ray.plugins import get_operator, operator_names
    from cosmic_ray.work_item import MutationSpec

    operators = [(name, get_operator(name)()) for name in operator_names() if not get_operator(name).arguments()]
    for rel in ranges:
        nodes = list(ast_nodes(get_ast_from_path(Path(rel))))
        for name, operator in operators:
            positions = ((node, start, end) for node in nodes for start, end in operator.mutation_positions(node))
            for occurrence, (node, start, end) in enumerate(positions):
                yield MutationSpec(module_path=rel, operator_name=name, occurrence=occurrence, start_pos=start,
                                   end_pos=end, definition_name=ASTQuery(node).get_definition_name())


class _OnePytest:
    """One run of the first test command with the plugin of ``pytest_plugin/``: it reports the files
    its tests were collected from, then judges the mutants chosen without them, forked per mutant."""

    def __init__(self, job, deadline):
        folder = Path(job["report"]).parent.resolve()
        self.deadline, self.mutants_file = deadline, folder / "in-process-mutants.json"
        self.job = {"claim": str(folder / "claim"), "report": str(folder / "in-process.json"),
                    "collected": str(folder / "collected.json"), "mutants": str(self.mutants_file),
                    "files": list(job["files"]), "budget": max(1.0, deadline - time.monotonic()),
                    "mutantTimeout": job["mutantTimeout"], "cleanTimeout": 2 * float(job["mutantTimeout"])}
        job_file = folder / "in-process-job.json"
        job_file.write_text(json.dumps(self.job), encoding="utf-8")
        plugins = str(Path(__file__).resolve().parent / "pytest_plugin")
        env = {**os.environ, "PYTEST_PLUGINS": "sprintflow_mutants", "SPRINTFLOW_MUTANTS": str(job_file),
               "PYTHONPATH": os.pathsep.join(p for p in (plugins, os.environ.get("PYTHONPATH")) if p)}
        self.process = subprocess.Popen(["sh", "-c", job["commands"][0]], env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def collected(self) -> set:
        """The changed files (relative) the runner collected tests from; none when it reported nothing
        (every changed file is then mutated: fail closed)."""
        path = self._written(self.job["collected"])
        try:
            found = {str(Path(p)) for p in json.loads(path.read_text(encoding="utf-8"))}
        except (OSError, ValueError):
            return set()
        return {rel for rel in self.job["files"] if str(Path(rel).resolve()) in found}

    def judge(self, chosen) -> dict:
        """{index: status} of the mutants judged in the run, and "clean" saying why not when it could not."""
        from cosmic_ray.mutating import MutationVisitor
        from cosmic_ray.plugins import get_operator

        mutants = []
        for index, spec in enumerate(chosen):
            operator = get_operator(spec.operator_name)(**spec.operator_args)
            source = MutationVisitor.mutate_code(spec.module_path.read_text(encoding="utf-8"), operator,
                                                 spec.occurrence)
            if source is not None:
                mutants.append({"id": index, "file": spec.module_path.as_posix(), "source": source})
        partial = self.mutants_file.with_suffix(".partial")
        partial.write_text(json.dumps(mutants), encoding="utf-8")
        os.replace(partial, self.mutants_file)
        try:
            found = json.loads(self._written(self.job["report"]).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return {"clean": f"the test command took no job ({type(exc).__name__})"}
        finally:
            self._stop()  # once the report is there, pytest's own ending (its reports, exit) is only cost
        statuses = {int(index): status for index, status in found["statuses"].items()}
        return {**statuses, "clean": found["clean"]} if found["clean"] else statuses

    def _written(self, name) -> Path:
        """``name`` once the plugin has written it (atomically), the run has ended or the budget is spent."""
        path = Path(name)
        while not path.is_file() and self.process.poll() is None and time.monotonic() < self.deadline:
            time.sleep(0.005)
        return path

    def _stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()


def _judged(spec, status, function_killed, job, deadline) -> dict:
    """A mutant's record: its in-process status where that is sure; else cosmic-ray's own
    ``mutate_and_test`` with the judging commands.

    Sure are a kill, a timeout, and a survivor the first command's tests all let through when it is
    the only command or another mutant of its function was killed (the function is tested; the
    survivor only lowers the kill rate). A survivor of a function none of whose mutants was killed
    decides the verdict: the other commands (the held-out evals) judge it too."""
    from cosmic_ray.mutating import mutate_and_test

    commands = _passing_clean(job, deadline)[1:] if status == "survived" else _passing_clean(job, deadline)
    sure = status in ("killed", "timeout") or (status == "survived" and (function_killed or not commands))
    if not sure and time.monotonic() < deadline:
        # A mutant needs one failing test: pytest may stop at the first (-x), the next command need not run.
        judging = " && ".join(f"( {c}{' -x' if 'pytest' in c else ''} )" for c in commands)
        timeout = min(float(job["mutantTimeout"]), max(1.0, deadline - time.monotonic()))
        status = _status(mutate_and_test([spec], shlex.join(["sh", "-c", judging]), timeout))
    elif not sure:
        status = "not-run"
    return {"file": spec.module_path.as_posix(), "line": spec.start_pos[0], "function": _function(spec)[1],
            "operator": spec.operator_name, "status": status}


_CLEAN: dict = {}


def _passing_clean(job, deadline) -> list:
    """The judging commands that pass on the unmutated tree, the first always (its strategy passed):
    a command that fails whatever the code does (a held-out eval the change does not pass yet) would
    "kill" every mutant, so it judges none. Each runs once, when a mutant first needs it."""
    if "commands" not in _CLEAN:
        timeout = max(1.0, min(2 * float(job["mutantTimeout"]), deadline - time.monotonic()))
        passing = [job["commands"][0]] if job["commands"] else []
        for command in job["commands"][1:]:
            process = subprocess.Popen(["sh", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
            try:
                if process.wait(timeout=timeout) == 0:
                    passing.append(command)
            except subprocess.TimeoutExpired:  # it judges nothing; it and what it started end here
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        _CLEAN["commands"] = passing
    return _CLEAN["commands"]


def _function(spec) -> tuple[str, str]:
    return spec.module_path.as_posix(), spec.definition_name or "<module>"


def _wanted(spec, ranges) -> bool:
    lines = ranges.get(spec.module_path.as_posix(), ())
    return not _REDUNDANT.search(spec.operator_name) and any(a <= spec.start_pos[0] <= b for a, b in lines)


def _spread(specs, cap, rng):
    """Up to ``cap`` mutations, round-robin over the functions (each function's own order shuffled); every
    changed function gets one whatever the cap, or a change with more functions than the cap would leave
    the last ones (by name) unjudged: an untested ``zz`` beside sixteen tested ones."""
    groups = {}
    for spec in sorted(specs, key=lambda s: (s.start_pos, s.operator_name, s.occurrence)):
        groups.setdefault(_function(spec), []).append(spec)
    for group in groups.values():
        rng.shuffle(group)
    cap = max(cap, len(groups))
    chosen = []
    while len(chosen) < cap and any(groups.values()):
        for key in sorted(groups):
            if groups[key] and len(chosen) < cap:
                chosen.append(groups[key].pop())
    return chosen


def _status(result) -> str:
    worker, test = result.worker_outcome.value, result.test_outcome.value if result.test_outcome else None
    if worker != "normal":
        return "error"  # no mutation possible there, or the worker failed: no verdict either way
    if test == "killed":
        return "timeout" if result.output == "timeout" else "killed"
    return "survived" if test == "survived" else "error"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
