"""Run cosmic-ray's mutants of the changed lines, within a budget, and write what each did.

This file runs *inside the sandbox*, beside the code under test, with the Python that has
cosmic-ray (the sandbox image's, or sprintflow's own for the local executor): it imports nothing
of sprintflow. ``python3 mutate_python.py JOB.json`` reads the job the judge wrote::

    {"files": {"src/app.py": [[3, 9]]}, "testCommand": "python3 -m pytest -q", "maxMutants": 24,
     "budget": 180, "mutantTimeout": 13, "seed": 7, "report": ".sprintflow-mutation/report.json"}

and writes ``report`` as ``{"tool": "cosmic-ray 8.7.0", "mutants": [{"file", "line", "function",
"operator", "status"}]}``. Each mutant is applied to its file in place, the test command runs, the
file is restored (cosmic-ray's own ``mutate_and_test``); the layer is the judge's to throw away.
Mutants are spread over the changed functions, every function getting one before any gets two;
the ones left when the budget runs out are ``not-run``.
"""

import json
import os
import random
import re
import shlex
import sys
import tempfile
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
    try:
        from cosmic_ray.commands.init import init
        from cosmic_ray.mutating import mutate_and_test
        from cosmic_ray.work_db import WorkDB, use_db
    except ImportError as exc:
        print(f"cosmic-ray is not installed for {sys.executable} ({exc}): pip install 'cosmic-ray>=8.7,<9'")
        return UNAVAILABLE

    # A mutant keeps its file's size and often its second: no byte code of a changed file may stand in
    # for it. None is written (cosmic-ray runs the tests with PYTHONDONTWRITEBYTECODE), and any already
    # there goes; the rest of the byte code (pytest's, the standard library's) stays, or every mutant
    # would compile it all again (seconds each).
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    ranges = {rel: [tuple(r) for r in lines] for rel, lines in job["files"].items()}
    for rel in ranges:
        for stale in (Path(rel).parent / "__pycache__").glob(f"{Path(rel).stem}.*.pyc"):
            stale.unlink()
    with tempfile.TemporaryDirectory() as scratch, use_db(str(Path(scratch) / "session.sqlite"),
                                                          WorkDB.Mode.create) as db:
        init([Path(rel) for rel in ranges], db, {})
        chosen = _spread([item for item in db.pending_work_items if _wanted(item.mutations[0], ranges)],
                         int(job["maxMutants"]), random.Random(job["seed"]))
    command = shlex.join(["sh", "-c", job["testCommand"]])
    deadline = time.monotonic() + float(job["budget"])
    mutants = []
    for item in chosen:
        spec = item.mutations[0]
        status = "not-run"
        if time.monotonic() < deadline:
            timeout = min(float(job["mutantTimeout"]), max(1.0, deadline - time.monotonic()))
            status = _status(mutate_and_test(item.mutations, command, timeout))
        mutants.append({"file": spec.module_path.as_posix(), "line": spec.start_pos[0],
                        "function": spec.definition_name or "<module>", "operator": spec.operator_name,
                        "status": status})
    report = {"tool": f"cosmic-ray {version('cosmic-ray')}", "mutants": mutants}
    Path(job["report"]).write_text(json.dumps(report), encoding="utf-8")
    return 0


def _wanted(spec, ranges) -> bool:
    lines = ranges.get(spec.module_path.as_posix(), ())
    return not _REDUNDANT.search(spec.operator_name) and any(a <= spec.start_pos[0] <= b for a, b in lines)


def _spread(items, cap, rng):
    """Up to ``cap`` items, round-robin over the functions (each function's own order shuffled)."""
    groups = {}
    for item in sorted(items, key=lambda i: (i.mutations[0].start_pos, i.mutations[0].operator_name,
                                             i.mutations[0].occurrence)):
        spec = item.mutations[0]
        groups.setdefault((spec.module_path.as_posix(), spec.definition_name or ""), []).append(item)
    for group in groups.values():
        rng.shuffle(group)
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
