"""``sprintflow report``: the history as an offline HTML report, CSV / Parquet exports and a summary.

The plain path imports neither Prefect nor matplotlib until it needs them, and
runs the same functions as the ``report`` flow; the flow adds Prefect artifacts.
"""

from __future__ import annotations

from pathlib import Path

import click

from sprintflow.orchestration.api import prefect_api_configured

__all__ = ["report"]


@click.command()
@click.argument("workspace", required=False, default=".",
                type=click.Path(path_type=Path, file_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Folder for report.html (interactive, offline), summary.txt, csv/ and parquet/. "
                   "Default: WORKSPACE/.sprintflow/report.")
@click.option("--since", metavar="DATE", default=None,
              help="Only what happened at or after DATE (2026-05-01, or 2026-05-01T12:00Z).")
@click.option("--flow/--no-flow", "use_flow", default=None,
              help="Run as the Prefect 'report' flow, which also publishes every table as a Prefect "
                   "artifact with a stable key (report-<table>, report-summary). Default: only when "
                   "a Prefect server is configured (PREFECT_API_URL), because without one the first "
                   "flow starts sprintflow's background server (~10 s; later commands reuse it).")
@click.option("--key-prefix", default="report", show_default=True,
              help="Artifact key prefix for --flow (lowercase letters, digits, dashes).")
def report(workspace: Path, out: Path | None, since: str | None, use_flow: bool | None,
           key_prefix: str) -> None:
    """Report on WORKSPACE's history (default: the current folder).

    Reads the history (.sprintflow/history/, or SPRINTFLOW_HISTORY when set),
    plus the workspace's bugs.ndjson, scorer rows, test runs and any EvalResult
    files no history row records. Writes report.html: one interactive file that
    opens from disk with nothing loaded from the network (filters by date,
    contract, engine, strategy, criterion and executor; click a point or a bar
    to list its evaluations and open them), with CSV and Parquet exports of
    every table, and prints a short summary.

    \b
    Exit codes: 0 report written (torn lines of a ledger are skipped and listed), 2 bad input (no
    such workspace, bad --since, an EvalResult file that is not a valid one, a ledger that is not a
    regular file).
    """
    from sprintflow.history.dataset import parse_since

    if since is not None:
        parse_since(since)  # a bad date fails before anything is read
    if use_flow is None:
        use_flow = prefect_api_configured()
    summary, html = (_run_flow if use_flow else _run_plain)(workspace, out, since, key_prefix)
    click.echo(summary, nl=False)
    click.echo(f"report: {html}")


def _run_plain(workspace: Path, out: Path | None, since: str | None, key_prefix: str) -> tuple[str, Path]:
    from sprintflow.history.sources import load_history
    from sprintflow.io.layout import WorkspaceLayout
    from sprintflow.reporting.analytics import REPORT_COLUMNS
    from sprintflow.reporting.report import build_report, write_report

    history = load_history(workspace, since=since, columns=REPORT_COLUMNS)
    built = build_report(history, workspace=str(workspace.resolve()), since=since)
    paths = write_report(built, out or WorkspaceLayout(workspace).report_dir)
    return built.summary_text(), paths["html"]


def _run_flow(workspace: Path, out: Path | None, since: str | None, key_prefix: str) -> tuple[str, Path]:
    from sprintflow.errors import WorkspaceError
    from sprintflow.orchestration.server import ensure_prefect_api

    if not workspace.is_dir():  # before paying for Prefect
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    ensure_prefect_api(announce=lambda text: click.echo(text, err=True))
    from sprintflow.flows.report import report_flow

    result = report_flow(str(workspace), str(out) if out else None, since, key_prefix)
    return "\n".join(result["summary"]) + "\n", Path(result["files"]["html"])
