"""``sprintflow server``: a local Prefect server with the settings that matter here (see :mod:`sprintflow.server`)."""

from __future__ import annotations

import os
import sys

import click

from sprintflow.server import ensure_docker_host_limit, start_server, stop_server, wait_for_server

__all__ = ["server"]


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
