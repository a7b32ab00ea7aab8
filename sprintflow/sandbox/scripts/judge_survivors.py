"""Judge a mutation tool's survivors with the held-out evals' commands: stdlib only.

This file runs *inside the sandbox*, in the mutation layer (a throwaway copy of the judged tree), with
any python3; it imports nothing of sprintflow. ``python3 judge_survivors.py JOB.json`` reads::

    {"commands": ["cargo test --test heldout"], "budget": 60, "mutantTimeout": 13,
     "mutants": [{"file": "src/lib.rs", "start": [3, 5], "end": [3, 10], "replacement": "1",
                  "group": "src/lib.rs add"}],
     "report": ".sprintflow-mutation/survivors.json"}

1. Each command runs once on the unmutated tree, within what is left of the budget: one that fails there
   cannot tell a mutant, and is left out (a held-out eval the change does not pass yet is the criterion's
   to judge, not this). A command's time on a mutant is bounded by ``mutantTimeout`` or, for a command
   slower than the tests, three times its own clean run and 10 s.
2. Each mutant is written into its file (``start`` and ``end`` are 1-based lines and columns counted in
   characters, ``end`` exclusive: where the tool's report put the code it replaced), the passing commands
   run in turn until one fails (a kill) or runs out of its time (a timeout, not a kill), and the
   file is put back byte for byte. Once a mutant of a ``group`` (a function) is killed, its other
   mutants are not run: the verdict needs one kill per function.
3. Writes ``report``: ``{"passing": [...], "statuses": [...]}``, a status per mutant: ``killed``,
   ``survived``, ``timeout``, ``error`` (its edit does not fit the file), ``not-run`` (the budget ran out)
   or null (its function already had a kill: the strategy's verdict on it stands).
"""

import json
import os
import signal
import subprocess
import sys
import time


def main(job_path: str) -> int:
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    deadline = time.monotonic() + float(job["budget"])
    passing = {}
    for command in job["commands"]:
        started = time.monotonic()
        if _run(command, _left(deadline)) == "passed":
            passing[command] = max(float(job["mutantTimeout"]), 3 * (time.monotonic() - started) + 10)
    statuses: list = []
    killed_groups = set()
    for mutant in job["mutants"]:
        if mutant["group"] in killed_groups:
            statuses.append(None)
        elif _left(deadline) <= 0:
            statuses.append("not-run")
        elif not passing:
            statuses.append("survived")
        else:
            status = _judge(mutant, passing, deadline)
            statuses.append(status)
            if status == "killed":
                killed_groups.add(mutant["group"])
    with open(job["report"], "w", encoding="utf-8") as handle:
        json.dump({"passing": list(passing), "statuses": statuses}, handle)
    return 0


def _left(deadline: float) -> float:
    return deadline - time.monotonic()


def _judge(mutant: dict, commands: dict, deadline: float) -> str:
    """The mutant's status: the ``commands`` (each with its time) run on it until one fails."""
    path = mutant["file"]
    with open(path, "rb") as handle:
        original = handle.read()
    mutated = _edited(original.decode("utf-8"), mutant)
    if mutated is None:
        return "error"
    try:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(mutated)
        for command, timeout in commands.items():
            outcome = _run(command, min(timeout, max(_left(deadline), 1.0)))
            if outcome != "passed":
                return outcome
        return "survived"
    finally:
        with open(path, "wb") as handle:
            handle.write(original)


def _edited(text: str, mutant: dict):
    """``text`` with the mutant's span replaced, or None when the span is not in it."""
    lines = text.splitlines(keepends=True)
    (first, first_col), (last, last_col) = mutant["start"], mutant["end"]
    if not (1 <= first <= last <= len(lines)) or first_col < 1 or last_col < 1:
        return None
    start = sum(len(line) for line in lines[:first - 1]) + first_col - 1
    end = sum(len(line) for line in lines[:last - 1]) + last_col - 1
    if first_col - 1 > len(lines[first - 1]) or last_col - 1 > len(lines[last - 1]) or end < start:
        return None
    return text[:start] + mutant["replacement"] + text[end:]


def _run(command: str, timeout: float) -> str:
    """``passed``, ``killed`` (it failed) or ``timeout``; the command and all it started end with it."""
    process = subprocess.Popen(["sh", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return "passed" if process.wait(timeout=max(timeout, 0.1)) == 0 else "killed"
    except subprocess.TimeoutExpired:
        return "timeout"
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
