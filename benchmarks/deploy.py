"""Deployment benchmarks against one local Prefect server (SQLite), nothing mocked.

1. trigger-to-running latency of a served deployment: flow run created -> Running, from the
   server's own timestamps, one run at a time (the runner polls every --poll seconds;
   Prefect's default is 10);
2. N concurrent evaluations (default 20) on the same server and `sprintflow serve` process,
   twice: "paced" (one client creates the runs one after another, as Prefect's scheduler and
   a CLI loop do; the runs then execute side by side) and "burst" (N clients create them at
   the same instant). For each: throughput, every run's final state, refused triggers, and
   the server's retryable errors (503s), "database is locked" among them (target: none lost).

Run: python benchmarks/deploy.py [--concurrent 20] [--latency-runs 5] [--poll 1] [--executor local]
     [--client-retries N] [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/prefect]
Starts its own server (temporary PREFECT_HOME; SQLite unless --database-url) and serve
process, and stops both by PID. --client-retries sets PREFECT_CLIENT_MAX_RETRIES (default 5)
for every client: the triggers, the runner and its flow runs.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
DEPLOYMENT = "evaluate-workspace/nightly-evaluate"
CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"
RETRYABLE = "Encountered retryable exception"
LOCKED = re.compile(r"^sqlite3\.OperationalError: database is locked", re.MULTILINE)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _workspace(where: Path) -> Path:
    from tests.fixtures.sprint.make_workspace import make_workspace

    workspace = make_workspace(where)
    (workspace / "state.txt").write_text("2")  # passes: the benchmark measures the machinery
    return workspace


def _params(workspace: Path, executor: str) -> dict:
    return {"params": {"workspace": str(workspace), "contract": CONTRACT, "executor": executor,
                       "use_cache": False}}


def _wait_final(client, run_ids: list, timeout: float) -> dict:
    deadline, runs = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        runs = {run_id: client.read_flow_run(run_id) for run_id in run_ids}
        if all(run.state.type.value in FINAL for run in runs.values()):
            break
        time.sleep(0.5)
    return runs


def _trigger(deployment_id, workspace: Path, executor: str):
    """A new flow run's id, or the error that refused it (after the client's own retries)."""
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            return client.create_flow_run_from_deployment(deployment_id, parameters=_params(workspace, executor)).id
    except Exception as exc:  # noqa: BLE001 - a refused trigger is a result to report
        return f"{type(exc).__name__}: {str(exc)[:120]}"


def _server_errors(log: Path, offset: int) -> tuple[int, int, int]:
    """(retryable errors answered 503, of which "database is locked", other errors) after ``offset``."""
    text = log.read_text(errors="replace")[offset:]
    blocks = text.split(RETRYABLE)[1:]
    # uvicorn logs each retryable error a second time ("Exception in ASGI application").
    errors = sum(1 for line in text.splitlines() if "| ERROR" in line
                 and RETRYABLE not in line and "Exception in ASGI application" not in line)
    return len(blocks), sum(bool(LOCKED.search(block)) for block in blocks), errors


def _concurrent(client, deployment_id, workspaces: list[Path], executor: str, burst: bool,
                server_log: Path) -> dict:
    offset = len(server_log.read_text(errors="replace"))
    started = time.monotonic()
    if burst:
        with ThreadPoolExecutor(max_workers=len(workspaces)) as pool:
            outcomes = list(pool.map(lambda w: _trigger(deployment_id, w, executor), workspaces))
    else:
        outcomes = [_trigger(deployment_id, w, executor) for w in workspaces]
    triggered = time.monotonic() - started
    run_ids = [o for o in outcomes if not isinstance(o, str)]
    runs = _wait_final(client, run_ids, 600)
    elapsed = time.monotonic() - started
    states: dict[str, int] = {}
    for run in runs.values():
        states[run.state.type.value] = states.get(run.state.type.value, 0) + 1
    retryable, locked, errors = _server_errors(server_log, offset)
    return {
        "triggered": triggered, "elapsed": elapsed, "states": states,
        "refused": [o for o in outcomes if isinstance(o, str)],
        "written": sum((w / ".sprintflow/evals/eval-sprint-spec-tiny-1-1.json").exists() for w in workspaces),
        "run_secs": [(r.end_time - r.start_time).total_seconds() for r in runs.values()
                     if r.end_time and r.start_time],
        "retryable": retryable, "locked": locked, "errors": errors,
    }


def _report(label: str, n: int, result: dict) -> None:
    elapsed, run_secs = result["elapsed"], result["run_secs"] or [0.0]
    print(f"2{label[0]}. {n} concurrent evaluations, {label}: runs created in {result['triggered']:.1f} s, all final "
          f"after {elapsed:.1f} s -> {n / elapsed:.2f} runs/s ({60 * n / elapsed:.0f}/min); "
          f"run time median {statistics.median(run_secs):.1f} s, max {max(run_secs):.1f} s")
    print(f"    final states {result['states']}; triggers refused {len(result['refused'])}; EvalResults "
          f"{result['written']}/{n}; lost {n - result['states'].get('COMPLETED', 0)}; server: "
          f"{result['retryable']} retryable errors answered 503 ({result['locked']} 'database is locked'), "
          f"{result['errors']} other errors")
    for reason in sorted(set(result["refused"]))[:2]:
        print(f"    refused: {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--latency-runs", type=int, default=5)
    parser.add_argument("--poll", type=float, default=1.0, help="PREFECT_RUNNER_POLL_FREQUENCY (s)")
    parser.add_argument("--executor", default="local", choices=["local", "docker", "auto"])
    parser.add_argument("--modes", default="paced,burst", help="which of paced,burst to run")
    parser.add_argument("--client-retries", type=int, default=None, help="PREFECT_CLIENT_MAX_RETRIES")
    parser.add_argument("--database-url", default=None, help="the server's database (default SQLite)")
    args = parser.parse_args()

    from sprintflow.orchestration.server import start_server, stop_server, wait_for_server

    work = Path(tempfile.mkdtemp(prefix="sprintflow-deploy-bench-"))
    home = work / "prefect-home"
    server_log, serve_log = work / "server.log", work / "serve.log"
    # Retryable errors (SQLite busy/locked, statement timeouts) answer 503 silently unless logged.
    server_env = {"PREFECT_HOME": str(home), "PREFECT_API_LOG_RETRYABLE_ERRORS": "true"}
    if args.database_url:
        server_env["PREFECT_API_DATABASE_CONNECTION_URL"] = args.database_url
    if args.client_retries is not None:
        os.environ["PREFECT_CLIENT_MAX_RETRIES"] = str(args.client_retries)
    server, api_url = start_server("127.0.0.1", _free_port(), server_env, stdout=server_log.open("wb"),
                                   stderr=subprocess.STDOUT)
    serve, results = None, {}
    try:
        wait_for_server(api_url, process=server)
        env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": api_url,
               "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_RUNNER_POLL_FREQUENCY": str(args.poll)}
        serve = subprocess.Popen([sys.executable, "-m", "sprintflow", "serve", "--only", "nightly-evaluate"],
                                 env=env, stdout=serve_log.open("wb"), stderr=subprocess.STDOUT)
        os.environ.update(PREFECT_API_URL=api_url, PREFECT_HOME=str(home), PREFECT_LOGGING_LEVEL="ERROR")
        from prefect.client.orchestration import get_client
        from prefect.exceptions import ObjectNotFound

        with get_client(sync_client=True) as client:
            deployment = None
            while deployment is None:
                if serve.poll() is not None:
                    sys.exit(f"sprintflow serve exited:\n{serve_log.read_text()[-3000:]}")
                try:
                    deployment = client.read_deployment_by_name(DEPLOYMENT)
                except ObjectNotFound:
                    time.sleep(0.5)
            time.sleep(args.poll + 1)  # the runner has started polling

            latencies, totals = [], []
            for number in range(args.latency_runs):
                run = client.create_flow_run_from_deployment(
                    deployment.id, parameters=_params(_workspace(work / f"latency-{number}"), args.executor))
                run = _wait_final(client, [run.id], 120)[run.id]
                latencies.append((run.start_time - run.created).total_seconds())
                totals.append((run.end_time - run.created).total_seconds())

            for mode in [m for m in ("paced", "burst") if m in args.modes.split(",")]:
                workspaces = [_workspace(work / f"{mode}-{n}") for n in range(args.concurrent)]
                results[mode] = _concurrent(client, deployment.id, workspaces, args.executor, mode == "burst",
                                            server_log)
    finally:
        if serve is not None and serve.poll() is None:
            serve.terminate()
            serve.wait(timeout=30)
        stop_server(server)

    database = args.database_url.split("@")[-1] if args.database_url else "SQLite in a temporary PREFECT_HOME"
    print(f"Prefect {_prefect_version()} server: {database}; runner poll every {args.poll:g} s; "
          f"trigger retries {os.environ.get('PREFECT_CLIENT_MAX_RETRIES', '5 (default)')}, flow-run retries "
          f"{os.environ.get('PREFECT_CLIENT_MAX_RETRIES', '10 (sprintflow serve)')}; "
          f"executor {args.executor}; {os.cpu_count()} CPUs")
    print(f"1. trigger -> running (served deployment, {args.latency_runs} runs one at a time): "
          f"median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s; "
          f"trigger -> completed median {statistics.median(totals):.2f} s")
    for mode, result in results.items():
        _report(mode, args.concurrent, result)
    print(f"logs: {server_log} {serve_log}")


def _prefect_version() -> str:
    import prefect

    return prefect.__version__


if __name__ == "__main__":
    main()
