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


_TWO_64 = "18446744073709551616"
_IN_TIME = f"(coalesce(epoch_us(timestamp), 9223372036854775807)::HUGEINT * {_TWO_64} + _row)"
"""SQL: a run's place in time as one number: its timestamp (none last), then its ``_row`` (never negative, below
2**63), as a window ordered by ``timestamp, _row`` puts them. One number: DuckDB's ``min`` of a struct is slower."""


def _reruns(rows: str) -> str:
    """SQL: the runs of ``rows`` (SQL naming ``name, workspace_hash, passed, timestamp, _row``) on a (name, hash)
    that may have run more than once.

    Most hashes are judged once: their runs are left out before anything is put in order or kept. The pairs
    run more than once are found by one 64-bit digest of name and hash (ten million content hashes as text
    outgrow memory, and a join on the name and a digest took three times as long); a pair run once whose digest
    another pair shares stays in, and :func:`_hash_runs` counts it as run once.
    """
    return f"""
        WITH runs AS NOT MATERIALIZED (SELECT * FROM ({rows}) WHERE name IS NOT NULL AND workspace_hash IS NOT NULL),
        repeated AS (SELECT hash(name, workspace_hash) AS digest FROM runs GROUP BY ALL HAVING count(*) > 1)
        SELECT * EXCLUDE (digest) FROM (SELECT *, hash(name, workspace_hash) AS digest FROM runs)
        SEMI JOIN repeated USING (digest)"""


def _hash_runs(reruns: str) -> str:
    """SQL: per (name, hash) of ``reruns`` (:func:`_reruns`): its ``runs``, ``passes``, ``first_row`` (the ``_row``
    of its first run in time) and ``mixed_hash`` (the hash where it had both outcomes, else null).

    Only a hash with both outcomes can flip, so only its runs are put in order (:func:`_flips`); the others
    are only counted.
    """
    return f"""
        SELECT name, count(*) AS runs, count(*) FILTER (WHERE passed) AS passes,
               (min({_IN_TIME}) % {_TWO_64})::BIGINT AS first_row,
               CASE WHEN count(*) FILTER (WHERE passed) NOT IN (0, count(*)) THEN workspace_hash END AS mixed_hash
        FROM {reruns} GROUP BY name, workspace_hash"""


def _flips(reruns: str, hashes: str) -> str:
    """SQL: the runs of ``reruns`` whose outcome differs from the run before them in time on the same (name,
    hash): the flips, counted on the later run. ``hashes``: :func:`_hash_runs` of the same runs."""
    return f"""
        SELECT * EXCLUDE (before) FROM (
            SELECT *, lag(passed) OVER (PARTITION BY name, workspace_hash ORDER BY timestamp, _row) AS before
            FROM {reruns} SEMI JOIN (SELECT name, mixed_hash AS workspace_hash FROM {hashes}
                                     WHERE mixed_hash IS NOT NULL) USING (name, workspace_hash))
        WHERE passed <> before"""


def _strategy_reruns(table: EvalTable) -> tuple[str, str, str]:
    """The tables of :func:`_reruns`, :func:`_hash_runs` and :func:`_flips` of the fresh strategy runs (with their
    ``contract_id, executor`` and :meth:`~EvalTable.sprint_columns`): made once, for :func:`flaky_strategies`
    and the report page's flips."""
    columns = dict.fromkeys(["contract_id", "executor", "_row", *table.sprint_columns()])
    runs = (f"SELECT name, workspace_hash, result = 'pass' AS passed, timestamp, {', '.join(columns)} "
            f"FROM evals WHERE {_FRESH}")
    reruns = table.kept("strategy_reruns", _reruns(runs))
    hashes = table.kept("strategy_hashes", _hash_runs(reruns))
    return reruns, hashes, table.kept("strategy_flips", _flips(reruns, hashes))


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
    _, hashes, flips = _strategy_reruns(source)
    table = source.query(f"""
        SELECT name AS strategy, count(*) AS repeated_hashes, count(mixed_hash) AS flaky_hashes,
               sum(runs)::BIGINT AS runs, coalesce(any_value(f.flips), 0) AS flips
        FROM {hashes} LEFT JOIN (SELECT name, count(*) AS flips FROM {flips} GROUP BY name) f USING (name)
        WHERE runs > 1 GROUP BY name ORDER BY name""").set_index("strategy")
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
