"""Rates with their Wilson score intervals, and the outcome counts of every pass rate."""

from __future__ import annotations

import numpy as np
import pandas as pd

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


def _outcome_counts(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """passed / failed / skipped / runs per group, with the pass rate and its Wilson interval."""
    result = frame["result"]
    counts = pd.DataFrame({
        **{key: frame[key] for key in keys},
        "passed": (result == "pass").astype(np.int64),
        "failed": (result == "fail").astype(np.int64),
        "skipped": (result == "skipped").astype(np.int64),
    }).groupby(keys, sort=True, observed=True).sum().reset_index()
    counts.insert(len(keys), "runs", counts["passed"] + counts["failed"])
    return _with_rate(counts, "passed", "runs", "pass_rate")


def _with_rate(frame: pd.DataFrame, successes: str, trials: str, name: str) -> pd.DataFrame:
    frame = frame.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        frame[name] = np.where(frame[trials] > 0, frame[successes] / frame[trials], np.nan)
    frame["ci_low"], frame["ci_high"] = wilson_interval(frame[successes], frame[trials])
    return frame
