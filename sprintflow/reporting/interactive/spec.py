"""The whole page as one Vega-Lite specification: its sections, the filter parameters, the embedded cubes."""

from __future__ import annotations

from typing import Any

import altair as alt
from altair.utils.schemapi import debug_mode

from sprintflow.reporting.explore.cubes import ALL
from sprintflow.reporting.explore.page import PageData, records
from sprintflow.reporting.interactive.bugs import _bugs
from sprintflow.reporting.interactive.costs import _costs
from sprintflow.reporting.interactive.coverage import _coverage
from sprintflow.reporting.interactive.drawing import Part, Spec, _hconcat, _vconcat
from sprintflow.reporting.interactive.engines import _engines
from sprintflow.reporting.interactive.expressions import _UNIT
from sprintflow.reporting.interactive.flakiness import _flaky
from sprintflow.reporting.interactive.green import _time_to_green
from sprintflow.reporting.interactive.pass_rates import _criteria, _headline, _strategies, _strategy_trend, _trend
from sprintflow.reporting.interactive.scores import _scores

__all__ = [
    "DATASETS",
    "FILTERS",
    "PICKS",
    "ROW_PICKS",
    "datasets",
    "page_spec",
]

DATASETS = ("outcomes", "greens", "activity", "flips", "coverage", "bugs", "scores")
"""The embedded cubes, by name (the fields of :class:`~sprintflow.reporting.explore.page.PageData`)."""
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
    spec["datasets"] = datasets(data)
    return spec


def datasets(data: PageData) -> dict[str, list[dict[str, Any]]]:
    """The cubes as the specification's named datasets: what :func:`page_spec` embeds of ``data``."""
    return {name: records(getattr(data, name)) for name in DATASETS}


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
