"""Criterion results by verification method."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.interactive.drawing import (
    _FAIL,
    _PASS,
    WIDTH,
    Spec,
    _data,
    _hit_bars,
    _layer,
    _pick,
    _title,
)
from sprintflow.reporting.interactive.expressions import (
    _where,
)


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
                tooltip=[alt.Tooltip("method:N"), alt.Tooltip("outcome:N"),
                         alt.Tooltip("results:Q", format=",")]))
    tooltip = [alt.Tooltip("method:N"), alt.Tooltip("passed:Q", format=","), alt.Tooltip("failed:Q", format=","),
               alt.Tooltip("skipped:Q", format=",")]
    return _layer(bars, _hit_bars(methods, y, _pick("pick_method", "method"), tooltip),
                      width=WIDTH - 120, height={"step": 22},
                      title=_title("Criteria by verification method", "manual ones are skipped without an evaluator "
                                                                      "engine; click a row to list its evaluations"))
