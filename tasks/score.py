"""Tasks of the score flows: a batch of cases, and publishing a report or a comparison."""

from __future__ import annotations

import re

from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE

from sprintflow.schemas.scoring import CaseResult, CompareReport, EvalCase, ScoreReport
from sprintflow.scoring.prepare import ScoreRun
from sprintflow.scoring.report import persist_compare_report, persist_report, report_rows
from sprintflow.scoring.runs import score_case

from .retries import retry_on_infrastructure

__all__ = ["publish_comparison", "publish_report", "score_batch"]


def _artifact_key(prefix: str, skill: str) -> str:
    # Artifact keys allow lowercase letters, digits and dashes only.
    return f"{prefix}-{re.sub(r'[^a-z0-9-]+', '-', skill.lower())}".strip("-")


@task(name="score-batch", retries=2, retry_delay_seconds=2, retry_condition_fn=retry_on_infrastructure,
      cache_policy=NO_CACHE, persist_result=False)
def score_batch(run: ScoreRun, cases: list[EvalCase]) -> list[CaseResult]:
    """Score a batch of cases one after the other (the flow runs batches side by side)."""
    return [score_case(run, case) for case in cases]


@task(name="persist-score-report", cache_policy=NO_CACHE, persist_result=False)
def publish_report(report: ScoreReport, root: str, persist: bool) -> str | None:
    """Persist the report and its history row; show it as a table artifact."""
    path = persist_report(report, root) if persist else None
    epochs = (f" in all {report.epochs} epochs; pass@{report.epochs} {report.pass_at_k:.3f}, "
              f"pass@1 {report.pass_at_1:.3f}" if report.epochs else "")
    create_table_artifact(
        table=report_rows(report), key=_artifact_key("score", report.skill),
        description=f"**{report.skill}**: {report.passed}/{report.total} passed{epochs} (score "
                    f"{report.score:.3f}); prompt `{report.prompt_file}` ({report.prompt_sha256[:12]})",
    )
    return str(path) if path else None


@task(name="persist-compare-report", cache_policy=NO_CACHE, persist_result=False)
def publish_comparison(comparison: CompareReport, a: ScoreReport, b: ScoreReport, root: str,
                       persist: bool) -> str | None:
    """Persist both reports and the comparison; show the differing cases as a table artifact."""
    path = persist_compare_report(comparison, a, b, root) if persist else None
    rows = [{"id": str(d.id), "a": d.a, "b": d.b, "reason_a": d.reason_a or "", "reason_b": d.reason_b or ""}
            for d in comparison.differences]
    test = comparison.mcnemar
    create_table_artifact(
        table=rows or [{"id": "", "a": "", "b": "", "reason_a": "no differing cases", "reason_b": ""}],
        key=_artifact_key("score-compare", comparison.skill),
        description=f"**{comparison.skill}**: A {a.passed}/{a.total} vs B {b.passed}/{b.total}; "
                    f"McNemar p = {test.p_value:.4g} → {test.verdict}",
    )
    return str(path) if path else None


