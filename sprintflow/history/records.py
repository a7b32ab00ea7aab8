"""What one evaluation adds to the history: tidy rows, appended as one Parquet file."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sprintflow.io.git import head_sha
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas import EvalResult, SprintContract

from .dataset import EVALS, append_rows

__all__ = ["criterion_methods", "eval_rows", "record_evaluation"]

def _timestamp(text: str | None) -> datetime | None:
    if not text:
        return None
    stamp = datetime.fromisoformat(text)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def eval_rows(eval_result: EvalResult, *, workspace_hash: str | None, git_sha: str | None,
              executor: str | None, image: str | None, run_id: str | None,
              engine: str | None = None, tokens: int | None = None, cost: float | None = None,
              workspace: str | None = None, methods: Mapping[str, str] | None = None,
              duration_ms: int | None = None) -> list[dict[str, Any]]:
    """Tidy rows for one EvalResult: one ``evaluation`` row, then one per strategy and per criterion.

    Args:
        eval_result: the evaluation.
        workspace_hash: content hash of the workspace evaluated (the flakiness key).
        git_sha: the workspace's HEAD, when it is a git repository.
        executor: ``docker`` or ``local``.
        image: the sandbox image, for Docker.
        run_id: the Prefect flow run id (or any id of the run that evaluated).
        engine, tokens, cost: the engine and what it reported, when known.
        workspace: the workspace path, to tell workspaces apart in a shared history.
        methods: criterion id -> verification method, from the contract.
        duration_ms: the evaluation's wall time, when known.

    Example:
        >>> result = EvalResult.model_validate({
        ...     "evalId": "eval-c-1", "contractId": "c", "specId": "s", "timestamp": "2026-05-13T10:31:00Z",
        ...     "iteration": 1, "overallResult": "pass", "summary": "Sprint 1 PASSED.",
        ...     "score": dict.fromkeys(["criteriaTotal", "criteriaPassed", "criteriaFailed", "criteriaSkipped",
        ...                             "requiredPassed", "requiredFailed", "requiredTotal"], 0),
        ...     "strategyResults": [{"strategy": "lint", "required": True, "result": "pass"}]})
        >>> rows = eval_rows(result, workspace_hash="3f9a", git_sha=None, executor="local", image=None,
        ...                  run_id="r1")
        >>> [(r["kind"], r.get("name"), r["result"]) for r in rows]
        [('evaluation', None, 'pass'), ('strategy', 'lint', 'pass')]
    """
    methods = methods or {}
    base = {
        "workspace": workspace, "run_id": run_id, "eval_id": eval_result.eval_id,
        "sprint_run": eval_result.judged.pin_id if eval_result.judged else None,
        "spec_id": eval_result.spec_id, "contract_id": eval_result.contract_id,
        "iteration": eval_result.iteration, "timestamp": _timestamp(eval_result.timestamp),
        "recorded_at": datetime.now(UTC), "workspace_hash": workspace_hash, "git_sha": git_sha,
        "executor": executor, "image": image,
    }
    rows = [{**base, "kind": "evaluation", "result": eval_result.overall_result,
             "required": True, "duration_ms": duration_ms, "regressions": len(eval_result.regressions),
             "engine": engine, "tokens": tokens, "cost_usd": cost,
             "tester_kill_rate": eval_result.tester_mutation.kill_rate if eval_result.tester_mutation else None}]
    rows += [{**base, "kind": "strategy", "name": s.strategy, "required": s.required,
              "result": s.result.value, "error_count": s.error_count, "cached": s.cached, "flaky": s.flaky,
              "duration_ms": s.duration_ms, "test_run": s.test_run,
              "mutants": s.mutation.mutants if s.mutation else None,
              "kill_rate": s.mutation.kill_rate if s.mutation else None}
             for s in eval_result.strategy_results]
    rows += [{**base, "kind": "criterion", "name": c.criterion_id, "required": c.required,
              "result": c.result.value, "method": methods.get(c.criterion_id)}
             for c in eval_result.criteria_results]
    return rows


def criterion_methods(workspace: Path, contract_id: str) -> dict[str, str]:
    """The verification method of each criterion of the workspace's contract ``contract_id``."""
    path = WorkspaceLayout(workspace).contract_file(contract_id)
    try:
        contract = SprintContract.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return {}  # a missing or foreign contract only costs the method column
    return _methods(contract)


def _methods(contract: SprintContract) -> dict[str, str]:
    return {c.criterion_id: c.verification_method.value for c in contract.success_criteria}


def record_evaluation(workspace: Path | str, eval_result: EvalResult, *, content_hash: str | None,
                      executor: str | None, image: str | None, run_id: str | None,
                      engine: str | None = None, tokens: int | None = None, cost: float | None = None,
                      duration_ms: int | None = None, contract: SprintContract | None = None) -> Path | None:
    """Append one evaluation's rows to the history (the one call the evaluate flow makes).

    The criteria's verification methods come from ``contract``, the one the evaluation judged
    (read from ``.sprintflow/contracts/<contractId>.json`` only without one); the git sha is
    looked up here.

    Example:
        >>> import tempfile
        >>> result = EvalResult.model_validate({
        ...     "evalId": "eval-c-1", "contractId": "c", "specId": "s", "timestamp": "2026-05-13T10:31:00Z",
        ...     "iteration": 1, "overallResult": "pass", "summary": "Sprint 1 PASSED.",
        ...     "score": dict.fromkeys(["criteriaTotal", "criteriaPassed", "criteriaFailed", "criteriaSkipped",
        ...                             "requiredPassed", "requiredFailed", "requiredTotal"], 0)})
        >>> record_evaluation(tempfile.mkdtemp(), result, content_hash="3f9a", executor="local", image=None,
        ...                   run_id="r1").parent.name
        'evals'
    """
    workspace = Path(workspace).resolve()
    rows = eval_rows(eval_result, workspace_hash=content_hash, git_sha=head_sha(workspace),
                     executor=executor, image=image, run_id=run_id, engine=engine, tokens=tokens,
                     cost=cost, workspace=str(workspace), duration_ms=duration_ms,
                     methods=_methods(contract) if contract else criterion_methods(workspace, eval_result.contract_id))
    return append_rows(WorkspaceLayout(workspace).history_dir, EVALS, rows)
