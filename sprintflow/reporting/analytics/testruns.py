"""What the test runs say: failures and acceptance coverage per period, each test's history and outcomes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.reporting.analytics.periods import _freq, period_start
from sprintflow.reporting.analytics.rates import _outcome_counts, _with_rate

__all__ = [
    "test_history",
    "test_outcomes",
    "testrun_trends",
]


def testrun_trends(testruns: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Test runs per period: runs, crashed runs, tests, failed tests, failure rate, acceptance coverage.

    Returns:
        ``week, runs, crashed, tests, failed, failure_rate, acceptance_coverage`` (mean).
    """
    frame = pd.DataFrame({
        "week": period_start(testruns["recorded_at"], freq), "runs": 1,
        "crashed": testruns["crashed"].eq(True).astype(np.int64),
        "tests": testruns["total"].fillna(0).astype(np.int64),
        "failed": testruns["failed"].fillna(0).astype(np.int64),
        "acceptance_coverage": pd.to_numeric(testruns["acceptance_coverage"], errors="coerce"),
    })
    table = frame.groupby("week").agg(runs=("runs", "sum"), crashed=("crashed", "sum"),
                                      tests=("tests", "sum"), failed=("failed", "sum"),
                                      acceptance_coverage=("acceptance_coverage", "mean")).reset_index()
    table.insert(5, "failure_rate", table["failed"] / table["tests"].where(table["tests"] > 0))
    return table


def test_history(tests: pd.DataFrame, bugs: pd.DataFrame) -> pd.DataFrame:
    """Each test's history: its outcomes over every run, how often it flipped, the bugs it opened.

    Unlike :func:`flaky_tests`, every run counts, whatever the content: a flip is a run whose
    outcome differs from the test's run before it (in time order), so a test fixed once has one
    flip and a flaky one many. Bugs are matched by test name (``bugs.ndjson``'s ``test_name``).

    Returns:
        ``test, runs, passed, failed, pass_rate, ci_low, ci_high, flips, flip_rate, first_seen,
        last_seen, last_passed, bugs_opened, bugs_reopened, bugs_open_now``, most flips first, then
        most failures.

    Example:
        >>> tests = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "test": "t::a", "passed": [False, True, False],
        ...     "recorded_at": pd.to_datetime(["2026-01-05", "2026-01-06", "2026-01-07"], utc=True)})
        >>> bugs = pd.DataFrame({"bug_id": ["b1"], "event": ["open"], "status": ["open"], "test_name": ["t::a"],
        ...     "updated_at": pd.to_datetime(["2026-01-05"], utc=True)})
        >>> test_history(tests, bugs)[["test", "runs", "flips", "flip_rate", "last_passed", "bugs_opened"]].to_dict(
        ...     "records")
        [{'test': 't::a', 'runs': 3, 'flips': 2, 'flip_rate': 1.0, 'last_passed': False, 'bugs_opened': 1}]
    """
    columns = ["test", "runs", "passed", "failed", "pass_rate", "ci_low", "ci_high", "flips", "flip_rate",
               "first_seen", "last_seen", "last_passed", "bugs_opened", "bugs_reopened", "bugs_open_now"]
    if tests.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    frame = pd.DataFrame({"test": tests["test"].astype(object), "passed": tests["passed"].astype(bool),
                          "at": pd.to_datetime(tests["recorded_at"], utc=True)})
    frame = frame.sort_values(["test", "at"], kind="stable")
    same = frame["test"].eq(frame["test"].shift())
    frame["flip"] = same & frame["passed"].ne(frame["passed"].shift())
    grouped = frame.groupby("test", sort=True)
    table = pd.DataFrame({"runs": grouped.size(), "passed": grouped["passed"].sum().astype(np.int64),
                          "flips": grouped["flip"].sum().astype(np.int64), "first_seen": grouped["at"].min(),
                          "last_seen": grouped["at"].max(), "last_passed": grouped["passed"].last()})
    table["failed"] = table["runs"] - table["passed"]
    table = _with_rate(table, "passed", "runs", "pass_rate")
    with np.errstate(divide="ignore", invalid="ignore"):
        table["flip_rate"] = np.where(table["runs"] > 1, table["flips"] / (table["runs"] - 1), np.nan)
    named = bugs[bugs["test_name"].notna()] if "test_name" in bugs else bugs.iloc[:0]
    opened = named[named["event"] == "open"].groupby("test_name")["bug_id"].nunique()
    reopened = named[named["event"] == "reopen"].groupby("test_name").size()
    last = named.sort_values("updated_at", kind="stable").drop_duplicates("bug_id", keep="last")
    open_now = last[last["status"] != "fixed"].groupby("test_name").size()
    for column, counts in (("bugs_opened", opened), ("bugs_reopened", reopened), ("bugs_open_now", open_now)):
        table[column] = counts.reindex(table.index).fillna(0).astype(np.int64)
    table = table.rename_axis("test").reset_index()
    return table[columns].sort_values(["flips", "failed", "test"], ascending=[False, False, True], kind="stable",
                                      ignore_index=True)


def test_outcomes(tests: pd.DataFrame, *, freq: str = "auto") -> pd.DataFrame:
    """Each test's outcomes per period: runs, passed, failed and the pass rate with its interval.

    Returns:
        ``period, test, runs, passed, failed, pass_rate, ci_low, ci_high``.
    """
    at = pd.to_datetime(tests["recorded_at"], utc=True)
    frame = pd.DataFrame({"period": period_start(at, _freq(at, freq)), "test": tests["test"].astype(object),
                          "result": np.where(tests["passed"].astype(bool), "pass", "fail")})
    return _outcome_counts(frame, ["period", "test"]).drop(columns=["skipped"])


test_history.__test__ = False  # type: ignore[attr-defined]  # a report function, not a pytest test
test_outcomes.__test__ = False  # type: ignore[attr-defined]
