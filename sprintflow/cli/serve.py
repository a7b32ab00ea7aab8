"""``sprintflow serve``: serve every deployment of ``deployments/prefect.yaml`` from one process
(see :mod:`sprintflow.deployments.serving`)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from sprintflow.deployments.serving import AUTOMATIONS_FILE, PREFECT_FILE

__all__ = ["serve"]


@click.command()
@click.option("--prefect-file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              default=PREFECT_FILE, show_default=True,
              help="The prefect.yaml to serve (default: the one sprintflow ships).")
@click.option("--only", multiple=True, metavar="NAME", help="Serve only this deployment (repeatable).")
@click.option("--automations", "automations_file", type=click.Path(path_type=Path, dir_okay=False),
              default=AUTOMATIONS_FILE, show_default=True,
              help="Automations to create, replacing those of the same name, when serving every "
                   "deployment (not with --only); '' for none.")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Flow runs at once in this process (default: no limit).")
@click.option("--replace", is_flag=True,
              help="Take over deployments of the same names that `prefect deploy` made for a work pool "
                   "(they are deleted, with their scheduled runs). Without it serve refuses.")
@click.option("--docker-slots", type=click.IntRange(min=1), default=None,
              help="Create/update the containers-per-Docker-host limit (default: keep, or the CPU count).")
def serve(prefect_file: Path, only: tuple[str, ...], automations_file: Path | None, limit: int | None,
          replace: bool, docker_slots: int | None) -> None:
    """Serve every deployment of deployments/prefect.yaml from this process, until Ctrl-C.

    Schedules fire and manual runs (Prefect UI, `prefect deployment run`) start
    here; a relative workspace resolves against the folder serve was started in,
    and a relative contract against the workspace. Uses the configured Prefect server,
    else the background one (started if needed: its deployments stay when serve
    exits); the first line it prints says which. PREFECT_RUNNER_POLL_FREQUENCY
    (default 10 s) is how often it looks for runs. A deployment run never falls back to
    the host: with executor auto and no Docker engine it ends Failed (NoVerdict); serve
    warns at start when no engine answers.

    Exit codes: 0 stopped with Ctrl-C, 2 a bad deployments file or option, 3 the Prefect server
    does not answer or cannot be started.
    """
    from sprintflow.deployments.serving import load_prefect_yaml
    from sprintflow.orchestration.server import ensure_prefect_api

    # Before Prefect reads its settings; inherited by every flow run. On SQLite, concurrent runs
    # meet "database is locked" (answered 503, retried): 5 retries lost runs in benchmarks/deploy.py.
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "10")
    prefect_file = prefect_file.resolve()
    if automations_file and str(automations_file) not in ("", ".") and not only:
        automations_file = automations_file.resolve()
    else:
        automations_file = None
    config = load_prefect_yaml(prefect_file)
    ensure_prefect_api(announce=lambda text: click.echo(text, err=True))
    # Runs resolve relative paths against where serve was started, as a worker's pull step does.
    os.environ.setdefault("SPRINTFLOW_ROOT", os.getcwd())

    from prefect import serve as prefect_serve
    from prefect.settings import get_current_settings

    from sprintflow.deployments.serving import apply_automations, claim_names, runner_deployments
    from sprintflow.orchestration.concurrency import ensure_docker_host_limit
    from sprintflow.settings import get_settings

    deployments = runner_deployments(config, only)
    for name in claim_names(deployments, replace):
        click.echo(f"sprintflow: deleted the work-pool deployment {name}: it is served from here now", err=True)
    for deployment in deployments:
        deployment.apply()  # now, not when serving starts: the automations name them
    automations = []
    if automations_file:
        automations = apply_automations(automations_file)
    name, slots = ensure_docker_host_limit(docker_slots)
    settings = get_current_settings()
    click.echo(f"sprintflow: serving {', '.join(d.name for d in deployments)} on {settings.api.url} "
               f"(UI {settings.ui_url}); runs start in {get_settings().root}; "
               f"limit {name} = {slots} container(s); automations: {', '.join(automations) or 'none'}",
               err=True)
    _warn_without_docker()
    prefect_serve(*deployments, limit=limit, print_starting_message=False)


def _warn_without_docker() -> None:
    """Say at start what a missing Docker engine will do to the runs: end them, never unsandboxed."""
    from sprintflow.sandbox.executors import docker_available

    if not docker_available():
        click.echo("sprintflow: warning: no Docker engine answers: runs with executor auto or docker will end "
                   "Failed (NoVerdict) until one does; executor local runs them on this host, unsandboxed",
                   err=True)
