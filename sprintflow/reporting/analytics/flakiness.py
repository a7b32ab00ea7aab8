"""What is flaky: strategies and tests whose outcome changed on the same workspace content hash."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals, EvalTable
from sprintflow.reporting.analytics.engines import sprint_engines
from sprintflow.reporting.analytics.rates import _with_rate
from sprintflow.reporting.analytics.rows import _kind

__all__ = [
    "flaky_strategies",
    "flaky_tests",
    "tests_with_hashes",
]


_FRESH = ("kind = 'strategy' AND result IN ('pass', 'fail') AND workspace_hash IS NOT NULL "
          "AND cached IS DISTINCT FROM true")
"""SQL: the strategy rows that say something about flakiness: fresh runs (not cached reuses) that passed or
failed, on a known content hash."""


def _reruns(rows: str) -> str:
    """SQL: the runs of ``rows`` (SQL naming ``name, workspace_hash, passed, timestamp, _row``) on a (name, hash)
    run more than once, in time order, each with ``before`` (the outcome of the run before it on that hash,
    null for the first) and its ``position`` there (1 for the first).

    Runs of a hash run once are left out before the runs are ordered: most hashes are judged once. They are
    found by the hash's 64-bit digest (a table of ten million content hashes as text outgrows memory; as
    digests it takes a sixth), and a hash whose digest it shares with another is still kept apart: only a
    hash with more than one run of its own is kept. The rows are read twice rather than held (a million
    strategy rows with their hashes: 120 MB).
    """
    return f"""
        WITH runs AS NOT MATERIALIZED (SELECT * FROM ({rows}) WHERE name IS NOT NULL),
        repeated AS (SELECT name, hash(workspace_hash) AS digest FROM runs GROUP BY ALL HAVING count(*) > 1)
        SELECT * EXCLUDE (digest), lag(passed) OVER run AS before, row_number() OVER run AS position
        FROM (SELECT *, hash(workspace_hash) AS digest FROM runs) SEMI JOIN repeated USING (name, digest)
        WINDOW run AS (PARTITION BY name, workspace_hash ORDER BY timestamp, _row)
        QUALIFY count(*) OVER (PARTITION BY name, workspace_hash) > 1"""


def _strategy_reruns(table: EvalTable) -> str:
    """The table of :func:`_reruns` of the fresh strategy runs, with their ``contract_id, executor, sprint``:
    made once, for :func:`flaky_strategies` and the report page's flips. Only the re-runs are numbered by
    sprint (a tenth of the runs)."""
    columns = dict.fromkeys(["contract_id", "executor", "_row", *table.sprint_columns()])
    rows = (f"SELECT name, workspace_hash, result = 'pass' AS passed, timestamp, {', '.join(columns)} "
            f"FROM evals WHERE {_FRESH}")
    return table.kept("strategy_reruns", table.numbered(_reruns(rows)))


def flaky_strategies(evals: Evals) -> pd.DataFrame:
    """Strategies whose outcome changed on the same workspace content (same ``workspace_hash``).

    Only fresh runs count: cached reuses and skipped results are left out, and
    so are rows without a hash. Within each (strategy, hash), runs in time order
    are compared with the one before: a different outcome is a flip.

    Returns:
        ``strategy, repeated_hashes`` (hashes run more than once), ``flaky_hashes`` (with both
        outcomes), ``runs``, ``flips``, ``flip_rate`` (flips / comparisons); flakiest first.
    """
    source = EvalTable.of(evals)
    table = source.query(f"""
        WITH per_hash AS (SELECT name AS strategy, workspace_hash, count(*) AS runs,
                                 count(*) FILTER (WHERE passed <> before) AS flips,
                                 count(*) FILTER (WHERE passed) AS passes
                          FROM {_strategy_reruns(source)} GROUP BY ALL)
        SELECT strategy, count(*) AS repeated_hashes, count(*) FILTER (WHERE passes > 0 AND passes < runs)
               AS flaky_hashes, sum(runs)::BIGINT AS runs, sum(flips)::BIGINT AS flips
        FROM per_hash GROUP BY strategy ORDER BY strategy""").set_index("strategy")
    table["flip_rate"] = table["flips"] / (table["runs"] - table["repeated_hashes"])
    table = table.astype({"flaky_hashes": np.int64, "flips": np.int64})
    return table.reset_index().sort_values(["flip_rate", "strategy"], ascending=[False, True],
                                           kind="stable", ignore_index=True)


def tests_with_hashes(evals: Evals, tests: pd.DataFrame) -> pd.DataFrame:
    """Test outcomes with the content hash and contract of the evaluation whose unit-test run produced them.

    ``tests`` has one row per test of a TestRun (``run_id, test, passed``, see
    :func:`sprintflow.history.sources.test_rows`); strategy rows of ``evals``
    name their TestRun in ``test_run``. Outcomes of runs no evaluation names
    (the tester's own runs, runs recorded before ``test_run`` existed) have no hash.

    Returns:
        ``tests`` plus ``workspace_hash, contract_id, sprint, timestamp, engine, executor`` (``sprint``:
        :func:`sprint_ids`'s number; the engine is the sprint's).
    """
    columns = ["test_run", "workspace_hash", "contract_id", "sprint", "timestamp", "executor"]
    strategy = _kind(evals, "strategy", *columns, where="test_run IS NOT NULL") if "test_run" in evals \
        else pd.DataFrame(columns=columns)
    linked = strategy[strategy["test_run"].notna()].astype({"test_run": object})
    linked = linked.drop_duplicates("test_run").set_index("test_run")
    engines = sprint_engines(evals) if "engine" in evals else pd.Series(dtype=object)
    out = tests.copy()
    run = out["run_id"].astype(object)
    for column in columns[1:]:
        out[column] = run.map(linked[column].astype(object)) if len(linked) else None
    out["timestamp"] = pd.to_datetime(out["timestamp"].where(out["timestamp"].notna(), out["recorded_at"]),
                                      utc=True)
    out["engine"] = out["sprint"].map(engines) if len(engines) else None
    return out


def flaky_tests(evals: Evals, tests: pd.DataFrame, *, linked: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tests whose outcome changed on the same workspace content hash, ranked by flip rate.

    Within each (test, hash) the runs in time order are compared with the one
    before: a different outcome is a flip. ``flip_rate = flips / comparisons``
    with its Wilson interval, so a test that flipped once in two runs ranks
    with an honest, wide interval below one that flipped 40 times in 80.

    Returns:
        ``test, runs, repeated_hashes, flaky_hashes, comparisons, flips, flip_rate, ci_low, ci_high,
        last_seen``, flakiest first (then by the interval's lower bound); only tests run more than
        once on one hash. ``linked``: :func:`tests_with_hashes` of the same ``evals`` and ``tests``, when
        the caller has it already.
    """
    linked = tests_with_hashes(evals, tests) if linked is None else linked
    linked = linked[linked["workspace_hash"].notna()]
    return _flip_table(pd.DataFrame({"test": linked["test"], "hash": linked["workspace_hash"],
                                     "passed": linked["passed"].astype(bool), "at": linked["timestamp"]}))


def _flip_table(frame: pd.DataFrame) -> pd.DataFrame:
    columns = ["test", "runs", "repeated_hashes", "flaky_hashes", "comparisons", "flips", "flip_rate", "ci_low",
               "ci_high", "last_seen"]
    frame = frame[frame.duplicated(["test", "hash"], keep=False)]
    if frame.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    frame = frame.sort_values(["test", "hash", "at"], kind="stable")
    same = frame[["test", "hash"]].eq(frame[["test", "hash"]].shift()).all(axis=1)
    frame = frame.assign(flip=same & frame["passed"].ne(frame["passed"].shift()))
    per_hash = frame.groupby(["test", "hash"], observed=True).agg(
        runs=("passed", "size"), passes=("passed", "sum"), flips=("flip", "sum"), last=("at", "max"))
    per_hash["flaky"] = (per_hash["passes"] > 0) & (per_hash["passes"] < per_hash["runs"])
    table = per_hash.groupby("test", observed=True).agg(
        runs=("runs", "sum"), repeated_hashes=("runs", "size"), flaky_hashes=("flaky", "sum"),
        flips=("flips", "sum"), last_seen=("last", "max"))
    table["comparisons"] = table["runs"] - table["repeated_hashes"]
    table = table.astype({"flaky_hashes": np.int64, "flips": np.int64}).reset_index()
    table = _with_rate(table, "flips", "comparisons", "flip_rate")
    return table[columns].sort_values(["flip_rate", "ci_low", "test"], ascending=[False, False, True],
                                      kind="stable", ignore_index=True)
