"""Rates with their Wilson score intervals, and the outcome counts of every pass rate."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import EvalTable, frame_query

__all__ = [
    "wilson_interval",
]

Z95 = 1.959963984540054


def wilson_interval(successes, trials, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of ``successes / trials``, elementwise; NaN where ``trials`` is 0.

    Example:
        >>> low, high = wilson_interval(8, 10)
        >>> round(float(low), 4), round(float(high), 4)
        (0.4902, 0.9433)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        denominator = 1 + z**2 / n
        center = (p + z**2 / (2 * n)) / denominator
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / denominator
    return np.where(n > 0, center - half, np.nan), np.where(n > 0, center + half, np.nan)


_COUNTS = ("count(*) FILTER (WHERE result = 'pass') AS passed, count(*) FILTER (WHERE result = 'fail') AS failed, "
           "count(*) FILTER (WHERE result = 'skipped') AS skipped")
"""SQL: the outcomes of a group's rows, counted."""


def _outcome_counts(rows: pd.DataFrame | str, keys: list[str], table: EvalTable | None = None) -> pd.DataFrame:
    """passed / failed / skipped / runs per group (groups with an empty key left out, sorted by the keys),
    with the pass rate and its Wilson interval.

    Counted by DuckDB: ``rows`` is a DataFrame, or SQL over ``table`` (a query naming ``keys`` and ``result``),
    so a million rows are counted where they are and only the counts come back.

    Example:
        >>> frame = pd.DataFrame({"name": ["lint", "lint", "build"], "result": ["pass", "skipped", "fail"]})
        >>> _outcome_counts(frame, ["name"])[["name", "runs", "passed", "skipped"]].values.tolist()
        [['build', 1, 0, 0], ['lint', 1, 1, 1]]
    """
    names = ", ".join(f'"{key}"' for key in keys)
    sql = (f"SELECT {names}, {_COUNTS} "
           f"FROM {'_rows' if table is None else f'({rows})'} "
           f"WHERE {' AND '.join(f'{chr(34)}{key}{chr(34)} IS NOT NULL' for key in keys)} "
           f"GROUP BY {names} ORDER BY {names}")
    if table is None:
        assert isinstance(rows, pd.DataFrame)
        counts = frame_query(sql, _rows=rows)
    else:
        counts = table.query(sql)
    counts.insert(len(keys), "runs", counts["passed"] + counts["failed"])
    return _with_rate(counts, "passed", "runs", "pass_rate")


def _with_rate(frame: pd.DataFrame, successes: str, trials: str, name: str) -> pd.DataFrame:
    frame = frame.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        frame[name] = np.where(frame[trials] > 0, frame[successes] / frame[trials], np.nan)
    frame["ci_low"], frame["ci_high"] = wilson_interval(frame[successes], frame[trials])
    return frame
