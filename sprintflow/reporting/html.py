"""The report as one interactive HTML file that opens from disk: no server, no network.

Everything is inline: the vega, vega-lite and vega-embed bundles (see
:mod:`sprintflow.reporting.interactive` for why Vega-Lite), the specification with
its day-level cubes (a long history's old days merged by week), and the sample of
evaluations the drill-down lists. The filter bar (dates, contract, engine,
strategy, criterion, executor, rows per table) drives every chart and table;
clicking a point or a bar lists the evaluations behind it, and each opens with
its EvalResult summary, feedback items and diagnostics. The only hand-written
script is that drill-down list (``drill.js`` beside this module): the charts
are the library's.

The bundles are built once per vl-convert version and kept in the user's
cache folder (``$XDG_CACHE_HOME/sprintflow``, else ``~/.cache/sprintflow``):
building them takes vl-convert about 2 s.
"""

from __future__ import annotations

import html
import json
import os
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import pandas as pd

from sprintflow.io.files import atomic_write_text
from sprintflow.reporting.explore.cubes import ALL, NEVER
from sprintflow.reporting.explore.page import PageData, with_weeks_before
from sprintflow.reporting.explore.sample import SAMPLE_PER_DAY
from sprintflow.reporting.interactive.spec import PICKS, ROW_PICKS, datasets, page_spec
from sprintflow.reporting.report import Report

__all__ = ["CUBE_LIMIT", "DAYS_KEPT", "PAGE_LIMIT", "render_html", "vega_bundle"]

PAGE_LIMIT = 9_500_000
"""Bytes the page should take: past this, the drill-down sample loses its oldest evaluations (and
their details) until the page fits, and says so. The cubes are never cut (see :data:`CUBE_LIMIT`)."""
CUBE_LIMIT = PAGE_LIMIT // 2
"""Bytes the cubes may take before their old days are merged by week (:func:`with_weeks_before`). By day
they grow with the days and contracts a history holds (8.7 MB for 2.1 M rows over 182 days, 9.6 MB for
21 M over 1,010 days: no room was left for any sample)."""
DAYS_KEPT = (183, 31, 0)
"""The recent days kept day by day, tried in turn until the cubes fit: the rest is merged by week."""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f}
header,main,#drill,#rows,.problems{padding:0 1.5em;max-width:1400px;margin:0 auto}
h1{font-size:1.6em;margin:.6em 0 .1em} .meta{color:#666;margin:0}
.synthetic{background:#fff3cd;border:1px solid #e0b84d;padding:.4em .8em;border-radius:6px;font-weight:600}
pre.summary{background:#f5f5f7;padding:.8em 1em;border-radius:6px;white-space:pre-wrap;font-size:12.5px}
#filters{position:sticky;top:0;z-index:5;background:#fff;border-bottom:1px solid #ddd;padding:.5em 1.5em;
 display:flex;flex-wrap:wrap;gap:.4em 1.4em;align-items:center;font-size:13px}
#filters .vega-bind{display:flex;align-items:center} #filters select{max-width:260px}
#filters .vega-bind-name{color:#555;margin-right:.3em}
#charts{margin-top:1em} .note{color:#666;font-size:12px}
#drill,#rows{border-top:2px solid #f58518;margin-top:1em;padding-top:.5em} #drill[hidden],#rows[hidden]{display:none}
#drill table,#rows table,dialog table{border-collapse:collapse;font-size:12px;width:100%}
#drill th,#drill td,#rows th,#rows td,dialog th,dialog td{border-bottom:1px solid #eee;padding:3px 6px;
 text-align:left;vertical-align:top}
#drill tbody tr{cursor:pointer} #drill tbody tr:hover{background:#fff4e5}
.pass{color:#2f7d32;font-weight:600} .fail{color:#c62828;font-weight:600} .skipped{color:#777}
dialog{max-width:1000px;width:90vw;border:1px solid #ccc;border-radius:8px}
#search{padding:.5em 1.5em 0;max-width:1400px;margin:0 auto} #search input{width:28em;max-width:90%}
#search-results{margin:.2em 0;padding-left:1.1em;font-size:12.5px} #search-results li{cursor:pointer}
#search-results li:hover{background:#fff4e5}
#side-by-side{padding:0 1.5em;max-width:1400px;margin:1em auto}
#side-by-side table{border-collapse:collapse;font-size:12px;width:100%}
#side-by-side th,#side-by-side td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left;vertical-align:top}
#side-by-side ul{margin:0;padding-left:1.1em}
dialog h3{margin:.8em 0 .3em} dialog pre{white-space:pre-wrap;background:#f5f5f7;padding:.5em;font-size:12px}
"""



def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sprintflow"


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """The vega + vega-lite + vega-embed JavaScript, for the Vega-Lite version altair writes.

    Built by vl-convert (offline, from the copies it ships) and cached per version on disk.
    """
    import altair as alt
    import vl_convert as vlc

    version = alt.SCHEMA_VERSION.lstrip("v").rsplit(".", 1)[0]
    path = _cache_dir() / f"vega-bundle-{metadata.version('vl-convert-python')}-vl{version}.js"
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        pass
    # The stub omits snippet's default (None: expose vegaEmbed, vega and vegaLite as globals).
    bundle = vlc.javascript_bundle(vl_version=version)  # type: ignore[call-arg]
    try:
        atomic_write_text(path, bundle)
    except OSError:
        pass  # a read-only home only costs the next report the same two seconds
    return bundle


def _json(value: Any) -> str:
    """JSON to embed in a script element: compact, and never closing the element early."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False).replace("</", "<\\/")


def _fit(evaluations: list[dict[str, Any]], details: dict[str, dict[str, Any]], room: int) -> tuple[int, str, str]:
    """How many of the newest sampled evaluations (the sample is newest first) fit ``room`` with their details,
    and the JSON of those evaluations and of their details (each record dumped once, here)."""
    used, shown, detailed = 0, [], {}
    for record in evaluations:
        text, key = _json(record), record["key"]
        entry = f"{_json(key)}:{_json(details[key])}" if key in details and key not in detailed else ""
        used += len(text) + len(entry) + 2
        if used > room:
            break
        shown.append(text)
        if entry:
            detailed[key] = entry
    return len(shown), "[" + ",".join(shown) + "]", "{" + ",".join(detailed.values()) + "}"


def _verdict(side: dict[str, Any]) -> str:
    """One engine's side of a contract: its sprints, its latest verdict and that evaluation's feedback."""
    result = html.escape(side["result"])
    feedback = "".join(f"<li>{html.escape(str(f.get('description') or ''))}</li>" for f in side["feedback"])
    detail = (f"<ul>{feedback}</ul>" if feedback else '<span class="note">no feedback items</span>') if side["found"] \
        else '<span class="note">EvalResult file not found in its workspace</span>'
    return (f"<td>{html.escape(side['engine'])}</td><td>{side['green']} of {side['sprints']} green"
            f"{' (first sprint green)' if side['first_green'] else ''}</td>"
            f'<td><span class="{result}">{result}</span> <code>{html.escape(side["eval_id"])}</code>{detail}</td>')


def _side_by_side(page: Any) -> str:
    """Contracts two engines both ran, side by side, with the paired test per pair of engines."""
    total = page.totals.get("contract pairs", 0)
    if not total:
        return ""
    tests = "".join(f"<li>{html.escape(p['engine_a'])} vs {html.escape(p['engine_b'])} on {p['contracts']:,} "
                    f"contracts: first sprint green with {html.escape(p['engine_a'])} alone {p['only_a']}, "
                    f"{html.escape(p['engine_b'])} alone {p['only_b']}, both {p['both_green']}, neither "
                    f"{p['neither']}; exact McNemar p = {p['p_value']:.3g}: {html.escape(p['verdict'])}</li>"
                    for p in page.pairs)
    rows = "".join(f"<tr><td>{html.escape(row['contract_id'])}</td>{_verdict(row['a'])}{_verdict(row['b'])}</tr>"
                   for row in page.side_by_side)
    shown = len(page.side_by_side)
    cut = "" if shown == total else f" (the newest {shown:,}; {total - shown:,} more in csv/engine-side-by-side.csv)"
    return (f'<section id="side-by-side"><h2>Engines side by side</h2><ul>{tests}</ul>'
            f'<p class="note count">{shown:,} of {total:,} contract pairs{cut}</p><table><thead><tr>'
            "<th>contract</th><th>engine A</th><th>sprints</th><th>latest verdict and feedback</th><th>engine B</th>"
            f"<th>sprints</th><th>latest verdict and feedback</th></tr></thead><tbody>{rows}</tbody></table></section>")


def _fitting_cubes(page: PageData) -> tuple[PageData, str]:
    """``page`` and its specification's JSON, with old days merged by week until the cubes fit :data:`CUBE_LIMIT`."""
    spec = page_spec(page)
    text = _json(spec)
    if not page.last_day:
        return page, text
    views = len(_json({**spec, "datasets": {}}))  # all but the cubes: the same whatever days they hold
    by_day = page
    for kept in DAYS_KEPT:
        if len(text) - views <= CUBE_LIMIT:
            break
        first = (pd.Timestamp(page.last_day) - pd.Timedelta(days=kept - 1)).strftime("%Y-%m-%d")
        if first > page.first_day:  # else there is nothing older to merge
            page = with_weeks_before(by_day, first)
            spec["datasets"] = datasets(page)  # the rest of the specification is the same
            text = _json(spec)
    return page, text


def render_html(report: Report) -> str:
    """The whole report as one self-contained, interactive HTML document.
    """
    page = report.page
    counts = ", ".join(f"{n:,} {what}" for what, n in report.counts.items())
    since = f" · since {html.escape(report.since)}" if report.since else ""
    if page is None or not page.totals.get("evaluations"):
        charts = '<p class="note">No evaluations recorded yet: run <code>sprintflow evaluate</code> first.</p>'
        spec, evaluations, details = "{}", "[]", "{}"
        script = ""
    else:
        charts = ""
        bundled = f"<script>{vega_bundle()}</script>"
        page, spec = _fitting_cubes(page)
        room = PAGE_LIMIT - len(bundled) - len(spec) - 100_000  # the markup, the summary, the script
        shown, evaluations, details = _fit(page.evaluations, page.details, room)
        config = {"all": ALL, "never": NEVER, "picks": PICKS, "rowPicks": ROW_PICKS, "perDay": SAMPLE_PER_DAY,
                  "detailed": page.totals.get("detailed evaluations", len(page.details)),
                  "trimmed": shown < len(page.evaluations)}
        drill = (resources.files("sprintflow.reporting") / "drill.js").read_text(encoding="utf-8")
        script = (f'<script type="application/json" id="sprintflow-config">{_json(config)}</script>'
                  f"{bundled}<script>{drill}</script>")
    contracts = ""
    if page is not None and page.weeks_before:
        when = f"Before {html.escape(page.weeks_before)}" if page.weeks_before <= page.last_day else "Throughout"
        contracts += (f" {when} the counts are by week (a week that spans two months "
                      "counts in each apart), to keep the page small: a date filter there keeps or drops whole weeks, "
                      "and a day-by-day chart shows each week on its first day. The tables in csv/ are by day.")
    if page is not None and page.totals.get("named contracts", 0) < page.totals.get("contracts", 0):
        contracts = (f" The contract filter lists the {page.totals['named contracts']:,} most recently evaluated of "
                     f"{page.totals['contracts']:,} contracts; the others are grouped as '(other contracts)'.")
    if page is not None and page.totals.get("tests shown", 0) < page.totals.get("re-run tests", 0):
        contracts += (f" The flaky-test view keeps the {page.totals['tests shown']:,} tests that flipped most of the "
                      f"{page.totals['re-run tests']:,} re-run on unchanged content "
                      f"({page.totals['re-run tests'] - page.totals['tests shown']:,} left out; "
                      "csv/flaky-tests.csv has them all).")
    problems = ""
    if report.problems:
        items = "".join(f"<li>{html.escape(p)}</li>" for p in report.problems[:50])
        problems = f'<section class="problems"><h2>Skipped input</h2><ul>{items}</ul></section>'
    tables = " · ".join(f'<a href="csv/{key}.csv">{key}</a>' for key in report.tables)
    synthetic = (f'<p class="synthetic" role="alert">Synthetic demo data, not a real history: '
                 f"{html.escape(report.synthetic)}</p>" if report.synthetic else "")
    marked = " (synthetic demo data)" if report.synthetic else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>sprintflow report{marked}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>sprintflow report{marked}</h1>{synthetic}"
        f"<p class=\"meta\">{html.escape(report.workspace)} · generated "
        f"{html.escape(report.generated_at)}{since} · {counts}</p>"
        f'<pre class="summary">{html.escape(report.summary_text())}</pre></header>'
        f'<div id="filters"></div>'
        '<section id="search"><input type="search" id="search-box" aria-label="search" '
        'placeholder="search contracts, strategies, criteria, tests, feedback"><p class="note count"></p>'
        '<ul id="search-results"></ul></section>'
        f'<main><p class="note">Every chart and table follows the filters above that apply to it: the strategy '
        f'and criterion filters narrow what is counted by strategy or criterion (and the headline), the scorer '
        f'follows the dates only (it runs apart from contracts and engines), bugs the dates and the contract. '
        f'Rates are passed / (passed + failed) with 95% Wilson intervals; skipped results are counted apart.'
        f'{contracts}</p>'
        f'<div id="charts">{charts}</div></main>'
        f"{_side_by_side(page) if page is not None else ''}"
        '<section id="drill" hidden><h2></h2><p class="note count"></p><table><thead><tr><th>when (UTC)</th>'
        "<th>contract</th><th>iteration</th><th>engine</th><th>executor</th><th>picked</th><th>evaluation</th>"
        "<th>failing strategies</th><th>failing criteria</th><th>cost</th></tr></thead><tbody></tbody></table>"
        "</section>"
        '<section id="rows" hidden><h2></h2><p class="note count"></p><table><thead></thead><tbody></tbody></table>'
        "</section>"
        '<dialog id="evaluation"><button type="button">close</button><div class="body"></div></dialog>'
        f'{problems}<footer class="note" style="padding:1em 1.5em">Every table in full: {tables} '
        "(and parquet/)</footer>"
        f'<script type="application/json" id="sprintflow-spec">{spec}</script>'
        f'<script type="application/json" id="sprintflow-evaluations">{evaluations}</script>'
        f'<script type="application/json" id="sprintflow-details">{details}</script>'
        f"{script}</body></html>\n"
    )
