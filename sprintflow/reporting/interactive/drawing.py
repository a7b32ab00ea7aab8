"""How a view is drawn with altair: its data, scales, axes, colours, click targets and tables, and how views
are composed (as plain Vega-Lite dicts).

Every view gives its channels as altair's classes (``alt.X2("high:Q")``, ``alt.ColorValue(**condition)``,
``alt.Tooltip("bugs:Q")``), never as text or dicts: altair finds the class of those by searching its schema,
6 ms each, a third of a second a page.
"""

from __future__ import annotations

from typing import Any

import altair as alt

from sprintflow.reporting.interactive.expressions import _period_of

__all__ = [
    "WIDTH",
    "Part",
    "Spec",
]

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
        x=alt.XValue(0), x2=alt.X2Value("width"), y=y, tooltip=tooltip).add_params(pick)


def _hit_columns(base: alt.Chart, x: alt.X, pick: alt.Parameter, tooltip: list) -> alt.Chart:
    """:func:`_hit_bars` for columns over time: a full-height target per period."""
    return base.mark_bar(opacity=0.01, cursor="pointer").encode(
        x=x, y=alt.YValue(0), y2=alt.Y2Value("height"), tooltip=tooltip).add_params(pick)


def _pick(name: str, *fields: str) -> alt.Parameter:
    """The click selection ``name`` (one of :data:`~.spec.PICKS`) of ``fields``; a double click clears it."""
    return alt.selection_point(name=name, fields=list(fields), on="click", clear="dblclick", empty=False)


def _line_and_points(base: alt.Chart, x: alt.X, y: alt.Y, color: alt.Color, tooltip: list,
                     pick: alt.Parameter) -> tuple[alt.Chart, alt.Chart]:
    """A line and its points, the points taking the click for ``pick``."""
    return (base.mark_line().encode(x=x, y=y, color=color),
            base.mark_point(filled=True, cursor="pointer").encode(x=x, y=y, color=color, tooltip=tooltip)
            .add_params(pick))


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


def _color(field: str, title: str | None, domain: list[str]) -> alt.Color:
    """Colours over a domain known in advance: a view a filter empties keeps its legend and its size."""
    return alt.Color(f"{field}:N", title=title, scale=alt.Scale(domain=domain or [""]))
