"""The local Prefect server sprintflow starts: its process, its readiness, and the Docker host limit.

The server is Prefect's own (``prefect server start``); sprintflow only sets
what a team would otherwise forget: analytics off (no internet needed), the
database (SQLite under ``PREFECT_HOME`` for one machine, Postgres for a shared
server), and the global concurrency limit that caps containers per Docker host.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from typing import IO

from sprintflow.errors import InfrastructureError
from sprintflow.io.process import Child, spawn, stop_process

__all__ = ["READY_TIMEOUT_S", "ensure_docker_host_limit", "start_server", "stop_server", "wait_for_server"]

READY_TIMEOUT_S = 120


def start_server(host: str = "127.0.0.1", port: int = 4200, env: dict[str, str] | None = None,
                 stdout: IO[bytes] | int | None = None,
                 stderr: IO[bytes] | int | None = None) -> tuple[Child, str]:
    """Start ``prefect server start`` in a child process; returns it and its API URL (not yet ready)."""
    # The UI asks the API at the address these say: without them it would call port 4200.
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_API_HOST": host,
           "PREFECT_SERVER_API_PORT": str(port), **(env or {})}
    env.pop("PREFECT_API_URL", None)  # the server must not try to reach another one
    api_url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/api"
    process = spawn([sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)],
                    env=env, stdout=stdout, stderr=stderr)
    return process, api_url


def stop_server(process: Child, timeout: float = 20) -> None:
    """Stop a server this process started: SIGINT (a clean database shutdown), then SIGKILL."""
    stop_process(process, timeout)


def wait_for_server(api_url: str, timeout: float = READY_TIMEOUT_S,
                    process: Child | None = None) -> None:
    """Block until ``api_url``'s health endpoint answers; raise if ``process`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise InfrastructureError(f"the Prefect server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise InfrastructureError(f"no Prefect server answered at {api_url} within {timeout:.0f} s")


def ensure_docker_host_limit(slots: int | None = None, docker_host: str | None = None) -> tuple[str, int]:
    """Create this Docker host's global concurrency limit; returns its name and slot count.

    An existing limit keeps its slots unless ``slots`` is given. The default is
    the host's CPU count: each container gets ``executor.cpus`` (default 2), so
    more would mostly queue on the CPU anyway.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import (
        GlobalConcurrencyLimitCreate,
        GlobalConcurrencyLimitUpdate,
    )
    from prefect.exceptions import ObjectNotFound

    from sprintflow.evaluate.docker_host import docker_host_limit_name

    name = docker_host_limit_name(docker_host)
    with get_client(sync_client=True) as client:
        try:
            existing = client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            existing = None
        if existing is None:
            wanted = slots or os.cpu_count() or 1
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=wanted))
            return name, wanted
        if slots is not None and slots != existing.limit:
            client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=slots))
            return name, slots
        return name, existing.limit
