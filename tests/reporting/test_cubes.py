"""The page's cubes against answers worked out by hand from a small history with its gaps."""

import pandas as pd
import pytest

from sprintflow.history.query import EvalTable
from sprintflow.history.sources import History
from sprintflow.reporting import analytics as r
from sprintflow.reporting.explore.cubes import NEVER, OTHER_CONTRACTS, UNKNOWN_EXECUTOR, _activity, _greens, _in_buckets
from sprintflow.reporting.explore.page import build_page_data

AT = pd.Timestamp("2026-03-02 10:00", tz="UTC")
HOUR = pd.Timedelta(hours=1)
NAMED = {"a"}  # b is one of the other contracts
OTHER, NO_ENGINE = OTHER_CONTRACTS, r.UNKNOWN_ENGINE


def _rows(contract, iteration, at, result, criteria, engine=None, executor=None):
    base = {"workspace": "/w", "contract_id": contract, "iteration": iteration, "timestamp": at,
            "eval_id": f"{contract}-{iteration}"}
    return [{**base, "kind": "evaluation", "result": result, "engine": engine, "executor": executor},
            *({**base, "kind": "criterion", "name": name, "result": outcome} for name, outcome in criteria.items())]


@pytest.fixture(scope="module")
def history():
    """The table, its time to green and its criteria in their contracts' buckets."""
    table = EvalTable.of(pd.DataFrame([
        # a: red, then green two hours later; sc-1 goes green with it, sc-2 was green from the start. Only the
        # first evaluation names its engine and executor: the sprint's figures are filed under them.
        *_rows("a", 1, AT, "fail", {"sc-1": "fail", "sc-2": "pass"}, engine="codex", executor="docker"),
        *_rows("a", 2, AT + 2 * HOUR, "pass", {"sc-1": "pass", "sc-2": "pass"}),
        # b: the next day, never green, and its first evaluation names no engine and no executor.
        *_rows("b", 1, AT + 24 * HOUR, "fail", {"sc-1": "fail"}),
        # c: no timestamp, so no day to file it under.
        *_rows("c", 1, pd.NaT, "pass", {"sc-1": "pass"}, engine="codex", executor="local"),
    ]))
    return table, r.time_to_green(table), _in_buckets(r.criterion_greens(table), NAMED)


def _tuples(cube: pd.DataFrame) -> set[tuple]:
    rows = {tuple(row) for row in cube.itertuples(index=False)}
    assert len(rows) == len(cube)  # nothing counted twice
    return rows


def test_the_greens_cube_files_each_sprint_and_criterion_once_under_its_first_evaluation(history):
    table, to_green, criteria = history
    cube = _greens(table, to_green, criteria, NAMED)
    assert list(cube.columns) == ["day", "level", "name", "contract", "engine", "executor", "iterations", "items",
                                  "hours"]
    assert _tuples(cube) == {
        ("2026-03-02", "contract", "", "a", "codex", "docker", 2, 1, 2.0),
        ("2026-03-02", "criterion", "sc-1", "a", "codex", "docker", 2, 1, 2.0),
        ("2026-03-02", "criterion", "sc-2", "a", "codex", "docker", 1, 1, 0.0),
        ("2026-03-03", "contract", "", OTHER, NO_ENGINE, UNKNOWN_EXECUTOR, NEVER, 1, 0.0),
        ("2026-03-03", "criterion", "sc-1", OTHER, NO_ENGINE, UNKNOWN_EXECUTOR, NEVER, 1, 0.0),
    }


def test_the_activity_cube_counts_evaluations_under_their_own_engine_and_sprints_under_their_first(history):
    table, _, criteria = history
    cube = _activity(table, criteria, NAMED)
    assert list(cube.columns) == ["day", "contract", "engine", "executor", "evaluations", "tokens", "cost",
                                  "costed", "regressions", "sprints", "criteria_green"]
    assert _tuples(cube) == {
        ("2026-03-02", "a", "codex", "docker", 1, 0, 0.0, 0, 0, 1, 2),
        ("2026-03-02", "a", NO_ENGINE, UNKNOWN_EXECUTOR, 1, 0, 0.0, 0, 0, 0, 0),
        ("2026-03-03", OTHER, NO_ENGINE, UNKNOWN_EXECUTOR, 1, 0, 0.0, 0, 0, 1, 0),
    }


def test_a_contract_named_like_the_other_contracts_bucket_is_filed_in_it_not_listed_twice():
    # A hostile (or unlucky) contract id: the page's own name for the contracts not picked one by one.
    frame = pd.DataFrame([*_rows("a", 1, AT, "pass", {"sc-1": "pass"}, engine="codex"),
                          *_rows(OTHER, 1, AT + HOUR, "fail", {"sc-1": "fail"}, engine="codex")])
    page = build_page_data(History(evals=frame))
    assert page.options["contract"] == ["a", OTHER]
    assert set(page.greens["contract"]) == set(page.activity["contract"]) == {"a", OTHER}
    assert page.totals["evaluations"] == 2 and page.activity["evaluations"].sum() == 2
