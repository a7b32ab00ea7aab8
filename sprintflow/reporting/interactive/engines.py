"""Engine A vs engine B: evaluations passing, sprints going green, iterations to green, cost per sprint."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.explore.cubes import NEVER
from sprintflow.reporting.interactive.drawing import (
    _BAND,
    Spec,
    _data,
    _from_zero,
    _hconcat,
    _hit_bars,
    _layer,
    _percent,
    _pick,
    _title,
    _vconcat,
)
from sprintflow.reporting.interactive.expressions import (
    _where,
    _wilson,
)


def _engines() -> Spec:
    pick = _pick("pick_engine", "engine")
    y = alt.Y("engine:N", title=None)
    color = alt.ColorValue(**alt.condition(pick, alt.value("#f58518"), alt.value(_BAND)))
    rates = (_data("outcomes").transform_filter("datum.level == 'evaluation'")
             .transform_filter(_where("contract", "engine", "executor"))
             .transform_aggregate(passed="sum(passed)", failed="sum(failed)", groupby=["engine"])
             .transform_calculate(decided="datum.passed + datum.failed")
             .transform_calculate(**_wilson("passed", "decided")))
    tooltip = [alt.Tooltip("engine:N"), alt.Tooltip("label:N", title="pass rate [95%]")]
    rate_bars = _layer(
        rates.mark_bar(cursor="pointer").encode(x=_percent("rate", "evaluation pass rate"), y=y, color=color,
                                                tooltip=tooltip),
        rates.mark_rule(color="#333").encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y),
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
        greens.mark_rule(color="#333").encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y),
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
