"""Regressions the evaluator reported (something passed before and fails now), per period."""

from __future__ import annotations

import pandas as pd

from sprintflow.history.query import Evals, EvalTable
from sprintflow.reporting.analytics.periods import _period_sql

__all__ = [
    "regressions_over_time",
]


def regressions_over_time(evals: Evals, *, freq: str = "W") -> pd.DataFrame:
    """Regressions the evaluator reported (something passed before and fails now), per period.

    Returns:
        ``week, evaluations, with_regressions, regressions, share`` (evaluations with at
        least one regression / evaluations).
    """
    found = "coalesce(regressions, 0)"
    table = EvalTable.of(evals).query(f"""
        SELECT {_period_sql("timestamp", freq)} AS week, count(*) AS evaluations,
               count(*) FILTER (WHERE {found} > 0) AS with_regressions, TRY_CAST(sum({found}) AS BIGINT) AS regressions
        FROM evals WHERE kind = 'evaluation' AND timestamp IS NOT NULL GROUP BY week ORDER BY week""")
    table["week"] = table["week"].astype("datetime64[ns]")  # as period_start gives
    table["share"] = table["with_regressions"] / table["evaluations"]
    return table
