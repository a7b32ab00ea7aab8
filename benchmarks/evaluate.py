"""Evaluate benchmarks: ratios from one run, printed side by side (no thresholds asserted).

1. evaluate wall time / the longest single strategy run raw (target <= 1.3), and / the
   same commands run one after another in bash;
2. cached re-evaluation / first evaluation (target <= 0.1);
3. DockerExecutor / LocalExecutor on the same strategy (target <= 1.3).

Run: python benchmarks/evaluate.py [--example python-api] [--repeat 3]
Uses a temporary Prefect test server (started once, not counted).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _fresh_copy(example: str, into: Path) -> Path:
    from tests.conftest import copy_example

    shutil.rmtree(into / example, ignore_errors=True)
    return copy_example(example, into)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default="python-api")
    parser.add_argument("--repeat", type=int, default=3, help="runs per executor for ratio 3")
    args = parser.parse_args()

    from prefect.testing.utilities import prefect_test_harness

    from sprintflow.evaluate.executors import CommandSpec, DockerExecutor, LocalExecutor, docker_available
    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.evaluate.strategies import strategy_for
    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.io.process import run_command
    from sprintflow.schemas import StrategyType

    work = Path(tempfile.mkdtemp(prefix="sprintflow-bench-"))
    workspace = _fresh_copy(args.example, work)
    contract = str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))
    _, project, strategies = load_inputs(workspace, contract)
    commands = [(s.name, strategy_for(s, project).command() or "") for s in strategies
                if s.type is not StrategyType.api_check]

    # Raw: each command on its own, then all of them serially in one bash.
    raw = {}
    for name, command in commands:
        raw[name] = run_command(command, cwd=workspace, timeout=600).duration_s
    serial_s, _ = _timed(lambda: subprocess.run(["bash", "-c", " ; ".join(c for _, c in commands)],
                                                cwd=workspace, capture_output=True))
    longest = max(raw.values())
    # api-check and playwright wait for build by design, so the best possible wall time is
    # the longer of: the longest independent strategy, and build + the longest waiting one.
    waiting = [s.name for s in strategies if s.type in (StrategyType.playwright,)]
    critical = max(max(t for n, t in raw.items() if n not in waiting),
                   raw.get("build", 0.0) + max((raw[n] for n in waiting), default=0.0))

    with prefect_test_harness(server_startup_timeout=120):
        evaluate_flow(str(workspace), contract, executor="local", use_cache=False)  # warm-up, not counted
        first_s, first = _timed(lambda: evaluate_flow(str(workspace), contract, executor="local",
                                                      use_cache=False, iteration=2))
        evaluate_flow(str(workspace), contract, executor="local", use_cache=True, iteration=3)  # fills cache
        cached_s, cached = _timed(lambda: evaluate_flow(str(workspace), contract, executor="local",
                                                        use_cache=True, iteration=4))
    assert all(s.cached for s in cached.strategy_results)

    print(f"example: {args.example}; {len(commands)} command strategies + api-check; "
          f"{len(first.strategy_results)} strategies in the flow")
    for name, seconds in raw.items():
        print(f"  raw {name:<16} {seconds:6.2f} s")
    print(f"1. evaluate (local, no cache)     {first_s:6.2f} s")
    print(f"   / longest raw strategy          {first_s / longest:6.2f}   (longest {longest:.2f} s; target <= 1.3)")
    print(f"   / critical path (build first)   {first_s / critical:6.2f}   (critical path {critical:.2f} s)")
    print(f"   / serial bash of the commands   {first_s / serial_s:6.2f}   (serial {serial_s:.2f} s)")
    print(f"2. cached re-evaluation            {cached_s:6.2f} s")
    print(f"   / first evaluation              {cached_s / first_s:6.2f}   (target <= 0.1)")

    if not docker_available():
        print("3. skipped: no Docker engine answers")
        return
    name, command = next((n, c) for n, c in commands if n == "unit-test")
    spec = CommandSpec(command=command, timeout=600)
    docker_runs, local_runs = [], []
    for _ in range(args.repeat):  # interleaved, so machine noise hits both sides alike
        docker_runs.append(_timed(lambda: DockerExecutor(project.executor).run(workspace, spec))[0])
        local_runs.append(_timed(lambda: LocalExecutor(project.executor).run(workspace, spec))[0])
    docker_s, local_s = min(docker_runs), min(local_runs)
    print(f"3. {name} in Docker {docker_s:.2f} s, local {local_s:.2f} s (best of {args.repeat})")
    print(f"   DockerExecutor / LocalExecutor  {docker_s / local_s:6.2f}   (target <= 1.3)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
