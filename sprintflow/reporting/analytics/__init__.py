"""Analytics over the history: the answers to "is our agent getting better?".

Every function takes the history's rows (``evals`` in :data:`~sprintflow.history.dataset.EVAL_SCHEMA`
columns, as a DataFrame or as the DuckDB table over the Parquet files,
:class:`~sprintflow.history.query.EvalTable`; ``bugs``, ``scores``, ``testruns``, ``tests`` as
DataFrames) and returns a new small DataFrame; none prints or mutates its input. The aggregations
over every row are SQL run by DuckDB where the rows are (a DataFrame is scanned in place, the files
are read column by column), so a report over millions of rows never loads them into pandas; pandas
gets the small answers (at most a row per criterion of a sprint, and the strategy rows that name a
unit-test run). Notebooks, the HTML report and the Prefect artifacts all call these same functions.

Conventions:
    * A pass rate counts decided outcomes only: ``pass / (pass + fail)``;
      ``skipped`` rows are counted apart, never as a pass.
    * Intervals are Wilson score intervals (95 % by default): honest for small
      counts and for rates near 0 or 1.
    * Periods are labelled by their first day (weeks start on Monday, UTC). The
      ``*_by_week`` tables are weekly; the newer trend tables take ``freq="auto"``
      (:func:`auto_freq`: days for up to a month of data, weeks up to two
      years, months beyond) and call their period column ``period``.
    * A sprint is a sprint run: one contract's run in one workspace
      (:data:`SPRINT_KEYS`: ``workspace, contract_id, sprint_run``), so six workspaces
      sprinting on copies of one contract are six sprints, even in one shared history.
      Evaluations of a workspace's contract outside any sprint run count as one sprint.
      Iterations are counted within the sprint run. A criterion is judged per sprint
      (criterion ids repeat across contracts).

One module per question, every function re-exported here (``from sprintflow.reporting.analytics import X``):
:mod:`.pass_rates` (per strategy, period, criterion id; first-pass yield), :mod:`.green` (iterations and
hours to green, per sprint and per criterion), :mod:`.coverage` (how criteria are verified),
:mod:`.flakiness` (strategies and tests flipping on one content hash), :mod:`.testruns` (test runs per
period, each test's history), :mod:`.regressions`, :mod:`.bugs`, :mod:`.scores` (the scorer),
:mod:`.costs` (tokens and cost), :mod:`.engines` (engine A vs engine B, the same contract under two),
:mod:`.mutation` (kill rates); below them :mod:`.rows` (the columns read, rows of one kind),
:mod:`.periods` and :mod:`.rates` (Wilson intervals).
"""

from __future__ import annotations

from sprintflow.history.sprints import SPRINT_KEYS, sprint_ids
from sprintflow.reporting.analytics.bugs import bug_activity, bug_summary, time_to_fix
from sprintflow.reporting.analytics.costs import cost_over_time, cost_per_sprint
from sprintflow.reporting.analytics.coverage import coverage_summary, criteria_coverage
from sprintflow.reporting.analytics.engines import engine_comparison, engine_pairs, engine_side_by_side, sprint_engines
from sprintflow.reporting.analytics.flakiness import flaky_strategies, flaky_tests, tests_with_hashes
from sprintflow.reporting.analytics.green import criterion_greens, criterion_time_to_green, time_to_green
from sprintflow.reporting.analytics.mutation import kill_rates
from sprintflow.reporting.analytics.pass_rates import (
    criterion_pass_rate,
    first_pass_yield,
    pass_rate_by_strategy,
    pass_rate_by_week,
)
from sprintflow.reporting.analytics.periods import auto_freq, period_start
from sprintflow.reporting.analytics.rates import wilson_interval
from sprintflow.reporting.analytics.regressions import regressions_over_time
from sprintflow.reporting.analytics.rows import REPORT_COLUMNS, UNKNOWN_ENGINE
from sprintflow.reporting.analytics.scores import score_by_prompt, score_epochs, score_trends
from sprintflow.reporting.analytics.testruns import test_history, test_outcomes, testrun_trends

__all__ = [
    "REPORT_COLUMNS",
    "SPRINT_KEYS",
    "UNKNOWN_ENGINE",
    "auto_freq",
    "bug_activity",
    "bug_summary",
    "cost_over_time",
    "cost_per_sprint",
    "coverage_summary",
    "criteria_coverage",
    "criterion_greens",
    "criterion_pass_rate",
    "criterion_time_to_green",
    "engine_comparison",
    "engine_pairs",
    "engine_side_by_side",
    "first_pass_yield",
    "flaky_strategies",
    "flaky_tests",
    "kill_rates",
    "pass_rate_by_strategy",
    "pass_rate_by_week",
    "period_start",
    "regressions_over_time",
    "score_by_prompt",
    "score_epochs",
    "score_trends",
    "sprint_engines",
    "sprint_ids",
    "test_history",
    "test_outcomes",
    "testrun_trends",
    "tests_with_hashes",
    "time_to_fix",
    "time_to_green",
    "wilson_interval",
]
