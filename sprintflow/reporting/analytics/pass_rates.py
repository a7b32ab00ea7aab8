"""What passes: per strategy, per period, per criterion id, and sprints whose first evaluation passed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals
from sprintflow.reporting.analytics.periods import _freq, _period_sql, period_start
from sprintflow.reporting.analytics.rates import _outcome_counts, _with_rate
from sprintflow.reporting.analytics.rows import _first_evaluations, _of_kind, _span

__all__ = [
    "criterion_pass_rate",
    "first_pass_yield",
    "pass_rate_by_strategy",
    "pass_rate_by_week",
]


def pass_rate_by_strategy(evals: Evals) -> pd.DataFrame:
    """Pass rate of each strategy over every evaluation (cached reuses count: the evaluation saw them).

    Returns:
        One row per strategy: ``strategy, runs, passed, failed, skipped, pass_rate, ci_low, ci_high``,
        worst pass rate first.
    """
    rows, source = _of_kind(evals, "strategy", "name AS strategy, result")
    table = _outcome_counts(rows, ["strategy"], source)
    return table.sort_values(["pass_rate", "strategy"], kind="stable", ignore_index=True)


def pass_rate_by_week(evals: Evals, *, by_strategy: bool = True, freq: str = "W") -> pd.DataFrame:
    """Pass rate per period, per strategy (or of whole evaluations when ``by_strategy`` is False).

    Returns:
        ``week, [strategy,] runs, passed, failed, skipped, pass_rate, ci_low, ci_high``.
    """
    keys = ["week", "strategy"] if by_strategy else ["week"]
    rows, source = _of_kind(evals, "strategy" if by_strategy else "evaluation",
                            f"{_period_sql('timestamp', freq)} AS week, name AS strategy, result")
    return _outcome_counts(rows, keys, source)


def first_pass_yield(evals: Evals, *, freq: str | None = None) -> pd.DataFrame:
    """Share of sprints whose first evaluation passed, overall or per period of that evaluation.

    Returns:
        ``[week,] sprints, first_pass, yield, ci_low, ci_high``.
    """
    first = _first_evaluations(evals)
    frame = pd.DataFrame({"sprints": 1, "first_pass": (first["result"] == "pass").astype(np.int64)},
                         index=first.index)
    if freq is None:
        table = frame.sum().to_frame().T.astype(np.int64)
    else:
        frame.insert(0, "week", period_start(first["timestamp"], freq))
        table = frame.groupby("week").sum().reset_index()
    return _with_rate(table, "first_pass", "sprints", "yield")


def criterion_pass_rate(evals: Evals, *, freq: str = "auto") -> pd.DataFrame:
    """Pass rate of each criterion id per period, over every contract that has it.

    Criterion ids repeat across contracts (``sc-1-1`` …): the trend of one id
    tells how that kind of check fares; filter ``evals`` by contract first for one
    contract's criteria.

    Returns:
        ``period, criterion, runs, passed, failed, skipped, pass_rate, ci_low, ci_high``.

    Example:
        >>> frame = pd.DataFrame({"kind": "criterion", "name": ["sc-1", "sc-1", "sc-1"],
        ...     "result": ["fail", "pass", "pass"],
        ...     "timestamp": pd.to_datetime(["2026-01-05", "2026-01-06", "2026-01-06"], utc=True)})
        >>> criterion_pass_rate(frame)[["period", "passed", "runs"]].to_dict("records")[1]
        {'period': Timestamp('2026-01-06 00:00:00'), 'passed': 2, 'runs': 2}
    """
    period = _period_sql("timestamp", _freq(_span(evals, "criterion"), freq))
    rows, source = _of_kind(evals, "criterion", f"{period} AS period, name AS criterion, result")
    return _outcome_counts(rows, ["period", "criterion"], source)
