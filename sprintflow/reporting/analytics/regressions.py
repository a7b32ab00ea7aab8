"""Regressions the evaluator reported (something passed before and fails now), per period."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals
from sprintflow.reporting.analytics.periods import period_start
from sprintflow.reporting.analytics.rows import _kind

__all__ = [
    "regressions_over_time",
]


def regressions_over_time(evals: Evals, *, freq: str = "W") -> pd.DataFrame:
    """Regressions the evaluator reported (something passed before and fails now), per period.

    Returns:
        ``week, evaluations, with_regressions, regressions, share`` (evaluations with at
        least one regression / evaluations).
    """
    rows = _kind(evals, "evaluation", "regressions", "timestamp")
    found = rows["regressions"].fillna(0).astype(np.int64)
    frame = pd.DataFrame({"week": period_start(rows["timestamp"], freq), "evaluations": 1,
                          "with_regressions": (found > 0).astype(np.int64), "regressions": found})
    table = frame.groupby("week").sum().reset_index()
    table["share"] = table["with_regressions"] / table["evaluations"]
    return table
