"""``sprintflow serve``: serve every deployment of ``deployments/prefect.yaml`` from one process.

``prefect.yaml`` stays the one declaration: each deployment's entrypoint,
schedules, parameters, description and tags become a ``RunnerDeployment``
that ``prefect.serve`` runs — no work pool or worker needed on one machine.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["PROJECT_ROOT", "apply_automations", "claim_names", "load_automations", "load_prefect_yaml",
           "runner_deployments", "serve"]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
"""The repository: entrypoints in ``deployments/prefect.yaml`` are relative to it."""


def load_prefect_yaml(path: Path) -> dict[str, Any]:
    """Read a prefect.yaml and check it against Prefect's own model of the file.

    Example:
        >>> [d["name"] for d in load_prefect_yaml(Path("deployments/prefect.yaml"))["deployments"]][:1]
        ['nightly-evaluate']
    """
    import yaml
    from prefect.cli.deploy._models import PrefectYamlModel
    from pydantic import ValidationError

    from sprintflow.errors import ConfigError

    try:
        data = yaml.safe_load(path.read_text())
        PrefectYamlModel.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return data


def _schedule(item: dict[str, Any]):
    from prefect.schedules import Cron, Interval, RRule

    active = item.get("active", True)
    if item.get("cron"):
        return Cron(item["cron"], timezone=item.get("timezone"), active=active)
    if item.get("interval"):
        return Interval(item["interval"], timezone=item.get("timezone"), active=active)
    return RRule(item["rrule"], timezone=item.get("timezone"), active=active)


def runner_deployments(config: dict[str, Any], root: Path, only: tuple[str, ...] = ()) -> list:
    """One ``RunnerDeployment`` per deployment in ``config`` (or those named in ``only``).

    ``root`` must be the current directory: Prefect records entrypoints relative to it.
    """
    from prefect.flows import load_flow_from_entrypoint

    from sprintflow.errors import ConfigError

    known = [d["name"] for d in config.get("deployments", [])]
    unknown = set(only) - set(known)
    if unknown:
        raise ConfigError(f"no deployment named {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    deployments = []
    for spec in config.get("deployments", []):
        if only and spec["name"] not in only:
            continue
        flow = load_flow_from_entrypoint(str(root / spec["entrypoint"]))
        deployments.append(flow.to_deployment(
            name=spec["name"], description=spec.get("description"), tags=spec.get("tags"),
            parameters=spec.get("parameters") or {},
            schedules=[_schedule(item) for item in spec.get("schedules") or []],
        ))
    return deployments


def load_automations(path: Path, deployment_id: Callable[[str], Any]) -> list:
    """The automations of ``path`` as Prefect ``AutomationCore`` models.

    An action's ``deployment_name`` (``flow/deployment``) becomes the
    ``deployment_id`` that ``deployment_id(name)`` returns; Prefect's model
    checks everything else.

    Example:
        >>> [a.name for a in load_automations(Path("deployments/automations.yaml"), lookup)]
        ['sprintflow-contract-needs-rework', 'sprintflow-score-dropped']
    """
    import yaml
    from prefect.events.schemas.automations import AutomationCore
    from pydantic import ValidationError

    from sprintflow.errors import ConfigError

    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    automations = []
    for number, item in enumerate(data.get("automations", []), start=1):
        for action in [*item.get("actions", []), *item.get("actions_on_trigger", []),
                       *item.get("actions_on_resolve", [])]:
            if "deployment_name" in action:
                action["deployment_id"] = str(deployment_id(action.pop("deployment_name")))
        try:
            automations.append(AutomationCore.model_validate(item))
        except ValidationError as exc:
            raise ConfigError(f"{path}: automation {number} ({item.get('name')}): {exc}") from None
    return automations


def apply_automations(path: Path) -> list[str]:
    """Create each automation of ``path`` on the server, replacing any of the same name.

    Needs the deployments they name to exist. Returns the automations' names.
    """
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        automations = load_automations(path, lambda name: client.read_deployment_by_name(name).id)
        for automation in automations:
            for existing in client.read_automations_by_name(automation.name):
                client.delete_automation(existing.id)
            client.create_automation(automation)
    return [automation.name for automation in automations]


def claim_names(deployments: list, replace: bool) -> list[str]:
    """Make sure serving ``deployments`` takes over no work-pool deployment unless ``replace``.

    A deployment of the same name made by ``prefect deploy`` for a work pool
    belongs to its workers (and applying a served one over it leaves its storage
    behind, so its runs could not load the flow). With ``replace`` it is deleted,
    its scheduled runs with it; returns the names deleted.
    """
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    from sprintflow.errors import ConfigError

    taken = {}
    with get_client(sync_client=True) as client:
        for deployment in deployments:
            name = f"{deployment.flow_name}/{deployment.name}"
            try:
                existing = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if existing.work_pool_name:
                taken[name] = existing
        if taken and not replace:
            listed = ", ".join(f"{name} (work pool {d.work_pool_name})" for name, d in taken.items())
            raise ConfigError(f"{listed}: deployed for workers on this server. Serve other names "
                              "(--only), or --replace to delete them and serve them from here.")
        for existing in taken.values():
            client.delete_deployment(existing.id)
    return list(taken)


@click.command()
@click.option("--prefect-file", type=click.Path(path_type=Path, dir_okay=False, exists=True),
              default=PROJECT_ROOT / "deployments" / "prefect.yaml", show_default=True,
              help="The prefect.yaml to serve; entrypoints are relative to the folder above its own.")
@click.option("--only", multiple=True, metavar="NAME", help="Serve only this deployment (repeatable).")
@click.option("--automations", "automations_file", type=click.Path(path_type=Path, dir_okay=False),
              default=PROJECT_ROOT / "deployments" / "automations.yaml", show_default=True,
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
    here. Uses the configured or local Prefect server (`sprintflow server`).
    PREFECT_RUNNER_POLL_FREQUENCY (default 10 s) is how often it looks for runs.
    """
    from sprintflow.settings import ensure_prefect_api

    # Before Prefect reads its settings; inherited by every flow run. On SQLite, concurrent runs
    # meet "database is locked" (answered 503, retried): 5 retries lost runs in benchmarks/deploy.py.
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", "10")
    prefect_file = prefect_file.resolve()
    if automations_file and str(automations_file) not in ("", ".") and not only:
        automations_file = automations_file.resolve()
    else:
        automations_file = None
    config = load_prefect_yaml(prefect_file)
    root = prefect_file.parent.parent
    where = ensure_prefect_api(announce=lambda text: click.echo(text, err=True))
    os.chdir(root)  # runs resolve relative paths here, as a worker's pull step does
    os.environ.setdefault("SPRINTFLOW_ROOT", str(root))

    from prefect import serve as prefect_serve

    from sprintflow.server import ensure_docker_host_limit

    deployments = runner_deployments(config, root, only)
    for name in claim_names(deployments, replace):
        click.echo(f"sprintflow: deleted the work-pool deployment {name}: it is served from here now", err=True)
    for deployment in deployments:
        deployment.apply()  # now, not when serving starts: the automations name them
    automations = []
    if automations_file:
        automations = apply_automations(automations_file)
    name, slots = ensure_docker_host_limit(docker_slots)
    click.echo(f"sprintflow: serving {', '.join(d.name for d in deployments)} against {where}; "
               f"limit {name} = {slots} container(s); automations: {', '.join(automations) or 'none'}",
               err=True)
    prefect_serve(*deployments, limit=limit, print_starting_message=False)
