"""Pure pandas analytics over the history: the answers to "is our agent getting better?".

Every function takes DataFrames shaped like :mod:`sprintflow.history.dataset`
loads them (``evals`` in :data:`~sprintflow.history.dataset.EVAL_SCHEMA` columns,
``bugs``, ``scores``, ``testruns``, ``tests``) and returns a new small DataFrame; none
reads files, prints or mutates its input. Notebooks, the HTML report and the
Prefect artifacts all call these same functions.

Conventions:
    * A pass rate counts decided outcomes only: ``pass / (pass + fail)``;
      ``skipped`` rows are counted apart, never as a pass.
    * Intervals are Wilson score intervals (95 % by default): honest for small
      counts and for rates near 0 or 1.
    * Periods are labelled by their first day (weeks start on Monday, UTC). The
      ``*_by_week`` tables are weekly; the newer trend tables take ``freq="auto"``
      (:func:`auto_freq`: days for up to a month of data, weeks up to two
      years, months beyond) and call their period column ``period``.
    * A sprint is a sprint run: one contract's run in one workspace
      (:data:`SPRINT_KEYS`: ``workspace, contract_id, sprint_run``), so six workspaces
      sprinting on copies of one contract are six sprints, even in one shared history.
      Evaluations of a workspace's contract outside any sprint run count as one sprint.
      Iterations are counted within the sprint run. A criterion is judged per sprint
      (criterion ids repeat across contracts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.sprints import SPRINT_KEYS, sprint_ids
from sprintflow.scoring.scorer import mcnemar_exact

__all__ = [
    "REPORT_COLUMNS",
    "SPRINT_KEYS",
    "UNKNOWN_ENGINE",
    "auto_freq",
    "bug_activity",
    "bug_summary",
    "cost_over_time",
    "cost_per_sprint",
    "coverage_summary",
    "criteria_coverage",
    "criterion_greens",
    "criterion_pass_rate",
    "criterion_time_to_green",
    "engine_comparison",
    "engine_pairs",
    "engine_side_by_side",
    "first_pass_yield",
    "flaky_strategies",
    "flaky_tests",
    "kill_rates",
    "pass_rate_by_strategy",
    "pass_rate_by_week",
    "period_start",
    "regressions_over_time",
    "score_by_prompt",
    "score_epochs",
    "score_trends",
    "sprint_engines",
    "sprint_ids",
    "test_history",
    "test_outcomes",
    "testrun_trends",
    "tests_with_hashes",
    "time_to_fix",
    "time_to_green",
    "wilson_interval",
]

REPORT_COLUMNS = ["kind", "workspace", "sprint_run", "run_id", "eval_id", "spec_id", "contract_id", "iteration", "name",
                  "method", "required", "result",
                  "cached", "regressions", "timestamp", "workspace_hash", "tokens", "cost_usd", "engine",
                  "executor", "test_run", "mutants", "kill_rate", "tester_kill_rate"]
"""The ``evals`` columns these functions read: load only these for a big history."""

Z95 = 1.959963984540054
_COUNTS = ["runs", "passed", "failed", "skipped"]

UNKNOWN_ENGINE = "(not reported)"
"""The engine of evaluations whose generator step named none (evaluated by hand, or before it was recorded)."""


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
    if freq == "D":
        return naive.dt.normalize()
    if freq == "MS":
        freq = "M"
    return naive.dt.to_period(freq).dt.start_time


def auto_freq(timestamps: pd.Series) -> str:
    """The period that fits the data's span: ``D`` up to 31 days, ``W`` up to two years, else ``MS``.

    A week of data drawn per week is one point; per day it is a trend.

    Example:
        >>> auto_freq(pd.Series(pd.to_datetime(["2026-01-05", "2026-01-11"])))
        'D'
        >>> auto_freq(pd.Series(pd.to_datetime(["2026-01-05", "2026-06-30"])))
        'W'
    """
    if len(timestamps) == 0:
        return "W"
    span = pd.Timestamp(timestamps.max()) - pd.Timestamp(timestamps.min())
    if span <= pd.Timedelta(days=31):
        return "D"
    return "W" if span <= pd.Timedelta(days=731) else "MS"


def _freq(timestamps: pd.Series, freq: str) -> str:
    return auto_freq(timestamps) if freq == "auto" else freq


def _kind(evals: pd.DataFrame, kind: str, *columns: str) -> pd.DataFrame:
    # Select the columns first: filtering all of a wide frame copies every string column.
    # A column the frame lacks (a history written before it existed) reads as empty.
    # "sprint" is computed over the whole frame (:func:`sprint_ids`) unless the frame carries it.
    present = [column for column in columns if column in evals.columns]
    selected = (evals["kind"] == kind).to_numpy()
    rows = evals.loc[selected, present]
    computed = {"sprint": sprint_ids(evals)[selected]} if "sprint" in columns and "sprint" not in present else {}
    missing = {column: None for column in columns if column not in present and column not in computed}
    return rows.assign(**missing, **computed)[list(columns)]


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
    """
    strategies = _kind(evals, "strategy", "name", "result").rename(columns={"name": "strategy"})
    table = _outcome_counts(strategies, ["strategy"])
    return table.sort_values(["pass_rate", "strategy"], kind="stable", ignore_index=True)


def pass_rate_by_week(evals: pd.DataFrame, *, by_strategy: bool = True, freq: str = "W") -> pd.DataFrame:
    """Pass rate per period, per strategy (or of whole evaluations when ``by_strategy`` is False).

    Returns:
        ``week, [strategy,] runs, passed, failed, skipped, pass_rate, ci_low, ci_high``.
    """
    rows = _kind(evals, "strategy" if by_strategy else "evaluation", "name", "result", "timestamp")
    frame = pd.DataFrame({"week": period_start(rows["timestamp"], freq), "result": rows["result"]})
    keys = ["week"]
    if by_strategy:
        frame["strategy"] = rows["name"]
        keys.append("strategy")
    return _outcome_counts(frame, keys)


def _first_evaluations(evals: pd.DataFrame) -> pd.DataFrame:
    """Each sprint's first evaluation (earliest timestamp, then lowest iteration)."""
    rows = _kind(evals, "evaluation", "sprint", "contract_id", "iteration", "result", "timestamp")
    rows = rows.sort_values(["timestamp", "iteration"], kind="stable")
    return rows.drop_duplicates("sprint", keep="first")


def first_pass_yield(evals: pd.DataFrame, *, freq: str | None = None) -> pd.DataFrame:
    """Share of sprints whose first evaluation passed, overall or per period of that evaluation.

    Returns:
        ``[week,] sprints, first_pass, yield, ci_low, ci_high``.
    """
    first = _first_evaluations(evals)
    frame = pd.DataFrame({"sprints": 1, "first_pass": (first["result"] == "pass").astype(np.int64)},
                         index=first.index)
    if freq is None:
        table = frame.sum().to_frame().T.astype(np.int64)
    else:
        frame.insert(0, "week", period_start(first["timestamp"], freq))
        table = frame.groupby("week").sum().reset_index()
    return _with_rate(table, "first_pass", "sprints", "yield")


def _engine_names(values: pd.Series) -> pd.Series:
    named = values.astype(object)
    return named.where(named.notna(), UNKNOWN_ENGINE)


def time_to_green(evals: pd.DataFrame) -> pd.DataFrame:
    """Per sprint: evaluations, iterations and wall time from its first evaluation to its first pass.

    Iterations count within the sprint run (a contract run again after needs-rework starts its
    count anew). Wall time runs between the two EvalResults' timestamps. A sprint that never
    passed has ``green`` False and empty ``iterations_to_green`` and ``hours_to_green``. The
    engine and executor are its first evaluation's.

    Returns:
        ``sprint, workspace, contract_id, sprint_run, spec_id, engine, executor, evaluations, iterations,
        green, iterations_to_green, first_at, green_at, hours_to_green``, in order of first evaluation;
        ``sprint`` is :func:`sprint_ids`'s number.

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "workspace": ["/a", "/a", "/b"], "contract_id": "c",
        ...     "sprint_run": ["p1", "p1", "p2"], "iteration": [1, 2, 1], "result": ["fail", "pass", "fail"],
        ...     "timestamp": pd.to_datetime(["2026-01-05 10:00", "2026-01-05 11:00", "2026-01-05 10:30"], utc=True)})
        >>> table = time_to_green(frame)
        >>> table[["workspace", "green", "iterations_to_green", "hours_to_green"]].to_dict("records")[0]
        {'workspace': '/a', 'green': True, 'iterations_to_green': 2, 'hours_to_green': 1.0}
        >>> bool(table["green"].iloc[1])
        False
    """
    rows = _kind(evals, "evaluation", "sprint", "workspace", "contract_id", "sprint_run", "spec_id", "engine",
                 "executor", "iteration", "result", "timestamp")
    rows = rows.sort_values(["timestamp", "iteration"], kind="stable")
    grouped = rows.groupby("sprint", sort=False)
    first = rows.drop_duplicates("sprint").set_index("sprint")
    started = grouped["iteration"].min()
    table = pd.DataFrame({
        **{column: first[column].astype(object) for column in ("workspace", "contract_id", "sprint_run", "spec_id")},
        "engine": _engine_names(first["engine"]), "executor": first["executor"].astype(object),
        "evaluations": grouped.size(),
        "iterations": grouped["iteration"].max() - started + 1,
        "first_at": grouped["timestamp"].min(),
    })
    green = rows[rows["result"] == "pass"].drop_duplicates("sprint").set_index("sprint")
    table["green"] = table.index.isin(green.index)
    table["iterations_to_green"] = ((green["iteration"] - started.reindex(green.index)).reindex(table.index)
                                    + 1).astype("Int64")
    table["green_at"] = green["timestamp"].reindex(table.index)
    table["hours_to_green"] = (table["green_at"] - table["first_at"]).dt.total_seconds() / 3600
    columns = ["workspace", "contract_id", "sprint_run", "spec_id", "engine", "executor", "evaluations", "iterations",
               "green", "iterations_to_green", "first_at", "green_at", "hours_to_green"]
    return table[columns].sort_values("first_at", kind="stable").rename_axis("sprint").reset_index()


def criteria_coverage(evals: pd.DataFrame) -> pd.DataFrame:
    """How each criterion was verified and whether it was ever exercised or passing.

    ``automatic`` is False for ``manual`` criteria and empty when the method is unknown.
    ``exercised`` means it once passed or failed (not only skipped).

    Returns:
        ``contract_id, criterion, method, required, evaluations, passed, failed, skipped,
        automatic, exercised, ever_passed``.
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


def cost_per_sprint(evals: pd.DataFrame) -> pd.DataFrame:
    """Tokens and cost per sprint, summed over its evaluations; empty when never reported.

    Returns:
        ``sprint, workspace, contract_id, sprint_run, engine, evaluations, tokens, cost_usd,
        cost_per_evaluation``, costliest first.

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "workspace": ["/a", "/b", "/b"], "contract_id": "c",
        ...     "sprint_run": ["p1", "p2", "p2"], "engine": "codex", "tokens": 10, "cost_usd": [0.5, 0.25, 0.25]})
        >>> cost_per_sprint(frame)[["workspace", "evaluations", "cost_usd"]].to_dict("records")
        [{'workspace': '/a', 'evaluations': 1, 'cost_usd': 0.5}, {'workspace': '/b', 'evaluations': 2, 'cost_usd': 0.5}]
    """
    rows = _kind(evals, "evaluation", "sprint", "workspace", "contract_id", "sprint_run", "engine", "tokens",
                 "cost_usd")
    grouped = rows.groupby("sprint")
    first = rows.drop_duplicates("sprint").set_index("sprint")
    table = pd.DataFrame({**{column: first[column].astype(object) for column in ("workspace", "contract_id",
                                                                              "sprint_run")},
                          "engine": _engine_names(first["engine"]), "evaluations": grouped.size(),
                          "tokens": grouped["tokens"].sum(min_count=1),
                          "cost_usd": grouped["cost_usd"].sum(min_count=1)})
    table["cost_per_evaluation"] = table["cost_usd"] / table["evaluations"]
    return table.rename_axis("sprint").reset_index().sort_values(
        ["cost_usd", "sprint"], ascending=[False, True], na_position="last", kind="stable", ignore_index=True)


def kill_rates(evals: pd.DataFrame) -> pd.DataFrame:
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
    checked = _kind(evals, "strategy", *keys, "mutants", "kill_rate").dropna(subset=["mutants", "kill_rate"])
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


# --------------------------------------------------------------------------- per criterion


def criterion_pass_rate(evals: pd.DataFrame, *, freq: str = "auto") -> pd.DataFrame:
    """Pass rate of each criterion id per period, over every contract that has it.

    Criterion ids repeat across contracts (``sc-1-1`` …): the trend of one id
    tells how that kind of check fares; filter ``evals`` by contract first for one
    contract's criteria.

    Returns:
        ``period, criterion, runs, passed, failed, skipped, pass_rate, ci_low, ci_high``.

    Example:
        >>> frame = pd.DataFrame({"kind": "criterion", "name": ["sc-1", "sc-1", "sc-1"],
        ...     "result": ["fail", "pass", "pass"],
        ...     "timestamp": pd.to_datetime(["2026-01-05", "2026-01-06", "2026-01-06"], utc=True)})
        >>> criterion_pass_rate(frame)[["period", "passed", "runs"]].to_dict("records")[1]
        {'period': Timestamp('2026-01-06 00:00:00'), 'passed': 2, 'runs': 2}
    """
    rows = _kind(evals, "criterion", "name", "result", "timestamp")
    frame = pd.DataFrame({"period": period_start(rows["timestamp"], _freq(rows["timestamp"], freq)),
                          "criterion": rows["name"], "result": rows["result"]})
    return _outcome_counts(frame, ["period", "criterion"])


def criterion_greens(evals: pd.DataFrame) -> pd.DataFrame:
    """Per (sprint, criterion): when first evaluated, when and after how many iterations of the sprint it
    first passed.

    Returns:
        ``sprint, contract_id, criterion, first_at, evaluations, green_at, iterations_to_green`` (empty
        when it never passed); ``sprint`` is :func:`sprint_ids`'s number.
    """
    rows = _kind(evals, "criterion", "sprint", "contract_id", "name", "iteration", "result", "timestamp")
    rows = rows.rename(columns={"name": "criterion"})
    keys = ["sprint", "contract_id", "criterion"]
    grouped = rows.groupby(keys, sort=True, observed=True)
    table = pd.DataFrame({"first_at": grouped["timestamp"].min(), "evaluations": grouped.size()})
    # Iterations count from the sprint's first judged iteration, whichever criterion it judged.
    started = rows.groupby("sprint")["iteration"].min()
    passes = rows[rows["result"] == "pass"].sort_values(["timestamp", "iteration"], kind="stable")
    green = passes.drop_duplicates(keys).set_index(keys)
    table["green_at"] = green["timestamp"].reindex(table.index)
    after = green["iteration"] - started.reindex(green.index.get_level_values("sprint")).to_numpy() + 1
    table["iterations_to_green"] = after.reindex(table.index).astype("Float64")
    return table.reset_index()


def criterion_time_to_green(evals: pd.DataFrame, *, greens: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per criterion id: in how many sprints it went green, after how many iterations and hours.

    A criterion goes green at the first evaluation where it passed; its clock
    starts at the first evaluation that judged it. ``greens``: :func:`criterion_greens` of the
    same ``evals``, when the caller has it already.

    Returns:
        ``criterion, sprints, green, green_rate, ci_low, ci_high, median_iterations_to_green,
        mean_iterations_to_green, median_hours_to_green``, slowest (lowest green rate) first.

    Example:
        >>> frame = pd.DataFrame({"kind": "criterion", "contract_id": ["A", "A", "B"],
        ...     "name": "sc-1", "iteration": [1, 2, 1], "result": ["fail", "pass", "fail"],
        ...     "timestamp": pd.to_datetime(["2026-01-05 10:00", "2026-01-05 12:00", "2026-01-06 09:00"], utc=True)})
        >>> criterion_time_to_green(frame)[["sprints", "green", "median_hours_to_green"]].to_dict("records")
        [{'sprints': 2, 'green': 1, 'median_hours_to_green': 2.0}]
    """
    greens = (criterion_greens(evals) if greens is None else greens).copy()
    greens["green"] = greens["green_at"].notna()
    greens["hours"] = (greens["green_at"] - greens["first_at"]).dt.total_seconds() / 3600
    grouped = greens.groupby("criterion", sort=True, observed=True)
    table = pd.DataFrame({
        "sprints": grouped.size(), "green": grouped["green"].sum().astype(np.int64),
        "median_iterations_to_green": grouped["iterations_to_green"].median().astype(float),
        "mean_iterations_to_green": grouped["iterations_to_green"].mean().astype(float),
        "median_hours_to_green": grouped["hours"].median(),
    }).reset_index()
    table = _with_rate(table, "green", "sprints", "green_rate")
    columns = ["criterion", "sprints", "green", "green_rate", "ci_low", "ci_high", "median_iterations_to_green",
               "mean_iterations_to_green", "median_hours_to_green"]
    return table[columns].sort_values(["green_rate", "criterion"], kind="stable", ignore_index=True)


# --------------------------------------------------------------------------- cost over time and engines


def cost_over_time(evals: pd.DataFrame, *, freq: str = "auto", greens: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tokens and cost per period: per sprint and per passed criterion.

    A sprint counts in the period of its first evaluation; a
    criterion counts as passed in the period where it first passed (per
    sprint), so a criterion that keeps passing is paid for once. The cost of
    a period is what its evaluations reported. Periods without any reported
    cost keep empty cost columns. ``greens``: :func:`criterion_greens` of the same ``evals``,
    when the caller has it already.

    Returns:
        ``period, evaluations, sprints, tokens, cost_usd, passed_criteria, cost_per_sprint,
        tokens_per_sprint, cost_per_passed_criterion, tokens_per_passed_criterion``.

    Example:
        >>> frame = pd.DataFrame({"kind": ["evaluation", "criterion"], "contract_id": "A", "name": [None, "sc-1"],
        ...     "iteration": 1, "result": "pass", "tokens": [1000, None], "cost_usd": [0.5, None],
        ...     "timestamp": pd.to_datetime(["2026-01-05", "2026-01-05"], utc=True)})
        >>> cost_over_time(frame)[["sprints", "passed_criteria", "cost_per_passed_criterion"]].to_dict("records")
        [{'sprints': 1, 'passed_criteria': 1, 'cost_per_passed_criterion': 0.5}]
    """
    rows = _kind(evals, "evaluation", "contract_id", "tokens", "cost_usd", "timestamp")
    freq = _freq(evals["timestamp"], freq)
    frame = pd.DataFrame({"period": period_start(rows["timestamp"], freq), "contract_id": rows["contract_id"],
                          "tokens": rows["tokens"], "cost_usd": rows["cost_usd"]})
    grouped = frame.groupby("period", sort=True)
    table = pd.DataFrame({"evaluations": grouped.size(),
                          "tokens": grouped["tokens"].sum(min_count=1).astype(float),
                          "cost_usd": grouped["cost_usd"].sum(min_count=1).astype(float)})
    started = period_start(_first_evaluations(evals)["timestamp"], freq).value_counts()
    table.insert(1, "sprints", started.reindex(table.index).fillna(0).astype(np.int64))
    greens = (criterion_greens(evals) if greens is None else greens).dropna(subset=["green_at"])
    passed = period_start(greens["green_at"], freq).value_counts()
    table["passed_criteria"] = passed.reindex(table.index).fillna(0).astype(np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        sprints = table["sprints"].where(table["sprints"] > 0)
        table["cost_per_sprint"] = table["cost_usd"] / sprints
        table["tokens_per_sprint"] = table["tokens"] / sprints
        criteria = table["passed_criteria"].where(table["passed_criteria"] > 0)
        table["cost_per_passed_criterion"] = table["cost_usd"] / criteria
        table["tokens_per_passed_criterion"] = table["tokens"] / criteria
    return table.rename_axis("period").reset_index()


def sprint_engines(evals: pd.DataFrame) -> pd.Series:
    """Each sprint's engine (by :func:`sprint_ids` number): its first evaluation's (``(not reported)`` when none).

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "contract_id": ["A", "A"], "engine": ["codex", "claude"],
        ...     "iteration": [1, 2], "timestamp": pd.to_datetime(["2026-01-05", "2026-01-06"], utc=True)})
        >>> sprint_engines(frame).to_dict()
        {0: 'codex'}
    """
    rows = _kind(evals, "evaluation", "sprint", "engine", "iteration", "timestamp")
    first = rows.sort_values(["timestamp", "iteration"], kind="stable").drop_duplicates("sprint")
    return _engine_names(first.set_index("sprint")["engine"]).rename("engine")


def engine_comparison(evals: pd.DataFrame, *, to_green: pd.DataFrame | None = None) -> pd.DataFrame:
    """Engine A vs engine B: what analysts compare when they choose an agent.

    Evaluations count under the engine they recorded; sprints (:data:`SPRINT_KEYS`) under
    the engine of their first evaluation. Cost is what the engines reported.
    ``to_green``: :func:`time_to_green` of the same ``evals``, when the caller has it already.

    Returns:
        One row per engine: ``engine, evaluations, passed, pass_rate, ci_low, ci_high, sprints,
        first_pass, first_pass_yield, green, green_rate, green_ci_low, green_ci_high,
        median_iterations_to_green, mean_iterations_to_green, median_hours_to_green, cost_usd, tokens,
        cost_per_sprint, cost_per_green_sprint``, best pass rate first.

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "contract_id": ["A", "A", "B"], "spec_id": "s",
        ...     "engine": ["codex", "codex", "claude"], "iteration": [1, 2, 1], "result": ["fail", "pass", "pass"],
        ...     "tokens": 100, "cost_usd": [0.1, 0.1, 0.3],
        ...     "timestamp": pd.to_datetime(["2026-01-05", "2026-01-06", "2026-01-05"], utc=True)})
        >>> table = engine_comparison(frame)
        >>> table[["engine", "pass_rate", "mean_iterations_to_green", "cost_per_sprint"]].to_dict("records")[1]
        {'engine': 'codex', 'pass_rate': 0.5, 'mean_iterations_to_green': 2.0, 'cost_per_sprint': 0.2}
    """
    rows = _kind(evals, "evaluation", "engine", "result")
    frame = pd.DataFrame({"engine": _engine_names(rows["engine"]), "result": rows["result"]})
    table = _outcome_counts(frame, ["engine"]).rename(columns={"runs": "evaluations"})
    table = table.drop(columns=["failed", "skipped"]).set_index("engine")
    sprints = (time_to_green(evals) if to_green is None else to_green).set_index("sprint")
    first = _first_evaluations(evals).set_index("sprint")
    sprints["first_pass"] = (first["result"] == "pass").reindex(sprints.index, fill_value=False).astype(np.int64)
    costs = cost_per_sprint(evals).set_index("sprint")
    sprints["cost_usd"] = costs["cost_usd"].reindex(sprints.index)
    sprints["tokens"] = costs["tokens"].reindex(sprints.index)
    by_engine = sprints.groupby("engine", sort=True)
    table["sprints"] = by_engine.size()
    table["first_pass"] = by_engine["first_pass"].sum()
    table["green"] = by_engine["green"].sum()
    table["median_iterations_to_green"] = by_engine["iterations_to_green"].median().astype(float)
    table["mean_iterations_to_green"] = by_engine["iterations_to_green"].mean().astype(float)
    table["median_hours_to_green"] = by_engine["hours_to_green"].median().astype(float)
    table["cost_usd"] = by_engine["cost_usd"].sum(min_count=1).astype(float)
    table["tokens"] = by_engine["tokens"].sum(min_count=1).astype(float)
    table = table.reset_index().fillna({"sprints": 0, "first_pass": 0, "green": 0})
    table = table.astype({"sprints": np.int64, "first_pass": np.int64, "green": np.int64})
    with np.errstate(divide="ignore", invalid="ignore"):
        table["first_pass_yield"] = np.where(table["sprints"] > 0, table["first_pass"] / table["sprints"], np.nan)
        table["green_rate"] = np.where(table["sprints"] > 0, table["green"] / table["sprints"], np.nan)
        table["cost_per_sprint"] = table["cost_usd"] / table["sprints"].where(table["sprints"] > 0)
        table["cost_per_green_sprint"] = table["cost_usd"] / table["green"].where(table["green"] > 0)
    table["green_ci_low"], table["green_ci_high"] = wilson_interval(table["green"], table["sprints"])
    columns = ["engine", "evaluations", "passed", "pass_rate", "ci_low", "ci_high", "sprints", "first_pass",
               "first_pass_yield", "green", "green_rate", "green_ci_low", "green_ci_high",
               "median_iterations_to_green", "mean_iterations_to_green", "median_hours_to_green", "cost_usd",
               "tokens", "cost_per_sprint", "cost_per_green_sprint"]
    return table[columns].sort_values(["pass_rate", "engine"], ascending=[False, True], kind="stable",
                                      ignore_index=True)


_SIDE = ["sprints", "green", "first_green", "mean_iterations_to_green", "last_result", "last_eval_id",
         "last_workspace", "last_at"]


def _per_contract_engine(evals: pd.DataFrame, to_green: pd.DataFrame) -> pd.DataFrame:
    """Each engine's sprints on each contract: counts, its first sprint's verdict, its latest evaluation."""
    evaluations = _kind(evals, "evaluation", "sprint", "eval_id", "workspace", "result", "timestamp", "iteration")
    last = evaluations.sort_values(["timestamp", "iteration"], kind="stable").drop_duplicates("sprint", keep="last")
    last = last.set_index("sprint")
    sprints = to_green.sort_values("first_at", kind="stable").assign(
        last_result=lambda t: t["sprint"].map(last["result"].astype(object)),
        last_eval_id=lambda t: t["sprint"].map(last["eval_id"].astype(object)),
        last_workspace=lambda t: t["sprint"].map(last["workspace"].astype(object)),
        last_at=lambda t: t["sprint"].map(last["timestamp"]))
    grouped = sprints.groupby(["contract_id", "engine"], sort=True)
    table = pd.DataFrame({"sprints": grouped.size(), "green": grouped["green"].sum().astype(np.int64),
                          "first_green": grouped["green"].first().astype(bool),
                          "mean_iterations_to_green": grouped["iterations_to_green"].mean().astype(float)})
    latest = grouped.tail(1).set_index(["contract_id", "engine"])
    for column in ("last_result", "last_eval_id", "last_workspace", "last_at"):
        table[column] = latest[column].reindex(table.index)
    return table.reset_index()


def engine_side_by_side(evals: pd.DataFrame, *, to_green: pd.DataFrame | None = None) -> pd.DataFrame:
    """The same contract under two engines, side by side: each engine's sprints on it and their verdicts.

    A contract is paired when sprints of two engines ran it (copies of one project in many
    workspaces sharing one history, each workspace with its engine). Each side counts that engine's
    sprints on the contract: how many, how many went green, whether its first sprint did, its mean
    iterations to green, and its latest evaluation (verdict, eval id and workspace: the EvalResult
    whose feedback the drill-down shows). Every pair of engines that ran a contract is a row.
    ``to_green``: :func:`time_to_green` of the same ``evals``, when the caller has it already.

    Returns:
        ``contract_id, engine_a, engine_b`` and, for ``_a`` and ``_b``: ``sprints, green, first_green,
        mean_iterations_to_green, last_result, last_eval_id, last_workspace, last_at``; by contract, then
        engines (``engine_a`` < ``engine_b``).

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "workspace": ["/a", "/a", "/b"], "contract_id": "c",
        ...     "sprint_run": ["p1", "p1", "p2"], "eval_id": ["e1", "e2", "e3"], "iteration": [1, 2, 1],
        ...     "engine": ["claude", "claude", "codex"], "result": ["fail", "pass", "fail"],
        ...     "timestamp": pd.to_datetime(["2026-01-05 10:00", "2026-01-05 11:00", "2026-01-05 10:30"], utc=True)})
        >>> engine_side_by_side(frame)[["engine_a", "green_a", "last_eval_id_a", "engine_b", "green_b"]].to_dict(
        ...     "records")
        [{'engine_a': 'claude', 'green_a': 1, 'last_eval_id_a': 'e2', 'engine_b': 'codex', 'green_b': 0}]
    """
    columns = ["contract_id", "engine_a", "engine_b", *[f"{c}_{side}" for side in "ab" for c in _SIDE]]
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    to_green = time_to_green(evals) if to_green is None else to_green
    if to_green["engine"].nunique() < 2:  # nothing to pair (and an empty history has no timestamps to map)
        return empty
    per = _per_contract_engine(evals, to_green)
    pairs = per.merge(per, on="contract_id", suffixes=("_a", "_b"))
    pairs = pairs[pairs["engine_a"] < pairs["engine_b"]]
    if pairs.empty:
        return empty
    return pairs[columns].sort_values(["contract_id", "engine_a", "engine_b"], kind="stable", ignore_index=True)


def engine_pairs(side_by_side: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Each pair of engines over the contracts both ran: the scorer's paired test on first sprints.

    The pairs are :func:`engine_side_by_side`'s rows; each contract is one case, passed when the
    engine's first sprint on it went green. As in ``sprintflow score --compare``, only the contracts
    one engine alone got green decide (exact McNemar); the others carry no information about which is
    better.

    Returns:
        ``engine_a, engine_b, contracts, both_green, only_a, only_b, neither, p_value, verdict``
        (``a-better``, ``b-better`` or ``no-significant-difference``).

    Example:
        >>> pairs = pd.DataFrame({"engine_a": "claude", "engine_b": "codex", "first_green_a": [True] * 9 + [False],
        ...                       "first_green_b": [False] * 9 + [True]})
        >>> engine_pairs(pairs)[["only_a", "only_b", "p_value", "verdict"]].round(4).to_dict("records")
        [{'only_a': 9, 'only_b': 1, 'p_value': 0.0215, 'verdict': 'a-better'}]
    """
    columns = ["engine_a", "engine_b", "contracts", "both_green", "only_a", "only_b", "neither", "p_value", "verdict"]
    rows = []
    for (a, b), group in side_by_side.groupby(["engine_a", "engine_b"], sort=True):
        green_a, green_b = group["first_green_a"].astype(bool), group["first_green_b"].astype(bool)
        only_a, only_b = int((green_a & ~green_b).sum()), int((green_b & ~green_a).sum())
        p_value = mcnemar_exact(only_a, only_b)
        verdict = ("a-better" if only_a > only_b else "b-better") if p_value < alpha and only_a != only_b \
            else "no-significant-difference"
        rows.append({"engine_a": a, "engine_b": b, "contracts": len(group),
                     "both_green": int((green_a & green_b).sum()), "only_a": only_a, "only_b": only_b,
                     "neither": int((~green_a & ~green_b).sum()),
                     "p_value": p_value, "verdict": verdict})
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------- flaky tests


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


# --------------------------------------------------------------------------- scorer epochs


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
