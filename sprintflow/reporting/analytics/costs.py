"""What sprints cost: tokens and cost per sprint, and per period per sprint and per passed criterion."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals, EvalTable
from sprintflow.reporting.analytics.green import criterion_greens
from sprintflow.reporting.analytics.periods import _freq, _period_sql, period_start
from sprintflow.reporting.analytics.rows import _engine_names, _first_evaluations, _of_one_row, _span

__all__ = [
    "cost_over_time",
    "cost_per_sprint",
]


def _reported_cost(column: str = "cost_usd") -> str:
    """SQL: a row's cost as reported, null when it is missing or not a number (DuckDB reads a NaN in a Parquet
    file as a number and sums it; pandas, like the history's DataFrames, counts it as missing).

    Example:
        >>> _reported_cost("e.cost_usd")
        'CASE WHEN NOT isnan(e.cost_usd) THEN e.cost_usd END'
    """
    return f"CASE WHEN NOT isnan({column}) THEN {column} END"


_COST = f"CASE WHEN count({_reported_cost()}) > 0 THEN fsum({_reported_cost()}) END"
"""SQL: the reported cost of a group, empty when none was reported (fsum: compensated, as pandas sums)."""


def cost_per_sprint(evals: Evals) -> pd.DataFrame:
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
    source = EvalTable.of(evals)
    # Named by its first recorded evaluation; summed in SQL, so pandas gets a row per sprint, not per evaluation.
    first = _of_one_row("arg_min_null", ("workspace", "contract_id", "sprint_run", "engine"), "_row")
    table = source.query(f"""
        SELECT sprint, {first}, count(*) AS evaluations, TRY_CAST(sum(tokens) AS BIGINT) AS tokens,
               {_COST} AS cost_usd
        FROM {source.sprinted()} WHERE kind = 'evaluation'
        GROUP BY sprint ORDER BY cost_usd DESC NULLS LAST, sprint""")
    table["engine"] = _engine_names(table["engine"])
    table["cost_per_evaluation"] = table["cost_usd"] / table["evaluations"]
    return table


def cost_over_time(evals: Evals, *, freq: str = "auto", greens: pd.DataFrame | None = None) -> pd.DataFrame:
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
    source = EvalTable.of(evals)
    freq = _freq(_span(evals), freq)
    table = source.query(f"""
        SELECT {_period_sql("timestamp", freq)} AS period, count(*) AS evaluations, sum(tokens)::DOUBLE AS tokens,
               {_COST} AS cost_usd
        FROM evals WHERE kind = 'evaluation' AND timestamp IS NOT NULL GROUP BY period ORDER BY period""")
    table = table.set_index(table["period"].astype("datetime64[ns]")).drop(columns="period")  # as period_start gives
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
