"""A scoring run's report: results aggregated in case order, their table rows, and what is written.

``build_report`` orders results as the file does, so identical engine answers give an identical
report apart from its ``timing`` section; ``persist_report`` writes it and appends a history row
(``persist_compare_report`` does both for the two sides of a comparison, and writes the comparison).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sprintflow.io.files import append_ndjson, atomic_write_text
from sprintflow.io.git import head_sha
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas._base import utc_now
from sprintflow.schemas.scoring import (
    CaseResult,
    CompareReport,
    ScoreHistoryRow,
    ScoreMode,
    ScoreReport,
    ScoreTiming,
    ScoreUsage,
)
from sprintflow.scoring.answers import _show
from sprintflow.scoring.prepare import ScoreRun

__all__ = ["build_report", "persist_compare_report", "persist_report", "report_rows"]


def _epoch_totals(results: list[CaseResult]) -> dict[str, Any]:
    """The report's epoch fields: K and the three estimators averaged over cases; empty for one epoch."""
    if not results or results[0].epochs is None:
        return {}
    total = len(results)

    def mean(values: Iterable[float | None]) -> float:
        return sum(v or 0.0 for v in values) / total

    return {"epochs": len(results[0].epochs), "pass_at_1": mean(r.pass_at_1 for r in results),
            "pass_at_k": mean(r.pass_at_k for r in results), "pass_hat_k": mean(r.pass_hat_k for r in results)}


def build_report(run: ScoreRun, results: list[CaseResult], *, started_at: str, duration_s: float,
                 concurrency: int, mode: ScoreMode = "plain") -> ScoreReport:
    """Aggregate per-case results (in case order) into a ``ScoreReport``.

    ``results`` may come from :func:`sprintflow.scoring.epochs.merge_epochs`: the report then carries the
    epoch fields too.
    """
    passed = sum(1 for result in results if result.passed)
    total = len(results)
    usage = None
    reported = [r for r in results if r.input_tokens is not None or r.output_tokens is not None
                or r.cost_usd is not None]
    if reported:
        usage = ScoreUsage(
            input_tokens=_total(r.input_tokens for r in reported),
            output_tokens=_total(r.output_tokens for r in reported),
            cost_usd=_total(r.cost_usd for r in reported),
        )
    timing = ScoreTiming(started_at=started_at, finished_at=utc_now(), duration_s=round(duration_s, 3),
                         concurrency=concurrency, mode=mode,
                         cases={str(r.id): round(r.duration_s, 3) for r in results})
    return ScoreReport(skill=run.skill, total=total, passed=passed, failed=total - passed,
                       score=passed / total if total else 0.0, **_epoch_totals(results), cases=results,
                       engine=run.engine,
                       cases_file=run.cases_file, cases_sha256=run.cases_sha256, prompt_file=run.prompt_file,
                       prompt_sha256=run.prompt_sha256, comparator=run.comparator, usage=usage, timing=timing)


def _total(values: Iterable[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    return round(total, 6) if isinstance(total, float) else total


# --------------------------------------------------------------------------- persistence


def persist_report(report: ScoreReport, root: Path | str, *, stamp: str | None = None,
                   comparison: str | None = None) -> Path:
    """Write ``.sprintflow/scores/<skill>/<stamp>.json`` atomically and append a history row.

    The row's shape is ``ScoreHistoryRow``. Returns the report's path.
    """
    root = Path(root)
    stamp = stamp or _stamp()
    path = WorkspaceLayout(root).scores_dir(report.skill) / f"{stamp}.json"
    atomic_write_text(path, report.to_json())
    timing = report.timing
    usage = report.usage or ScoreUsage()
    row = ScoreHistoryRow(
        recorded_at=utc_now(), skill=report.skill, total=report.total, passed=report.passed,
        failed=report.failed, score=report.score, failed_ids=report.failed_ids, engine=report.engine,
        cases_file=report.cases_file, cases_sha256=report.cases_sha256, prompt_file=report.prompt_file,
        prompt_sha256=report.prompt_sha256, git_sha=head_sha(root),
        mode=timing.mode if timing else "plain", concurrency=timing.concurrency if timing else 0,
        duration_s=timing.duration_s if timing else 0.0, input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens, cost_usd=usage.cost_usd,
        report=path.relative_to(root).as_posix(), comparison=comparison, **_epoch_history(report),
    )
    append_ndjson(WorkspaceLayout(root).scores_file, row.to_dict())
    return path


def _epoch_history(report: ScoreReport) -> dict[str, Any]:
    """The history row's epoch fields: the report's figures, each epoch's score, the flaky cases."""
    if report.epochs is None:
        return {}
    per_epoch = [0] * report.epochs
    for case in report.cases:
        for sample in case.epochs or []:
            per_epoch[sample.epoch - 1] += sample.passed
    return {"epochs": report.epochs, "pass_at_1": report.pass_at_1, "pass_at_k": report.pass_at_k,
            "pass_hat_k": report.pass_hat_k,
            "epoch_scores": [n / report.total if report.total else 0.0 for n in per_epoch],
            "flaky_ids": [case.id for case in report.cases if case.stability == "flaky"]}


def persist_compare_report(report: CompareReport, a: ScoreReport, b: ScoreReport, root: Path | str) -> Path:
    """Persist a comparison: both score reports (with history rows) and the comparison itself.

    Files share one stamp: ``<stamp>-a.json``, ``<stamp>-b.json``, ``<stamp>-compare.json``.
    """
    stamp = _stamp()
    persist_report(a, root, stamp=f"{stamp}-a", comparison=stamp)
    persist_report(b, root, stamp=f"{stamp}-b", comparison=stamp)
    path = WorkspaceLayout(Path(root)).scores_dir(report.skill) / f"{stamp}-compare.json"
    atomic_write_text(path, report.to_json())
    return path


def report_rows(report: ScoreReport, *, failed_only: bool = False) -> list[dict[str, Any]]:
    """Flat rows for a table (Prefect artifact, terminal): id, pass, expected, actual, reason.

    Over K > 1 epochs each row also has ``epochs`` (``"2/3"``: epochs passed of K) and ``stability``.
    """
    rows = []
    for case in report.cases:
        if failed_only and case.passed:
            continue
        row: dict[str, Any] = {"id": str(case.id), "pass": case.passed, "expected": _show(case.expected),
                               "actual": _show(case.actual) if case.actual is not None else "",
                               "reason": case.reason or ""}
        if report.epochs:
            row.update(epochs=f"{case.passes}/{report.epochs}", stability=case.stability)
        rows.append(row)
    return rows


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
