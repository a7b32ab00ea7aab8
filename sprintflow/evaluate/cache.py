"""Strategy and custom-criterion results reused across evaluations of identical content and config.

A custom criterion's command is judged like a strategy's: on the same content, with
the same command, executor and build below it, it answers the same. Both kinds live
in ``.sprintflow/cache/strategies/`` under different keys.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
from pathlib import Path

from pydantic import ValidationError

from sprintflow.io.files import atomic_write_text, remove_owned
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas import CriterionResult, StrategyConfig, StrategyResult, StrategyType, SuccessCriterion

from .plan import EvaluationPlan

__all__ = ["cached_criterion", "cached_outputs", "cached_result", "finished", "store_cached_criterion",
           "store_cached_result"]

logger = logging.getLogger("sprintflow.cache")


def _cache_key(plan: EvaluationPlan, strategy: StrategyConfig) -> str:
    material = json.dumps({
        "workspace": plan.content_hash,
        "strategy": strategy.to_dict(),
        "command": plan.plugin(strategy).command(),
        "executor": plan.executor.describe(),
        "image": strategy.image,
        "timeout": plan.run_for(strategy).timeout,
        "reference": _reference_text(plan, plan.check_of(strategy)),
    }, sort_keys=True)
    return hashlib.sha256(material.encode()).hexdigest()


def _reference_text(plan: EvaluationPlan, check: str) -> str | None:
    """The baseline's reference a verdict was judged against: the same tree judged against another differs."""
    reference = plan.reference_of(check)
    return reference.to_json() if reference is not None else None


def _cache_file(plan: EvaluationPlan, strategy: StrategyConfig) -> Path:
    return WorkspaceLayout(plan.workspace).strategy_cache_file(_cache_key(plan, strategy))


def cached_result(plan: EvaluationPlan, strategy: StrategyConfig) -> StrategyResult | None:
    """A result of the same strategy on identical content and config, if one was stored."""
    path = _cache_file(plan, strategy)
    try:
        result = StrategyResult.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None  # missing or damaged cache entries are simply misses
    return result.model_copy(update={"cached": True})


def store_cached_result(plan: EvaluationPlan, strategy: StrategyConfig, result: StrategyResult) -> None:
    """Keep a real verdict for reuse; timeouts and could-not-run failures are never cached.

    A build's output (its layer of the evaluation view) is kept beside its result,
    so the strategies that run on it can reuse a cached build too.
    """
    if not finished(result):
        return
    outputs = plan.evaluation_view.outputs(plan.layer_of(strategy))
    kept = cached_outputs(plan, strategy)
    try:
        if strategy.type is StrategyType.build and outputs is not None and outputs.is_dir():
            remove_owned(kept)
            shutil.copytree(outputs, kept, symlinks=True, ignore=_whiteouts)
        atomic_write_text(_cache_file(plan, strategy), result.to_json())
    except OSError as exc:  # a full disk: the next evaluation runs it again
        _not_cached(strategy.name, exc)
        _remove_quietly(kept)  # no result without its outputs, nor outputs without their result
        _remove_quietly(_cache_file(plan, strategy))


def finished(result: StrategyResult) -> bool:
    """The command ran and ended on its own: neither could-not-run nor stopped at its deadline."""
    return result.exit_code is not None and "did not finish within" not in result.details


def _criterion_file(plan: EvaluationPlan, criterion: SuccessCriterion, timeout: float) -> Path:
    material = json.dumps({
        "workspace": plan.content_hash,
        "criterion": criterion.criterion_id,
        "command": criterion.custom_command,
        "executor": plan.executor.describe(),
        "timeout": timeout,
        "below": [_cache_key(plan, s) for s in plan.strategies if s.type is StrategyType.build],
        "reference": _reference_text(plan, f"criterion-{criterion.criterion_id}"),
    }, sort_keys=True)
    return WorkspaceLayout(plan.workspace).strategy_cache_file(hashlib.sha256(material.encode()).hexdigest())


def cached_criterion(plan: EvaluationPlan, criterion: SuccessCriterion, timeout: float) -> CriterionResult | None:
    """The verdict of the same custom criterion on identical content, if one was stored (evidence says so)."""
    try:
        result = CriterionResult.model_validate_json(
            _criterion_file(plan, criterion, timeout).read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None
    return result.model_copy(update={"evidence": f"{result.evidence} (cached: reused from an identical run)"})


def store_cached_criterion(plan: EvaluationPlan, criterion: SuccessCriterion, timeout: float,
                           result: CriterionResult) -> None:
    """Keep a custom criterion's verdict for reuse (the caller keeps timeouts and could-not-run out)."""
    try:
        atomic_write_text(_criterion_file(plan, criterion, timeout), result.to_json())
    except OSError as exc:
        _not_cached(criterion.criterion_id, exc)


def _not_cached(name: str, exc: OSError) -> None:
    # A cache only saves time: a disk that refuses it costs a re-run, never a verdict.
    logger.warning("%s: result not cached (%s)", name, _reason(exc))


def _reason(exc: OSError) -> str:
    copies = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(copies, list) and copies:  # copytree's list of (source, target, why)
        return f"{len(copies)} output files not copied: {str(copies[0][-1]).split(': ')[0]}"
    return exc.strerror or str(exc)


def _remove_quietly(path: Path) -> None:
    try:
        remove_owned(path)
    except OSError:
        pass  # what is left is never read without its result file


def cached_outputs(plan: EvaluationPlan, strategy: StrategyConfig) -> Path:
    """Where a cached build's output is kept."""
    return _cache_file(plan, strategy).with_suffix(".outputs")


def _whiteouts(folder: str, names: list[str]) -> list[str]:
    """An overlay's record of a deletion is a character device: not an output to keep."""
    return [n for n in names if stat.S_ISCHR(os.lstat(os.path.join(folder, n)).st_mode)]


