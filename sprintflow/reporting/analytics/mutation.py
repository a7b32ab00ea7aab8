"""The mutation check per engine: how much of the changed code the tests that passed really test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals, EvalTable, sql_literal
from sprintflow.reporting.analytics.rates import _with_rate
from sprintflow.reporting.analytics.rows import UNKNOWN_ENGINE

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
    source = EvalTable.of(evals)
    keys = ("workspace", "contract_id", "iteration", "timestamp")
    # An evaluation's rows share these keys; its first recorded row names the engine and the tester's kill rate.
    # Counted in SQL: pandas gets a row per engine. Mutants killed are rounded half to even, as numpy rounds.
    runs = f"""WITH runs AS (
        SELECT {", ".join(keys)}, coalesce(arg_min_null(engine, _row), {sql_literal(UNKNOWN_ENGINE)}) AS engine,
               arg_min_null(tester_kill_rate, _row) AS tester_kill_rate
        FROM evals WHERE kind = 'evaluation' GROUP BY ALL)"""
    same = " AND ".join(f"c.{key} IS NOT DISTINCT FROM r.{key}" for key in keys)
    generator = source.query(f"""{runs}
        SELECT coalesce(r.engine, {sql_literal(UNKNOWN_ENGINE)}) AS engine, count(*) AS evaluations,
               sum(c.mutants)::BIGINT AS mutants, sum(round_even(c.mutants * c.kill_rate, 0))::BIGINT AS killed
        FROM evals c LEFT JOIN runs r ON {same}
        WHERE c.kind = 'strategy' AND c.mutants IS NOT NULL AND isfinite(c.kill_rate) GROUP BY 1""")
    tester = source.query(f"""{runs}
        SELECT engine, count(*) AS tester_evaluations, avg(tester_kill_rate) AS tester_kill_rate
        FROM runs WHERE isfinite(tester_kill_rate) GROUP BY engine""")
    generator, tester = generator.set_index("engine"), tester.set_index("engine")
    table = generator.join(tester, how="outer").reset_index()
    table = table.fillna({"evaluations": 0, "mutants": 0, "killed": 0, "tester_evaluations": 0}).astype(
        {"evaluations": np.int64, "mutants": np.int64, "killed": np.int64, "tester_evaluations": np.int64})
    table = _with_rate(table, "killed", "mutants", "kill_rate")
    return table[["engine", "evaluations", "mutants", "killed", "kill_rate", "ci_low", "ci_high",
                  "tester_evaluations", "tester_kill_rate"]]
