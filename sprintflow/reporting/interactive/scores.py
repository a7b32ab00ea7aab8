"""The scorer: held-out score per skill and prompt version over time, and its runs over several epochs."""

from __future__ import annotations

import altair as alt

from sprintflow.reporting.interactive.drawing import (
    WIDTH,
    Spec,
    _color,
    _data,
    _layer,
    _period_x,
    _pick,
    _ranked,
    _table,
    _title,
    _vconcat,
)
from sprintflow.reporting.interactive.expressions import (
    _where,
)


def _scores(labels: list[str]) -> Spec:
    base = _data("scores").transform_filter(_where())  # the scorer runs apart from contracts and engines
    y = alt.Y("value:Q", title="score", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    # A field drawn as time is parsed into a date before any filter: draw a copy, so the filter compares text.
    folded = (base.transform_calculate(at="toDate(datum.day)")
              .transform_fold(["pass_hat_k", "pass_at_1"], as_=["measure", "value"])
              .transform_calculate(measure="datum.measure == 'pass_hat_k' ? 'score (pass^k)' : 'pass@1'"))
    x, color = _period_x("at"), _color("label", "skill @ prompt", labels)
    dash = alt.StrokeDash("measure:N", title=None, scale=alt.Scale(domain=["score (pass^k)", "pass@1"]))
    tooltip = [alt.Tooltip("label:N"), alt.Tooltip("day:N"), alt.Tooltip("measure:N"),
               alt.Tooltip("value:Q", format=".1%"), alt.Tooltip("epochs:Q")]
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
