"""Iterations to green per sprint, and the sprints' figures: went green, first-pass yield, iterations and hours."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.explore.cubes import NEVER
from sprintflow.reporting.interactive.drawing import (
    _BAND,
    _FAIL,
    WIDTH,
    Spec,
    _data,
    _from_zero,
    _hconcat,
    _pick,
    _title,
)
from sprintflow.reporting.interactive.expressions import (
    _where,
    _wilson,
)


def _time_to_green() -> Spec:
    pick = _pick("pick_green", "iterations")
    base = (_data("greens").transform_filter("datum.level == 'contract'")
            .transform_filter(_where("contract", "engine", "executor")))
    bars = (base.transform_aggregate(contracts="sum(items)", groupby=["iterations"])
            .transform_calculate(bucket=f"datum.iterations >= {NEVER} ? 'never' : '' + datum.iterations")
            .mark_bar(cursor="pointer").encode(
                x=alt.X("bucket:N", title="iterations to green", sort=alt.EncodingSortField("iterations")),
                y=alt.Y("contracts:Q", title="contracts", scale=_from_zero()),
                color=alt.ColorValue(**alt.when(pick).then(alt.value("#f58518"))
                                     .when(f"datum.iterations >= {NEVER}").then(alt.value(_FAIL))
                                     .otherwise(alt.value(_BAND))),
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
        text=alt.Text("lines:N")).properties(width=WIDTH - 80, height=120, title=_title("Sprints"))
    return _hconcat(bars, text, spacing=40)
