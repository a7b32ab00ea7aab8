"""The charts and tables of the interactive report, as one Vega-Lite specification built with altair.

Why Vega-Lite (through altair) and not plotly's offline bundle: the page must
recompute every chart and table when a filter changes. Vega-Lite declares
that: filters are parameters bound to inputs, and each view's filter,
aggregate and window transforms run again in the browser on the embedded
day-level cubes of :mod:`sprintflow.reporting.explore`. Plotly would only
restyle traces computed in advance, so every combination of six filters
would have to be precomputed, or re-aggregated by hand-written JavaScript.
The vega, vega-lite and vega-embed bundles (about 0.9 MB) come from
``vl-convert-python``, altair's own way to inline them. Each view is drawn
with altair; the views are composed as plain dicts (see :func:`_spec`).

All views live in one specification, so they share the filter parameters:

* ``f_from`` / ``f_to`` (date inputs), ``f_contract``, ``f_engine``,
  ``f_strategy``, ``f_criterion``, ``f_executor`` (selects; :data:`ALL`
  keeps everything) and ``f_rows`` (rows per table);
* ``period_unit``: day (up to 45 days), week (up to 800 days) or month, from
  the span of the chosen dates, so a week of data shows days;
* clicks: one selection per chart (:data:`PICKS`) picks a period, a strategy (in a period), a
  criterion, a verification method, an engine or an iterations-to-green value, and the drill-down
  lists its evaluations; every bar's row (or column) takes the click, a 0 % or missing bar included.
  The charts of what is not an evaluation pick a test, a period of bugs or a scorer run, and the
  drill-down lists the page's rows behind it (:data:`ROW_PICKS`).

A rate is always ``passed / (passed + failed)`` with a 95 % Wilson interval,
drawn as a band and as error bars, so an interval stays visible for a single
point or a tiny sample.
"""

from __future__ import annotations

from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from sprintflow.reporting.explore import ALL, NEVER, PageData, records

__all__ = ["DATASETS", "PICKS", "ROW_PICKS", "page_spec"]

Z = 1.959963984540054
DATASETS = ("outcomes", "greens", "activity", "flips", "coverage", "bugs", "scores")
"""The embedded cubes, by name (the fields of :class:`~sprintflow.reporting.explore.PageData`)."""
PICKS = {"pick_period": "period", "pick_cost": "period", "pick_tokens": "period", "pick_regressions": "period",
         "pick_strategy": "strategy", "pick_flaky_strategy": "strategy", "pick_strategy_period": "strategy_period",
         "pick_criterion": "criterion", "pick_method": "method", "pick_engine": "engine",
         "pick_engine_green": "engine", "pick_engine_iterations": "engine", "pick_engine_cost": "engine",
         "pick_green": "green", "pick_flaky_test": "test", "pick_bugs": "bugs", "pick_score": "score"}
"""Every click selection and what it picks: a selection is defined in one view, so each chart has its
own, and the drill-down lists alike every selection of one kind (``pick_`` + the kind)."""
ROW_PICKS = {"test": "flips", "bugs": "bugs", "score": "scores"}
"""The kinds of :data:`PICKS` that are not evaluations, and the cube whose rows the drill-down lists
for them: a test's re-runs, a period's bug events, a scorer run."""
FILTERS = ("contract", "engine", "strategy", "criterion", "executor")
WIDTH = 540
_PASS, _FAIL, _BAND = "#2f7d32", "#c62828", "#4c78a8"


Spec = dict[str, Any]
"""A Vega-Lite (sub)specification as JSON data."""
Part = alt.Chart | Spec


def _spec(part: Part) -> Spec:
    """A chart as a plain sub-specification.

    Views are drawn with altair and composed as plain dicts: altair's own
    concatenation re-copies every sub-chart at every level (seconds for a page
    this size), and a dict costs nothing.
    """
    if isinstance(part, dict):
        return part
    spec = part.to_dict(validate=False)
    for key in ("$schema", "config", "datasets"):
        spec.pop(key, None)
    return spec


def _compose(kind: str, parts: tuple[Part, ...], title: alt.TitleParams | None = None, **properties: Any) -> Spec:
    spec: Spec = {kind: [_spec(part) for part in parts], **properties}
    if title is not None:
        spec["title"] = title.to_dict(validate=False)
    return spec


def _vconcat(*parts: Part, title: alt.TitleParams | None = None, **properties: Any) -> Spec:
    return _compose("vconcat", parts, title, **properties)


def _hconcat(*parts: Part, title: alt.TitleParams | None = None, **properties: Any) -> Spec:
    return _compose("hconcat", parts, title, **properties)


def _layer(*parts: Part, title: alt.TitleParams | None = None, **properties: Any) -> Spec:
    return _compose("layer", parts, title, **properties)


def _data(name: str) -> alt.Chart:
    return alt.Chart(alt.NamedData(name=name))


def _where(*dimensions: str, name: str | None = None) -> str:
    """The filter expression for a cube with a ``day`` and these dimensions.

    ``name`` (``strategy`` or ``criterion``) also keeps only rows whose ``name`` is the one picked in that filter.
    """
    parts = ["datum.day >= f_from && datum.day <= f_to"]
    parts += [f"(f_{dimension} == '{ALL}' || datum.{dimension} == f_{dimension})" for dimension in dimensions]
    if name is not None:
        parts.append(f"(f_{name} == '{ALL}' || datum.name == f_{name})")
    return " && ".join(parts)


# Which outcomes the headline and the trend count: whole evaluations, or the strategy
# or criterion picked in the filters (a criterion wins when both are picked).
_UNIT_OF_OUTCOME = (
    f"f_criterion != '{ALL}' ? (datum.level == 'criterion' && datum.name == f_criterion)"
    f" : f_strategy != '{ALL}' ? (datum.level == 'strategy' && datum.name == f_strategy)"
    " : datum.level == 'evaluation'")
_UNIT = ("(toDate(f_to) - toDate(f_from)) / 864e5 <= 45 ? 'day' : "
         "(toDate(f_to) - toDate(f_from)) / 864e5 <= 800 ? 'week' : 'month'")


def _wilson(k: str, n: str, prefix: str = "") -> dict[str, str]:
    """Vega expressions for the rate ``k / n`` and its Wilson interval (null without trials)."""
    p, z2 = f"(datum.{k} / datum.{n})", Z * Z
    center = f"({p} + {z2} / (2 * datum.{n})) / (1 + {z2} / datum.{n})"
    half = f"{Z} * sqrt({p} * (1 - {p}) / datum.{n} + {z2} / (4 * datum.{n} * datum.{n})) / (1 + {z2} / datum.{n})"
    return {f"{prefix}rate": f"datum.{n} > 0 ? {p} : null",
            f"{prefix}low": f"datum.{n} > 0 ? {center} - {half} : null",
            f"{prefix}high": f"datum.{n} > 0 ? {center} + {half} : null",
            f"{prefix}label": (f"datum.{n} > 0 ? format({p}, '.1%') + ' [' + format({center} - {half}, '.1%') + "
                               f"'–' + format({center} + {half}, '.1%') + ']' : 'n/a'")}


def _from_zero(at_least: float = 1.0) -> alt.Scale:
    """A scale from zero that keeps a size when a filter leaves the view empty (no infinite extent)."""
    return alt.Scale(domain=alt.DomainUnionWith(unionWith=[0, at_least]))


def _percent(field: str, title: str | None = None) -> alt.X:
    return alt.X(f"{field}:Q", title=title, scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))


def _hit_bars(base: alt.Chart, y: alt.Y, pick: alt.Parameter, tooltip: list) -> alt.Chart:
    """A full-width, all but invisible bar on each row that takes the click for ``pick``: a 0 % bar has
    no width to click (nor has a missing value), and its row must still list its evaluations. Drawn
    last, over the visible bars; placed in pixels, so it touches no scale of the view."""
    return base.mark_bar(opacity=0.01, cursor="pointer").encode(
        x=alt.value(0), x2=alt.value("width"), y=y, tooltip=tooltip).add_params(pick)


def _hit_columns(base: alt.Chart, x: alt.X, pick: alt.Parameter, tooltip: list) -> alt.Chart:
    """:func:`_hit_bars` for columns over time: a full-height target per period."""
    return base.mark_bar(opacity=0.01, cursor="pointer").encode(
        x=x, y=alt.value(0), y2=alt.value("height"), tooltip=tooltip).add_params(pick)


def _pick(name: str, *fields: str) -> alt.Parameter:
    """The click selection ``name`` (one of :data:`PICKS`) of ``fields``; a double click clears it."""
    return alt.selection_point(name=name, fields=list(fields), on="click", clear="dblclick", empty=False)


def _line_and_points(base: alt.Chart, x: alt.X, y: alt.Y, color: alt.Color, tooltip: list,
                     pick: alt.Parameter) -> tuple[alt.Chart, alt.Chart]:
    """A line and its points, the points taking the click for ``pick``."""
    return (base.mark_line().encode(x=x, y=y, color=color),
            base.mark_point(filled=True, cursor="pointer").encode(x=x, y=y, color=color, tooltip=tooltip)
            .add_params(pick))


def _period_of(day: str) -> str:
    """The start of the period holding ``day`` (a ``YYYY-MM-DD`` expression), as a UTC timestamp."""
    return (f"period_unit == 'day' ? toDate({day}) : period_unit == 'week' ? "
            f"toDate({day}) - ((utcday(toDate({day})) + 6) % 7) * 864e5 : "
            f"utc(utcyear(toDate({day})), utcmonth(toDate({day})), 1)")


def _period_x(field: str = "period") -> alt.X:
    """A time axis spanning the chosen dates, whatever the data: an empty view keeps its size."""
    return alt.X(f"{field}:T", title=None,
                 scale=alt.Scale(type="utc", nice=False, padding=12,
                                 domainMin={"expr": _period_of("f_from")}, domainMax={"expr": _period_of("f_to")}),
                 axis=alt.Axis(format={"expr": "period_unit == 'month' ? '%b %Y' : '%b %d'"}, labelAngle=-30,
                               tickCount={"expr": "period_unit == 'day' ? 'day' : period_unit == 'week' ? "
                                                  "'week' : 'month'"}))


def _title(text: str, subtitle: str | None = None) -> alt.TitleParams:
    return alt.TitleParams(text=text, subtitle=subtitle or "", anchor="start", fontSize=13)


def _table(base: alt.Chart, columns: list[tuple[str, str, int]], title: str) -> Spec:
    """A table drawn as text marks: ``(field, heading, width)`` per column, one row per ``row`` value."""
    cells = [base.mark_text(align="left", baseline="middle", fontSize=11, limit=width - 6).encode(
        y=alt.Y("row:O", axis=None), text=alt.Text(f"{field}:N"))
        .properties(width=width, title=alt.TitleParams(heading, anchor="start", fontSize=11, color="#555"))
        for field, heading, width in columns]
    return _hconcat(*cells, spacing=4, title=_title(title))


def _ranked(chart: alt.Chart, order: list[alt.SortField | dict[str, str]]) -> alt.Chart:
    """Number the rows by ``order`` and keep the first ``f_rows``."""
    return chart.transform_window(row="row_number()", sort=order).transform_filter("datum.row <= f_rows")


# --------------------------------------------------------------------------- views


def _headline() -> alt.Chart:
    # Rows outside the selection count as zeros rather than being filtered out, so an empty selection
    # still gives one row to print ("n/a of 0"), instead of no text at all.
    keep = f"({_where('contract', 'engine', 'executor')}) && ({_UNIT_OF_OUTCOME})"
    base = (_data("outcomes")
            .transform_calculate(kept_passed=f"{keep} ? datum.passed : 0", kept_failed=f"{keep} ? datum.failed : 0",
                                 kept_skipped=f"{keep} ? datum.skipped : 0")
            .transform_aggregate(passed="sum(kept_passed)", failed="sum(kept_failed)", skipped="sum(kept_skipped)")
            .transform_calculate(decided="datum.passed + datum.failed")
            .transform_calculate(**_wilson("passed", "decided"))
            .transform_calculate(what=(f"f_criterion != '{ALL}' ? 'criterion ' + f_criterion : "
                                       f"f_strategy != '{ALL}' ? 'strategy ' + f_strategy : 'evaluations'"))
            .transform_calculate(headline=("datum.what + ' passing: ' + datum.label + ' of ' + "
                                           "format(datum.decided, ',') + ' decided (' + format(datum.skipped, ',') + "
                                           "' skipped)'")))
    return base.mark_text(align="left", fontSize=20, fontWeight="bold", x=0, y=14).encode(
        text="headline:N").properties(width=WIDTH * 2, height=30, name="headline",
                                      title=_title("Selection", "whole evaluations, or the strategy or criterion "
                                                                "picked above"))


def _trend() -> Spec:
    pick = _pick("pick_period", "period")
    base = (_data("outcomes").transform_filter(_where("contract", "engine", "executor"))
            .transform_filter(_UNIT_OF_OUTCOME).transform_calculate(period=_period_of("datum.day"))
            .transform_aggregate(passed="sum(passed)", failed="sum(failed)", groupby=["period"])
            .transform_calculate(decided="datum.passed + datum.failed")
            .transform_calculate(**_wilson("passed", "decided")))
    x, y = _period_x(), alt.Y("rate:Q", title="pass rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    tooltip = [alt.Tooltip("period:T", title="from"), alt.Tooltip("label:N", title="pass rate [95%]"),
               alt.Tooltip("decided:Q", title="decided", format=",")]
    band = base.mark_area(opacity=0.18, color=_BAND).encode(x=x, y="low:Q", y2="high:Q")
    bars = base.mark_rule(color=_BAND, opacity=0.6).encode(x=x, y="low:Q", y2="high:Q")
    line = base.mark_line(color=_BAND).encode(x=x, y=y)
    points = base.mark_point(filled=True, size=60, color=_BAND, cursor="pointer").encode(
        x=x, y=y, tooltip=tooltip,
        size=alt.condition(pick, alt.value(160), alt.value(50))).add_params(pick)
    subtitle = "per day, week or month as the dates span; 95% Wilson interval; click a point to list its evaluations"
    return _layer(band, bars, line, points, width=WIDTH * 2, height=230, name="trend",
                  title=_title("Is the agent getting better?", subtitle))


def _strategies() -> Spec:
    pick = _pick("pick_strategy", "name")
    base = (_data("outcomes").transform_filter("datum.level == 'strategy'")
            .transform_filter(_where("contract", "engine", "executor", name="strategy"))
            .transform_aggregate(passed="sum(passed)", failed="sum(failed)", skipped="sum(skipped)",
                                 groupby=["name"])
            .transform_calculate(decided="datum.passed + datum.failed")
            .transform_calculate(**_wilson("passed", "decided")))
    y = alt.Y("name:N", title=None, sort=alt.EncodingSortField("rate", order="ascending"))
    tooltip = [alt.Tooltip("name:N", title="strategy"), alt.Tooltip("label:N", title="pass rate [95%]")]
    bars = base.mark_bar(cursor="pointer").encode(
        x=_percent("rate", "pass rate"), y=y, color=alt.condition(pick, alt.value("#f58518"), alt.value(_BAND)),
        tooltip=tooltip)
    rules = base.mark_rule(color="#333").encode(x="low:Q", x2="high:Q", y=y)
    chart = _layer(bars, rules, _hit_bars(base, y, pick, tooltip), width=WIDTH - 120, height={"step": 22},
                   title=_title("Pass rate by strategy", "click a bar to list its evaluations"))
    table = _table(_ranked(base.transform_calculate(runs="format(datum.decided, ',')",
                                                      skips="format(datum.skipped, ',')"),
                           [alt.SortField("rate", "ascending")]),
                   [("name", "strategy", 110), ("runs", "decided", 70), ("skips", "skipped", 60),
                    ("label", "pass rate [95%]", 160)], "Strategies, weakest first")
    return _hconcat(chart, table, spacing=30)


def _color(field: str, title: str | None, domain: list[str]) -> alt.Color:
    """Colours over a domain known in advance: a view a filter empties keeps its legend and its size."""
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain or [""]))


def _strategy_trend(strategies: list[str]) -> Spec:
    base = (_data("outcomes").transform_filter("datum.level == 'strategy'")
            .transform_filter(_where("contract", "engine", "executor", name="strategy"))
            .transform_calculate(period=_period_of("datum.day"))
            .transform_aggregate(passed="sum(passed)", failed="sum(failed)", groupby=["period", "name"])
            .transform_calculate(decided="datum.passed + datum.failed")
            .transform_calculate(**_wilson("passed", "decided")))
    x, y = _period_x(), alt.Y("rate:Q", title="pass rate", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]))
    color = _color("name", "strategy", strategies)
    tooltip = [alt.Tooltip("name:N", title="strategy"), alt.Tooltip("period:T", title="from"),
               alt.Tooltip("label:N", title="pass rate [95%]")]
    return _layer(*_line_and_points(base, x, y, color, tooltip, _pick("pick_strategy_period", "name", "period")),
                  width=WIDTH * 2 - 120, height=200,
                  title=_title("Pass rate per strategy over time", "click a point to list its evaluations"))


def _criteria(criteria: list[str]) -> Spec:
    pick = _pick("pick_criterion", "name", "period")
    outcomes = (_data("outcomes").transform_filter("datum.level == 'criterion'")
                .transform_filter(_where("contract", "engine", "executor", name="criterion")))
    trend = (outcomes.transform_calculate(period=_period_of("datum.day"))
             .transform_aggregate(passed="sum(passed)", failed="sum(failed)", groupby=["period", "name"])
             .transform_calculate(decided="datum.passed + datum.failed")
             .transform_calculate(**_wilson("passed", "decided")))
    x = _period_x()
    y = alt.Y("rate:Q", title="pass rate", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]))
    lines = trend.mark_line().encode(x=x, y=y, color=_color("name", "criterion", criteria))
    points = trend.mark_point(filled=True, cursor="pointer").encode(
        x=x, y=y, color=_color("name", "criterion", criteria),
        size=alt.condition(pick, alt.value(140), alt.value(40)),
        tooltip=[alt.Tooltip("name:N", title="criterion"), alt.Tooltip("period:T", title="from"),
                 alt.Tooltip("label:N", title="pass rate [95%]")]).add_params(pick)
    chart = _layer(
        lines, points, width=WIDTH * 2 - 120, height=200,
        title=_title("Pass rate per criterion over time", "criterion ids across contracts; pick a contract for "
                                                          "one contract's criteria; click a point to list"))
    rates = (outcomes.transform_aggregate(passed="sum(passed)", failed="sum(failed)", skipped="sum(skipped)",
                                          groupby=["name"])
             .transform_calculate(decided="datum.passed + datum.failed")
             .transform_calculate(**_wilson("passed", "decided"))
             .transform_calculate(runs="format(datum.decided, ',')", skips="format(datum.skipped, ',')"))
    rate_table = _table(_ranked(rates, [alt.SortField("rate", "ascending")]),
                        [("name", "criterion", 110), ("runs", "decided", 60), ("skips", "skipped", 60),
                         ("label", "pass rate [95%]", 150)], "Criteria, weakest first")
    greens = (_data("greens").transform_filter("datum.level == 'criterion'")
              .transform_filter(_where("contract", "engine", "executor", name="criterion"))
              .transform_calculate(green=f"datum.iterations < {NEVER} ? datum.items : 0",
                                   iterations_sum=f"datum.iterations < {NEVER} ? datum.iterations * datum.items : 0")
              .transform_aggregate(items="sum(items)", green="sum(green)", iterations_sum="sum(iterations_sum)",
                                   hours="sum(hours)", groupby=["name"])
              .transform_calculate(**_wilson("green", "items"))
              .transform_calculate(
                  contracts="format(datum.items, ',')",
                  mean_iterations="datum.green > 0 ? format(datum.iterations_sum / datum.green, '.2f') : '–'",
                  mean_hours="datum.green > 0 ? format(datum.hours / datum.green, '.1f') + ' h' : '–'"))
    green_table = _table(_ranked(greens, [alt.SortField("rate", "ascending")]),
                         [("name", "criterion", 110), ("contracts", "contracts", 70),
                          ("label", "went green [95%]", 160), ("mean_iterations", "iterations", 70),
                          ("mean_hours", "hours", 70)], "Criteria: time to green")
    return _vconcat(chart, _hconcat(rate_table, green_table, spacing=40))


def _time_to_green() -> Spec:
    pick = _pick("pick_green", "iterations")
    base = (_data("greens").transform_filter("datum.level == 'contract'")
            .transform_filter(_where("contract", "engine", "executor")))
    bars = (base.transform_aggregate(contracts="sum(items)", groupby=["iterations"])
            .transform_calculate(bucket=f"datum.iterations >= {NEVER} ? 'never' : '' + datum.iterations")
            .mark_bar(cursor="pointer").encode(
                x=alt.X("bucket:N", title="iterations to green", sort=alt.EncodingSortField("iterations")),
                y=alt.Y("contracts:Q", title="contracts", scale=_from_zero()),
                color=alt.when(pick).then(alt.value("#f58518"))
                .when(f"datum.iterations >= {NEVER}").then(alt.value(_FAIL)).otherwise(alt.value(_BAND)),
                tooltip=[alt.Tooltip("bucket:N", title="iterations"), alt.Tooltip("contracts:Q", format=",")])
            .add_params(pick)
            .properties(width=WIDTH - 120, height=200,
                        title=_title("Iterations to green per contract", "click a bar to list its evaluations")))
    everything = _data("greens").transform_calculate(
        items=f"datum.level == 'contract' && {_where('contract', 'engine', 'executor')} ? datum.items : 0",
        hours=f"datum.level == 'contract' && {_where('contract', 'engine', 'executor')} ? datum.hours : 0")
    summary = (everything.transform_calculate(green=f"datum.iterations < {NEVER} ? datum.items : 0",
                                        iterations_sum=(f"datum.iterations < {NEVER} ? "
                                                        "datum.iterations * datum.items : 0"),
                                        first="datum.iterations == 1 ? datum.items : 0")
               .transform_aggregate(items="sum(items)", green="sum(green)", first="sum(first)",
                                    iterations_sum="sum(iterations_sum)", hours="sum(hours)")
               .transform_calculate(**_wilson("green", "items"))
               .transform_calculate(**_wilson("first", "items", "fp_"))
               .transform_calculate(lines=("['contracts: ' + format(datum.items, ','), "
                                           "'went green: ' + datum.label, 'first-pass yield: ' + datum.fp_label, "
                                           "'mean iterations to green: ' + (datum.green > 0 ? "
                                           "format(datum.iterations_sum / datum.green, '.2f') : '–'), "
                                           "'mean hours to green: ' + (datum.green > 0 ? "
                                           "format(datum.hours / datum.green, '.1f') : '–')]")))
    text = summary.mark_text(align="left", baseline="top", fontSize=13, lineHeight=20, x=0, y=10).encode(
        text="lines:N").properties(width=WIDTH - 80, height=120, title=_title("Sprints"))
    return _hconcat(bars, text, spacing=40)


def _engines() -> Spec:
    pick = _pick("pick_engine", "engine")
    y = alt.Y("engine:N", title=None)
    color = alt.condition(pick, alt.value("#f58518"), alt.value(_BAND))
    rates = (_data("outcomes").transform_filter("datum.level == 'evaluation'")
             .transform_filter(_where("contract", "engine", "executor"))
             .transform_aggregate(passed="sum(passed)", failed="sum(failed)", groupby=["engine"])
             .transform_calculate(decided="datum.passed + datum.failed")
             .transform_calculate(**_wilson("passed", "decided")))
    tooltip = [alt.Tooltip("engine:N"), alt.Tooltip("label:N", title="pass rate [95%]")]
    rate_bars = _layer(
        rates.mark_bar(cursor="pointer").encode(x=_percent("rate", "evaluation pass rate"), y=y, color=color,
                                                tooltip=tooltip),
        rates.mark_rule(color="#333").encode(x="low:Q", x2="high:Q", y=y),
        _hit_bars(rates, y, pick, tooltip), width=300, height={"step": 26}, title=_title("Evaluations passing"))
    greens = (_data("greens").transform_filter("datum.level == 'contract'")
              .transform_filter(_where("contract", "engine", "executor"))
              .transform_calculate(green=f"datum.iterations < {NEVER} ? datum.items : 0",
                                   iterations_sum=f"datum.iterations < {NEVER} ? datum.iterations * datum.items : 0")
              .transform_aggregate(items="sum(items)", green="sum(green)", iterations_sum="sum(iterations_sum)",
                                   groupby=["engine"])
              .transform_calculate(**_wilson("green", "items"))
              .transform_calculate(mean_iterations="datum.green > 0 ? datum.iterations_sum / datum.green : null"))
    green_tooltip = [alt.Tooltip("engine:N"), alt.Tooltip("label:N", title="green [95%]")]
    green_bars = _layer(
        greens.mark_bar(cursor="pointer").encode(x=_percent("rate", "sprints that went green"), y=y, color=color,
                                                 tooltip=green_tooltip),
        greens.mark_rule(color="#333").encode(x="low:Q", x2="high:Q", y=y),
        _hit_bars(greens, y, _pick("pick_engine_green", "engine"), green_tooltip), width=300, height={"step": 26},
        title=_title("Sprints going green"))
    iteration_tooltip = [alt.Tooltip("engine:N"), alt.Tooltip("mean_iterations:Q", format=".2f")]
    iterations = _layer(
        greens.mark_bar(cursor="pointer").encode(
            x=alt.X("mean_iterations:Q", title="mean iterations to green", scale=_from_zero()), y=y, color=color,
            tooltip=iteration_tooltip),
        _hit_bars(greens, y, _pick("pick_engine_iterations", "engine"), iteration_tooltip), width=300,
        height={"step": 26}, title=_title("Iterations to green"))
    costs = (_data("activity").transform_filter(_where("contract", "engine", "executor"))
             .transform_aggregate(cost="sum(cost)", sprints="sum(sprints)", costed="sum(costed)", groupby=["engine"])
             .transform_calculate(
                 per_sprint="datum.sprints > 0 && datum.costed > 0 ? datum.cost / datum.sprints : null"))
    cost_tooltip = [alt.Tooltip("engine:N"), alt.Tooltip("per_sprint:Q", format="$.2f", title="per sprint")]
    cost_bars = _layer(
        costs.mark_bar(cursor="pointer").encode(
            x=alt.X("per_sprint:Q", title="USD per sprint", scale=_from_zero(0.01)), y=y, color=color,
            tooltip=cost_tooltip),
        _hit_bars(costs, y, _pick("pick_engine_cost", "engine"), cost_tooltip), width=300, height={"step": 26},
        title=_title("Cost per sprint"))
    return _vconcat(_hconcat(rate_bars, green_bars), _hconcat(iterations, cost_bars),
                    title=_title("Engine A vs engine B", "click an engine's bar to list its evaluations"))


def _costs() -> Spec:
    base = (_data("activity").transform_filter(_where("contract", "engine", "executor"))
            .transform_calculate(period=_period_of("datum.day"))
            .transform_aggregate(cost="sum(cost)", tokens="sum(tokens)", costed="sum(costed)", sprints="sum(sprints)",
                                 criteria="sum(criteria_green)", regressions="sum(regressions)",
                                 evaluations="sum(evaluations)", groupby=["period"])
            .transform_calculate(
                cost_sprint="datum.costed > 0 && datum.sprints > 0 ? datum.cost / datum.sprints : null",
                cost_criterion="datum.costed > 0 && datum.criteria > 0 ? datum.cost / datum.criteria : null",
                tokens_sprint="datum.costed > 0 && datum.sprints > 0 ? datum.tokens / datum.sprints : null",
                tokens_criterion="datum.costed > 0 && datum.criteria > 0 ? datum.tokens / datum.criteria : null"))
    names = {"cost_sprint": "per sprint", "cost_criterion": "per passed criterion",
             "tokens_sprint": "per sprint", "tokens_criterion": "per passed criterion"}

    def lines(fields: list[str], title: str, fmt: str, pick: str) -> Spec:
        folded = (base.transform_fold([*fields], as_=["measure", "value"])
                  .transform_calculate(measure=" : ".join(f"datum.measure == '{f}' ? '{names[f]}'" for f in fields)
                                       + " : ''"))
        x = _period_x()
        y = alt.Y("value:Q", title=title, axis=alt.Axis(format=fmt), scale=_from_zero(0.01))
        color = _color("measure", None, [names[f] for f in fields])
        tooltip = [alt.Tooltip("period:T", title="from"), alt.Tooltip("measure:N"), alt.Tooltip("value:Q", format=fmt)]
        return _layer(*_line_and_points(folded, x, y, color, tooltip, _pick(pick, "period")), width=WIDTH - 70,
                      height=180, title=_title(title, "click a point to list its evaluations"))

    x = _period_x()
    tooltip = [alt.Tooltip("period:T", title="from"), alt.Tooltip("regressions:Q"), alt.Tooltip("evaluations:Q")]
    regressions = _layer(
        base.mark_bar(color=_FAIL).encode(x=x, y=alt.Y("regressions:Q", title="regressions", scale=_from_zero()),
                                          tooltip=tooltip),
        _hit_columns(base, x, _pick("pick_regressions", "period"), tooltip),
        width=WIDTH * 2 - 120, height=120,
        title=_title("Regressions", "what passed in the previous evaluation of a contract and fails now; click a "
                                    "period to list its evaluations"))
    return _vconcat(_hconcat(lines(["cost_sprint", "cost_criterion"], "USD", "$.2f", "pick_cost"),
                             lines(["tokens_sprint", "tokens_criterion"], "tokens", ",.0f", "pick_tokens")),
                    regressions)


def _flaky(level: str, title: str, heading: str) -> Spec:
    base = (_data("flips").transform_filter(f"datum.level == '{level}'")
            .transform_filter(_where("contract", "engine", "executor",
                                     name="strategy" if level == "strategy" else None))
            .transform_aggregate(comparisons="sum(comparisons)", flips="sum(flips)", groupby=["name"])
            .transform_calculate(**_wilson("flips", "comparisons"))
            .transform_calculate(runs="format(datum.comparisons, ',')", flipped="format(datum.flips, ',')"))
    ranked = _ranked(base, [alt.SortField("rate", "descending"), alt.SortField("low", "descending")])
    y = alt.Y("name:N", title=None, sort=alt.EncodingSortField("row"), axis=alt.Axis(labelLimit=260))
    tooltip = [alt.Tooltip("name:N", title=heading), alt.Tooltip("label:N", title="flip rate [95%]")]
    parts = (ranked.mark_bar(color="#f58518").encode(x=alt.X("rate:Q", title="flip rate", axis=alt.Axis(format="%"),
                                                             scale=_from_zero(0.1)), y=y, tooltip=tooltip),
             ranked.mark_rule(color="#333").encode(x="low:Q", x2="high:Q", y=y))
    # A strategy's row lists its evaluations, a test's row its re-runs.
    pick = _pick("pick_flaky_strategy" if level == "strategy" else "pick_flaky_test", "name")
    bars = _layer(*parts, _hit_bars(ranked, y, pick, tooltip), width=260, height={"step": 18})
    table = _table(ranked, [("name", heading, 300), ("runs", "re-runs", 60), ("flipped", "flips", 50),
                            ("label", "flip rate [95%]", 150)], "")
    return _hconcat(bars, table, spacing=20, title=_title(
        title, "consecutive fresh runs on the same workspace content hash that disagree, flakiest first"))


def _coverage() -> Spec:
    methods = (_data("coverage").transform_filter(_where("contract", "engine", "executor", name="criterion"))
               .transform_aggregate(passed="sum(passed)", failed="sum(failed)", skipped="sum(skipped)",
                                    groupby=["method"]))
    y = alt.Y("method:N", title="verified by")
    bars = (methods.transform_fold(["passed", "failed", "skipped"], as_=["outcome", "results"])
            .mark_bar().encode(
                y=y, x=alt.X("results:Q", title="criterion results", stack="normalize", axis=alt.Axis(format="%"),
                             scale=alt.Scale(domain=[0, 1])),
                color=alt.Color("outcome:N", scale=alt.Scale(domain=["passed", "failed", "skipped"],
                                                             range=[_PASS, _FAIL, "#bdbdbd"])),
                tooltip=["method:N", "outcome:N", alt.Tooltip("results:Q", format=",")]))
    tooltip = ["method:N", alt.Tooltip("passed:Q", format=","), alt.Tooltip("failed:Q", format=","),
               alt.Tooltip("skipped:Q", format=",")]
    return _layer(bars, _hit_bars(methods, y, _pick("pick_method", "method"), tooltip),
                      width=WIDTH - 120, height={"step": 22},
                      title=_title("Criteria by verification method", "manual ones are skipped without an evaluator "
                                                                      "engine; click a row to list its evaluations"))


def _bugs() -> Spec:
    base = (_data("bugs").transform_filter(_where("contract"))
            .transform_calculate(period=_period_of("datum.day"))
            .transform_aggregate(opened="sum(opened)", fixed="sum(fixed)", reopened="sum(reopened)", groupby=["period"])
            .transform_fold(["opened", "fixed", "reopened"], as_=["event", "bugs"]))
    color = alt.Color("event:N", title=None, scale=alt.Scale(domain=["opened", "fixed", "reopened"]))
    tooltip = [alt.Tooltip("period:T", title="from"), "event:N", "bugs:Q"]
    return _layer(*_line_and_points(base, _period_x(), alt.Y("bugs:Q", scale=_from_zero()), color, tooltip,
                                    _pick("pick_bugs", "period")),
                  width=WIDTH - 70, height=180,
                  title=_title("Bugs", "bugs.ndjson events; by contract (unit); click a point to list its days"))


def _scores(labels: list[str]) -> Spec:
    base = _data("scores").transform_filter(_where())  # the scorer runs apart from contracts and engines
    y = alt.Y("value:Q", title="score", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    # A field drawn as time is parsed into a date before any filter: draw a copy, so the filter compares text.
    folded = (base.transform_calculate(at="toDate(datum.day)")
              .transform_fold(["pass_hat_k", "pass_at_1"], as_=["measure", "value"])
              .transform_calculate(measure="datum.measure == 'pass_hat_k' ? 'score (pass^k)' : 'pass@1'"))
    x, color = _period_x("at"), _color("label", "skill @ prompt", labels)
    dash = alt.StrokeDash("measure:N", title=None, scale=alt.Scale(domain=["score (pass^k)", "pass@1"]))
    tooltip = ["label:N", "day:N", "measure:N", alt.Tooltip("value:Q", format=".1%"), "epochs:Q"]
    trend = _layer(folded.mark_line().encode(x=x, y=y, color=color, strokeDash=dash),
                   folded.mark_point(filled=True, cursor="pointer").encode(x=x, y=y, color=color, tooltip=tooltip)
                   .add_params(_pick("pick_score", "label", "day")),
                   width=WIDTH - 70, height=180,
                   title=_title("Scorer", "held-out score per skill and prompt version; runs over K epochs also "
                                          "show pass@1 (dashed when it differs); click a point for its run"))
    runs = (base.transform_filter("datum.epochs > 1")
            .transform_calculate(k="'' + datum.epochs", p1="format(datum.pass_at_1, '.1%')",
                                 pk="format(datum.pass_at_k, '.1%')", phk="format(datum.pass_hat_k, '.1%')"))
    table = _table(_ranked(runs, [alt.SortField("day", "descending")]),
                   [("day", "day", 80), ("label", "skill @ prompt", 150), ("k", "epochs", 50),
                    ("p1", "pass@1", 60), ("pk", "pass@k", 60), ("phk", "pass^k", 60)], "Runs over epochs")
    return _vconcat(trend, table)


def _section(title: str, *charts: Part) -> Spec:
    return _vconcat(*charts, spacing=24, title=alt.TitleParams(title, anchor="start", fontSize=18,
                                                                             offset=10))


def page_spec(data: PageData, *, initial_rows: int = 15) -> dict[str, Any]:
    """The whole page as one Vega-Lite specification, with the cubes as named datasets.
    """
    def bound(signal: str, value: Any, label: str, **binding: Any) -> Spec:
        return {"name": signal, "value": value, "bind": {**binding, "name": label, "element": "#filters"}}

    params = [
        bound("f_from", data.first_day, "from ", input="date"),
        bound("f_to", data.last_day, "to ", input="date"),
        *[bound(f"f_{name}", ALL, f"{name} ", input="select", options=[ALL, *data.options.get(name, [])])
          for name in FILTERS],
        bound("f_rows", initial_rows, "rows per table ", input="range", min=5, max=100, step=5),
        {"name": "period_unit", "expr": _UNIT},
    ]
    with debug_mode(False):  # altair checks every channel against the schema as it is built: 0.7 s a page
        page = _page(data)
    spec = {"$schema": alt.SCHEMA_URL, **_independent_colors(page), "params": params,
            "config": {"view": {"stroke": None}, "axis": {"labelFontSize": 11, "titleFontSize": 11}}}
    spec["datasets"] = {name: records(getattr(data, name)) for name in DATASETS}
    return spec


def _page(data: PageData) -> Spec:
    return _vconcat(
        _headline(), _trend(),
        _section("Strategies", _strategies(), _strategy_trend(data.options.get("strategy", []))),
        _section("Criteria", _criteria(data.options.get("criterion", []))),
        _section("Time to green", _time_to_green()),
        _section("Engines", _engines()),
        _section("Tokens and cost", _costs()),
        _section("Flakiness", _flaky("test", "Flaky tests", "test"),
                 _flaky("strategy", "Flaky strategies", "strategy")),
        _section("Coverage and bugs", _hconcat(_coverage(), _bugs(), spacing=40)),
        _section("Scorer", _scores(sorted(data.scores["label"].unique()))),
        spacing=36,
    )


def _independent_colors(spec: Any) -> Any:
    """Give every concatenation its own colour and dash scales (a shared one would mix strategies,
    criteria and outcomes in one domain, and draw no line whose value another view's domain lacks)."""
    if isinstance(spec, dict):
        spec = {key: _independent_colors(value) for key, value in spec.items()}
        if any(key in spec for key in ("vconcat", "hconcat", "concat")):
            spec.setdefault("resolve", {}).setdefault("scale", {}).update(color="independent",
                                                                          strokeDash="independent")
        return spec
    if isinstance(spec, list):
        return [_independent_colors(value) for value in spec]
    return spec
