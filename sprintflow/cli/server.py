"""``sprintflow server``: a local Prefect server with the settings that matter here, and its limits.

The server is Prefect's own (``prefect server start``); this command only sets
what a team would otherwise forget: analytics off (no internet needed), the
database (SQLite under ``PREFECT_HOME`` for one machine, Postgres for a shared
server), and the global concurrency limit that caps containers per Docker host.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import click

__all__ = ["ensure_docker_host_limit", "server", "start_server", "stop_server", "wait_for_server"]

READY_TIMEOUT_S = 120


def start_server(host: str = "127.0.0.1", port: int = 4200, env: dict[str, str] | None = None,
                 **popen) -> tuple[subprocess.Popen, str]:
    """Start ``prefect server start`` in a child process; returns it and its API URL (not yet ready).

    Example:
        >>> process, api_url = start_server(port=4300, env={"PREFECT_HOME": "/tmp/prefect"})
        >>> wait_for_server(api_url, process=process)
    """
    # The UI asks the API at the address these say: without them it would call port 4200.
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_API_HOST": host,
           "PREFECT_SERVER_API_PORT": str(port), **(env or {})}
    env.pop("PREFECT_API_URL", None)  # the server must not try to reach another one
    api_url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/api"
    process = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", host,
                                "--port", str(port)], env=env, **popen)
    return process, api_url


def stop_server(process: subprocess.Popen, timeout: float = 20) -> None:
    """Stop a server this process started: SIGINT (a clean database shutdown), then SIGKILL."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def wait_for_server(api_url: str, timeout: float = READY_TIMEOUT_S, process: subprocess.Popen | None = None) -> None:
    """Block until ``api_url``'s health endpoint answers; raise if ``process`` exits or time runs out.

    Example:
        >>> wait_for_server("http://127.0.0.1:4200/api", timeout=30)
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise click.ClickException(f"the Prefect server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{api_url}/health", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise click.ClickException(f"no Prefect server answered at {api_url} within {timeout:.0f} s")


def ensure_docker_host_limit(slots: int | None = None, docker_host: str | None = None) -> tuple[str, int]:
    """Create this Docker host's global concurrency limit; returns its name and slot count.

    An existing limit keeps its slots unless ``slots`` is given. The default is
    the host's CPU count: each container gets ``executor.cpus`` (default 2), so
    more would mostly queue on the CPU anyway.

    Example:
        >>> ensure_docker_host_limit(4)
        ('docker-host-local', 4)
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import (
        GlobalConcurrencyLimitCreate,
        GlobalConcurrencyLimitUpdate,
    )
    from prefect.exceptions import ObjectNotFound

    from sprintflow.evaluate.executors import docker_host_limit_name

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


@click.group(invoke_without_command=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=4200, show_default=True)
@click.option("--database-url", envvar="PREFECT_API_DATABASE_CONNECTION_URL", default=None,
              help="SQLAlchemy URL of the database. Default: SQLite in PREFECT_HOME (one machine). "
                   "Shared servers: postgresql+asyncpg://user:pass@host:5432/prefect.")
@click.option("--docker-slots", type=click.IntRange(min=1), default=None,
              help="Containers at once on this Docker host (global concurrency limit). "
                   "Default: keep the existing limit, or the CPU count for a new one.")
@click.pass_context
def server(ctx: click.Context, host: str, port: int, database_url: str | None, docker_slots: int | None) -> None:
    """Start a local Prefect server (UI and API) and create sprintflow's concurrency limit.

    \b
    Settings that matter (environment):
      PREFECT_HOME                         where SQLite and the server's files live (~/.prefect)
      PREFECT_API_DATABASE_CONNECTION_URL  Postgres for a server many machines share
      PREFECT_SERVER_ANALYTICS_ENABLED     set to false here (no telemetry, no internet needed)
    Then point clients at it: PREFECT_API_URL=http://HOST:PORT/api.
    """
    if ctx.invoked_subcommand is not None:
        return
    extra = {"PREFECT_API_DATABASE_CONNECTION_URL": database_url} if database_url else {}
    process, api_url = start_server(host, port, extra)
    try:
        wait_for_server(api_url, process=process)
        os.environ["PREFECT_API_URL"] = api_url
        name, slots = ensure_docker_host_limit(docker_slots)
        click.echo(f"sprintflow: Prefect server at {api_url} (UI http://{host}:{port}); "
                   f"limit {name} = {slots} container(s). export PREFECT_API_URL={api_url}", err=True)
        sys.exit(process.wait())
    finally:
        stop_server(process)


@server.command()
@click.option("--docker-slots", type=click.IntRange(min=1), default=None,
              help="Containers at once on this Docker host. Default: keep, or the CPU count.")
@click.option("--docker-host", default=None,
              help="Docker host the limit is for (default: DOCKER_HOST, or the local socket).")
def limits(docker_slots: int | None, docker_host: str | None) -> None:
    """Create or update the global concurrency limit that caps containers per Docker host.

    The DockerExecutor holds one slot of ``docker-host-<host>`` while each
    container lives, whenever a Prefect API is configured.
    """
    from sprintflow.settings import ensure_prefect_api

    ensure_prefect_api(announce=lambda text: click.echo(text, err=True))
    name, slots = ensure_docker_host_limit(docker_slots, docker_host)
    click.echo(f"{name}: {slots}")
