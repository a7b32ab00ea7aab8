"""CLI benchmarks: how fast `sprintflow evaluate` answers at a terminal, end to end, from one run.

Each command runs as a person would run it (a fresh `sprintflow` process), with no
PREFECT_API_URL: the first starts the reusable background server, the others reuse it.
Goals (printed beside each measurement, not asserted):

1. a cached `sprintflow evaluate`                 <= 2 s
2. an uncached one                                 <= the longest strategy + 1.5 s
3. an input error (a missing contract)            <= 1 s
4. `--executor docker` with no Docker engine       (an error before any server starts)

Then where a cached command's time goes: starting Python, importing Prefect, importing
sprintflow's flow, one flow run with and without Prefect's flow-run heartbeat, and the rest;
and the cached command's time over a process that only imports Prefect (the floor of any
command that runs a flow). The cached command and those three processes are timed in turn,
round after round, so each ratio compares runs a second apart: this shared machine's speed
drifts by half from one minute to the next.

Run: python benchmarks/cli.py [--example python-api] [--repeat 3]
The background server runs in a temporary PREFECT_HOME and is stopped at the end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _sprintflow(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sprintflow", *args], env=env, capture_output=True, text=True,
                         check=False)
    return time.perf_counter() - started, run


def _median(args: list[str], env: dict[str, str], repeat: int, expect: int) -> float:
    times = []
    for _ in range(repeat):
        seconds, run = _sprintflow(args, env)
        if run.returncode != expect:
            raise SystemExit(f"sprintflow {' '.join(args)} exited {run.returncode}:\n{run.stderr[-3000:]}")
        times.append(seconds)
    return statistics.median(times)


def _python_seconds(code: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


# Each ends with os._exit, as the CLI does: the interpreter's teardown is no import cost.
FLOORS = {
    "python": "import os; os._exit(0)",
    "prefect": "import os, prefect; os._exit(0)",
    "imports": "import os, sprintflow.cli.evaluate, sprintflow.flows.evaluate; os._exit(0)",
}


def _cached_rounds(evaluate: list[str], env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    """The cached command and the FLOORS processes, timed in turn ``repeat`` times."""
    times: dict[str, list[float]] = {"cached": [], **{name: [] for name in FLOORS}}
    for _ in range(repeat):
        seconds, run = _sprintflow(evaluate, env)
        if run.returncode != 0:
            raise SystemExit(f"the cached evaluation exited {run.returncode}:\n{run.stderr[-3000:]}")
        times["cached"].append(seconds)
        for name, code in FLOORS.items():
            times[name].append(_python_seconds(code, env))
    return times


FLOW_RUN_COST = """
import statistics, sys, time
from prefect import flow
from sprintflow.orchestration.runs import without_heartbeats

@flow
def empty() -> int:
    return 1

def timed() -> float:
    started = time.perf_counter(); empty(); return time.perf_counter() - started

timed()  # the first run in a process also sets up the client
with_heartbeat = statistics.median(timed() for _ in range(5))
with without_heartbeats():
    without = statistics.median(timed() for _ in range(5))
print(f"{with_heartbeat:.3f} {without:.3f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default="python-api")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.evaluate.strategies import strategy_for
    from sprintflow.io.process import run_command
    from sprintflow.orchestration.server import stop_background_server
    from sprintflow.schemas import StrategyType
    from tests.conftest import copy_example

    work = Path(tempfile.mkdtemp(prefix="sprintflow-cli-bench-"))
    home = work / "prefect-home"
    env = {**os.environ, "PREFECT_HOME": str(home), "SPRINTFLOW_SERVER_PORT": str(_free_port()),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    workspace = copy_example(args.example, work)
    contract = str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))
    evaluate = ["evaluate", str(workspace), "--contract", contract, "--executor", "local"]
    try:
        _, project, strategies = load_inputs(workspace, contract)
        raw = {s.name: run_command(strategy_for(s, project).command() or "true", cwd=workspace,
                                   timeout=600).duration_s
               for s in strategies if s.type is not StrategyType.api_check}
        longest_name, longest = max(raw.items(), key=lambda item: item[1])

        first, run = _sprintflow([*evaluate, "--no-cache"], env)
        if run.returncode != 0:
            raise SystemExit(f"the first evaluation exited {run.returncode}:\n{run.stderr[-3000:]}")
        uncached = _median([*evaluate, "--no-cache"], env, args.repeat, 0)
        _sprintflow(evaluate, env)  # fills the cache
        rounds = _cached_rounds(evaluate, env, args.repeat)
        bad_input = _median(["evaluate", str(workspace), "--contract", str(work / "missing.json")], env,
                            args.repeat, 2)
        no_docker = _median([*evaluate[:-1], "docker"], {**env, "DOCKER_HOST": "unix:///nonexistent.sock"},
                            args.repeat, 3)
        costs = subprocess.run([sys.executable, "-c", FLOW_RUN_COST], check=True, capture_output=True, text=True,
                               env={**env, "PREFECT_API_URL": (home / "sprintflow-server.json").exists()
                                    and _api_url(home) or ""}).stdout.split()
        with_heartbeat, without_heartbeat = (float(value) for value in costs)
    finally:
        stop_background_server(home)
        shutil.rmtree(work, ignore_errors=True)

    cached, bare, prefect, imports = (statistics.median(rounds[name]) for name in ("cached", *FLOORS))
    ratio = statistics.median(c / p for c, p in zip(rounds["cached"], rounds["prefect"], strict=True))
    print(f"example: {args.example}; median of {args.repeat} fresh `sprintflow` processes each; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"   longest raw strategy ({longest_name})      {longest:6.2f} s")
    print(f"0. first command (starts the background server) {first:6.2f} s")
    print(f"1. cached evaluate                  {cached:6.2f} s   / goal 2 s          = {cached / 2:5.2f}   "
          f"(fastest {min(rounds['cached']):.2f} s)")
    print(f"2. uncached evaluate                {uncached:6.2f} s   / goal longest+1.5 = "
          f"{uncached / (longest + 1.5):5.2f}   (overhead {uncached - longest:.2f} s over the longest)")
    print(f"3. input error (missing contract)   {bad_input:6.2f} s   / goal 1 s          = {bad_input:5.2f}")
    print(f"4. --executor docker, no engine     {no_docker:6.2f} s   (exit 3 before any server)")
    print("where a cached command's time goes:")
    print(f"   python start                     {bare:6.2f} s")
    print(f"   + import Prefect                 {prefect - bare:6.2f} s")
    print(f"   + import sprintflow's flow       {imports - prefect:6.2f} s")
    print(f"   one empty flow run, heartbeat on {with_heartbeat:6.2f} s   off {without_heartbeat:.2f} s "
          f"(sprintflow's CLI runs flows with it off)")
    print(f"   the rest: the evaluation and exit {cached - imports:6.2f} s")
    # A process that only imports Prefect (the floor of any command that runs a flow), timed right
    # after each cached command, says how fast the machine was then.
    print(f"cached evaluate / a process that only imports Prefect, the same round = {ratio:.2f} (median)")


def _api_url(home: Path) -> str:
    import json

    return str(json.loads((home / "sprintflow-server.json").read_text())["api_url"])


if __name__ == "__main__":
    main()
