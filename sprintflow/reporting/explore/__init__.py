"""What the interactive report embeds: small day-level cubes, and a bounded sample of evaluations.

The page filters by date, contract, engine, strategy, criterion and executor,
and recomputes every chart and table in the browser. It cannot carry millions
of rows, so the history is aggregated here first: each cube holds counts per
day and per value of every filter (sums re-aggregate exactly, so a pass rate
or a flip rate recomputed from them in the browser is exact), and only a
bounded sample of evaluations travels whole, for the drill-down.

Bounds that keep the page small (a few MB on a 2-million-row history):

* contracts: the :data:`.cubes.CONTRACT_OPTIONS` most recently evaluated ones can be
  picked one by one; the rest are grouped as :data:`.cubes.OTHER_CONTRACTS`;
* evaluations listed when a point or bar is clicked: at most
  :data:`.sample.SAMPLE_PER_DAY` per day and result (the latest), :data:`.sample.SAMPLE_LIMIT`
  in all; the page says how many it shows of how many;
* EvalResult details (summary, feedback, diagnostics) for the latest
  :data:`.page.DETAIL_LIMIT` of those, read from ``.sprintflow/evals/``;
* flaky tests: the :data:`.page.TEST_LIMIT` tests with the most flips.

The cubes over every row (results and coverage per day and filter value, the strategies' flips, the
sample's results) are SQL over :attr:`~sprintflow.history.sources.History.table` (DuckDB over the
Parquet files); those over evaluations and sprints are pandas; :mod:`.details` reads the EvalResult
files (and journals) they name.

The modules: :mod:`.page` (:class:`~.page.PageData` and :func:`~.page.build_page_data`, which runs the
others), :mod:`.cubes` (the day-level cubes and the filter values), :mod:`.sample` (the drill-down
sample), :mod:`.details` (EvalResult excerpts, transcripts, each engine's feedback side by side).
"""
