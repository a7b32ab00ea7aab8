"""Tasks of the evaluate flow: one strategy, one custom criterion, one manual criterion."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.states import State

from sprintflow.evaluate.plan import EvaluationPlan
from sprintflow.evaluate.steps import custom_criterion_step, manual_criterion_step, strategy_step
from sprintflow.orchestration.runs import CRITERION_FAILED, STRATEGY_FAILED, verdict_state
from sprintflow.schemas import CriterionResult, Outcome, StrategyConfig, StrategyResult

from .retries import retry_on_infrastructure

__all__ = ["judge_manual_criterion_task", "run_custom_criterion_task", "run_strategy_task"]


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="{strategy.type.value}")
def run_strategy_task(plan: EvaluationPlan, strategy: StrategyConfig, use_cache: bool) -> State[StrategyResult]:
    """One strategy, or its stored result when identical content and config ran before.

    A strategy that failed ends its task run Failed (``StrategyFailed``), carrying its result.
    """
    result = strategy_step(plan, strategy, use_cache)
    cached = " (cached)" if result.cached else ""
    return verdict_state(result, STRATEGY_FAILED if result.result is Outcome.failed else None,
                         f"{result.result.value}{cached}: {result.details[:200]}")


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="custom-{criterion_id}")
def run_custom_criterion_task(plan: EvaluationPlan, criterion_id: str, use_cache: bool) -> State[CriterionResult]:
    """A custom criterion: its customCommand in the executor; exit 0 passes (else ``CriterionFailed``)."""
    return _criterion_state(custom_criterion_step(plan, criterion_id, use_cache))


@task(cache_policy=NO_CACHE, task_run_name="manual-{criterion_id}")
def judge_manual_criterion_task(plan: EvaluationPlan, criterion_id: str) -> State[CriterionResult]:
    """Ask the evaluator engine, when one is configured; otherwise skipped with the reason."""
    return _criterion_state(manual_criterion_step(plan, criterion_id))


def _criterion_state(result: CriterionResult) -> State[CriterionResult]:
    return verdict_state(result, CRITERION_FAILED if result.result is Outcome.failed else None,
                         f"{result.result.value}: {result.evidence[:200]}")
