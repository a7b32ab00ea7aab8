"""The EvalResult: assembled around the raw results, written atomically, read back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.io.secrets import mask_data
from sprintflow.schemas import CriterionResult, EvalResult, InferredCommand, StrategyResult, utc_now
from sprintflow.schemas.evaluation import JudgedRecord

from .feedback import find_regressions, generator_feedback, overall_result, score, summarize, with_process_items
from .plan import EvaluationPlan

__all__ = ["assemble_eval_result", "contract_evals", "load_eval", "load_previous_eval", "write_eval_result"]


def contract_evals(workspace: Path, contract_id: str) -> list[EvalResult]:
    """Every readable EvalResult of a contract in ``.sprintflow/evals/``, oldest first.

    Ids are ``eval-<contractId>-<iteration>-<stamp>`` (older files lack the stamp); the
    file name alone cannot tell contract ``c`` from ``c-1``, so the document says whose it is.
    Evaluations of one second are ordered by their file's time.
    """
    found: list[tuple[str, int, EvalResult]] = []
    for path in WorkspaceLayout(workspace).evals_dir.glob(f"eval-{contract_id}-*.json"):
        try:
            result = EvalResult.model_validate_json(path.read_text(encoding="utf-8"))
            written = path.stat().st_mtime_ns
        except (OSError, ValidationError, ValueError):
            continue  # a damaged result cannot tell us about the contract's past
        if result.contract_id == contract_id:
            found.append((result.timestamp, written, result))
    return [result for _, _, result in sorted(found, key=lambda item: item[:2])]


def load_previous_eval(plan: EvaluationPlan) -> EvalResult | None:
    """The latest EvalResult of an earlier iteration of this contract, for regression detection."""
    earlier = [r for r in contract_evals(plan.workspace, plan.contract.contract_id) if r.iteration < plan.iteration]
    return max(earlier, key=lambda r: r.iteration) if earlier else None


def assemble_eval_result(plan: EvaluationPlan, strategies: list[StrategyResult],
                         criteria: list[CriterionResult], previous: EvalResult | None,
                         blocking_issues: Sequence[str] = (), notes: Sequence[str] = (),
                         touched: Sequence[str] = ()) -> EvalResult:
    """Score, regressions, feedback and summary around the raw results.

    ``blocking_issues`` (found outside the strategies) fail the result as critical items;
    ``notes`` follow every failure; items in the files the change ``touched`` come first.
    """
    regressions = find_regressions(previous, strategies, criteria)
    commands = {s.name: plan.plugin(s).command() or "" for s in plan.strategies}
    feedback = generator_feedback(strategies, criteria, regressions, commands, plan.source,
                                  plan.project.sprint.held_out_feedback, touched=touched)
    feedback = with_process_items(feedback, list(blocking_issues), list(notes))
    result = "fail" if blocking_issues else overall_result(strategies, criteria)
    score_ = score(criteria)
    contract = plan.contract
    assembled = EvalResult(
        eval_id=plan.eval_id, contract_id=contract.contract_id, spec_id=contract.spec_id,
        timestamp=utc_now(), iteration=plan.iteration, overall_result=result, score=score_,
        strategy_results=strategies, criteria_results=criteria, regressions=regressions,
        generator_feedback=feedback,
        summary=summarize(contract.title, contract.sprint_number, result, score_, feedback),
        executor=plan.executor.record([s.name for s in plan.strategies if s.network]),
        judged=JudgedRecord(tree_digest=plan.tree.digest, pin_id=plan.tree.pin_id,
                            contract_revision=contract.revision()),
        inferred=_inferred_in_use(plan),
    )
    # Commands, details and evidence may quote a credential too: the one result everything
    # downstream stores or shows (file, artifacts, history, terminal) is the masked one.
    return EvalResult.model_validate(mask_data(assembled.to_dict()))


def _inferred_in_use(plan: EvaluationPlan) -> list[InferredCommand]:
    """The inferred strategies and commands this evaluation ran: those of strategies without a command of
    their own (an entry's command is the config's word, even when it reads the same)."""
    ran = {(s.type, plan.plugin(s).command()) for s in plan.strategies
           if not s.command and not getattr(s.config, "command", None)}
    return [inferred for inferred in plan.project.inferred if (inferred.strategy, inferred.command) in ran]


def write_eval_result(workspace: Path, result: EvalResult) -> Path:
    """Atomically write ``.sprintflow/evals/<evalId>.json``."""
    path = WorkspaceLayout(workspace).eval_file(result.eval_id)
    atomic_write_text(path, result.to_json())
    return path


def load_eval(workspace: Path, contract_id: str, iteration: int) -> EvalResult | None:
    """The latest EvalResult of one iteration of a contract, if one was written."""
    judged = [r for r in contract_evals(workspace, contract_id) if r.iteration == iteration]
    return judged[-1] if judged else None
