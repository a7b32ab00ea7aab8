"""sprintflow's runner of gremlins (Go's mutation tool) on the changed lines of a Go module: stdlib only.

``python3 mutate_go.py .sprintflow-mutation/gremlins-job.json``, in the mutation layer (the module's
root). The job (written by ``sprintflow/evaluate/mutation/gremlins.py``) names the changed files and
their lines, the functions around them, the cap, the budget and where the judge's gremlins is.

1. A dry run (``gremlins unleash --dry-run``) lists the mutants of the changed lines: gremlins' own
   ``--diff`` takes a ``git diff``, and the layer is no git repository, so the ``git`` gremlins calls
   is this runner's (first on its PATH, answering ``diff`` with the changed lines as a unified diff
   and nothing else). Every other source file is left out (``--exclude-files``).
2. The cap: gremlins mutates whole lines of the diff and cannot cap, so the runner chooses lines: one
   of each changed function first (whatever the cap), then line by line across the functions while
   the mutants stay within ``maxMutants``. The lines not chosen are the plan's, not run.
3. The run, on the chosen lines: ``--integration`` (each mutant runs ``go test ./...`` of the module,
   with the coverage of every package's tests: ``-coverpkg ./...``), one worker. gremlins times a
   mutant by a multiple of its own coverage run; the multiple is chosen from the dry run's time so
   that a mutant gets at least about ``mutantTimeout``. gremlins writes no report when it is
   stopped, so its log is read as it goes: when the budget runs out, the runner stops it and writes
   the report of what it finished in gremlins' own format (``"partial": true``).

Exit 3 (and why, on stdout): gremlins, go or a go.mod is not there. Exit 124: the budget ran out
before the dry run finished.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

UNAVAILABLE = 3
ENABLED = ("--invert-assignments", "--invert-bitwise", "--invert-bwassign", "--invert-logical", "--invert-loopctrl",
           "--remove-self-assignments")
"""The mutators gremlins leaves off by default, on: more mutants per changed line, the cap bounds them."""
LOGGED = re.compile(r"^\s*(KILLED|LIVED|NOT COVERED|TIMED OUT|NOT VIABLE|SKIPPED|RUNNABLE) ([A-Z_]+) at "
                    r"(.+):(\d+):(\d+)\s*$")
_CANDIDATE = ("RUNNABLE", "NOT COVERED")
_EXCLUDE_CHUNK = 60_000


def main(job_path: str) -> int:
    started = time.monotonic()
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    deadline = started + float(job["budget"])
    binary = next((path for path in job["gremlins"] if os.path.isfile(path) and os.access(path, os.X_OK)), None)
    if binary is None:
        print(job.get("unavailable") or "gremlins is not in this sandbox (the judge's Go runtime layer has it; an "
              "image of the project's choosing does not): the change's tests were not mutation-checked")
        return UNAVAILABLE
    go = shutil.which("go")
    if go is None or not os.path.isfile("go.mod"):
        print("gremlins judges the Go module at the tree's root: no go (or no go.mod) there, so the change's tests "
              "were not mutation-checked")
        return UNAVAILABLE
    files = {path: [tuple(r) for r in ranges] for path, ranges in job["files"].items()}
    functions = job["functions"]
    plan = {"tool": job["tool"], "candidates": [], "chosen": {}, "partial": False}
    report_path, plan_path = os.path.abspath(job["report"]), os.path.abspath(job["plan"])
    if not files:
        _write(report_path, _gremlins_json([], partial=False))
        _write(plan_path, plan)
        return 0
    scratch = tempfile.mkdtemp(prefix="sprintflow-gremlins-")
    try:
        excluded = _exclusions(set(files))
        env = dict(os.environ, PATH=f"{scratch}/bin{os.pathsep}{os.environ.get('PATH', '')}",
                   GOFLAGS=f"{os.environ.get('GOFLAGS', '')} -count=1".strip())
        _tools(scratch, files, go)
        common = [binary, "unleash", "--integration", "--coverpkg", "./...", "--diff", "sprintflow-baseline",
                  "--workers", "1", *ENABLED, *excluded]
        dry_started = time.monotonic()
        dry = _run([*common, "--dry-run", "--output", f"{scratch}/dry.json"], env, deadline)
        dry_s = time.monotonic() - dry_started
        if dry["timed_out"]:
            print(f"gremlins' dry run did not finish within the budget of {job['budget']} s")
            return 124
        if dry["code"] != 0 or not os.path.isfile(f"{scratch}/dry.json"):
            print(f"gremlins' dry run failed (exit {dry['code']}):\n{dry['output'][-2000:]}")
            return 1
        with open(f"{scratch}/dry.json", encoding="utf-8") as handle:
            found = json.load(handle)
        candidates = [[entry["file_name"], m["line"], m["column"], m["type"], m["status"]]
                      for entry in found.get("files") or [] for m in entry.get("mutations") or []
                      if m["status"] in _CANDIDATE and _changed(files, entry["file_name"], m["line"])]
        chosen = _choose(candidates, functions, int(job["maxMutants"]))
        plan.update(candidates=candidates, chosen={f: sorted(lines) for f, lines in chosen.items()})
        if not candidates:
            _write(report_path, _gremlins_json([], partial=False))
            _write(plan_path, plan)
            return 0
        _tools(scratch, {f: [(line, line) for line in lines] for f, lines in chosen.items()}, go)
        coefficient = max(3, min(10_000, math.ceil(4 * float(job["mutantTimeout"]) / max(dry_s, 0.2))))
        plan["timeoutCoefficient"] = coefficient
        run = _run([*common, "--timeout-coefficient", str(coefficient), "--output", report_path], env, deadline)
        if run["timed_out"] or (run["code"] != 0 and not os.path.isfile(report_path)):
            if not run["timed_out"]:
                print(f"gremlins failed (exit {run['code']}):\n{run['output'][-2000:]}")
                return 1
            plan["partial"] = True  # the budget ran out: what gremlins finished, from its log
            _write(report_path, _gremlins_json(run["mutants"], partial=True))
        _write(plan_path, plan)
        print(run["output"][-3000:])
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _changed(files: dict[str, list[tuple[int, int]]], path: str, line: int) -> bool:
    return any(start <= line <= end for start, end in files.get(path, ()))


def _function(functions: dict[str, list[list]], path: str, line: int) -> str:
    around = [span for span in functions.get(path, ()) if span[1] <= line <= span[2]]
    return around[0][0] if around else "<package>"


def _choose(candidates: list[list], functions: dict[str, list[list]], cap: int) -> dict[str, set[int]]:
    """The lines to mutate: the first line of each changed function (whatever the cap), then the next line of
    each function in turn, while the mutants stay within ``cap`` (a line that does not fit is passed over)."""
    per_line: dict[tuple[str, int], int] = {}
    for path, line, *_ in candidates:
        per_line[(path, line)] = per_line.get((path, line), 0) + 1
    queues: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for path, line in sorted(per_line):
        queues.setdefault((path, _function(functions, path, line)), []).append((path, line))
    chosen: dict[str, set[int]] = {}
    total = 0
    for queue in queues.values():
        path, line = queue.pop(0)
        chosen.setdefault(path, set()).add(line)
        total += per_line[(path, line)]
    while any(queues.values()):
        for queue in queues.values():
            if not queue:
                continue
            path, line = queue.pop(0)
            if total + per_line[(path, line)] <= cap:
                chosen.setdefault(path, set()).add(line)
                total += per_line[(path, line)]
    return chosen


def _exclusions(changed: set[str]) -> list[str]:
    """``--exclude-files`` for every Go source file of the module but the changed ones (and every file of a
    nested module, which ``go test ./...`` does not reach), a few alternations at a time."""
    others = []
    for folder, dirs, names in os.walk("."):
        dirs.sort()
        rel_folder = os.path.relpath(folder, ".")
        nested = rel_folder != "." and os.path.isfile(os.path.join(folder, "go.mod"))
        for name in sorted(names):
            rel = os.path.normpath(os.path.join(rel_folder, name)).replace(os.sep, "/")
            if name.endswith(".go") and not name.endswith("_test.go") and (nested or rel not in changed):
                others.append(rel)
    flags, chunk = [], []
    for rel in others:
        chunk.append(re.escape(rel))
        if sum(len(c) + 1 for c in chunk) > _EXCLUDE_CHUNK:
            flags += ["--exclude-files", f"^(?:{'|'.join(chunk)})$"]
            chunk = []
    if chunk:
        flags += ["--exclude-files", f"^(?:{'|'.join(chunk)})$"]
    return flags


def _tools(scratch: str, lines: dict[str, list[tuple[int, int]]], go: str) -> None:
    """What gremlins calls, first on its PATH: the ``git`` its ``--diff`` calls (``git diff`` answers with
    ``lines`` as added lines), and a ``go`` that says a ``go test`` whose build failed with exit 2 (gremlins'
    NOT VIABLE: a mutant that does not compile was killed by no test; go itself exits 1, a KILLED)."""
    diff = []
    for path, ranges in sorted(lines.items()):
        merged: list[list[int]] = []
        for start, end in sorted(ranges):
            if merged and start <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        diff += [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}"]
        for start, end in merged:
            diff.append(f"@@ -{start - 1},0 +{start},{end - start + 1} @@")
            diff += ["+"] * (end - start + 1)
    os.makedirs(f"{scratch}/bin", exist_ok=True)
    with open(f"{scratch}/changed.diff", "w", encoding="utf-8") as handle:
        handle.write("\n".join(diff) + "\n")
    script = f"{scratch}/bin/git"
    with open(script, "w", encoding="utf-8") as handle:
        handle.write(f"#!/bin/sh\nif [ \"$1\" = diff ]; then exec cat '{scratch}/changed.diff'; fi\n"
                     "echo 'sprintflow: no git in a mutation run' >&2\nexit 1\n")
    os.chmod(script, 0o755)
    wrapper = f"{scratch}/bin/go"
    with open(wrapper, "w", encoding="utf-8") as handle:
        handle.write(f"#!/bin/sh\n[ \"$1\" = test ] || exec '{go}' \"$@\"\nlog=$(mktemp)\n"
                     f"'{go}' \"$@\" >\"$log\" 2>&1\ncode=$?\ncat \"$log\"\n"
                     "if [ $code -ne 0 ] && grep -qE '\\[(build|setup) failed\\]' \"$log\"; then code=2; fi\n"
                     "rm -f \"$log\"\nexit $code\n")
    os.chmod(wrapper, 0o755)


def _run(argv: list[str], env: dict[str, str], deadline: float) -> dict:
    """Run gremlins until it ends or ``deadline``; its output, and the mutants its log named as it went."""
    process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
    output: list[str] = []
    mutants: list[list] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            logged = LOGGED.match(line)
            if logged:
                status, kind, path, number, column = logged.groups()
                mutants.append([path, int(number), int(column), kind, status])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timed_out = False
    try:
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(process.pid, signal.SIGKILL)  # gremlins and the go tests it started
        except ProcessLookupError:
            pass
        process.wait()
    reader.join(timeout=10)
    return {"code": process.returncode, "timed_out": timed_out, "output": "".join(output)[-20_000:],
            "mutants": list(mutants)}


def _gremlins_json(mutants: list[list], partial: bool) -> dict:
    """A report in gremlins' own JSON format (its ``files`` part), from the mutants its log named."""
    files: dict[str, list[dict]] = {}
    for path, line, column, kind, status in mutants:
        files.setdefault(path, []).append({"type": kind, "status": status, "line": line, "column": column})
    return {"go_module": "", "files": [{"file_name": path, "mutations": found} for path, found in files.items()],
            "partial": partial}


def _write(path: str, data: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
