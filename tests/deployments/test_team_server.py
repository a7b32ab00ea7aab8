"""A team server on PostgreSQL, nothing mocked: `sprintflow server --postgres DIR` (the machine's PostgreSQL),
the deployments on a process pool, two process workers, twenty evaluations triggered at once: no 503, no lost
run; Ctrl-C's SIGTERM stops the server and its database."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sprintflow.orchestration.server import wait_for_server

from .conftest import ROOT, free_port, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.team_load import client_env, deploy, online_workers, run_load, workers

pytestmark = pytest.mark.slow


@pytest.fixture
def team_server(tmp_path):
    """``sprintflow server --postgres`` in a subprocess: its API URL, its log and the cluster's folder."""
    # Directly under /tmp: a short socket path, and a folder the postgres user can enter when this runs as root.
    folder = Path(tempfile.mkdtemp(prefix="sprintflow-pg-", dir="/tmp"))
    port, log_path = free_port(), tmp_path / "server.log"
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(tmp_path / "server-home"), PREFECT_API_LOG_RETRYABLE_ERRORS="true")
    with log_path.open("wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "sprintflow", "server", "--postgres", str(folder),
                                   "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    api_url = f"http://127.0.0.1:{port}/api"
    try:
        wait_for_server(api_url, timeout=180, process=server)
        yield api_url, log_path, folder, server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def test_twenty_evaluations_through_two_workers_on_postgres_lose_nothing_and_meet_no_503(team_server, tmp_path):
    api_url, server_log, folder, server = team_server
    env = client_env(api_url, tmp_path / "client-home")
    deploy(env)
    with workers(env, 2, tmp_path) as started:
        wait_until(lambda: online_workers(api_url) == 2, 120, "two workers online")
        result = run_load(api_url, server_log, tmp_path / "load", count=20)
        assert all(worker.poll() is None for worker in started)
    log = server_log.read_text(errors="replace")
    assert f"PostgreSQL in {folder}" in log and "on PostgreSQL" in log, log[-2000:]
    workers_said = "\n".join(path.read_text(errors="replace")[-3000:] for path in tmp_path.glob("worker-*.log"))
    assert result.refused == [] and result.states == {"COMPLETED": 20}, (result, log[-3000:], workers_said)
    assert result.written == 20 and result.lost == 0
    assert result.retryable == 0, log[-3000:]  # no "database is locked", no 503 of any kind

    server.send_signal(signal.SIGTERM)  # stops the Prefect server, then PostgreSQL, cleanly
    assert server.wait(timeout=60) == 130
    assert not (folder / "data" / "postmaster.pid").exists()
    assert "database system is shut down" in (folder / "postgres.log").read_text()


def test_postgres_is_its_own_database_in_the_foreground_only(tmp_path):
    for extra in (["--database-url", "postgresql+asyncpg://db.example.com/prefect"], ["--background"]):
        done = subprocess.run([sys.executable, "-m", "sprintflow", "server", "--postgres", str(tmp_path / "db"),
                               *extra], capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2 and done.stderr.startswith(
            "error: --postgres runs its own database in the foreground: not with --database-url or --background"
        ), done.stderr
        assert not (tmp_path / "db").exists()  # nothing was started or created
