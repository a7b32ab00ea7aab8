"""Tasks of the evaluate flow: one strategy, one custom criterion, one manual criterion."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.evaluate.plan import EvaluationPlan
from sprintflow.evaluate.steps import custom_criterion_step, manual_criterion_step, strategy_step
from sprintflow.schemas import CriterionResult, StrategyConfig, StrategyResult

from .retries import retry_on_infrastructure

__all__ = ["judge_manual_criterion_task", "run_custom_criterion_task", "run_strategy_task"]


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="{strategy.type.value}")
def run_strategy_task(plan: EvaluationPlan, strategy: StrategyConfig, use_cache: bool) -> StrategyResult:
    """One strategy, or its stored result when identical content and config ran before."""
    return strategy_step(plan, strategy, use_cache)


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="custom-{criterion_id}")
def run_custom_criterion_task(plan: EvaluationPlan, criterion_id: str) -> CriterionResult:
    """A custom criterion: its customCommand in the executor; exit 0 passes."""
    return custom_criterion_step(plan, criterion_id)


@task(cache_policy=NO_CACHE, task_run_name="manual-{criterion_id}")
def judge_manual_criterion_task(plan: EvaluationPlan, criterion_id: str) -> CriterionResult:
    """Ask the evaluator engine, when one is configured; otherwise skipped with the reason."""
    return manual_criterion_step(plan, criterion_id)
