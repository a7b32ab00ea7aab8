"""The report as one self-contained HTML page: inline CSS, inline SVG charts, no script, no network.

Open it from disk, mail it, archive it: nothing is loaded from anywhere.

Example:
    >>> html = render_html(build_report(load_history(".")))
    >>> "<svg" in html and "http" not in html.split("<body")[0]
    True
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from matplotlib.figure import Figure

from sprintflow.reporting import charts
from sprintflow.reporting.report import Report

__all__ = ["SECTIONS", "Section", "render_html"]

HTML_ROWS = 25
"""Rows shown per table in the page; the CSV and Parquet exports hold all of them."""


@dataclass(frozen=True)
class Section:
    title: str
    intro: str
    charts: tuple[Callable[[dict[str, pd.DataFrame]], Figure | None], ...]
    tables: tuple[str, ...]


SECTIONS = (
    Section("Pass rate", "Share of decided outcomes (pass / (pass + fail)) with 95% Wilson intervals; "
            "skipped results are counted apart.",
            (lambda t: charts.pass_rate_trend(t["pass-rate-by-week"], t["first-pass-yield-by-week"]),
             lambda t: charts.strategy_pass_rates(t["pass-rate-by-strategy"]),
             lambda t: charts.strategy_trends(t["strategy-pass-rate-by-week"])),
            ("pass-rate-by-strategy", "pass-rate-by-week")),
    Section("First-pass yield and time to green", "A contract's first evaluation passing, and how many "
            "iterations and hours it took to pass at all.",
            (lambda t: charts.iterations_to_green_chart(t["time-to-green"]),),
            ("first-pass-yield", "first-pass-yield-by-week", "time-to-green")),
    Section("Criteria coverage", "How success criteria were verified; 'never exercised' ones were only ever "
            "skipped, 'never passing' ones ran and never passed.",
            (lambda t: charts.coverage_chart(t["criteria-coverage-summary"]),),
            ("criteria-coverage-summary", "criteria-coverage")),
    Section("Flaky strategies", "Fresh runs (not cached) of a strategy on the same workspace content hash "
            "that disagree: a flip is an outcome different from the run before.",
            (lambda t: charts.flakiness_chart(t["flaky-strategies"]),), ("flaky-strategies",)),
    Section("Regressions", "Something that passed in the previous evaluation of a contract and fails now.",
            (lambda t: charts.regressions_chart(t["regressions-by-week"]),), ("regressions-by-week",)),
    Section("Bugs", "From bugs.ndjson: opened, fixed and reopened, and the time from (re)opening to the fix.",
            (lambda t: charts.bug_activity_chart(t["bug-activity"]),),
            ("bug-summary", "bug-activity", "time-to-fix")),
    Section("Scorer", "Held-out case scores per skill and prompt version (first 8 hex of its sha256).",
            (lambda t: charts.score_trend_chart(t["score-trends"]),), ("score-by-prompt", "score-trends")),
    Section("Tokens and cost", "What the engines reported, summed per sprint (contract).",
            (lambda t: charts.cost_chart(t["cost-per-sprint"]),), ("cost-per-sprint",)),
    Section("Test runs", "Unit-test runs of the tester: failed tests and acceptance coverage per week.",
            (lambda t: charts.testrun_chart(t["testrun-trends"]),), ("testrun-trends",)),
)
"""The page, in order: each section's charts, then its tables."""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1.5em;color:#1d1d1f}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{font-size:1em;margin:1.2em 0 .4em;font-family:ui-monospace,monospace}
.meta{color:#666} pre.summary{background:#f5f5f7;padding:1em;border-radius:6px;white-space:pre-wrap}
figure.chart{margin:1em 0} figure.chart svg{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:12px;margin:.3em 0 1em}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right} th{background:#f5f5f7}
td:first-child,th:first-child{text-align:left} .note{color:#666;font-size:12px}
nav a{margin-right:1em}
"""

_PERCENT = ("rate", "share", "yield", "ci_low", "ci_high", "coverage")


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    """Readable cells: rates as percentages, times to the minute, weeks as dates."""
    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        if pd.api.types.is_datetime64_any_dtype(values):
            fmt = "%Y-%m-%d" if column == "week" else "%Y-%m-%d %H:%M"
            shown[column] = values.dt.strftime(fmt)
        elif pd.api.types.is_float_dtype(values) and any(part in column for part in _PERCENT):
            shown[column] = values.map(lambda v: "" if pd.isna(v) else f"{v:.1%}")
        elif pd.api.types.is_float_dtype(values):
            shown[column] = values.map(lambda v: "" if pd.isna(v) else f"{v:,.2f}")
    return shown


def _table(key: str, frame: pd.DataFrame) -> str:
    if frame.empty:
        return f'<h3 id="{key}">{key}</h3><p class="note">No data.</p>'
    note = (f'<p class="note">First {HTML_ROWS} of {len(frame):,} rows; all of them in csv/{key}.csv.</p>'
            if len(frame) > HTML_ROWS else "")
    body = _display(frame.head(HTML_ROWS)).to_html(index=False, na_rep="", border=0, escape=True)
    return f'<h3 id="{key}">{key}</h3>{body}{note}'


def _section(section: Section, tables: dict[str, pd.DataFrame]) -> str:
    parts = [f"<section><h2>{html.escape(section.title)}</h2><p>{html.escape(section.intro)}</p>"]
    for draw in section.charts:
        figure = draw(tables)
        if figure is not None:
            parts.append(f'<figure class="chart">{charts.to_svg(figure)}</figure>')
    parts += [_table(key, tables[key]) for key in section.tables]
    return "".join(parts) + "</section>"


def render_html(report: Report) -> str:
    """The whole report as one HTML document.

    Example:
        >>> Path("report.html").write_text(render_html(report))
    """
    counts = ", ".join(f"{n:,} {what}" for what, n in report.counts.items())
    since = f" · since {html.escape(report.since)}" if report.since else ""
    nav = "".join(f'<a href="#s{i}">{html.escape(s.title)}</a>' for i, s in enumerate(SECTIONS))
    sections = "".join(_section(s, report.tables).replace("<section>", f'<section id="s{i}">', 1)
                       for i, s in enumerate(SECTIONS))
    problems = ""
    if report.problems:
        items = "".join(f"<li>{html.escape(p)}</li>" for p in report.problems[:50])
        problems = f"<section><h2>Skipped input</h2><ul>{items}</ul></section>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>sprintflow report</title><style>{_CSS}</style></head><body>"
        f"<h1>sprintflow report</h1><p class=\"meta\">{html.escape(report.workspace)} · generated "
        f"{html.escape(report.generated_at)}{since} · {counts}</p>"
        f'<pre class="summary">{html.escape(report.summary_text())}</pre><nav>{nav}</nav>'
        f"{sections}{problems}</body></html>\n"
    )
