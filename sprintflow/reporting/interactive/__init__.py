"""The charts and tables of the interactive report, as one Vega-Lite specification built with altair.

Why Vega-Lite (through altair) and not plotly's offline bundle: the page must
recompute every chart and table when a filter changes. Vega-Lite declares
that: filters are parameters bound to inputs, and each view's filter,
aggregate and window transforms run again in the browser on the embedded
day-level cubes of :mod:`sprintflow.reporting.explore`. Plotly would only
restyle traces computed in advance, so every combination of six filters
would have to be precomputed, or re-aggregated by hand-written JavaScript.
The vega, vega-lite and vega-embed bundles (about 0.9 MB) come from
``vl-convert-python``, altair's own way to inline them. Each view is drawn
with altair; the views are composed as plain dicts (see :func:`.drawing._spec`).

All views live in one specification, so they share the filter parameters:

* ``f_from`` / ``f_to`` (date inputs), ``f_contract``, ``f_engine``,
  ``f_strategy``, ``f_criterion``, ``f_executor`` (selects; :data:`~sprintflow.reporting.explore.cubes.ALL`
  keeps everything) and ``f_rows`` (rows per table);
* ``period_unit``: day (up to 45 days), week (up to 800 days) or month, from
  the span of the chosen dates, so a week of data shows days;
* clicks: one selection per chart (:data:`.spec.PICKS`) picks a period, a strategy (in a period), a
  criterion, a verification method, an engine or an iterations-to-green value, and the drill-down
  lists its evaluations; every bar's row (or column) takes the click, a 0 % or missing bar included.
  The charts of what is not an evaluation pick a test, a period of bugs or a scorer run, and the
  drill-down lists the page's rows behind it (:data:`.spec.ROW_PICKS`).

A rate is always ``passed / (passed + failed)`` with a 95 % Wilson interval,
drawn as a band and as error bars, so an interval stays visible for a single
point or a tiny sample.

The modules: :mod:`.spec` (the page, its parameters and datasets), one module per question the page
answers (:mod:`.pass_rates`, :mod:`.green`, :mod:`.engines`, :mod:`.costs`, :mod:`.flakiness`,
:mod:`.coverage`, :mod:`.bugs`, :mod:`.scores`), and below them :mod:`.drawing` (data, axes, click
targets, tables, composition) and :mod:`.expressions` (the filters, periods and Wilson intervals in Vega).
"""
