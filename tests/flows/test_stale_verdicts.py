"""A verdict belongs to the tree it judged: a new sprint run never trusts an old run's iterations."""

from __future__ import annotations

import json
import sys

from sprintflow.flows.sprint import sprint_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult
from tests.fixtures.evals import eval_path
from tests.redteam.test_cheats import CHEATER
from tests.redteam.victims import CONTRACT_ID, python_victim


def _contract(workspace):
    return workspace / ".sprintflow" / "contracts" / f"{CONTRACT_ID}.json"


def test_a_completed_contract_reset_with_its_bug_back_is_judged_again(prefect_harness, tmp_path):
    workspace = python_victim(tmp_path / "ws")
    buggy = (workspace / "src/calc/__init__.py").read_text()
    assert run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} honest")[CONTRACT_ID] == \
        "completed"
    # A new user resets the contract and the code, and runs the sprint again with an engine that does nothing.
    contract = json.loads(_contract(workspace).read_text())
    _contract(workspace).write_text(json.dumps({**contract, "status": "proposed"}))
    (workspace / "src/calc/__init__.py").write_text(buggy)
    outcomes = run_flow(sprint_flow, str(workspace), engine="cat > /dev/null")
    assert outcomes[CONTRACT_ID] == "needs-rework"
    history = json.loads(_contract(workspace).read_text())["iterationHistory"]
    assert [(r["iteration"], r["result"]) for r in history] == [(1, "pass"), (2, "fail")]
    assert history[0]["pinId"] != history[1]["pinId"]
    second = eval_path(workspace, CONTRACT_ID, 2)
    judged = EvalResult.model_validate_json(second.read_text())
    assert judged.judged is not None and judged.judged.pin_id == history[1]["pinId"]


def test_restart_forgets_a_killed_sprints_pin_and_judges_anew(prefect_harness, tmp_path):
    from sprintflow.sprint.pin import pin_judge

    workspace = python_victim(tmp_path / "ws")
    killed = pin_judge(workspace)  # as a sprint killed after it started leaves it
    (workspace / "README.md").write_text("changed since the pin\n")
    run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} honest", restart=True)
    history = json.loads(_contract(workspace).read_text())["iterationHistory"]
    assert history[-1]["result"] == "pass" and history[-1]["pinId"] != killed.baseline.pin_id
