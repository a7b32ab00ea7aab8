"""What one page embeds (:class:`PageData`), aggregated from the history by :func:`build_page_data`, as JSON rows."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from sprintflow.history.sources import History
from sprintflow.reporting import analytics as r
from sprintflow.reporting.explore.cubes import (
    _activity,
    _bugs,
    _contract_names,
    _evaluation_facts,
    _flips,
    _greens,
    _in_buckets,
    _most_flipping,
    _options,
    _outcomes,
    _scores,
    _sum_by,
)
from sprintflow.reporting.explore.details import eval_details, side_by_side_feedback
from sprintflow.reporting.explore.sample import _flow_run_page, _sample

__all__ = [
    "DETAIL_LIMIT",
    "TEST_LIMIT",
    "PageData",
    "build_page_data",
    "records",
    "with_weeks_before",
]

DETAIL_LIMIT = 400
TEST_LIMIT = 300


@dataclass
class PageData:
    """The cubes and samples one page embeds, with the filter options."""

    outcomes: pd.DataFrame
    """``day, level, name, contract, engine, executor, passed, failed, skipped``; level is evaluation,
    strategy or criterion; name the strategy or criterion (empty for evaluations)."""
    greens: pd.DataFrame
    """``day, level, name, contract, engine, executor, iterations, items, hours``: contracts (level
    ``contract``) and criteria (level ``criterion``) by the day they were first evaluated and the
    iteration they first passed at (:data:`~.cubes.NEVER` when they never did); hours summed over the green ones."""
    activity: pd.DataFrame
    """``day, contract, engine, executor, evaluations, tokens, cost, costed, sprints, criteria_green,
    regressions``: per day, evaluations and what they cost, sprints started, criteria first passing."""
    flips: pd.DataFrame
    """``day, level, name, contract, engine, executor, comparisons, flips``: re-runs on an unchanged
    content hash, per test (level ``test``) and per strategy (level ``strategy``), on the later run's day."""
    coverage: pd.DataFrame
    """``day, method, name, contract, engine, executor, passed, failed, skipped``: criterion results by
    verification method (``name``: the criterion id)."""
    bugs: pd.DataFrame
    """``day, contract, opened, fixed, reopened``: bug events by day and unit."""
    scores: pd.DataFrame
    """``day, skill, prompt_version, label, score, epochs, pass_at_1, pass_at_k, pass_hat_k``: one row per
    scoring run."""
    evaluations: list[dict[str, Any]]
    """The drill-down sample, newest first (see :mod:`sprintflow.reporting.explore` for the bounds)."""
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """EvalResult excerpts by evaluation key, for the newest sampled evaluations."""
    options: dict[str, list[str]] = field(default_factory=dict)
    """Filter values: contract, engine, strategy, criterion, executor."""
    first_day: str = ""
    last_day: str = ""
    totals: dict[str, int] = field(default_factory=dict)
    """Evaluations, contracts, contracts named in the filter, evaluations sampled and detailed, contract pairs,
    tests re-run on one content hash and the tests the flaky-test view keeps of them."""
    side_by_side: list[dict[str, Any]] = field(default_factory=list)
    """The newest :data:`~.details.SIDE_BY_SIDE_LIMIT` contract pairs of
    :func:`~sprintflow.reporting.analytics.engine_side_by_side`, each side with its latest feedback."""
    pairs: list[dict[str, Any]] = field(default_factory=list)
    """:func:`~sprintflow.reporting.analytics.engine_pairs`: the paired test per pair of engines."""
    weeks_before: str = ""
    """The first day the cubes hold day by day; before it, by week (:func:`with_weeks_before`). Empty: every day."""


def build_page_data(history: History, *, workspace: Path | str | None = None,
                    to_green: pd.DataFrame | None = None, criterion_greens: pd.DataFrame | None = None,
                    side_by_side: pd.DataFrame | None = None, linked_tests: pd.DataFrame | None = None) -> PageData:
    """Aggregate ``history`` into what the interactive page embeds.

    Args:
        history: the loaded history (``evals`` with at least the
            :data:`~sprintflow.reporting.analytics.REPORT_COLUMNS`).
        workspace: where to read EvalResult files of sampled evaluations that name no workspace of their own
            (each recorded evaluation is read from the workspace it ran in).
        to_green, criterion_greens: :func:`~sprintflow.reporting.analytics.time_to_green` and
            :func:`~sprintflow.reporting.analytics.criterion_greens` of the same history, when the caller
            has them already (they are the costly part); ``side_by_side``:
            :func:`~sprintflow.reporting.analytics.engine_side_by_side`'s and ``linked_tests``
            :func:`~sprintflow.reporting.analytics.tests_with_hashes`', likewise.
    """
    table = history.table  # the rows stay in DuckDB: the cubes over every row are aggregated there
    to_green = r.time_to_green(table) if to_green is None else to_green
    criterion_greens = r.criterion_greens(table) if criterion_greens is None else criterion_greens
    # The evaluations stay in DuckDB too: pandas gets each sprint's first one, the sums per day and the sample.
    named = _contract_names(table)
    facts = _evaluation_facts(table)
    criteria = _in_buckets(criterion_greens, named)
    # Rows without an evaluation are filed under an engine no evaluation has.
    unmatched = "(unmatched)" if r.UNKNOWN_ENGINE in facts.engines else r.UNKNOWN_ENGINE
    outcomes, coverage = _outcomes(table, named, unmatched)
    data = PageData(
        outcomes=outcomes,
        greens=_greens(table, to_green, criteria, named),
        activity=_activity(table, criteria, named),
        flips=_flips(history, named, linked_tests),  # every re-run test; cut to TEST_LIMIT below
        coverage=coverage,
        bugs=_bugs(history.bugs, named),
        scores=_scores(history.scores),
        evaluations=[],
        options=_options(table, facts, named),
        first_day=facts.first_day,
        last_day=facts.last_day,
    )
    data.evaluations = _sample(table, named, to_green, _flow_run_page())
    data.details = eval_details(workspace, data.evaluations[:DETAIL_LIMIT])
    pairs = r.engine_side_by_side(table, to_green=to_green) if side_by_side is None else side_by_side
    data.side_by_side = side_by_side_feedback(pairs, workspace)
    data.pairs = records(r.engine_pairs(pairs))
    retested = int(data.flips.loc[data.flips["level"] == "test", "name"].nunique()) if len(data.flips) else 0
    if retested > TEST_LIMIT:
        data.flips = _most_flipping(data.flips, TEST_LIMIT)
    data.totals = {"evaluations": facts.evaluations, "contracts": facts.contracts,
                   "named contracts": len(named), "sampled evaluations": len(data.evaluations),
                   "detailed evaluations": min(len(data.evaluations), DETAIL_LIMIT),
                   "contract pairs": len(pairs), "re-run tests": retested,
                   "tests shown": min(retested, TEST_LIMIT)}
    return data


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as compact JSON-ready dicts: NaN as None, floats to 6 decimals, numpy scalars as Python values.

    Example:
        >>> records(pd.DataFrame({"day": ["2026-01-05"], "rate": [1 / 3], "runs": [3], "cost": [float("nan")]}))
        [{'day': '2026-01-05', 'rate': 0.333333, 'runs': 3, 'cost': None}]
    """
    # Column by column, then zipped: a frame's own to_dict on object columns costs seconds per cube.
    columns = []
    for name in frame.columns:
        column = frame[name]
        values = column.round(6) if pd.api.types.is_float_dtype(column.dtype) else column
        columns.append(values.astype(object).where(column.notna(), None).tolist())
    names = [str(name) for name in frame.columns]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


DAILY_CUBES = ("outcomes", "greens", "activity", "flips", "coverage", "bugs")
"""The cubes with a row per day (``scores`` has one per scoring run)."""
SUMMED = frozenset({"passed", "failed", "skipped", "items", "hours", "evaluations", "tokens", "cost", "costed",
                    "regressions", "sprints", "criteria_green", "comparisons", "flips", "opened", "fixed",
                    "reopened"})
"""The cubes' counts and sums; every other column is a key."""


def with_weeks_before(data: PageData, day: str) -> PageData:
    """``data`` with the days before ``day`` merged by week, each week split at a month's start.

    A long history's cubes outgrow the page day by day. Merged this way, every week and every month
    still sums exactly (the periods the charts use past 45 days), a merged row is filed under its
    first day (never before the history's first), and the old part takes about a fifth of the rows.

    Example:
        >>> days = pd.DataFrame({"day": ["2026-01-30", "2026-02-02", "2026-02-03", "2026-03-02"],
        ...                      "contract": "c-1", "opened": [1, 2, 3, 4], "fixed": 0, "reopened": 0})
        >>> page = PageData(*[pd.DataFrame()] * 5, bugs=days, scores=pd.DataFrame(), evaluations=[],
        ...                 first_day="2026-01-30")
        >>> with_weeks_before(page, "2026-03-01").bugs[["day", "opened"]].values.tolist()
        [['2026-01-30', 1], ['2026-02-02', 5], ['2026-03-02', 4]]
    """
    floor, start = pd.Timestamp(data.first_day or day), pd.Timestamp(day)
    merged = {name: _merge_days(getattr(data, name), start, floor) for name in DAILY_CUBES}
    return replace(data, **merged, weeks_before=day)


def _merge_days(frame: pd.DataFrame, start: pd.Timestamp, floor: pd.Timestamp) -> pd.DataFrame:
    if frame.empty:
        return frame
    days = pd.to_datetime(frame["day"].astype(object))
    monday = days - pd.to_timedelta(days.dt.weekday, unit="D")
    month = days - pd.to_timedelta(days.dt.day - 1, unit="D")
    first = monday.where(monday > month, month)
    first = first.where(first > floor, floor)
    merged = frame.assign(day=days.where(days >= start, first).dt.strftime("%Y-%m-%d"))
    keys = [column for column in frame.columns if column not in SUMMED]
    return _sum_by(merged.astype({key: "category" for key in keys}), keys)[list(frame.columns)]
