"""Tasks of the sprint flow: one generator call, one tester step."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.judge.sprint import SprintJudge
from sprintflow.sandbox.executors import resolve_executor
from sprintflow.schemas import ProjectConfig, SprintContract
from sprintflow.schemas.journal import IterationJournal, TesterJournal
from sprintflow.sprint.generator import generate
from sprintflow.sprint.tester import load_test_run, run_tester_step

__all__ = ["generate_task", "tester_task"]


@task(cache_policy=NO_CACHE, task_run_name="generate-{contract_id}-{iteration}")
def generate_task(workspace: Path, contract_id: str, iteration: int, engine: str, prompt: str,
                  timeout: float, hidden: tuple[str, ...] = (), discarded: tuple[str, ...] = ()) -> IterationJournal:
    """One contained generator call; its journal entry (a failure is a failed step, never a crash)."""
    return generate(workspace, contract_id, iteration, engine, prompt, timeout, hidden, discarded)


@task(cache_policy=NO_CACHE, task_run_name="test-{contract.contract_id}-{iteration}")
def tester_task(workspace: Path, contract: SprintContract, iteration: int, project: ProjectConfig,
                mode: str, engine: str, executor: str | None, run_id: str,
                previous_run_id: str | None, judge: SprintJudge | None = None) -> TesterJournal:
    """One sandboxed tester step, its tests run on the judged tree; returns its journal entry."""
    previous = load_test_run(workspace, previous_run_id) if previous_run_id else None
    step = run_tester_step(workspace, contract, project, mode, engine,
                           resolve_executor(executor, project.executor), run_id=run_id,
                           previous_run=previous, judged=judge.judged_tree if judge else None)
    return step.journal()
