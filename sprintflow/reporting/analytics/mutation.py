"""The mutation check per engine: how much of the changed code the tests that passed really test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals
from sprintflow.reporting.analytics.rates import _with_rate
from sprintflow.reporting.analytics.rows import _engine_names, _kind

__all__ = [
    "kill_rates",
]


def kill_rates(evals: Evals) -> pd.DataFrame:
    """The mutation check per engine: how much of the changed code the tests that passed really test.

    The generator's side is the unit-test strategies' mutants (killed / mutants over all of them,
    with its Wilson interval); the tester's is the mean of its evaluations' kill rates.

    Returns:
        ``engine, evaluations, mutants, killed, kill_rate, ci_low, ci_high, tester_evaluations,
        tester_kill_rate``, one row per engine that has either.

    Example:
        >>> at = pd.Timestamp("2026-05-13", tz="UTC")
        >>> evals = pd.DataFrame([
        ...     {"kind": "evaluation", "contract_id": "c", "iteration": 1, "timestamp": at, "engine": "claude",
        ...      "tester_kill_rate": 0.5},
        ...     {"kind": "strategy", "contract_id": "c", "iteration": 1, "timestamp": at, "name": "unit-test",
        ...      "mutants": 8, "kill_rate": 0.75}])
        >>> kill_rates(evals)[["engine", "mutants", "killed", "kill_rate", "tester_kill_rate"]].to_dict("records")
        [{'engine': 'claude', 'mutants': 8, 'killed': 6, 'kill_rate': 0.75, 'tester_kill_rate': 0.5}]
    """
    keys = ["workspace", "contract_id", "iteration", "timestamp"]
    runs = _kind(evals, "evaluation", *keys, "engine", "tester_kill_rate").drop_duplicates(keys)
    runs["engine"] = _engine_names(runs["engine"])
    checked = _kind(evals, "strategy", *keys, "mutants", "kill_rate",
                    where="mutants IS NOT NULL AND kill_rate IS NOT NULL").dropna(subset=["mutants", "kill_rate"])
    checked = checked.merge(runs[[*keys, "engine"]], on=keys, how="left")
    checked["engine"] = _engine_names(checked["engine"])
    checked = checked.assign(mutants=checked["mutants"].astype(np.int64),
                             killed=(checked["mutants"] * checked["kill_rate"]).round().astype(np.int64))
    generator = checked.groupby("engine").agg(evaluations=("mutants", "size"), mutants=("mutants", "sum"),
                                              killed=("killed", "sum"))
    tester = runs.dropna(subset=["tester_kill_rate"]).groupby("engine").agg(
        tester_evaluations=("tester_kill_rate", "size"), tester_kill_rate=("tester_kill_rate", "mean"))
    table = generator.join(tester, how="outer").reset_index()
    table = table.fillna({"evaluations": 0, "mutants": 0, "killed": 0, "tester_evaluations": 0}).astype(
        {"evaluations": np.int64, "mutants": np.int64, "killed": np.int64, "tester_evaluations": np.int64})
    table = _with_rate(table, "killed", "mutants", "kill_rate")
    return table[["engine", "evaluations", "mutants", "killed", "kill_rate", "ci_low", "ci_high",
                  "tester_evaluations", "tester_kill_rate"]]
