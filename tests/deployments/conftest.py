"""A real Prefect server for the deployment tests: its own process, port and PREFECT_HOME (SQLite).

One per session (~5 s to start); stopped by its PID at the end. Tests that run
flows in this process point Prefect at it with ``use_server``; subprocesses get
``server_env``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sprintflow.orchestration.server import start_server, stop_server, wait_for_server

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
"""Test output kept for people to look at (screenshots of the Prefect UI); not committed."""
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def deployed_flows():
    """The deployment entry flows, ``sprintflow.deployments.flows``."""
    from sprintflow.deployments import flows

    return flows


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory) -> dict[str, str]:
    """Start ``prefect server start`` on a free port; returns the environment that points at it."""
    home = tmp_path_factory.mktemp("prefect-server-home")
    log = (home / "server.log").open("wb")
    process, api_url = start_server("127.0.0.1", free_port(), {"PREFECT_HOME": str(home)},
                                    stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_server(api_url, timeout=120, process=process)
        yield {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": api_url,
               "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}
    finally:
        stop_server(process)
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
        try:
            yield prefect_server["PREFECT_API_URL"]
        finally:
            # Deliver this test's logs and events now, while the server is up: left queued, they
            # are retried at interpreter exit against a stopped server (over a minute of waiting).
            from prefect.events.worker import EventsWorker
            from prefect.logging.handlers import APILogWorker

            APILogWorker.drain_all(timeout=10)
            EventsWorker.drain_all(timeout=10)


def wait_until(predicate, timeout: float, what: str, interval: float = 0.5):
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


@contextmanager
def serving(env: dict[str, str], folder: Path, *options: str) -> Iterator[tuple[subprocess.Popen, Path]]:
    """``sprintflow serve [OPTIONS]`` (every deployment) started in ``folder``, polling for runs every second."""
    from tests.fixtures.sprint.make_workspace import ENGINE

    log = (folder / "serve.log").open("wb")
    env = {**env, "PREFECT_RUNNER_POLL_FREQUENCY": "1", "SPRINTFLOW_GENERATOR_ENGINE": f"{sys.executable} {ENGINE}"}
    process = subprocess.Popen([sys.executable, "-m", "sprintflow", "serve", *options], env=env, stdout=log,
                               stderr=subprocess.STDOUT, cwd=folder)
    try:
        yield process, folder / "serve.log"
    finally:
        if process.poll() is None:
            process.terminate()  # serve pauses its schedules on the way out
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def served_ready(process: subprocess.Popen, log: Path, client):
    """The sprint deployment once serve has said it serves: its deployments, automations and Docker host
    limit are all in place then (an earlier test of the session may have left the same on the server, so
    their presence alone proves nothing about this serve)."""
    assert process.poll() is None, f"sprintflow serve exited: {log.read_text()[-2000:]}"
    if "sprintflow: serving " not in log.read_text():
        return None
    return client.read_deployment_by_name("sprint-workspace/manual-sprint")
