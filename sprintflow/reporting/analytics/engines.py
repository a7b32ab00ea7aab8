"""Engine A vs engine B: each sprint's engine, the engines' figures, the same contract under both, their paired test."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals, EvalTable, sql_literal
from sprintflow.reporting.analytics.costs import cost_per_sprint
from sprintflow.reporting.analytics.green import time_to_green
from sprintflow.reporting.analytics.rates import _outcome_counts, wilson_interval
from sprintflow.reporting.analytics.rows import (
    IN_TIME,
    UNKNOWN_ENGINE,
    _engine_names,
    _first_evaluations,
    _of_kind,
    _of_one_row,
)

__all__ = [
    "engine_comparison",
    "engine_pairs",
    "engine_side_by_side",
    "sprint_engines",
]


def sprint_engines(evals: Evals) -> pd.Series:
    """Each sprint's engine (by :func:`sprint_ids` number): its first evaluation's (``(not reported)`` when none).

    Example:
        >>> frame = pd.DataFrame({"kind": "evaluation", "contract_id": ["A", "A"], "engine": ["codex", "claude"],
        ...     "iteration": [1, 2], "timestamp": pd.to_datetime(["2026-01-05", "2026-01-06"], utc=True)})
        >>> sprint_engines(frame).to_dict()
        {0: 'codex'}
    """
    return _engine_names(_first_evaluations(evals).set_index("sprint")["engine"]).rename("engine")


def engine_comparison(evals: Evals, *, to_green: pd.DataFrame | None = None,
                      costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Engine A vs engine B: what analysts compare when they choose an agent.

    Evaluations count under the engine they recorded; sprints (:data:`SPRINT_KEYS`) under
    the engine of their first evaluation. Cost is what the engines reported.
    ``to_green`` and ``costs``: :func:`time_to_green` and :func:`cost_per_sprint` of the same ``evals``, when
    the caller has them already.

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
    rows, source = _of_kind(evals, "evaluation", f"coalesce(engine, {sql_literal(UNKNOWN_ENGINE)}) AS engine, result")
    table = _outcome_counts(rows, ["engine"], source).rename(columns={"runs": "evaluations"})
    table = table.drop(columns=["failed", "skipped"]).set_index("engine")
    sprints = (time_to_green(evals) if to_green is None else to_green).set_index("sprint")
    first = _first_evaluations(evals).set_index("sprint")
    sprints["first_pass"] = (first["result"] == "pass").reindex(sprints.index, fill_value=False).astype(np.int64)
    costs = (cost_per_sprint(evals) if costs is None else costs).set_index("sprint")
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


def _per_contract_engine(evals: Evals, to_green: pd.DataFrame) -> pd.DataFrame:
    """Each engine's sprints on each contract: counts, its first sprint's verdict, its latest evaluation."""
    source = EvalTable.of(evals)
    last = source.query(f"""
        SELECT sprint, {_of_one_row("arg_max_null", {"last_result": "result", "last_eval_id": "eval_id",
                                                     "last_workspace": "workspace", "last_at": "timestamp"}, "place")}
        FROM (SELECT *, {IN_TIME} AS place FROM {source.sprinted()} WHERE kind = 'evaluation')
        GROUP BY sprint""").set_index("sprint")
    sprints = to_green.sort_values("first_at", kind="stable")
    sprints = sprints.join(last.astype({"last_result": object, "last_eval_id": object, "last_workspace": object}),
                           on="sprint")
    grouped = sprints.groupby(["contract_id", "engine"], sort=True)
    table = pd.DataFrame({"sprints": grouped.size(), "green": grouped["green"].sum().astype(np.int64),
                          "first_green": grouped["green"].first().astype(bool),
                          "mean_iterations_to_green": grouped["iterations_to_green"].mean().astype(float)})
    latest = grouped.tail(1).set_index(["contract_id", "engine"])
    for column in ("last_result", "last_eval_id", "last_workspace", "last_at"):
        table[column] = latest[column].reindex(table.index)
    return table.reset_index()


def engine_side_by_side(evals: Evals, *, to_green: pd.DataFrame | None = None) -> pd.DataFrame:
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
    # Only contracts that two engines ran pair up: the others are left out before their sprints are read.
    shared = to_green.groupby("contract_id")["engine"].transform("nunique") > 1
    if not shared.any():  # nothing to pair (and an empty history has no timestamps to map)
        return empty
    per = _per_contract_engine(evals, to_green[shared])
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
    if side_by_side.empty:
        return pd.DataFrame(columns=columns)
    # Here: the scorer's module brings the schemas (0.13 s), which a report that pairs no engines never needs.
    from sprintflow.scoring.comparison import mcnemar_exact

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
