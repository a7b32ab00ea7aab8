"""The scorer's scores per skill and prompt version: over time, side by side, and over several epochs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.reporting.analytics.periods import period_start

__all__ = [
    "score_by_prompt",
    "score_epochs",
    "score_trends",
]


def _prompt_version(scores: pd.DataFrame) -> pd.Series:
    return scores["prompt_sha256"].fillna("unknown").str[:8]


def score_trends(scores: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Scorer score per skill and prompt version (first 8 hex of its sha256), per period.

    Returns:
        ``week, skill, prompt_version, runs, score`` (mean), ``min_score, max_score``.
    """
    frame = pd.DataFrame({"week": period_start(scores["recorded_at"], freq), "skill": scores["skill"],
                          "prompt_version": _prompt_version(scores), "score": scores["score"]})
    return frame.groupby(["week", "skill", "prompt_version"]).agg(
        runs=("score", "size"), score=("score", "mean"), min_score=("score", "min"),
        max_score=("score", "max")).reset_index()


def score_by_prompt(scores: pd.DataFrame) -> pd.DataFrame:
    """Each skill's prompt versions side by side: runs, mean score, first and last seen.

    Returns:
        ``skill, prompt_version, runs, score, first_seen, last_seen``, by skill then first seen.
    """
    frame = scores.assign(prompt_version=_prompt_version(scores))
    table = frame.groupby(["skill", "prompt_version"]).agg(
        runs=("score", "size"), score=("score", "mean"), first_seen=("recorded_at", "min"),
        last_seen=("recorded_at", "max")).reset_index()
    return table.sort_values(["skill", "first_seen"], kind="stable", ignore_index=True)


def score_epochs(scores: pd.DataFrame) -> pd.DataFrame:
    """Each scoring run that ran its cases over several epochs: pass@1, pass@K, pass^K and the spread.

    Returns:
        ``recorded_at, skill, prompt_version, epochs, pass_at_1, pass_at_k, pass_hat_k, flaky_cases,
        min_epoch_score, max_epoch_score``, oldest first.
    """
    columns = ["recorded_at", "skill", "prompt_version", "epochs", "pass_at_1", "pass_at_k", "pass_hat_k",
               "flaky_cases", "min_epoch_score", "max_epoch_score"]
    if "epochs" not in scores:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    runs = scores[pd.to_numeric(scores["epochs"], errors="coerce").fillna(1) > 1]
    epoch_scores = runs["epoch_scores"].map(lambda values: values if isinstance(values, list) and values else [np.nan])
    table = pd.DataFrame({
        "recorded_at": runs["recorded_at"], "skill": runs["skill"], "prompt_version": _prompt_version(runs),
        "epochs": runs["epochs"].astype(np.int64), "pass_at_1": runs["pass_at_1"].astype(float),
        "pass_at_k": runs["pass_at_k"].astype(float), "pass_hat_k": runs["pass_hat_k"].astype(float),
        "flaky_cases": runs["flaky_ids"].map(lambda ids: len(ids) if isinstance(ids, list) else 0),
        "min_epoch_score": epoch_scores.map(min).astype(float),
        "max_epoch_score": epoch_scores.map(max).astype(float),
    })
    return table[columns].sort_values("recorded_at", kind="stable", ignore_index=True)
