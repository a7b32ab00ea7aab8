"""The plan flow: ``tasks.planning`` with each engine call a task and the plan as an artifact.

The logic is the plain ``run_planner``; the flow adds what Prefect is for here:
every planner call visible (and timed) in the UI, and a summary of the plan.
"""

from __future__ import annotations

from prefect.artifacts import create_markdown_artifact

from sprintflow.orchestration.runs import flow
from sprintflow.planning.planner import DEFAULT_MAX_ATTEMPTS, Plan, run_planner
from sprintflow.tasks.plan import ask_planner

__all__ = ["plan_flow", "plan_markdown"]


@flow(name="plan", log_prints=True)
def plan_flow(request: str, workspace: str = ".", engine: str | None = None,
              max_attempts: int = DEFAULT_MAX_ATTEMPTS, timeout: float | None = None,
              force: bool = False) -> dict:
    """Plan ``request`` into a PlanSpec and SprintContracts under WORKSPACE/.sprintflow/.

    Args:
        request: the feature request, in words.
        workspace: the project to plan for; its file list is shown to the planner.
        engine: planner engine command or preset (else SPRINTFLOW_PLANNER_ENGINE, SPRINTFLOW_ENGINE,
            engines.planner).
        max_attempts: engine calls before giving up; each re-ask lists the previous answer's problems.
        timeout: seconds per engine call (default: engines.timeout).
        force: overwrite contracts and a spec that already exist.

    Returns:
        The written plan: ``{"spec": ..., "contracts": [...]}``.
    """
    plan, _ = run_planner(request, workspace, engine, max_attempts=max_attempts, timeout=timeout, force=force,
                          call=ask_planner)
    create_markdown_artifact(plan_markdown(plan), key="plan-summary", description="The plan of the last request")
    return plan.to_dict()


def plan_markdown(plan: Plan) -> str:
    lines = ["| sprint | contract | title | criteria | depends on |", "|---|---|---|---|---|"]
    lines += [f"| {c.sprint_number} | {c.contract_id} | {c.title} | {len(c.success_criteria)} | "
              f"{', '.join(c.depends_on)} |" for c in plan.contracts]
    return (f"# {plan.spec.title}\n\n`{plan.spec.spec_id}`, planned in {len(plan.attempts)} attempt(s)\n\n"
            + "\n".join(lines) + "\n")
