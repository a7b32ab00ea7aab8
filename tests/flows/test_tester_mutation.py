"""The tester's tests are graded by the mutation check of the generator's change: its kill rate per sprint."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sprintflow.flows.sprint import sprint_flow
from sprintflow.history.dataset import EVALS, read_table
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult
from tests.fixtures.evals import eval_path
from tests.redteam.victims import CONTRACT_ID, python_victim

CHEATER = Path(__file__).resolve().parents[1] / "redteam" / "cheater.py"
TESTER = Path(__file__).resolve().parents[1] / "fixtures" / "sprint" / "add_tester.py"


@pytest.mark.parametrize("checks, killed", [("assert", True), ("call", False)], ids=["asserting-tester", "lazy-tester"])
def test_the_testers_kill_rate_is_in_the_eval_result_and_the_history(prefect_harness, tmp_path, checks, killed):
    workspace = python_victim(tmp_path / "ws")
    with (workspace / "sprintflow.toml").open("a") as config:
        config.write(f'\n[engines]\ntester = "{sys.executable} {TESTER} {checks}"\n\n[tester]\n'
                     f'command = "{sys.executable} -m pytest -q -p no:cacheprovider --junitxml={{report}} '
                     '{testsDir}"\n')

    outcomes = run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} honest", executor="local")

    # A grade of the tester, not a verdict on the generator: the honest fix completes either way.
    assert outcomes == {CONTRACT_ID: "completed"}
    result = EvalResult.model_validate_json(
        eval_path(workspace, CONTRACT_ID, 1).read_text())
    graded = result.tester_mutation
    assert graded is not None and graded.status == "measured" and graded.tool.startswith("cosmic-ray")
    assert [f.function for f in graded.functions] == ["add"]
    assert (graded.killed > 0) is killed and graded.kill_rate == round(graded.killed / graded.mutants, 4)
    rows = read_table(workspace / ".sprintflow/history", EVALS)
    evaluation = rows[rows["kind"] == "evaluation"].iloc[-1]
    assert evaluation["tester_kill_rate"] == graded.kill_rate
    unit = rows[(rows["kind"] == "strategy") & (rows["name"] == "unit-test")].iloc[-1]
    assert unit["mutants"] >= 1 and 0 < unit["kill_rate"] <= 1  # the project's own tests kill add's mutants
