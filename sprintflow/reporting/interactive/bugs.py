"""Bugs opened, fixed and reopened over time (``bugs.ndjson`` events)."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.interactive.drawing import (
    WIDTH,
    Spec,
    _data,
    _from_zero,
    _layer,
    _line_and_points,
    _period_x,
    _pick,
    _title,
)
from sprintflow.reporting.interactive.expressions import (
    _period_of,
    _where,
)


def _bugs() -> Spec:
    base = (_data("bugs").transform_filter(_where("contract"))
            .transform_calculate(period=_period_of("datum.day"))
            .transform_aggregate(opened="sum(opened)", fixed="sum(fixed)", reopened="sum(reopened)", groupby=["period"])
            .transform_fold(["opened", "fixed", "reopened"], as_=["event", "bugs"]))
    color = alt.Color("event:N", title=None, scale=alt.Scale(domain=["opened", "fixed", "reopened"]))
    tooltip = [alt.Tooltip("period:T", title="from"), alt.Tooltip("event:N"), alt.Tooltip("bugs:Q")]
    return _layer(*_line_and_points(base, _period_x(), alt.Y("bugs:Q", scale=_from_zero()), color, tooltip,
                                    _pick("pick_bugs", "period")),
                  width=WIDTH - 70, height=180,
                  title=_title("Bugs", "bugs.ndjson events; by contract (unit); click a point to list its days"))
