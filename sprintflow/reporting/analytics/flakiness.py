"""What is flaky: strategies and tests whose outcome changed on the same workspace content hash."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.reporting.analytics.engines import sprint_engines
from sprintflow.reporting.analytics.rates import _with_rate
from sprintflow.reporting.analytics.rows import _kind

__all__ = [
    "flaky_strategies",
    "flaky_tests",
    "tests_with_hashes",
]


def flaky_strategies(evals: pd.DataFrame) -> pd.DataFrame:
    """Strategies whose outcome changed on the same workspace content (same ``workspace_hash``).

    Only fresh runs count: cached reuses and skipped results are left out, and
    so are rows without a hash. Within each (strategy, hash), runs in time order
    are compared with the one before: a different outcome is a flip.

    Returns:
        ``strategy, repeated_hashes`` (hashes run more than once), ``flaky_hashes`` (with both
        outcomes), ``runs``, ``flips``, ``flip_rate`` (flips / comparisons); flakiest first.
    """
    rows = _kind(evals, "strategy", "name", "result", "workspace_hash", "cached", "timestamp")
    rows = rows[rows["result"].isin(["pass", "fail"]) & rows["workspace_hash"].notna()
                & ~rows["cached"].eq(True)]
    # Integer codes make the sort and the group-bys cheap on millions of rows.
    frame = pd.DataFrame({"strategy": rows["name"], "hash": pd.factorize(rows["workspace_hash"])[0],
                          "passed": (rows["result"] == "pass").to_numpy(), "at": rows["timestamp"]})
    frame = frame[frame.duplicated(["strategy", "hash"], keep=False)]
    frame = frame.sort_values(["strategy", "hash", "at"], kind="stable")
    same_group = frame[["strategy", "hash"]].eq(frame[["strategy", "hash"]].shift()).all(axis=1)
    frame["flip"] = same_group & frame["passed"].ne(frame["passed"].shift())
    per_hash = frame.groupby(["strategy", "hash"]).agg(runs=("passed", "size"), flips=("flip", "sum"),
                                                       passes=("passed", "sum"))
    per_hash["flaky"] = (per_hash["passes"] > 0) & (per_hash["passes"] < per_hash["runs"])
    table = per_hash.groupby("strategy").agg(repeated_hashes=("runs", "size"), flaky_hashes=("flaky", "sum"),
                                             runs=("runs", "sum"), flips=("flips", "sum"))
    table["flip_rate"] = table["flips"] / (table["runs"] - table["repeated_hashes"])
    table = table.astype({"flaky_hashes": np.int64, "flips": np.int64})
    return table.reset_index().sort_values(["flip_rate", "strategy"], ascending=[False, True],
                                           kind="stable", ignore_index=True)


def tests_with_hashes(evals: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
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
    strategy = _kind(evals, "strategy", *columns) if "test_run" in evals else pd.DataFrame(columns=columns)
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


def flaky_tests(evals: pd.DataFrame, tests: pd.DataFrame, *, linked: pd.DataFrame | None = None) -> pd.DataFrame:
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
