"""Tasks of the report flow: build the report from the history, write its files."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.history.sources import load_history
from sprintflow.reporting.analytics import REPORT_COLUMNS
from sprintflow.reporting.report import Report, build_report, write_report

__all__ = ["build_report_task", "write_report_task"]


@task(cache_policy=NO_CACHE)
def build_report_task(workspace: str, since: str | None) -> Report:
    """Load and analyse in one task: the raw history never crosses a task boundary."""
    history = load_history(workspace, since=since, columns=REPORT_COLUMNS)
    return build_report(history, workspace=str(Path(workspace).resolve()), since=since)


@task(cache_policy=NO_CACHE)
def write_report_task(report: Report, out: str) -> dict[str, str]:
    """The report's HTML, CSV and Parquet files; returns kind -> path."""
    return {kind: str(path) for kind, path in write_report(report, out).items()}
