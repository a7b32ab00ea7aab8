"""What passes: the headline and its trend, strategies and criteria with their pass rates over time."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.explore.cubes import ALL, NEVER
from sprintflow.reporting.interactive.drawing import (
    _BAND,
    WIDTH,
    Spec,
    _color,
    _data,
    _hconcat,
    _hit_bars,
    _layer,
    _line_and_points,
    _percent,
    _period_x,
    _pick,
    _ranked,
    _table,
    _title,
    _vconcat,
)
from sprintflow.reporting.interactive.expressions import (
    _UNIT_OF_OUTCOME,
    _period_of,
    _where,
    _wilson,
)


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
        text=alt.Text("headline:N")).properties(width=WIDTH * 2, height=30, name="headline",
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
    band = base.mark_area(opacity=0.18, color=_BAND).encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
    bars = base.mark_rule(color=_BAND, opacity=0.6).encode(x=x, y=alt.Y("low:Q"), y2=alt.Y2("high:Q"))
    line = base.mark_line(color=_BAND).encode(x=x, y=y)
    points = base.mark_point(filled=True, size=60, color=_BAND, cursor="pointer").encode(
        x=x, y=y, tooltip=tooltip,
        size=alt.SizeValue(**alt.condition(pick, alt.value(160), alt.value(50)))).add_params(pick)
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
        x=_percent("rate", "pass rate"), y=y,
        color=alt.ColorValue(**alt.condition(pick, alt.value("#f58518"), alt.value(_BAND))),
        tooltip=tooltip)
    rules = base.mark_rule(color="#333").encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y)
    chart = _layer(bars, rules, _hit_bars(base, y, pick, tooltip), width=WIDTH - 120, height={"step": 22},
                   title=_title("Pass rate by strategy", "click a bar to list its evaluations"))
    table = _table(_ranked(base.transform_calculate(runs="format(datum.decided, ',')",
                                                      skips="format(datum.skipped, ',')"),
                           [alt.SortField("rate", "ascending")]),
                   [("name", "strategy", 110), ("runs", "decided", 70), ("skips", "skipped", 60),
                    ("label", "pass rate [95%]", 160)], "Strategies, weakest first")
    return _hconcat(chart, table, spacing=30)


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
        size=alt.SizeValue(**alt.condition(pick, alt.value(140), alt.value(40))),
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
