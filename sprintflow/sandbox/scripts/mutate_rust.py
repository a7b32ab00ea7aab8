"""Judge cargo-mutants' mutants of the changed lines, within a budget.

This file runs *inside the sandbox*, beside the code under test, with any python3 (it imports
nothing of sprintflow). ``python3 mutate_rust.py JOB.json`` reads the job the judge wrote::

    {"binary": "/opt/sprintflow/tools/cargo-mutants", "unavailable": "why, when the binary is missing",
     "files": {"src/lib.rs": [[3, 9]]}, "dir": ".", "testTool": "cargo", "testWorkspace": false,
     "maxMutants": 16, "budget": 120, "mutantTimeout": 13, "seed": 7, "folder": ".sprintflow-mutation"}

1. writes the changed lines as a unified diff (``folder/changes.diff``, paths from the Cargo
   workspace's root, each line as the file has it: cargo-mutants checks the diff against the source);
2. lists the mutants of those lines (``cargo mutants --list --json --in-diff``; cargo-mutants mutates
   no ``#[cfg(test)]`` code and no test target) and chooses at most ``maxMutants``, spread over the
   changed functions, every function getting one before any gets two (whatever the cap);
3. runs those in place (the layer is a throwaway copy of the judged tree), the test command's
   ``cargo test`` or ``cargo nextest run`` judging each, its own baseline skipped (the judge's test
   run passed just before), stopped by SIGINT when the budget runs out (cargo-mutants then ends
   after the mutant it is on, its ``outcomes.json`` whole);
4. writes ``folder/report.json``: ``{"tool", "root", "listed", "chosen": [{"name", "file", "line", "function"}],
   "exit", "stopped"}`` (files from the workspace's root, ``root`` from the tree's).

The judge reads cargo-mutants' own ``folder/mutants.out/outcomes.json`` beside it. Exit 3: the tool
is not here; any other exit without a report: the run failed (its output says why).
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

UNAVAILABLE = 3
_META = set("\\.+*?()|[]{}^$#&-~")
_SIGINT_GRACE_S = 20


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    binary = job["binary"]
    if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
        print(job["unavailable"])
        return UNAVAILABLE
    started = time.monotonic()
    budget = float(job["budget"])
    folder = Path(job["folder"]).resolve()
    crate = Path(job["dir"]).resolve()
    root = _workspace_root(crate)
    here = Path.cwd().resolve()
    try:
        root_rel = root.relative_to(here).as_posix()
    except ValueError:
        print(f"the Cargo workspace {root} is outside the judged tree {here}")
        return 1
    diff = _diff(here, root, {rel: [tuple(r) for r in ranges] for rel, ranges in job["files"].items()})
    (folder / "changes.diff").write_text(diff, encoding="utf-8")
    common = [binary, "mutants", "--no-config", "--workspace", "--colors", "never", "--dir", str(crate),
              "--in-diff", str(folder / "changes.diff")]
    listed = [] if not diff else _list(common, max(10.0, budget / 3))
    chosen = _spread(listed, int(job["maxMutants"]), random.Random(job["seed"]))
    report = {"tool": _version(binary), "root": "" if root_rel == "." else root_rel, "listed": len(listed),
              "chosen": [{"name": m["name"], "file": m["file"], "line": m["span"]["start"]["line"],
                          "function": _function(m)[1]} for m in chosen], "exit": None, "stopped": False}
    if chosen:
        left = budget - (time.monotonic() - started)
        argv = [*common, "--in-place", "--baseline", "skip", "--no-shuffle", "--cap-lints", "true",
                "--timeout", f"{float(job['mutantTimeout']):g}", "--build-timeout", f"{max(30.0, left):.0f}",
                "--test-tool", job["testTool"], "--output", str(folder)]
        if job.get("testWorkspace"):
            argv += ["--test-workspace", "true"]
        for mutant in chosen:
            argv += ["--re", "^" + "".join("\\" + c if c in _META else c for c in mutant["name"]) + "$"]
        log = folder / "cargo-mutants.log"
        report["exit"], report["stopped"] = _run(argv, max(1.0, left), log)
        if report["exit"] not in (0, 2, 3) and not report["stopped"]:
            print(f"cargo-mutants failed (exit {report['exit']}): "
                  f"{log.read_text(encoding='utf-8', errors='replace').strip()[-1500:]}")
            return 1
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return 0


def _workspace_root(crate):
    """The Cargo workspace root of the crate (where cargo-mutants' paths start)."""
    done = subprocess.run(["cargo", "locate-project", "--workspace", "--message-format", "plain"], cwd=crate,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"cargo locate-project failed: {done.stderr.strip()[-800:]}")
    return Path(done.stdout.strip()).resolve().parent


def _diff(here, root, files):
    """The changed lines of ``files`` (relative to ``here``) as a diff of additions, from ``root``."""
    out = []
    for rel, ranges in sorted(files.items()):
        path = (here / rel).resolve()
        try:
            name = path.relative_to(root).as_posix()
        except ValueError:
            continue  # not in the Cargo workspace the tests run in
        lines = path.read_text(encoding="utf-8").split("\n")
        out += [f"--- a/{name}", f"+++ b/{name}"]
        added = 0
        for start, end in ranges:
            end = min(end, len(lines))
            if start > end:
                continue
            out.append(f"@@ -{start - 1 - added},0 +{start},{end - start + 1} @@")
            out += ["+" + line for line in lines[start - 1:end]]
            added += end - start + 1
    return "\n".join(out) + "\n" if out else ""


def _list(common, timeout):
    done = subprocess.run([*common, "--list", "--json"], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"cargo-mutants --list failed (exit {done.returncode}): "
                         f"{(done.stderr or done.stdout).strip()[-1500:]}")
    if not done.stdout.lstrip().startswith("["):
        # cargo-mutants says so instead of listing nothing: no mutant in the lines, or no Rust source changed
        said = done.stdout + done.stderr
        if "No mutants to filter" in said or "Diff changes no Rust source files" in said:
            return []
        raise SystemExit(f"cargo-mutants --list listed nothing readable: {said.strip()[-800:]}")
    return json.loads(done.stdout)


def _function(mutant):
    function = mutant.get("function") or {}
    return mutant["file"], function.get("function_name") or f"line {mutant['span']['start']['line']}"


def _spread(mutants, cap, rng):
    """At most ``cap`` mutants, spread over the functions; every function gets one, whatever the cap."""
    groups = {}
    for mutant in mutants:
        groups.setdefault(_function(mutant), []).append(mutant)
    for group in groups.values():
        rng.shuffle(group)
    chosen, depth = [], 0
    while any(depth < len(g) for g in groups.values()):
        for group in groups.values():
            if depth < len(group) and (depth == 0 or len(chosen) < cap):
                chosen.append(group[depth])
        depth += 1
        if len(chosen) >= cap:
            break
    return chosen


def _version(binary):
    done = subprocess.run([binary, "mutants", "--version"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return done.stdout.strip() or "cargo-mutants"


def _run(argv, budget, log):
    """Run cargo-mutants for at most ``budget`` seconds, its output to ``log``: (its exit code, whether the
    budget stopped it)."""
    with open(log, "wb") as out:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        return process.wait(timeout=budget), False
    except subprocess.TimeoutExpired:
        # To cargo-mutants alone: it stops the mutant it is on (never judged a kill: the interrupt is checked
        # before the test's exit) and ends with every outcome it wrote whole.
        os.kill(process.pid, signal.SIGINT)
        try:
            return process.wait(timeout=_SIGINT_GRACE_S), True
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return process.wait(), True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
