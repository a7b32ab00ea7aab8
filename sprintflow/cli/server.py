"""``sprintflow server``: a local Prefect server with the settings that matter here.

See :mod:`sprintflow.orchestration.server`.
"""

from __future__ import annotations

import signal
import sys
from contextlib import ExitStack
from pathlib import Path
from types import FrameType

import click

from sprintflow.orchestration.concurrency import ensure_docker_host_limit
from sprintflow.orchestration.server import (
    DEFAULT_PORT,
    background_server,
    check_port,
    ensure_background_server,
    prefect_home,
    start_server,
    stop_background_server,
    stop_server,
    use_api,
    wait_for_server,
)

__all__ = ["server"]


@click.group(invoke_without_command=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=int, default=DEFAULT_PORT, show_default=True)
@click.option("--database-url", envvar="PREFECT_API_DATABASE_CONNECTION_URL", default=None,
              help="SQLAlchemy URL of the database. Default: SQLite in PREFECT_HOME (one machine). "
                   "Shared servers: postgresql+asyncpg://user:pass@host:5432/prefect.")
@click.option("--postgres", "postgres_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run the server on a PostgreSQL cluster kept in this folder (created on first use, "
                   "started and stopped with the server; the machine's PostgreSQL): the setup for more "
                   "than one user or worker.")
@click.option("--docker-slots", type=click.IntRange(min=1), default=None,
              help="Containers at once on this Docker host (global concurrency limit). "
                   "Default: keep the existing limit, or the CPU count for a new one.")
@click.option("--background", is_flag=True,
              help="Start (or reuse) the background server every flow-running command uses when no "
                   "server is configured, then return. Listens on 127.0.0.1, port 4200 when free.")
@click.pass_context
def server(ctx: click.Context, host: str, port: int, database_url: str | None, postgres_dir: Path | None,
           docker_slots: int | None, background: bool) -> None:
    """Start a local Prefect server (UI and API) and create sprintflow's concurrency limit.

    In the foreground (the default) it runs until Ctrl-C or SIGTERM, which stop it
    with every process it started. A busy port is an error before anything starts.

    Without a configured server (PREFECT_API_URL), `evaluate`, `run` and `serve` start a
    reusable server in the background on their first call; its record and log are in
    PREFECT_HOME (sprintflow-server.json, sprintflow-server.log). `sprintflow server status`
    shows it and `sprintflow server stop` ends it.

    For more than one user or worker, run it on PostgreSQL: `--postgres DIR` keeps a cluster
    of the machine's PostgreSQL in DIR (listening on a socket in DIR only), `--database-url`
    points at any reachable one. On SQLite, concurrent runs meet "database is locked" (503s
    that clients retry, and runs lost when the retries run out).

    \b
    Settings that matter (environment):
      PREFECT_HOME                         where SQLite and the server's files live (~/.prefect)
      PREFECT_API_DATABASE_CONNECTION_URL  Postgres for a server many machines share
      PREFECT_SERVER_ANALYTICS_ENABLED     set to false here (no telemetry, no internet needed)
    Then point clients at it: PREFECT_API_URL=http://HOST:PORT/api.

    Exit codes: 130 stopped by Ctrl-C or SIGTERM, the server's own code if it ends by itself
    (--background: 0 once it answers), 2 bad options, 3 the port is in use, or it exited or never answered.
    """
    if ctx.invoked_subcommand is not None:
        return
    if postgres_dir is not None and (database_url or background):
        raise click.UsageError("--postgres runs its own database in the foreground: not with --database-url "
                               "or --background")
    if background:
        running = ensure_background_server(announce=lambda text: click.echo(text, err=True))
        if docker_slots:
            ensure_docker_host_limit(docker_slots)
        click.echo(f"{running.api_url}")
        return
    check_port(host, port)  # before any line that could read as success
    previous = signal.signal(signal.SIGTERM, _terminate)  # SIGTERM stops it as Ctrl-C does
    with ExitStack() as stack:
        try:
            if postgres_dir is not None:
                database_url = _start_postgres(stack, postgres_dir)
            _serve(stack, host, port, database_url, docker_slots)
        except (KeyboardInterrupt, Terminated):
            sys.exit(130)
        finally:
            signal.signal(signal.SIGTERM, previous)


def _start_postgres(stack: ExitStack, folder: Path) -> str:
    """Start the PostgreSQL cluster of ``folder`` until the stack closes; returns its database URL."""
    from sprintflow.orchestration.postgres import cluster_url, start_cluster, stop_cluster

    cluster = start_cluster(folder)
    stack.callback(stop_cluster, cluster)  # after the server: it closes its connections first
    click.echo(f"sprintflow: PostgreSQL in {folder.resolve()} (log {folder.resolve() / 'postgres.log'})", err=True)
    return cluster_url(folder.resolve())


def _serve(stack: ExitStack, host: str, port: int, database_url: str | None, docker_slots: int | None) -> None:
    extra = {"PREFECT_API_DATABASE_CONNECTION_URL": database_url} if database_url else {}
    process, api_url = start_server(host, port, extra)
    stack.callback(stop_server, process)
    wait_for_server(api_url, process=process)
    use_api(api_url)
    name, slots = ensure_docker_host_limit(docker_slots)
    database = "PostgreSQL" if database_url and database_url.startswith("postgresql") else \
        ("its database" if database_url else "SQLite")
    click.echo(f"sprintflow: Prefect server at {api_url} (UI http://{host}:{port}) on {database}; "
               f"limit {name} = {slots} container(s). export PREFECT_API_URL={api_url}", err=True)
    if _terminate.requested:  # the signal came while library code ran, and that code swallowed Terminated
        raise Terminated
    sys.exit(process.wait())


class Terminated(BaseException):
    """SIGTERM arrived: unwinds like Ctrl-C's KeyboardInterrupt, through every ``except Exception``.

    Not a KeyboardInterrupt itself: when one is raised while code runs from ``exec()`` of a string
    (dataclasses and named tuples being created by an import, say), CPython 3.11 remembers it as
    unhandled and, after a ``python -m`` program exits, kills the process with SIGINT instead of
    the exit code it chose.
    """


class _Terminate:
    """The SIGTERM handler. It remembers the signal as well as raising: Prefect's client, run from
    ``ensure_docker_host_limit``, can catch the exception and go on (seen once in about 40 signals
    landing in its first call), and the server must stop all the same."""

    requested = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        raise Terminated


_terminate = _Terminate()


@server.command()
def stop() -> None:
    """Stop the background server of PREFECT_HOME (only the one sprintflow started, by its pid).

    Exit codes: 0 stopped, or none was running (it says which).
    """
    stopped = stop_background_server()
    if stopped is None:
        click.echo(f"sprintflow: no background server runs for {prefect_home()}", err=True)
        return
    click.echo(f"sprintflow: stopped the background server {stopped.ui_url} (pid {stopped.pid})", err=True)


@server.command()
def status() -> None:
    """Show the background server of PREFECT_HOME: its URL, pid and log (exit 1 when none runs),
    and which server commands would use, and why.

    \b
    Commands use, in this order: PREFECT_API_URL (or the active Prefect profile); a server
    answering on 127.0.0.1:SPRINTFLOW_SERVER_PORT (default 4200) that sprintflow did not start;
    the background server, started when none runs.

    \b
    Exit codes: 0 a background server runs, 1 none runs.
    """
    from sprintflow.orchestration.api import answers, configured_api_url, local_api_url
    from sprintflow.orchestration.server import found_server

    running = background_server()
    configured, local = configured_api_url(), local_api_url()
    if configured:
        click.echo(f"commands use {found_server(configured, local)}")
    elif running is None and answers(local):
        click.echo(f"commands use {found_server(None, local)}")
    if running is None:
        click.echo(f"no background server runs for {prefect_home()}")
        sys.exit(1)
    click.echo(f"{running.api_url} (UI {running.ui_url}) pid {running.pid}, log {running.log}")


@server.command()
@click.option("--docker-slots", type=click.IntRange(min=1), default=None,
              help="Containers at once on this Docker host. Default: keep, or the CPU count.")
@click.option("--docker-host", default=None,
              help="Docker host the limit is for (default: DOCKER_HOST, or the local socket).")
def limits(docker_slots: int | None, docker_host: str | None) -> None:
    """Create or update the global concurrency limit that caps containers per Docker host.

    The DockerExecutor holds one slot of ``docker-host-<host>`` while each
    container lives, whenever a Prefect API is configured.

    Exit codes: 0 created or updated (it prints the limit), 2 a bad option, 3 the Prefect server does not answer.
    """
    from sprintflow.orchestration.server import ensure_prefect_api

    ensure_prefect_api(announce=lambda text: click.echo(text, err=True))
    name, slots = ensure_docker_host_limit(docker_slots, docker_host)
    click.echo(f"{name}: {slots}")
