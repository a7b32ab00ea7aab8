"""Plan an evaluation, reuse cached strategy results, assemble and store the EvalResult.

Plain functions; ``flows/evaluate.py`` only orchestrates them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from sprintflow.config import load_project_config
from sprintflow.errors import WorkspaceError
from sprintflow.schemas import (
    CriterionResult,
    EvalResult,
    ProjectConfig,
    SprintContract,
    StrategyConfig,
    StrategyResult,
    StrategyType,
    VerificationMethod,
    load_document,
    utc_now,
)

from .executors import Executor
from .feedback import (
    find_regressions,
    generator_feedback,
    overall_result,
    process_items,
    score,
    summarize,
)
from .store import atomic_write_text, sprintflow_dir
from .strategies import StrategyRun, check_strategy_config, resolve_command
from .workspace import workspace_hash

__all__ = ["EvaluationPlan", "assemble_eval_result", "cached_result", "eval_path", "load_inputs",
           "load_previous_eval",
           "plan_evaluation", "store_cached_result", "write_eval_result"]

_SEED_ORDER = {t: i for i, t in enumerate(StrategyType)}


@dataclass(frozen=True)
class EvaluationPlan:
    """What one evaluation will do, decided before anything runs."""

    workspace: Path
    contract: SprintContract
    project: ProjectConfig
    strategies: list[StrategyConfig]
    """In the seed's order; includes strategies only a criterion asks for (not required)."""
    executor: Executor
    iteration: int
    content_hash: str

    def run_for(self, strategy: StrategyConfig) -> StrategyRun:
        return StrategyRun(self.workspace, strategy, self.project, self.executor, self.contract)

    @property
    def eval_id(self) -> str:
        return f"eval-{self.contract.contract_id}-{self.iteration}"


def load_inputs(workspace: Path | str, contract_path: Path | str
                ) -> tuple[SprintContract, ProjectConfig, list[StrategyConfig]]:
    """Load and check the contract, the config and the strategies to run; runs nothing.

    Raises InputError subclasses, so the CLI can refuse bad input before any flow starts.
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    contract = load_document(contract_path, SprintContract)
    project = load_project_config(workspace)
    strategies = list(project.strategies())
    configured = {s.type for s in strategies}
    for criterion in contract.success_criteria:
        method = criterion.verification_method
        if method in (VerificationMethod.manual, VerificationMethod.custom):
            continue
        wanted = StrategyType(method.value)
        if wanted not in configured:
            # A criterion asks for a check the config does not list: run the default,
            # not required as a strategy (the criterion carries its own requiredness).
            strategies.append(StrategyConfig(type=wanted, required=False))
            configured.add(wanted)
    strategies.sort(key=lambda s: _SEED_ORDER[s.type])
    for strategy in strategies:
        check_strategy_config(strategy, project)
    return contract, project, strategies


def plan_evaluation(workspace: Path | str, contract_path: Path | str, executor: Executor,
                    iteration: int | None = None) -> EvaluationPlan:
    """Everything one evaluation needs, decided before anything runs.

    Example:
        >>> plan = plan_evaluation("examples/python-api", "contract.json", LocalExecutor())
        >>> [s.type.value for s in plan.strategies][:2]
        ['build', 'typecheck']
    """
    contract, project, strategies = load_inputs(workspace, contract_path)
    return EvaluationPlan(
        workspace=Path(workspace).resolve(), contract=contract, project=project, strategies=strategies,
        executor=executor, iteration=iteration or len(contract.iteration_history) + 1,
        content_hash=workspace_hash(workspace),
    )


def _cache_key(plan: EvaluationPlan, strategy: StrategyConfig) -> str:
    material = json.dumps({
        "workspace": plan.content_hash,
        "strategy": strategy.to_dict(),
        "command": resolve_command(strategy, plan.project),
        "executor": plan.executor.describe(),
        "image": strategy.image,
        "timeout": plan.run_for(strategy).timeout,
    }, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def _cache_file(plan: EvaluationPlan, strategy: StrategyConfig) -> Path:
    return sprintflow_dir(plan.workspace) / "cache" / "strategies" / f"{_cache_key(plan, strategy)}.json"


def cached_result(plan: EvaluationPlan, strategy: StrategyConfig) -> StrategyResult | None:
    """A result of the same strategy on identical content and config, if one was stored."""
    path = _cache_file(plan, strategy)
    try:
        result = StrategyResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None  # missing or damaged cache entries are simply misses
    return result.model_copy(update={"cached": True})


def store_cached_result(plan: EvaluationPlan, strategy: StrategyConfig, result: StrategyResult) -> None:
    """Keep a real verdict for reuse; timeouts and could-not-run failures are never cached."""
    if result.exit_code is None or "did not finish within" in result.details:
        return
    atomic_write_text(_cache_file(plan, strategy), result.to_json())


def eval_path(workspace: Path, eval_id: str) -> Path:
    return sprintflow_dir(workspace) / "evals" / f"{eval_id}.json"


def load_previous_eval(plan: EvaluationPlan) -> EvalResult | None:
    """The latest earlier EvalResult of this contract, for regression detection."""
    folder = sprintflow_dir(plan.workspace) / "evals"
    prefix = f"eval-{plan.contract.contract_id}-"
    earlier: list[tuple[int, Path]] = []
    for path in folder.glob(f"{prefix}*.json"):
        suffix = path.stem[len(prefix):]
        if suffix.isdigit() and int(suffix) < plan.iteration:
            earlier.append((int(suffix), path))
    for _, path in sorted(earlier, reverse=True):
        try:
            return EvalResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            continue  # a damaged older result cannot tell us about regressions
    return None


def assemble_eval_result(plan: EvaluationPlan, strategies: list[StrategyResult],
                         criteria: list[CriterionResult], previous: EvalResult | None,
                         blocking_issues: list[str] = (), notes: list[str] = ()) -> EvalResult:
    """Score, regressions, feedback and summary around the raw results.

    ``blocking_issues`` (found outside the strategies) fail the result as critical items.
    """
    regressions = find_regressions(previous, strategies, criteria)
    commands = {s.name: resolve_command(s, plan.project) or "" for s in plan.strategies}
    feedback = generator_feedback(strategies, criteria, regressions, commands)
    feedback = [*process_items(blocking_issues, notes), *feedback]
    result = "fail" if blocking_issues else overall_result(strategies, criteria)
    score_ = score(criteria)
    contract = plan.contract
    return EvalResult(
        eval_id=plan.eval_id, contract_id=contract.contract_id, spec_id=contract.spec_id,
        timestamp=utc_now(), iteration=plan.iteration, overall_result=result, score=score_,
        strategy_results=strategies, criteria_results=criteria, regressions=regressions,
        generator_feedback=feedback,
        summary=summarize(contract.title, contract.sprint_number, result, score_, feedback),
    )


def write_eval_result(workspace: Path, result: EvalResult) -> Path:
    """Atomically write ``.sprintflow/evals/<evalId>.json``."""
    path = eval_path(workspace, result.eval_id)
    atomic_write_text(path, result.to_json())
    return path
