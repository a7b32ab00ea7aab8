"""Flaky tests and strategies: re-runs on unchanged content that disagree, flakiest first."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.interactive.drawing import (
    Spec,
    _data,
    _from_zero,
    _hconcat,
    _hit_bars,
    _layer,
    _pick,
    _ranked,
    _table,
    _title,
)
from sprintflow.reporting.interactive.expressions import (
    _where,
    _wilson,
)


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
             ranked.mark_rule(color="#333").encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y))
    # A strategy's row lists its evaluations, a test's row its re-runs.
    pick = _pick("pick_flaky_strategy" if level == "strategy" else "pick_flaky_test", "name")
    bars = _layer(*parts, _hit_bars(ranked, y, pick, tooltip), width=260, height={"step": 18})
    table = _table(ranked, [("name", heading, 300), ("runs", "re-runs", 60), ("flipped", "flips", 50),
                            ("label", "flip rate [95%]", 150)], "")
    return _hconcat(bars, table, spacing=20, title=_title(
        title, "consecutive fresh runs on the same workspace content hash that disagree, flakiest first"))
