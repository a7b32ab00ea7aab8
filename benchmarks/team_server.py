"""A team's load on SQLite against PostgreSQL, side by side, nothing mocked.

The same load on each database (tests/fixtures/team_load.py): a fresh Prefect server, the deployments
of deployments/prefect.yaml on a process pool, two process workers, N evaluations of tiny passing
workspaces triggered at the same instant (one client each, Prefect's default retries), and every
run waited for. Prints, per database: how long the triggers took, when every run had ended, the
completed runs per second, the runs that completed and were lost, and the server's retryable errors (answered 503;
"database is locked" among them). PostgreSQL is a cluster of the machine's own
(``sprintflow.orchestration.postgres``, as ``sprintflow server --postgres`` runs it) in a temporary folder.

Run: python benchmarks/team_server.py [--concurrent 20] [--databases sqlite,postgres]
Starts and stops (by PID) its own servers, workers and cluster.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.team_load import (  # noqa: E402 - after the path
    LoadResult,
    client_env,
    deploy,
    online_workers,
    run_load,
    workers,
)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _measure(database: str, count: int, work: Path) -> LoadResult:
    from sprintflow.orchestration.postgres import cluster_url, start_cluster, stop_cluster
    from sprintflow.orchestration.server import start_server, stop_server, wait_for_server

    work.mkdir(parents=True)
    server_log = work / "server.log"
    env = {"PREFECT_HOME": str(work / "server-home"), "PREFECT_API_LOG_RETRYABLE_ERRORS": "true"}
    with ExitStack() as stack:
        if database == "postgres":
            folder = Path(tempfile.mkdtemp(prefix="sprintflow-pg-", dir="/tmp"))  # a short socket path
            stack.callback(shutil.rmtree, folder, True)
            stack.callback(stop_cluster, start_cluster(folder))
            env["PREFECT_API_DATABASE_CONNECTION_URL"] = cluster_url(folder)
        log = stack.enter_context(server_log.open("wb"))
        server, api_url = start_server("127.0.0.1", _free_port(), env, stdout=log, stderr=subprocess.STDOUT)
        stack.callback(stop_server, server)
        wait_for_server(api_url, process=server)
        clients = client_env(api_url, work / "client-home")
        deploy(clients)
        stack.enter_context(workers(clients, 2, work))
        while online_workers(api_url) < 2:
            time.sleep(0.5)
        return run_load(api_url, server_log, work / "load", count=count)


def _rate(result: LoadResult) -> float:
    """Runs that completed, per second until every run had ended: a lost run is no throughput."""
    return result.states.get("COMPLETED", 0) / result.elapsed_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrent", type=int, default=20)
    parser.add_argument("--databases", default="sqlite,postgres")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sprintflow-team-bench-"))
    results = {database: _measure(database, args.concurrent, work / database)
               for database in args.databases.split(",")}

    import prefect

    print(f"Prefect {prefect.__version__}; {args.concurrent} evaluations triggered at once; two process workers; "
          f"local executor; {os.cpu_count()} CPUs; Prefect's default client retries")
    rows = [("", *results)]
    rows += [(label, *(value(r) for r in results.values())) for label, value in (
        ("runs created in", lambda r: f"{r.triggered_s:.1f} s"),
        ("all ended after", lambda r: f"{r.elapsed_s:.1f} s"),
        ("completed runs per second", lambda r: f"{_rate(r):.3f}"),
        ("completed", lambda r: f"{r.states.get('COMPLETED', 0)}/{r.runs}"),
        ("lost (refused or not completed)", lambda r: str(r.lost)),
        ("EvalResults written", lambda r: f"{r.written}/{r.runs}"),
        ("503s (retryable errors)", lambda r: str(r.retryable)),
        ("  of them 'database is locked'", lambda r: str(r.locked)),
    )]
    widths = [max(len(str(row[column])) for row in rows) for column in range(len(rows[0]))]
    for row in rows:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)))
    if {"sqlite", "postgres"} <= set(results) and _rate(results["sqlite"]):
        ratio = _rate(results["postgres"]) / _rate(results["sqlite"])
        print(f"PostgreSQL / SQLite, completed runs per second: {ratio:.2f}x")
    for database, result in results.items():
        for reason in sorted(set(result.refused))[:2]:
            print(f"{database} refused: {reason}")
    print(f"logs: {work}")


if __name__ == "__main__":
    main()
