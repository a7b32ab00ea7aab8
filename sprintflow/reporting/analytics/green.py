"""When sprints and criteria go green: after how many evaluations, iterations and hours."""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.query import Evals, EvalTable
from sprintflow.reporting.analytics.rates import _with_rate
from sprintflow.reporting.analytics.rows import IN_TIME, _engine_names, _of_one_row

__all__ = [
    "criterion_greens",
    "criterion_time_to_green",
    "time_to_green",
]


def time_to_green(evals: Evals) -> pd.DataFrame:
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
    source = EvalTable.of(evals)
    # A sprint's first row in time names it (arg_min_null: a first row that names no engine gives none), its
    # first pass makes it green. One pass over the evaluations, in SQL: pandas gets one row per sprint.
    first = _of_one_row("arg_min_null", ("workspace", "contract_id", "sprint_run", "spec_id", "engine", "executor"),
                       "place")
    first_pass = "arg_min_null({'iteration': iteration, 'at': timestamp}, place) FILTER (WHERE result = 'pass')"
    table = source.query(f"""
        WITH rows AS (SELECT *, {IN_TIME} AS place FROM {source.sprinted()} WHERE kind = 'evaluation')
        SELECT sprint, {first}, count(*) AS evaluations, max(iteration) - min(iteration) + 1 AS iterations,
               count(*) FILTER (WHERE result = 'pass') > 0 AS green,
               ({first_pass}).iteration - min(iteration) + 1 AS iterations_to_green,
               min(timestamp) AS first_at, ({first_pass}).at AS green_at
        FROM rows GROUP BY sprint ORDER BY min(place)""")
    table["engine"] = _engine_names(table["engine"])
    table["iterations_to_green"] = table["iterations_to_green"].astype("Int64")
    table["hours_to_green"] = (table["green_at"] - table["first_at"]).dt.total_seconds() / 3600
    return table


def criterion_greens(evals: Evals) -> pd.DataFrame:
    """Per (sprint, criterion): when first evaluated, when and after how many iterations of the sprint it
    first passed.

    Returns:
        ``sprint, contract_id, criterion, first_at, evaluations, green_at, iterations_to_green`` (empty
        when it never passed); ``sprint`` is :func:`sprint_ids`'s number.
    """
    source = EvalTable.of(evals)
    # Iterations count from the sprint's first judged iteration, whichever criterion it judged (a row without
    # a criterion id counts there too); a criterion goes green at its first pass (earliest, then lowest
    # iteration, then first recorded).
    table = source.query(f"""
        WITH groups AS (
            SELECT sprint, contract_id, name AS criterion, min(timestamp) AS first_at, count(*) AS evaluations,
                   min(timestamp) FILTER (WHERE result = 'pass') AS green_at,
                   arg_min(iteration, {IN_TIME})
                     FILTER (WHERE result = 'pass') AS green_iteration,
                   min(iteration) AS started
            FROM {source.sprinted()} WHERE kind = 'criterion' GROUP BY ALL),
        counted AS (SELECT *, min(started) OVER (PARTITION BY sprint) AS sprint_started FROM groups)
        SELECT sprint, contract_id, criterion, first_at, evaluations, green_at,
               green_iteration - sprint_started + 1 AS iterations_to_green
        FROM counted WHERE contract_id IS NOT NULL AND criterion IS NOT NULL
        ORDER BY sprint, contract_id, criterion""", categorical=True)  # grouped again by the report and its page
    table["iterations_to_green"] = table["iterations_to_green"].astype("Float64")
    return table


def criterion_time_to_green(evals: Evals, *, greens: pd.DataFrame | None = None) -> pd.DataFrame:
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
