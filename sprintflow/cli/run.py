"""sprintflow run WORKSPACE: the sprint loop over every contract that is not completed."""

from __future__ import annotations

from pathlib import Path

import click

from sprintflow.cli import EXIT_NO_VERDICT, exit_with_verdict, print_error
from sprintflow.kinds import ExecutorName


@click.command()
@click.argument("workspace", type=click.Path(path_type=Path), default=".")
@click.option("--contracts", type=click.Path(path_type=Path), default=None,
              help="Folder of contracts: absolute, or relative to WORKSPACE (else to the current folder). "
                   "Default: WORKSPACE/.sprintflow/contracts.")
@click.option("--engine", default=None, help="Generator engine command or preset (claude, codex, aider …); "
              "else SPRINTFLOW_GENERATOR_ENGINE, SPRINTFLOW_ENGINE, engines.generator.")
@click.option("--executor", type=click.Choice([name.value for name in ExecutorName]), default=None,
              help="Where commands run: auto = Docker when an engine answers, else local (with a warning). "
                   "Default: the config's executor.kind (auto).")
@click.option("--max-iterations", type=click.IntRange(min=1), default=None,
              help="Iterations per contract (default: evaluator.maxIterations, 3).")
@click.option("--retry-rework", is_flag=True,
              help="Also run contracts that ended needs-rework, from their next iteration.")
@click.option("--restart", is_flag=True,
              help="Start over: forget a killed sprint's pin and iterations (the configuration and the workspace "
                   "are pinned anew), and run contracts that ended needs-rework too.")
def run(workspace: Path, contracts: Path | None, engine: str | None, executor: str, max_iterations: int | None,
        retry_rework: bool, restart: bool) -> None:
    """Run the sprint: generator then evaluator, iteration after iteration, per contract.

    Contracts run in dependency order; a contract whose dependency did not complete
    is reported as blocked. Each iteration's generator sees the contract, its notes
    and the previous EvalResult's feedback; the judge takes its change against the
    workspace as it was when the sprint started and judges a tree it builds itself
    (the README's Security section says what of a change is judged).

    Killed at any moment, the same command continues where it stopped (--restart starts
    over). A verdict belongs to the tree it judged: iterations of an earlier sprint run
    are judged again, never trusted.

    \b
    Exit codes:
      0  every contract completed
      1  a contract needs rework (its code failed; a contract depending on it is blocked)
      2  usage, config or input error (the message names the file and where)
      3  no verdict: contracts are blocked only by their environment (an engine or Docker that
         cannot run, a test run that crashed), or the Prefect server does not answer
    """
    from sprintflow.engines import resolve_engine
    from sprintflow.evaluate.config import load_project_config
    from sprintflow.io.inputs import resolve_input
    from sprintflow.io.layout import WorkspaceLayout
    from sprintflow.sandbox.executors import resolve_executor
    from sprintflow.sprint.contracts import load_contracts

    # Refuse bad input and a missing Docker engine before any server or flow run starts.
    project = load_project_config(workspace)
    if contracts is not None:
        contracts = resolve_input(workspace, contracts, "contracts folder")
    load_contracts(contracts or WorkspaceLayout(workspace).contracts_dir)
    resolve_engine("generator", explicit=engine, config=project.engines)
    resolve_executor(executor, project.executor)
    from sprintflow.cli import run_flow_here
    from sprintflow.io.locks import workspace_lock

    with workspace_lock(workspace):  # a busy workspace: one line, exit 2, no flow run (see evaluate)
        outcomes = run_flow_here("sprint", str(workspace), str(contracts) if contracts else None, engine=engine,
                                 executor=executor, max_iterations=max_iterations, retry_rework=retry_rework,
                                 restart=restart)
    for contract_id, outcome in outcomes.items():
        click.echo(f"{outcome:<13} {contract_id}")
    if "blocked" in outcomes.values() and "needs-rework" not in outcomes.values():
        # No code was judged failing: what blocked them is their environment (or a contract it blocked),
        # which a CI job must tell from a failing change.
        blocked = ", ".join(cid for cid, outcome in outcomes.items() if outcome == "blocked")
        print_error(f"no verdict: {blocked} blocked by the environment, not the code (no iteration spent; "
                    "the flow run's log says what failed)")
        raise SystemExit(EXIT_NO_VERDICT)
    exit_with_verdict(all(o == "completed" for o in outcomes.values()))
