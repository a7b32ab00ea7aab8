"""Sprint orchestration overhead per iteration: wall time minus engine and strategy time.

Runs the bundled sprint demo (3 iterations over 2 contracts, scripted generator,
local executor) under a temporary Prefect server started once (not counted),
then prints engine, strategy and orchestration time side by side from one run.

Run: python benchmarks/sprint.py [--executor local|docker]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "sprint-demo"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")


AFTER_BUILD = {"api-check", "playwright"}


def _critical_path(result: dict) -> float:
    """Seconds the concurrent strategies of one evaluation took: build, then the longest
    of those that wait for it, or the longest independent one, whichever is later."""
    took = {s["strategy"]: (s.get("durationMs") or 0) / 1000 for s in result["strategyResults"]}
    build = took.get("build", 0.0)
    waiting = max((t for name, t in took.items() if name in AFTER_BUILD), default=0.0)
    independent = max((t for name, t in took.items() if name not in AFTER_BUILD), default=0.0)
    return max(independent, build + waiting)


def _seconds(workspace: Path) -> tuple[float, float, int]:
    """Engine seconds (journals), strategy critical-path seconds (EvalResults), iterations."""
    runs = workspace / ".sprintflow"
    journals = list((runs / "runs" / "sprint").rglob("iteration-*.json"))
    engine = sum(json.loads(p.read_text())["durationMs"] for p in journals) / 1000
    strategies = sum(_critical_path(json.loads(p.read_text())) for p in (runs / "evals").glob("*.json"))
    return engine, strategies, len(journals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--executor", default="local", choices=["local", "docker"])
    args = parser.parse_args()
    from prefect.testing.utilities import prefect_test_harness
    from prepare import prepare

    from sprintflow.flows.sprint import sprint_flow
    from sprintflow.orchestration.runs import run_flow

    engine_cmd = f"python3 {ROOT / 'examples/sprint-demo/generator/scripted_engine.py'}"
    with prefect_test_harness(server_startup_timeout=120):
        warm = prepare(Path(tempfile.mkdtemp()) / "warm")
        run_flow(sprint_flow, str(warm), engine=engine_cmd, executor=args.executor)  # warm-up, not counted
        workspace = prepare(Path(tempfile.mkdtemp()) / "todo-api")
        started = time.perf_counter()
        outcomes = run_flow(sprint_flow, str(workspace), engine=engine_cmd, executor=args.executor)
        wall = time.perf_counter() - started
    engine, strategies, iterations = _seconds(workspace)
    # Custom criteria commands are not in the strategy durations, so they count as overhead here.
    overhead = max(wall - engine - strategies, 0.0)
    print(f"sprint demo ({args.executor}): {outcomes}")
    print(f"iterations                    {iterations}")
    print(f"wall time                     {wall:6.2f} s   ({wall / iterations:.2f} s per iteration)")
    print(f"engine time                   {engine:6.2f} s")
    print(f"strategy time (critical path) {strategies:6.2f} s")
    print(f"orchestration overhead        {overhead:6.2f} s   ({overhead / iterations:.2f} s per iteration)")
    print(f"overhead / (engine+strategy)  {overhead / max(engine + strategies, 1e-9):6.2f}")


if __name__ == "__main__":
    main()
