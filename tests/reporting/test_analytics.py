"""The analytics against answers computed by hand from a small history.

The history (weeks start on Monday 2026-01-05 and 2026-01-12):

======  ================  =======  ==========  ===============  ========  ======================
eval    time              overall  lint        unit-test        hash      criteria
======  ================  =======  ==========  ===============  ========  ======================
A1      Mon 01-05 10:00   fail     pass        fail             hA1       A/sc-1 manual skipped,
                                                                          A/sc-2 unit-test fail
A2      Tue 01-06 10:00   pass     pass        pass             hA2       skipped, pass
B1      Wed 01-07 12:00   pass     pass        pass             hB1       B/sc-1 custom fail
C1      Mon 01-12 09:00   fail     fail        pass             hC1       C/sc-1 lint fail
C1 re   Tue 01-13 09:00   fail     fail        fail             hC1       fail (2 regressions)
C2      Wed 01-14 09:00   fail     pass        skipped          hC2       pass, C/sc-2 (no method) pass
B1 re   Thu 01-15 09:00   fail     pass cached fail             hB1       fail
======  ================  =======  ==========  ===============  ========  ======================
"""

import math

import numpy as np
import pandas as pd
import pytest

from sprintflow.history.dataset import EVALS, append_rows, read_table
from sprintflow.reporting import analytics as r

WEEK1, WEEK2 = pd.Timestamp("2026-01-05"), pd.Timestamp("2026-01-12")


def _evaluation(contract, iteration, at, result, strategies, criteria, hash_, regressions=0, tokens=None,
                cost=None):
    engine = {"A": "claude", "C": "codex"}.get(contract)  # B's engine reported nothing
    base = {"contract_id": contract, "spec_id": "spec-1", "iteration": iteration, "eval_id":
            f"eval-{contract}-{iteration}", "timestamp": pd.Timestamp(at, tz="UTC"), "workspace_hash": hash_}
    rows = [{**base, "kind": "evaluation", "result": result, "required": True, "regressions": regressions,
             "tokens": tokens, "cost_usd": cost, "engine": engine}]
    for name, outcome in strategies.items():
        cached = outcome.endswith(" cached")
        rows.append({**base, "kind": "strategy", "name": name, "result": outcome.removesuffix(" cached"),
                     "required": True, "cached": cached})
    for name, (method, outcome) in criteria.items():
        rows.append({**base, "kind": "criterion", "name": name, "method": method, "result": outcome,
                     "required": True})
    return rows


ROWS = [
    *_evaluation("A", 1, "2026-01-05 10:00", "fail", {"lint": "pass", "unit-test": "fail"},
                 {"sc-1": ("manual", "skipped"), "sc-2": ("unit-test", "fail")}, "hA1", tokens=1000, cost=0.01),
    *_evaluation("A", 2, "2026-01-06 10:00", "pass", {"lint": "pass", "unit-test": "pass"},
                 {"sc-1": ("manual", "skipped"), "sc-2": ("unit-test", "pass")}, "hA2", tokens=3000, cost=0.03),
    *_evaluation("B", 1, "2026-01-07 12:00", "pass", {"lint": "pass", "unit-test": "pass"},
                 {"sc-1": ("custom", "fail")}, "hB1"),
    *_evaluation("C", 1, "2026-01-12 09:00", "fail", {"lint": "fail", "unit-test": "pass"},
                 {"sc-1": ("lint", "fail")}, "hC1", tokens=500, cost=0.005),
    *_evaluation("C", 1, "2026-01-13 09:00", "fail", {"lint": "fail", "unit-test": "fail"},
                 {"sc-1": ("lint", "fail")}, "hC1", regressions=2),
    *_evaluation("C", 2, "2026-01-14 09:00", "fail", {"lint": "pass", "unit-test": "skipped"},
                 {"sc-1": ("lint", "pass"), "sc-2": (None, "pass")}, "hC2"),
    *_evaluation("B", 1, "2026-01-15 09:00", "fail", {"lint": "pass cached", "unit-test": "fail"},
                 {"sc-1": ("custom", "fail")}, "hB1"),
]


@pytest.fixture(params=["in-memory", "parquet"])
def evals(request, tmp_path):
    """The same history as plain Python rows and as read back from Parquet (nullable, arrow strings)."""
    if request.param == "in-memory":
        return pd.DataFrame(ROWS)
    append_rows(tmp_path, EVALS, ROWS[:10])
    append_rows(tmp_path, EVALS, ROWS[10:])
    return read_table(tmp_path, EVALS)


def values(frame: pd.DataFrame, columns: list[str]) -> list[list]:
    """Rows as plain Python values, NaN / NA / NaT as None, floats rounded: dtype-free comparisons."""
    def plain(v):
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
            return None
        if isinstance(v, np.generic):
            v = v.item()
        return round(v, 6) if isinstance(v, float) else v
    return [[plain(v) for v in row] for row in frame[columns].itertuples(index=False)]


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (1, 2, 0.0945, 0.9055)])
def test_wilson_interval_matches_published_values(k, n, low, high):
    lo, hi = r.wilson_interval(k, n)
    assert (round(float(lo), 4), round(float(hi), 4)) == (low, high)


def test_wilson_interval_is_empty_without_trials():
    lo, hi = r.wilson_interval(np.array([0, 3]), np.array([0, 4]))
    assert math.isnan(lo[0]) and math.isnan(hi[0]) and 0 < lo[1] < 0.75 < hi[1] < 1


def test_periods_start_on_monday_and_months_on_the_first():
    stamps = pd.Series(pd.to_datetime(["2026-01-11 23:59Z", "2026-01-12 00:00Z", "2026-01-20 12:00+05:00"], utc=True))
    assert r.period_start(stamps).tolist() == [WEEK1, WEEK2, WEEK2 + pd.Timedelta(days=7)]
    assert r.period_start(stamps, "M").tolist() == [pd.Timestamp("2026-01-01")] * 3


def test_pass_rate_by_strategy_counts_decided_outcomes_worst_first(evals):
    table = r.pass_rate_by_strategy(evals)
    assert values(table, ["strategy", "runs", "passed", "failed", "skipped", "pass_rate"]) == [
        ["unit-test", 6, 3, 3, 1, 0.5], ["lint", 7, 5, 2, 0, round(5 / 7, 6)]]
    low, high = r.wilson_interval([3, 5], [6, 7])
    assert np.allclose(table.ci_low, low) and np.allclose(table.ci_high, high)


def test_pass_rate_by_week_per_strategy_and_for_whole_evaluations(evals):
    table = r.pass_rate_by_week(evals)
    assert values(table, ["week", "strategy", "runs", "passed", "skipped"]) == [
        [WEEK1, "lint", 3, 3, 0], [WEEK1, "unit-test", 3, 2, 0],
        [WEEK2, "lint", 4, 2, 0], [WEEK2, "unit-test", 3, 1, 1]]
    overall = r.pass_rate_by_week(evals, by_strategy=False)
    assert values(overall, ["week", "runs", "passed", "pass_rate"]) == [
        [WEEK1, 3, 2, round(2 / 3, 6)], [WEEK2, 4, 0, 0.0]]


def test_first_pass_yield_overall_and_by_week(evals):
    assert values(r.first_pass_yield(evals), ["sprints", "first_pass", "yield"]) == [
        [3, 1, round(1 / 3, 6)]]
    assert values(r.first_pass_yield(evals, freq="W"), ["week", "sprints", "first_pass", "yield"]) == [
        [WEEK1, 2, 1, 0.5], [WEEK2, 1, 0, 0.0]]


def test_time_to_green_per_contract(evals):
    table = r.time_to_green(evals)
    assert values(table, ["contract_id", "evaluations", "iterations", "green", "iterations_to_green",
                          "hours_to_green"]) == [
        ["A", 2, 2, True, 2.0, 24.0], ["B", 2, 1, True, 1.0, 0.0], ["C", 3, 2, False, None, None]]
    assert table.green_at.iloc[0] == pd.Timestamp("2026-01-06 10:00", tz="UTC")


def test_a_sprint_is_named_by_its_first_evaluation_in_time_even_where_that_names_nothing(tmp_path):
    # Recorded out of order: the first in time names no engine; two passes tie in time, the iteration decides.
    at = pd.Timestamp("2026-01-05 10:00", tz="UTC")
    rows = [{"kind": "evaluation", "contract_id": "A", "iteration": 3, "timestamp": at + pd.Timedelta(hours=1),
             "result": "pass", "engine": "codex", "executor": "local", "eval_id": "tie"},
            {"kind": "evaluation", "contract_id": "A", "iteration": 1, "timestamp": at, "result": "fail",
             "engine": None, "executor": None, "eval_id": "early"},
            {"kind": "evaluation", "contract_id": "A", "iteration": 2, "timestamp": at + pd.Timedelta(hours=1),
             "result": "pass", "engine": "codex", "executor": "docker", "eval_id": "late"}]
    append_rows(tmp_path, EVALS, rows)
    for source in (pd.DataFrame(rows), read_table(tmp_path, EVALS)):
        table = r.time_to_green(source)
        assert values(table, ["engine", "executor", "evaluations", "iterations", "iterations_to_green",
                              "hours_to_green"]) == [[r.UNKNOWN_ENGINE, None, 3, 3, 2, 1.0]]

    # Two engines on contract A: each side's latest evaluation is the latest in time (then the highest
    # iteration), not the last recorded.
    other = [{**row, "workspace": "/b", "engine": "claude", "eval_id": f"b-{row['eval_id']}"} for row in rows]
    both = [{**row, "workspace": "/a", "engine": "codex"} for row in rows] + other
    pairs = r.engine_side_by_side(pd.DataFrame(both))
    assert values(pairs, ["contract_id", "engine_a", "last_eval_id_a", "last_result_a", "engine_b",
                          "last_eval_id_b"]) == [["A", "claude", "b-tie", "pass", "codex", "tie"]]


def test_criteria_coverage_per_criterion_and_summary(evals):
    coverage = r.criteria_coverage(evals)
    assert values(coverage, ["contract_id", "criterion", "method", "evaluations", "passed", "failed", "skipped",
                             "automatic", "exercised", "ever_passed"]) == [
        ["A", "sc-1", "manual", 2, 0, 0, 2, False, False, False],
        ["A", "sc-2", "unit-test", 2, 1, 1, 0, True, True, True],
        ["B", "sc-1", "custom", 2, 0, 2, 0, True, True, False],
        ["C", "sc-1", "lint", 3, 1, 2, 0, True, True, True],
        ["C", "sc-2", None, 1, 1, 0, 0, None, True, True]]
    assert values(r.coverage_summary(coverage), ["measure", "criteria", "share"]) == [
        ["automatic", 3, 0.6], ["manual", 1, 0.2], ["unknown method", 1, 0.2], ["never exercised", 1, 0.2],
        ["never passing", 1, 0.2]]


def test_flaky_strategies_compare_fresh_runs_on_the_same_hash(evals):
    # unit-test: hB1 pass->fail, hC1 pass->fail (2 flips in 2 comparisons); lint: hC1 fail, fail;
    # lint on hB1 ran once fresh (the re-run was a cache hit), C2's skipped unit-test does not count.
    assert values(r.flaky_strategies(evals), ["strategy", "repeated_hashes", "flaky_hashes", "runs", "flips",
                                              "flip_rate"]) == [
        ["unit-test", 2, 2, 4, 2, 1.0], ["lint", 1, 0, 2, 0, 0.0]]


def test_a_flip_back_counts_twice():
    rows = [{"kind": "strategy", "name": "e2e", "result": res, "workspace_hash": "h", "cached": False,
             "timestamp": pd.Timestamp(f"2026-01-0{day}", tz="UTC")}
            for day, res in ((3, "pass"), (1, "pass"), (2, "fail"))]  # out of order on purpose
    assert values(r.flaky_strategies(pd.DataFrame(rows)), ["runs", "flips", "flip_rate"]) == [[3, 2, 1.0]]


def test_regressions_per_week(evals):
    assert values(r.regressions_over_time(evals), ["week", "evaluations", "with_regressions", "regressions",
                                                   "share"]) == [
        [WEEK1, 3, 0, 0, 0.0], [WEEK2, 4, 1, 2, 0.25]]


def test_cost_per_sprint_leaves_unknown_costs_empty(evals):
    assert values(r.cost_per_sprint(evals), ["contract_id", "evaluations", "tokens", "cost_usd",
                                             "cost_per_evaluation"]) == [
        ["A", 2, 4000, 0.04, 0.02], ["C", 3, 500, 0.005, round(0.005 / 3, 6)], ["B", 2, None, None, None]]


@pytest.fixture
def bugs():
    def event(bug, event, status, at, from_status=None):
        return {"bug_id": bug, "event": event, "status": status, "from_status": from_status,
                "updated_at": pd.Timestamp(at, tz="UTC")}
    return pd.DataFrame([
        event("bug-1", "open", "open", "2026-01-05 00:00"),
        event("bug-2", "open", "open", "2026-01-06 00:00"),
        event("bug-1", "transition", "fixed", "2026-01-05 12:00", "open"),
        event("bug-2", "transition", "fixing", "2026-01-06 06:00", "open"),
        event("bug-2", "transition", "fixed", "2026-01-07 00:00", "fixing"),
        event("bug-3", "open", "open", "2026-01-12 00:00"),
        event("bug-1", "reopen", "open", "2026-01-13 00:00", "fixed"),
        event("bug-1", "transition", "fixed", "2026-01-14 00:00", "open"),
    ])


def test_bug_activity_per_week(bugs):
    assert values(r.bug_activity(bugs), ["week", "opened", "fixed", "reopened"]) == [
        [WEEK1, 2, 2, 0], [WEEK2, 1, 1, 1]]


def test_time_to_fix_runs_from_the_latest_open_or_reopen(bugs):
    assert values(r.time_to_fix(bugs), ["bug_id", "hours"]) == [["bug-1", 12.0], ["bug-1", 24.0],
                                                                ["bug-2", 24.0]]


def test_bug_summary(bugs):
    assert values(r.bug_summary(bugs), ["bugs", "opened", "fixed", "reopened", "open_now",
                                        "mean_hours_to_fix"]) == [[3, 3, 3, 1, 1, 20.0]]


@pytest.fixture
def scores():
    return pd.DataFrame([
        {"recorded_at": pd.Timestamp(at, tz="UTC"), "skill": skill, "prompt_sha256": sha, "score": score}
        for at, skill, sha, score in (("2026-01-05", "triage", "a" * 64, 0.5),
                                      ("2026-01-06", "triage", "a" * 64, 0.7),
                                      ("2026-01-13", "triage", "b" * 64, 0.9),
                                      ("2026-01-14", "summarize", None, 0.6))])


def test_score_trends_per_skill_prompt_version_and_week(scores):
    assert values(r.score_trends(scores), ["week", "skill", "prompt_version", "runs", "score", "min_score",
                                           "max_score"]) == [
        [WEEK1, "triage", "aaaaaaaa", 2, 0.6, 0.5, 0.7], [WEEK2, "summarize", "unknown", 1, 0.6, 0.6, 0.6],
        [WEEK2, "triage", "bbbbbbbb", 1, 0.9, 0.9, 0.9]]


def test_score_by_prompt_puts_versions_side_by_side(scores):
    table = r.score_by_prompt(scores)
    assert values(table, ["skill", "prompt_version", "runs", "score"]) == [
        ["summarize", "unknown", 1, 0.6], ["triage", "aaaaaaaa", 2, 0.6], ["triage", "bbbbbbbb", 1, 0.9]]
    assert table.last_seen.iloc[1] == pd.Timestamp("2026-01-06", tz="UTC")


def test_testrun_trends_per_week():
    runs = pd.DataFrame([
        {"recorded_at": pd.Timestamp("2026-01-05", tz="UTC"), "total": 10, "failed": 4, "crashed": False,
         "acceptance_coverage": 0.5},
        {"recorded_at": pd.Timestamp("2026-01-06", tz="UTC"), "total": 0, "failed": 0, "crashed": True,
         "acceptance_coverage": None},
        {"recorded_at": pd.Timestamp("2026-01-12", tz="UTC"), "total": 20, "failed": 2, "crashed": False,
         "acceptance_coverage": 0.8}])
    assert values(r.testrun_trends(runs), ["week", "runs", "crashed", "tests", "failed", "failure_rate",
                                           "acceptance_coverage"]) == [
        [WEEK1, 2, 1, 10, 4, 0.4, 0.5], [WEEK2, 1, 0, 20, 2, 0.1, 0.8]]


def test_an_empty_history_gives_empty_tables_not_errors(tmp_path):
    empty = read_table(tmp_path, EVALS)
    for function in (r.pass_rate_by_strategy, r.pass_rate_by_week, r.time_to_green, r.criteria_coverage,
                     r.flaky_strategies, r.regressions_over_time, r.cost_per_sprint):
        assert function(empty).empty, function.__name__
    assert values(r.first_pass_yield(empty), ["sprints", "first_pass", "yield"]) == [[0, 0, None]]
    assert r.coverage_summary(r.criteria_coverage(empty)).criteria.sum() == 0


def test_functions_do_not_change_their_input(evals):
    before = evals.copy()
    for function in (r.pass_rate_by_strategy, r.time_to_green, r.criteria_coverage, r.flaky_strategies,
                     r.cost_per_sprint, r.first_pass_yield):
        function(evals)
    pd.testing.assert_frame_equal(evals, before)


# --------------------------------------------------------------------------- finer views


def test_auto_freq_fits_the_span():
    def span(*days):
        return pd.Series(pd.to_datetime(list(days), utc=True))
    assert r.auto_freq(span("2026-01-05", "2026-01-11")) == "D"
    assert r.auto_freq(span("2026-01-05", "2026-12-31")) == "W"
    assert r.auto_freq(span("2024-01-05", "2026-12-31")) == "MS"
    assert r.period_start(span("2026-03-17"), "MS").tolist() == [pd.Timestamp("2026-03-01")]


def test_criterion_pass_rate_per_day_over_a_week(evals):
    table = r.criterion_pass_rate(evals)  # eleven days of data: per day
    assert values(table[table.criterion == "sc-2"], ["period", "runs", "passed", "pass_rate"]) == [
        [pd.Timestamp("2026-01-05"), 1, 0, 0.0], [pd.Timestamp("2026-01-06"), 1, 1, 1.0],
        [pd.Timestamp("2026-01-14"), 1, 1, 1.0]]


def test_criterion_time_to_green_per_criterion_id(evals):
    # sc-1: A manual (never), B custom (never), C green at iteration 2, 48 h after 01-12 09:00.
    # sc-2: A green at iteration 2 after 24 h; C passed at its first judging (iteration 2, 0 h).
    assert values(r.criterion_time_to_green(evals), ["criterion", "sprints", "green", "green_rate",
                                                     "median_iterations_to_green", "median_hours_to_green"]) == [
        ["sc-1", 3, 1, round(1 / 3, 6), 2.0, 48.0], ["sc-2", 2, 2, 1.0, 2.0, 12.0]]


def test_cost_over_time_per_sprint_started_and_per_criterion_first_passed(evals):
    assert values(r.cost_over_time(evals, freq="W"), [
        "period", "evaluations", "sprints", "tokens", "cost_usd", "passed_criteria", "cost_per_sprint",
        "cost_per_passed_criterion", "tokens_per_passed_criterion"]) == [
        [WEEK1, 3, 2, 4000.0, 0.04, 1, 0.02, 0.04, 4000.0],
        [WEEK2, 4, 1, 500.0, 0.005, 2, 0.005, 0.0025, 250.0]]


def test_engine_comparison_side_by_side(evals):
    table = r.engine_comparison(evals)
    assert values(table, ["engine", "evaluations", "passed", "pass_rate", "sprints", "first_pass", "green",
                          "green_rate", "mean_iterations_to_green", "cost_usd", "cost_per_sprint",
                          "cost_per_green_sprint"]) == [
        ["(not reported)", 2, 1, 0.5, 1, 1, 1, 1.0, 1.0, None, None, None],
        ["claude", 2, 1, 0.5, 1, 0, 1, 1.0, 2.0, 0.04, 0.04, 0.04],
        ["codex", 3, 0, 0.0, 1, 0, 0, 0.0, None, 0.005, 0.005, None]]
    low, high = r.wilson_interval([1, 1, 0], [2, 2, 3])
    assert np.allclose(table.ci_low, low) and np.allclose(table.ci_high, high)
    assert np.allclose(table.green_ci_low, r.wilson_interval([1, 1, 0], [1, 1, 1])[0])


def test_an_old_history_without_engines_compares_as_not_reported(evals):
    table = r.engine_comparison(evals.drop(columns=["engine"]))
    assert values(table, ["engine", "evaluations", "sprints"]) == [["(not reported)", 7, 3]]


def test_flaky_tests_compare_runs_on_the_same_content_hash():
    def strategy(run, hash_, day):
        return {"kind": "strategy", "name": "unit-test", "result": "pass", "test_run": run, "workspace_hash": hash_,
                "contract_id": "A", "executor": "docker", "timestamp": pd.Timestamp(f"2026-01-0{day}", tz="UTC")}
    evals = pd.DataFrame([strategy("r1", "h1", 1), strategy("r2", "h1", 2), strategy("r3", "h1", 3),
                          strategy("r4", "h2", 4)])
    outcomes = {"r1": {"x": True, "y": True}, "r2": {"x": False, "y": True}, "r3": {"x": True, "y": True},
                "r4": {"x": False}, "tester-run": {"x": False, "y": False}}  # the tester's run names no hash
    tests = pd.DataFrame([{"run_id": run, "recorded_at": pd.Timestamp("2026-01-09", tz="UTC"), "test": name,
                           "passed": passed} for run, found in outcomes.items() for name, passed in found.items()])
    table = r.flaky_tests(evals, tests)
    assert values(table, ["test", "runs", "repeated_hashes", "flaky_hashes", "comparisons", "flips",
                          "flip_rate"]) == [["x", 3, 1, 1, 2, 2, 1.0], ["y", 3, 1, 0, 2, 0, 0.0]]
    low, high = r.wilson_interval([2, 0], [2, 2])
    assert np.allclose(table.ci_low, low) and np.allclose(table.ci_high, high)
    assert table.last_seen.iloc[0] == pd.Timestamp("2026-01-03", tz="UTC")


def test_score_epochs_lists_runs_over_several_epochs():
    scores = pd.DataFrame([
        {"recorded_at": pd.Timestamp("2026-01-05", tz="UTC"), "skill": "triage", "prompt_sha256": "ab" * 32,
         "score": 0.8, "epochs": None, "pass_at_1": None, "pass_at_k": None, "pass_hat_k": None,
         "epoch_scores": None, "flaky_ids": None},
        {"recorded_at": pd.Timestamp("2026-01-12", tz="UTC"), "skill": "triage", "prompt_sha256": "ab" * 32,
         "score": 0.7, "epochs": 3, "pass_at_1": 0.8, "pass_at_k": 0.9, "pass_hat_k": 0.7,
         "epoch_scores": [0.9, 0.7, 0.8], "flaky_ids": ["c1", "c2"]}])
    assert values(r.score_epochs(scores), ["skill", "prompt_version", "epochs", "pass_at_1", "pass_at_k",
                                           "pass_hat_k", "flaky_cases", "min_epoch_score", "max_epoch_score"]) == [
        ["triage", "abababab", 3, 0.8, 0.9, 0.7, 2, 0.7, 0.9]]


def test_kill_rates_round_killed_mutants_half_to_even_and_skip_unreadable_rates():
    at = pd.Timestamp("2026-05-13", tz="UTC")
    run = {"contract_id": "c", "iteration": 1, "timestamp": at}
    evals = pd.DataFrame([
        {"kind": "evaluation", **run, "engine": "claude", "tester_kill_rate": float("nan")},
        {"kind": "strategy", **run, "name": "unit-test", "mutants": 5, "kill_rate": 0.5},  # 2.5 mutants: 2
        {"kind": "strategy", **run, "name": "unit-test", "mutants": 7, "kill_rate": 0.5},  # 3.5 mutants: 4
        {"kind": "strategy", **run, "name": "unit-test", "mutants": 9, "kill_rate": float("nan")},
        {"kind": "strategy", **{**run, "iteration": 2}, "name": "unit-test", "mutants": 2, "kill_rate": 1.0}])
    table = r.kill_rates(evals).set_index("engine")
    assert table.loc["claude", ["evaluations", "mutants", "killed"]].tolist() == [2, 12, 6]
    assert table.loc["claude", "tester_evaluations"] == 0
    assert table.loc[r.UNKNOWN_ENGINE, ["evaluations", "mutants", "killed"]].tolist() == [1, 2, 2]
