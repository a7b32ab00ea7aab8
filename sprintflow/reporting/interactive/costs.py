"""Tokens and cost per sprint and per passed criterion over time, and the regressions per period."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.interactive.drawing import (
    _FAIL,
    WIDTH,
    Spec,
    _color,
    _data,
    _from_zero,
    _hconcat,
    _hit_columns,
    _layer,
    _line_and_points,
    _period_x,
    _pick,
    _title,
    _vconcat,
)
from sprintflow.reporting.interactive.expressions import (
    _period_of,
    _where,
)


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
