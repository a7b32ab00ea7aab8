"""sprintflow plan REQUEST [WORKSPACE]: ask the planner engine for a PlanSpec and its SprintContracts.

Imports stay light at module level: the plain path never imports Prefect.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from sprintflow.orchestration.api import prefect_api_configured

__all__ = ["plan"]


@click.command()
@click.argument("request")
@click.argument("workspace", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option("--engine", metavar="CMD", default=None,
              help="Planner engine command or preset (claude, codex, gemini, aider); else "
                   "SPRINTFLOW_PLANNER_ENGINE, SPRINTFLOW_ENGINE, engines.planner.")
@click.option("--max-attempts", type=click.IntRange(min=1), default=3, show_default=True,
              help="Engine calls before giving up; each re-ask lists every problem of the previous answer.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per engine call (default: engines.timeout, 900).")
@click.option("--force", is_flag=True, help="Overwrite contracts and a spec that already exist.")
@click.option("--json", "as_json", is_flag=True, help="Print the written spec and contracts as one JSON object.")
@click.option("--flow/--no-flow", "use_flow", default=None,
              help="Run as a Prefect flow (each engine call a task, a plan artifact). Default: only when "
                   "PREFECT_API_URL names a server; without one, the first flow starts sprintflow's "
                   "background server (~10 s; later commands reuse it).")
def plan(request: str, workspace: Path, engine: str | None, max_attempts: int, timeout: float | None,
         force: bool, as_json: bool, use_flow: bool | None) -> None:
    """Plan REQUEST into a PlanSpec and a chain of SprintContracts for WORKSPACE.

    The planner engine answers one JSON object {"spec": ..., "contracts": [...]};
    it is checked against the JSON Schemas and the seed's rules (ids
    sprint-<specId>-<n> and sc-<n>-<k>, sprints 1..N, a build and a functional
    criterion per sprint, dependsOn known and without a cycle, no vague
    criteria). An invalid answer is saved under .sprintflow/specs/rejected/ and
    the engine is asked again with every problem. Contracts already on disk are
    never overwritten without --force.

    Writes .sprintflow/contracts/<contractId>.json and .sprintflow/specs/<specId>.json.

    \b
    Exit codes:
      0  the plan was written
      2  no valid plan after --max-attempts (every problem and the raw answers'
         paths are printed), no engine, or invalid contracts already on disk
      3  the engine could not start (not found, not executable): nothing was asked
    """
    from sprintflow.planning.planner import run_planner

    if use_flow if use_flow is not None else prefect_api_configured():
        from sprintflow.orchestration.server import ensure_prefect_api

        ensure_prefect_api(announce=lambda line: click.echo(line, err=True))
        from sprintflow.flows.plan import plan_flow

        written = plan_flow(request, str(workspace), engine, max_attempts, timeout, force)
    else:
        written = run_planner(request, workspace, engine, max_attempts=max_attempts, timeout=timeout,
                              force=force)[0].to_dict()
    if as_json:
        click.echo(json.dumps(written, indent=2))
    else:
        click.echo(_summary(written, workspace))


def _summary(written: dict, workspace: Path) -> str:
    spec = written["spec"]
    attempts = len(spec["planning"]["attempts"])
    lines = [f"planned {spec['specId']}: {len(written['contracts'])} sprint(s) in {attempts} attempt(s)",
             f"  spec       {workspace / '.sprintflow' / 'specs' / (spec['specId'] + '.json')}"]
    for contract in written["contracts"]:
        after = f" (after {', '.join(contract['dependsOn'])})" if contract["dependsOn"] else ""
        lines.append(f"  sprint {contract['sprintNumber']}   {contract['contractId']}: {contract['title']}, "
                     f"{len(contract['successCriteria'])} criteria{after}")
    cost = spec["planning"].get("costUsd")
    if cost is not None:
        lines.append(f"  cost       ${cost:.4f}")
    return "\n".join(lines)
