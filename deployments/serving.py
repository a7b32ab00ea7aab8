"""Serve the deployments that ``deployments/prefect.yaml`` declares, with their automations.

``prefect.yaml`` stays the one declaration: each deployment's entrypoint,
schedules, parameters, description and tags become a ``RunnerDeployment``
that ``prefect.serve`` runs — no work pool or worker needed on one machine.
The files ship inside the package (``sprintflow.deployments``), so an installed
wheel serves them with no checkout.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["AUTOMATIONS_FILE", "DEPLOYMENTS_DIR", "PREFECT_FILE", "apply_automations", "claim_names",
           "load_automations", "load_prefect_yaml", "runner_deployments"]

DEPLOYMENTS_DIR = Path(__file__).resolve().parent
"""``deployments/`` in a checkout, ``sprintflow/deployments/`` in an installed package."""
PREFECT_FILE = DEPLOYMENTS_DIR / "prefect.yaml"
AUTOMATIONS_FILE = DEPLOYMENTS_DIR / "automations.yaml"


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


def runner_deployments(config: dict[str, Any], only: tuple[str, ...] = ()) -> list[Any]:
    """One ``RunnerDeployment`` per deployment in ``config`` (or those named in ``only``).

    Entrypoints are module paths (``sprintflow.deployments.flows.<flow>``), so an
    installed package serves them from anywhere, with no checkout.
    """
    from prefect.deployments.runner import EntrypointType
    from prefect.flows import Flow, load_flow_from_entrypoint

    from sprintflow.errors import ConfigError

    known = [d["name"] for d in config.get("deployments", [])]
    unknown = set(only) - set(known)
    if unknown:
        raise ConfigError(f"no deployment named {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    deployments = []
    for spec in config.get("deployments", []):
        if only and spec["name"] not in only:
            continue
        flow: Flow[Any, Any] = load_flow_from_entrypoint(spec["entrypoint"])
        deployments.append(flow.to_deployment(
            name=spec["name"], description=spec.get("description"), tags=spec.get("tags"),
            parameters=spec.get("parameters") or {},
            schedules=[_schedule(item) for item in spec.get("schedules") or []],
            entrypoint_type=EntrypointType.MODULE_PATH,
        ))
    return deployments


def load_automations(path: Path, deployment_id: Callable[[str], Any]) -> list:
    """The automations of ``path`` as Prefect ``AutomationCore`` models.

    An action's ``deployment_name`` (``flow/deployment``) becomes the
    ``deployment_id`` that ``deployment_id(name)`` returns; Prefect's model
    checks everything else.

    Example:
        >>> import uuid
        >>> [a.name for a in load_automations(AUTOMATIONS_FILE, lambda name: uuid.uuid4())]
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
