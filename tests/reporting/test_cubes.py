"""The page's cubes against answers worked out by hand from a small history with its gaps."""

import pandas as pd

from sprintflow.history.query import EvalTable
from sprintflow.reporting import analytics as r
from sprintflow.reporting.explore.cubes import NEVER, OTHER_CONTRACTS, UNKNOWN_EXECUTOR, _first_of_sprints, _greens

AT = pd.Timestamp("2026-03-02 10:00", tz="UTC")
HOUR = pd.Timedelta(hours=1)


def _rows(contract, iteration, at, result, criteria, engine=None, executor=None):
    base = {"workspace": "/w", "contract_id": contract, "iteration": iteration, "timestamp": at,
            "eval_id": f"{contract}-{iteration}"}
    return [{**base, "kind": "evaluation", "result": result, "engine": engine, "executor": executor},
            *({**base, "kind": "criterion", "name": name, "result": outcome} for name, outcome in criteria.items())]


def test_the_greens_cube_files_each_sprint_and_criterion_once_under_its_first_evaluation():
    frame = pd.DataFrame([
        # a: red, then green two hours later; sc-1 goes green with it, sc-2 was green from the start.
        *_rows("a", 1, AT, "fail", {"sc-1": "fail", "sc-2": "pass"}, engine="codex", executor="docker"),
        *_rows("a", 2, AT + 2 * HOUR, "pass", {"sc-1": "pass", "sc-2": "pass"}),
        # b: the next day, never green, and its first evaluation names no engine and no executor.
        *_rows("b", 1, AT + 24 * HOUR, "fail", {"sc-1": "fail"}),
        # c: no timestamp, so no day to file it under.
        *_rows("c", 1, pd.NaT, "pass", {"sc-1": "pass"}, engine="codex", executor="local"),
    ])
    table = EvalTable.of(frame)
    named = {"a"}  # b is one of the other contracts
    cube = _greens(table, r.time_to_green(table), r.criterion_greens(table), _first_of_sprints(table, named), named)

    got = {tuple(row) for row in cube[["day", "level", "name", "contract", "engine", "executor", "iterations",
                                       "items", "hours"]].itertuples(index=False)}
    assert got == {
        ("2026-03-02", "contract", "", "a", "codex", "docker", 2, 1, 2.0),
        ("2026-03-02", "criterion", "sc-1", "a", "codex", "docker", 2, 1, 2.0),
        ("2026-03-02", "criterion", "sc-2", "a", "codex", "docker", 1, 1, 0.0),
        ("2026-03-03", "contract", "", OTHER_CONTRACTS, r.UNKNOWN_ENGINE, UNKNOWN_EXECUTOR, NEVER, 1, 0.0),
        ("2026-03-03", "criterion", "sc-1", OTHER_CONTRACTS, r.UNKNOWN_ENGINE, UNKNOWN_EXECUTOR, NEVER, 1, 0.0),
    }
    assert len(cube) == len(got)  # a row per combination of keys
