"""The history rows every analytics function reads: the ``evals`` columns, the rows of one kind, engine names."""

from __future__ import annotations

import pandas as pd

from sprintflow.history.sprints import sprint_ids

__all__ = [
    "REPORT_COLUMNS",
    "UNKNOWN_ENGINE",
]

REPORT_COLUMNS = ["kind", "workspace", "sprint_run", "run_id", "eval_id", "spec_id", "contract_id", "iteration", "name",
                  "method", "required", "result",
                  "cached", "regressions", "timestamp", "workspace_hash", "tokens", "cost_usd", "engine",
                  "executor", "test_run", "mutants", "kill_rate", "tester_kill_rate"]
"""The ``evals`` columns these functions read: load only these for a big history."""

UNKNOWN_ENGINE = "(not reported)"
"""The engine of evaluations whose generator step named none (evaluated by hand, or before it was recorded)."""


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


def _first_evaluations(evals: pd.DataFrame) -> pd.DataFrame:
    """Each sprint's first evaluation (earliest timestamp, then lowest iteration)."""
    rows = _kind(evals, "evaluation", "sprint", "contract_id", "iteration", "result", "timestamp")
    rows = rows.sort_values(["timestamp", "iteration"], kind="stable")
    return rows.drop_duplicates("sprint", keep="first")


def _engine_names(values: pd.Series) -> pd.Series:
    named = values.astype(object)
    return named.where(named.notna(), UNKNOWN_ENGINE)
