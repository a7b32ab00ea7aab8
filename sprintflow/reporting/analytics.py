"""Pure pandas analytics over the history: the answers to "is our agent getting better?".

Every function takes DataFrames shaped like :mod:`sprintflow.history.dataset`
loads them (``evals`` in :data:`~sprintflow.history.dataset.EVAL_SCHEMA` columns,
``bugs``, ``scores``, ``testruns``) and returns a new small DataFrame; none
reads files, prints or mutates its input. Notebooks, the HTML report and the
Prefect artifacts all call these same functions.

Conventions:
    * A pass rate counts decided outcomes only: ``pass / (pass + fail)``;
      ``skipped`` rows are counted apart, never as a pass.
    * Intervals are Wilson score intervals (95 % by default): honest for small
      counts and for rates near 0 or 1.
    * Periods are labelled by their first day (weeks start on Monday, UTC).
    * A contract is identified by its ``contract_id``; a criterion by
      ``(contract_id, criterion id)`` (criterion ids repeat across contracts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "REPORT_COLUMNS",
    "bug_activity",
    "bug_summary",
    "cost_per_sprint",
    "coverage_summary",
    "criteria_coverage",
    "first_pass_yield",
    "flaky_strategies",
    "pass_rate_by_strategy",
    "pass_rate_by_week",
    "period_start",
    "regressions_over_time",
    "score_by_prompt",
    "score_trends",
    "testrun_trends",
    "time_to_fix",
    "time_to_green",
    "wilson_interval",
]

REPORT_COLUMNS = ["kind", "spec_id", "contract_id", "iteration", "name", "method", "required", "result",
                  "cached", "regressions", "timestamp", "workspace_hash", "tokens", "cost_usd"]
"""The ``evals`` columns these functions read: load only these for a big history."""

Z95 = 1.959963984540054
_COUNTS = ["runs", "passed", "failed", "skipped"]


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


def period_start(timestamps: pd.Series, freq: str = "W") -> pd.Series:
    """The first day of each timestamp's period, as naive UTC dates (weeks start on Monday).

    Example:
        >>> period_start(pd.Series(pd.to_datetime(["2026-01-08 13:00Z"]))).iloc[0]
        Timestamp('2026-01-05 00:00:00')
    """
    naive = pd.to_datetime(timestamps, utc=True).dt.tz_localize(None)
    if freq == "W":  # the common case, without building Period objects for millions of rows
        return naive.dt.normalize() - pd.to_timedelta(naive.dt.day_of_week, unit="D")
    return naive.dt.to_period(freq).dt.start_time


def _kind(evals: pd.DataFrame, kind: str, *columns: str) -> pd.DataFrame:
    # Select the columns first: filtering all of a wide frame copies every string column.
    return evals.loc[evals["kind"] == kind, list(columns)]


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


def pass_rate_by_strategy(evals: pd.DataFrame) -> pd.DataFrame:
    """Pass rate of each strategy over every evaluation (cached reuses count: the evaluation saw them).

    Returns:
        One row per strategy: ``strategy, runs, passed, failed, skipped, pass_rate, ci_low, ci_high``,
        worst pass rate first.

    Example:
        >>> pass_rate_by_strategy(history.evals)[["strategy", "pass_rate"]].head(1)
    """
    strategies = _kind(evals, "strategy", "name", "result").rename(columns={"name": "strategy"})
    table = _outcome_counts(strategies, ["strategy"])
    return table.sort_values(["pass_rate", "strategy"], kind="stable", ignore_index=True)


def pass_rate_by_week(evals: pd.DataFrame, *, by_strategy: bool = True, freq: str = "W") -> pd.DataFrame:
    """Pass rate per period, per strategy (or of whole evaluations when ``by_strategy`` is False).

    Returns:
        ``week, [strategy,] runs, passed, failed, skipped, pass_rate, ci_low, ci_high``.

    Example:
        >>> pass_rate_by_week(history.evals, by_strategy=False).tail(4)
    """
    rows = _kind(evals, "strategy" if by_strategy else "evaluation", "name", "result", "timestamp")
    frame = pd.DataFrame({"week": period_start(rows["timestamp"], freq), "result": rows["result"]})
    keys = ["week"]
    if by_strategy:
        frame["strategy"] = rows["name"]
        keys.append("strategy")
    return _outcome_counts(frame, keys)


def _first_evaluations(evals: pd.DataFrame) -> pd.DataFrame:
    """Each contract's first evaluation (earliest timestamp, then lowest iteration)."""
    rows = _kind(evals, "evaluation", "contract_id", "iteration", "result", "timestamp")
    rows = rows.sort_values(["timestamp", "iteration"], kind="stable")
    return rows.drop_duplicates("contract_id", keep="first")


def first_pass_yield(evals: pd.DataFrame, *, freq: str | None = None) -> pd.DataFrame:
    """Share of contracts whose first evaluation passed, overall or per period of that evaluation.

    Returns:
        ``[week,] contracts, first_pass, yield, ci_low, ci_high``.

    Example:
        >>> first_pass_yield(history.evals)["yield"].iloc[0]
        0.5
    """
    first = _first_evaluations(evals)
    frame = pd.DataFrame({"contracts": 1, "first_pass": (first["result"] == "pass").astype(np.int64)},
                         index=first.index)
    if freq is None:
        table = frame.sum().to_frame().T.astype(np.int64)
    else:
        frame.insert(0, "week", period_start(first["timestamp"], freq))
        table = frame.groupby("week").sum().reset_index()
    return _with_rate(table, "first_pass", "contracts", "yield")


def time_to_green(evals: pd.DataFrame) -> pd.DataFrame:
    """Per contract: evaluations, iterations and wall time from its first evaluation to its first pass.

    Wall time runs between the two EvalResults' timestamps. A contract that never
    passed has ``green`` False and empty ``iterations_to_green`` and ``hours_to_green``.

    Returns:
        ``contract_id, spec_id, evaluations, iterations, green, iterations_to_green,
        first_at, green_at, hours_to_green``, in order of first evaluation.

    Example:
        >>> time_to_green(history.evals).iterations_to_green.median()
        2.0
    """
    rows = _kind(evals, "evaluation", "contract_id", "spec_id", "iteration", "result", "timestamp")
    grouped = rows.groupby("contract_id", sort=False)
    table = pd.DataFrame({
        "spec_id": grouped["spec_id"].first(),
        "evaluations": grouped.size(),
        "iterations": grouped["iteration"].max(),
        "first_at": grouped["timestamp"].min(),
    })
    passes = rows[rows["result"] == "pass"].sort_values(["timestamp", "iteration"], kind="stable")
    green = passes.drop_duplicates("contract_id").set_index("contract_id")
    table["green"] = table.index.isin(green.index)
    table["iterations_to_green"] = green["iteration"].reindex(table.index).astype("Float64")
    table["green_at"] = green["timestamp"].reindex(table.index)
    table["hours_to_green"] = (table["green_at"] - table["first_at"]).dt.total_seconds() / 3600
    columns = ["spec_id", "evaluations", "iterations", "green", "iterations_to_green", "first_at",
               "green_at", "hours_to_green"]
    return table[columns].sort_values("first_at", kind="stable").rename_axis("contract_id").reset_index()


def criteria_coverage(evals: pd.DataFrame) -> pd.DataFrame:
    """How each criterion was verified and whether it was ever exercised or passing.

    ``automatic`` is False for ``manual`` criteria and empty when the method is unknown.
    ``exercised`` means it once passed or failed (not only skipped).

    Returns:
        ``contract_id, criterion, method, required, evaluations, passed, failed, skipped,
        automatic, exercised, ever_passed``.

    Example:
        >>> criteria_coverage(history.evals).query("not exercised")
    """
    rows = _kind(evals, "criterion", "contract_id", "name", "method", "required", "result")
    rows = rows.rename(columns={"name": "criterion"})
    keys = ["contract_id", "criterion"]
    table = _outcome_counts(rows, keys).drop(columns=["runs", "pass_rate", "ci_low", "ci_high"])
    grouped = rows.groupby(keys, sort=True)
    described = pd.DataFrame({"method": grouped["method"].last(), "required": grouped["required"].last(),
                              "evaluations": grouped.size()}).reset_index()
    table = described.merge(table, on=keys)
    method = table["method"]
    table["automatic"] = pd.array(np.where(method.isna(), None, method != "manual"), dtype="boolean")
    table["exercised"] = (table["passed"] + table["failed"]) > 0
    table["ever_passed"] = table["passed"] > 0
    return table


def coverage_summary(coverage: pd.DataFrame) -> pd.DataFrame:
    """Shares of criteria verified automatically vs manually, never exercised, never passing.

    "never passing" counts criteria that were exercised but never passed;
    "never exercised" ones were only ever skipped.

    Args:
        coverage: the output of :func:`criteria_coverage`.

    Returns:
        ``measure, criteria, share`` rows: automatic, manual, unknown method,
        never exercised, never passing.

    Example:
        >>> coverage_summary(criteria_coverage(history.evals)).set_index("measure").share["manual"]
    """
    automatic = coverage["automatic"]
    counts = {
        "automatic": int(automatic.eq(True).sum()),
        "manual": int(automatic.eq(False).sum()),
        "unknown method": int(automatic.isna().sum()),
        "never exercised": int((~coverage["exercised"]).sum()),
        "never passing": int((coverage["exercised"] & ~coverage["ever_passed"]).sum()),
    }
    total = len(coverage)
    return pd.DataFrame({"measure": list(counts), "criteria": list(counts.values()),
                         "share": [n / total if total else np.nan for n in counts.values()]})


def flaky_strategies(evals: pd.DataFrame) -> pd.DataFrame:
    """Strategies whose outcome changed on the same workspace content (same ``workspace_hash``).

    Only fresh runs count: cached reuses and skipped results are left out, and
    so are rows without a hash. Within each (strategy, hash), runs in time order
    are compared with the one before: a different outcome is a flip.

    Returns:
        ``strategy, repeated_hashes`` (hashes run more than once), ``flaky_hashes`` (with both
        outcomes), ``runs``, ``flips``, ``flip_rate`` (flips / comparisons); flakiest first.

    Example:
        >>> flaky_strategies(history.evals).query("flips > 0").strategy.tolist()
        ['playwright', 'unit-test']
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


def regressions_over_time(evals: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Regressions the evaluator reported (something passed before and fails now), per period.

    Returns:
        ``week, evaluations, with_regressions, regressions, share`` (evaluations with at
        least one regression / evaluations).

    Example:
        >>> regressions_over_time(history.evals).regressions.sum()
    """
    rows = _kind(evals, "evaluation", "regressions", "timestamp")
    found = rows["regressions"].fillna(0).astype(np.int64)
    frame = pd.DataFrame({"week": period_start(rows["timestamp"], freq), "evaluations": 1,
                          "with_regressions": (found > 0).astype(np.int64), "regressions": found})
    table = frame.groupby("week").sum().reset_index()
    table["share"] = table["with_regressions"] / table["evaluations"]
    return table


def bug_activity(bugs: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Bugs opened, fixed and reopened per period, from ``bugs.ndjson`` events.

    Returns:
        ``week, opened, fixed, reopened``.

    Example:
        >>> bug_activity(history.bugs).sum(numeric_only=True)
    """
    frame = pd.DataFrame({
        "week": period_start(bugs["updated_at"], freq),
        "opened": (bugs["event"] == "open").astype(np.int64),
        "fixed": ((bugs["event"] == "transition") & (bugs["status"] == "fixed")).astype(np.int64),
        "reopened": (bugs["event"] == "reopen").astype(np.int64),
    })
    return frame.groupby("week").sum().reset_index()


def time_to_fix(bugs: pd.DataFrame) -> pd.DataFrame:
    """Each fix, with the time since the bug was opened (or last reopened).

    Returns:
        ``bug_id, opened_at, fixed_at, hours``, one row per move to ``fixed``.

    Example:
        >>> time_to_fix(history.bugs).hours.mean()
    """
    events = bugs.sort_values(["bug_id", "updated_at"], kind="stable")
    opened = events["updated_at"].where(events["event"].isin(["open", "reopen"]))
    events = events.assign(opened_at=opened.groupby(events["bug_id"]).ffill())
    fixes = events[(events["event"] == "transition") & (events["status"] == "fixed")]
    table = pd.DataFrame({"bug_id": fixes["bug_id"], "opened_at": fixes["opened_at"],
                          "fixed_at": fixes["updated_at"]})
    table["hours"] = (table["fixed_at"] - table["opened_at"]).dt.total_seconds() / 3600
    return table.reset_index(drop=True)


def bug_summary(bugs: pd.DataFrame) -> pd.DataFrame:
    """Totals: bugs opened, fixes, reopens, bugs open now (last status not fixed), mean hours to fix.

    Returns:
        One row: ``bugs, opened, fixed, reopened, open_now, mean_hours_to_fix``.

    Example:
        >>> bug_summary(history.bugs).open_now.iloc[0]
    """
    activity = bug_activity(bugs).sum(numeric_only=True)
    last = bugs.sort_values("updated_at", kind="stable").drop_duplicates("bug_id", keep="last")
    fixes = time_to_fix(bugs)
    return pd.DataFrame([{
        "bugs": int(bugs["bug_id"].nunique()),
        "opened": int(activity.get("opened", 0)), "fixed": int(activity.get("fixed", 0)),
        "reopened": int(activity.get("reopened", 0)),
        "open_now": int((last["status"] != "fixed").sum()),
        "mean_hours_to_fix": float(fixes["hours"].mean()) if len(fixes) else np.nan,
    }])


def _prompt_version(scores: pd.DataFrame) -> pd.Series:
    return scores["prompt_sha256"].fillna("unknown").str[:8]


def score_trends(scores: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Scorer score per skill and prompt version (first 8 hex of its sha256), per period.

    Returns:
        ``week, skill, prompt_version, runs, score`` (mean), ``min_score, max_score``.

    Example:
        >>> score_trends(history.scores).query("skill == 'triage'").tail(2)
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

    Example:
        >>> score_by_prompt(history.scores)
    """
    frame = scores.assign(prompt_version=_prompt_version(scores))
    table = frame.groupby(["skill", "prompt_version"]).agg(
        runs=("score", "size"), score=("score", "mean"), first_seen=("recorded_at", "min"),
        last_seen=("recorded_at", "max")).reset_index()
    return table.sort_values(["skill", "first_seen"], kind="stable", ignore_index=True)


def cost_per_sprint(evals: pd.DataFrame) -> pd.DataFrame:
    """Tokens and cost per contract (sprint), summed over its evaluations; empty when never reported.

    Returns:
        ``contract_id, evaluations, tokens, cost_usd, cost_per_evaluation``, costliest first.

    Example:
        >>> cost_per_sprint(history.evals).cost_usd.sum()
    """
    rows = _kind(evals, "evaluation", "contract_id", "tokens", "cost_usd")
    grouped = rows.groupby("contract_id")
    table = pd.DataFrame({"evaluations": grouped.size(),
                          "tokens": grouped["tokens"].sum(min_count=1),
                          "cost_usd": grouped["cost_usd"].sum(min_count=1)})
    table["cost_per_evaluation"] = table["cost_usd"] / table["evaluations"]
    return table.reset_index().sort_values(["cost_usd", "contract_id"], ascending=[False, True],
                                           na_position="last", kind="stable", ignore_index=True)


def testrun_trends(testruns: pd.DataFrame, *, freq: str = "W") -> pd.DataFrame:
    """Test runs per period: runs, crashed runs, tests, failed tests, failure rate, acceptance coverage.

    Returns:
        ``week, runs, crashed, tests, failed, failure_rate, acceptance_coverage`` (mean).

    Example:
        >>> testrun_trends(history.testruns).failure_rate.iloc[-1]
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
