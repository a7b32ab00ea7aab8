"""Tasks of the evaluate flow: one strategy, one custom criterion, one manual criterion."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.errors import ConfigError
from sprintflow.evaluate.cache import cached_result, store_cached_result
from sprintflow.evaluate.criteria import judge_by_command, judge_manual, manual_prompt, skipped_manual
from sprintflow.evaluate.executors import CommandSpec
from sprintflow.evaluate.plan import EvaluationPlan
from sprintflow.evaluate.strategies import run_strategy
from sprintflow.schemas import CriterionResult, StrategyConfig, StrategyResult
from sprintflow.sprint.engines import resolve_engine, run_engine

from .retries import retry_on_infrastructure

__all__ = ["judge_manual_criterion_task", "run_custom_criterion_task", "run_strategy_task"]


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="{strategy.type.value}")
def run_strategy_task(plan: EvaluationPlan, strategy: StrategyConfig, use_cache: bool) -> StrategyResult:
    """One strategy, or its stored result when identical content and config ran before."""
    if use_cache:
        hit = cached_result(plan, strategy)
        if hit is not None:
            return hit
    result = run_strategy(plan.run_for(strategy))
    store_cached_result(plan, strategy, result)
    return result


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      task_run_name="custom-{criterion_id}")
def run_custom_criterion_task(plan: EvaluationPlan, criterion_id: str) -> CriterionResult:
    """A custom criterion: its customCommand in the executor; exit 0 passes."""
    criterion = next(c for c in plan.contract.success_criteria if c.criterion_id == criterion_id)
    command = criterion.custom_command or ""
    spec = CommandSpec(command=command, timeout=plan.project.executor.default_timeout)
    return judge_by_command(criterion, command, plan.executor.run(plan.workspace, spec))


@task(cache_policy=NO_CACHE, task_run_name="manual-{criterion_id}")
def judge_manual_criterion_task(plan: EvaluationPlan, criterion_id: str) -> CriterionResult:
    """Ask the evaluator engine, when one is configured; otherwise skipped with the reason."""
    criterion = next(c for c in plan.contract.success_criteria if c.criterion_id == criterion_id)
    try:
        engine = resolve_engine("evaluator", config=plan.project.engines)
    except ConfigError:
        return skipped_manual(criterion, "Manual criterion: no evaluator engine is configured "
                                         "to judge it by reading the code.")
    reply = run_engine(engine, manual_prompt(criterion, plan.contract, plan.workspace),
                       cwd=plan.workspace, timeout=plan.project.engines.timeout)
    return judge_manual(criterion, reply)
