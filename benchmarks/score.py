"""Benchmark ``sprintflow score`` against the ideal and against a serial bash + jq scorer.

1,000 triage cases, a stub engine that answers after 50 ms. Prints:

- wall time ÷ ideal, where ideal = cases × latency ÷ concurrency (target ≤ 1.3 at 16);
- the speed-up over a serial bash + jq loop doing the same work per case, as the
  seed's ``run-eval.sh`` does (target ≥ 10×), and that both scorers agree.

Usage::

    python benchmarks/score.py                  # plain path, CLI end to end, and bash + jq
    python benchmarks/score.py --flow           # also the Prefect flow path (server start-up excluded)
    python benchmarks/score.py --cases 200 --no-bash
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Answers after the latency; the prompt is read first, as a real engine does.
STUB = "cat >/dev/null; sleep {latency}; printf '%s\\n' '{{\"escalate\": false, \"risk\": \"low\"}}'"

# The seed's scorer, reduced to its per-case work: extract the case with jq, build the
# prompt, run the engine, parse its JSON with jq, compare, collect; aggregate at the end.
BASH_SCORER = r"""#!/usr/bin/env bash
set -euo pipefail
cases="$1"; prompt_file="$2"; engine="$3"
results="$(mktemp)"
while IFS= read -r line || [[ -n "$line" ]]; do
  [[ -z "${line// }" ]] && continue
  id=$(jq -r '.id' <<<"$line")
  input=$(jq -r '.input' <<<"$line")
  expected=$(jq -c '.expected' <<<"$line")
  prompt="$(cat "$prompt_file")"$'\n\n## Pre-fetched PR context\n\n'"$input"
  if answer=$(printf '%s\n' "$prompt" | sh -c "$engine" 2>/dev/null) \
     && actual=$(jq -c '{escalate, risk}' <<<"$answer" 2>/dev/null); then
    if [[ "$(jq -c '{escalate, risk}' <<<"$expected")" == "$actual" ]]; then pass=true; else pass=false; fi
  else
    actual=null; pass=false
  fi
  jq -cn --arg id "$id" --argjson pass "$pass" --argjson expected "$expected" --argjson actual "$actual" \
    '{id: $id, pass: $pass, expected: $expected, actual: $actual}' >>"$results"
done <"$cases"
jq -s '{total: length, passed: map(select(.pass)) | length,
        failed: map(select(.pass | not)) | length, cases: .}
       | .score = (if .total > 0 then .passed / .total else 0 end)' "$results"
rm -f "$results"
"""


def make_workspace(root: Path, cases: int) -> None:
    (root / "evals" / "triage").mkdir(parents=True)
    (root / "prompts").mkdir()
    (root / "prompts" / "triage.md").write_text(
        "You triage pull requests. Answer with JSON: {\"escalate\": bool, \"risk\": \"low|medium|high\"}.\n")
    with (root / "evals" / "triage" / "cases.jsonl").open("w") as handle:
        for number in range(cases):
            # Every third case expects an escalation the stub never gives: a mixed set, known score.
            expected = {"escalate": True, "risk": "high"} if number % 3 == 0 else {"escalate": False, "risk": "low"}
            body = f"Title: change {number}\nFiles changed:\n- src/module_{number % 17}.py (+{number % 50} -3)\n"
            handle.write(json.dumps({"id": f"case-{number:04d}", "input": body, "expected": expected}) + "\n")


def run_cli(root: Path, engine: str, concurrency: int, extra: list[str]) -> tuple[float, dict, int]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from sprintflow.cli import main; main()",
                           "score", "triage", "--engine", engine,
                           "--concurrency", str(concurrency), "--json", "--timings", *extra],
                          cwd=root, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"sprintflow score failed ({proc.returncode}):\n{proc.stderr}")
    return wall, json.loads(proc.stdout), proc.returncode


def in_process(root: Path, engine: str, concurrency: int) -> tuple[float, dict]:
    from sprintflow.scoring.prepare import prepare_run
    from sprintflow.scoring.runs import score_skill

    run = prepare_run("triage", root=root, engine=engine)
    started = time.perf_counter()
    report = score_skill(run, concurrency=concurrency, persist=False)
    return time.perf_counter() - started, json.loads(report.to_json())


def flow_path(root: Path, engine: str, concurrency: int) -> tuple[float, float, dict]:
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    from prefect import flow

    from sprintflow.flows.score import score_flow

    @flow
    def warm_up() -> None:
        """Starts the (ephemeral) server so the timed run measures the flow, not the start-up."""

    started = time.perf_counter()
    warm_up()
    startup = time.perf_counter() - started
    started = time.perf_counter()
    report = score_flow("triage", root=str(root), engine=engine, concurrency=concurrency, persist=False)
    return time.perf_counter() - started, startup, json.loads(report.to_json())


def bash_loop(root: Path, engine: str) -> tuple[float, dict]:
    script = root / "run-eval.sh"
    script.write_text(BASH_SCORER)
    started = time.perf_counter()
    proc = subprocess.run(["bash", str(script), "evals/triage/cases.jsonl", "prompts/triage.md", engine],
                          cwd=root, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds the stub engine takes")
    parser.add_argument("--bash", action=argparse.BooleanOptionalAction, default=True,
                        help="time the serial bash + jq loop too (about cases × (latency + 20 ms))")
    parser.add_argument("--flow", action="store_true", help="time the Prefect flow path too")
    args = parser.parse_args()
    if args.bash and not shutil.which("jq"):
        raise SystemExit("jq is not installed: pass --no-bash")

    engine = STUB.format(latency=args.latency)
    ideal = args.cases * args.latency / args.concurrency
    with tempfile.TemporaryDirectory(prefix="sprintflow-bench-") as tmp:
        root = Path(tmp)
        make_workspace(root, args.cases)
        expected_passed = args.cases - len(range(0, args.cases, 3))
        print(f"{args.cases} cases, stub engine {args.latency * 1000:.0f} ms, concurrency {args.concurrency}, "
              f"{os.cpu_count()} CPUs; ideal {ideal:.2f} s")

        lib_wall, lib_report = in_process(root, engine, args.concurrency)
        check(lib_report, expected_passed, "in-process")
        print(f"  scorer (in process)      {lib_wall:7.2f} s   wall/ideal {lib_wall / ideal:5.2f}   (target <= 1.3)")

        cli_wall, cli_report, code = run_cli(root, engine, args.concurrency, [])
        check(cli_report, expected_passed, "CLI")
        print(f"  sprintflow score (CLI)   {cli_wall:7.2f} s   wall/ideal {cli_wall / ideal:5.2f}   "
              f"(process start, imports and persisting included; exit {code})")

        if args.flow:
            flow_wall, startup, flow_report = flow_path(root, engine, args.concurrency)
            check(flow_report, expected_passed, "flow")
            print(f"  score_flow (Prefect)     {flow_wall:7.2f} s   wall/ideal {flow_wall / ideal:5.2f}   "
                  f"(+ {startup:.1f} s server start-up, excluded)")

        if args.bash:
            bash_wall, bash_report = bash_loop(root, engine)
            if bash_report["passed"] != expected_passed or bash_report["total"] != args.cases:
                raise SystemExit(f"bash scorer disagrees: {bash_report['passed']}/{bash_report['total']}")
            print(f"  serial bash + jq loop    {bash_wall:7.2f} s   speed-up of sprintflow score (CLI) "
                  f"{bash_wall / cli_wall:5.1f}x   (target >= 10x)")
        print(f"  all scorers agree: {expected_passed}/{args.cases} passed")


def check(report: dict, expected_passed: int, label: str) -> None:
    if report["passed"] != expected_passed:
        raise SystemExit(f"{label}: {report['passed']} passed, expected {expected_passed}")


if __name__ == "__main__":
    main()
