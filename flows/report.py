"""The report flow: build the report, write its files, publish its tables as Prefect artifacts.

Thin orchestration over :mod:`sprintflow.reporting.report`. Artifact keys are
stable (``<prefix>-<table>``, ``<prefix>-summary``), so the Prefect UI keeps
every version of each table over time; a scheduled weekly report becomes a
history of the history.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from prefect.artifacts import create_markdown_artifact, create_table_artifact

from sprintflow.history.dataset import parse_since
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.orchestration.runs import flow
from sprintflow.reporting.report import Report, table_records
from sprintflow.tasks.report import build_report_task, write_report_task

__all__ = ["ARTIFACT_ROWS", "ReportResult", "publish_artifacts", "report_flow"]

ARTIFACT_ROWS = 200
"""Rows per table artifact; the CSV and Parquet exports hold all of them."""


class ReportResult(TypedDict):
    """What :func:`report_flow` returns."""

    summary: list[str]
    """The summary's lines, as ``summary.txt`` holds them."""
    files: dict[str, str]
    """Path of each written file or folder by kind: ``html``, ``summary``, ``csv``, ``parquet``."""
    artifacts: list[str]
    """Keys of the published artifacts, the summary's first."""


def publish_artifacts(report: Report, key_prefix: str = "report", html_path: str | None = None) -> list[str]:
    """One table artifact per report table and one markdown summary; returns the keys.
    """
    summary_key = f"{key_prefix}-summary"
    where = f"\n\nFull report: `{html_path}`" if html_path else ""
    create_markdown_artifact(f"# sprintflow report\n\n```\n{report.summary_text()}```{where}\n",
                             key=summary_key, description="Is the agent getting better? The short answer.")
    keys = [summary_key]
    for name, table in report.tables.items():
        shown = f"first {ARTIFACT_ROWS} of {len(table)} rows" if len(table) > ARTIFACT_ROWS else f"{len(table)} rows"
        create_table_artifact(table_records(table, ARTIFACT_ROWS), key=f"{key_prefix}-{name}",
                              description=f"{name} ({shown})")
        keys.append(f"{key_prefix}-{name}")
    return keys


@flow(name="report", log_prints=True)
def report_flow(workspace: str = ".", out: str | None = None, since: str | None = None,
                key_prefix: str = "report") -> ReportResult:
    """Report on the workspace's history: HTML, CSV and Parquet files, and Prefect artifacts.

    Args:
        workspace: the workspace whose history (and bugs, scores, test runs) is read.
        out: folder for the files (default ``<workspace>/.sprintflow/report``).
        since: only what happened at or after this date (``2026-05-01``).
        key_prefix: artifact key prefix; give each reported workspace its own to keep series apart.
    """
    if since is not None:
        parse_since(since)  # refuse a bad date before any work
    report = build_report_task(workspace, since)
    paths = write_report_task(report, str(out or WorkspaceLayout(Path(workspace)).report_dir))
    keys = publish_artifacts(report, key_prefix, paths["html"])
    print(report.summary_text())
    return {"summary": report.summary_lines(), "files": paths, "artifacts": keys}
