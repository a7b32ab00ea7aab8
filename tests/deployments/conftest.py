"""A real Prefect server for the deployment tests: its own process, port and PREFECT_HOME (SQLite).

One per session (~5 s to start); stopped by its PID at the end. Tests that run
flows in this process point Prefect at it with ``use_server``; subprocesses get
``server_env``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sprintflow.commands.server import wait_for_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen, timeout: float = 20) -> None:
    """Stop a process this test started: SIGINT (clean shutdown), then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory) -> dict[str, str]:
    """Start ``prefect server start`` on a free port; returns the environment that points at it."""
    home = tmp_path_factory.mktemp("prefect-server-home")
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_SERVER_API_PORT": str(port), "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    log = (home / "server.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                                "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_server(api_url, timeout=120, process=process)
        yield {**env, "PREFECT_API_URL": api_url, "PREFECT_HOME": str(home)}
    finally:
        stop(process)
        log.close()


@pytest.fixture
def server_env(prefect_server) -> dict[str, str]:
    """Environment for subprocesses (CLI, serve, workers) that talk to the test server."""
    return dict(prefect_server)


@pytest.fixture
def use_server(prefect_server, monkeypatch):
    """Point this process's Prefect (and any process it spawns, e.g. Dask workers) at the server."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    monkeypatch.setenv("PREFECT_API_URL", prefect_server["PREFECT_API_URL"])
    with temporary_settings(updates={PREFECT_API_URL: prefect_server["PREFECT_API_URL"]}):
        yield prefect_server["PREFECT_API_URL"]


def wait_until(predicate, timeout: float, what: str, interval: float = 0.5):
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
