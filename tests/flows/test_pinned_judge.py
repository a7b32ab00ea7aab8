"""The pinned judge: a sprint is judged by the configuration it started with, whatever the generator writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sprintflow.flows.sprint import sprint_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult
from tests.fixtures.evals import eval_path
from tests.redteam.victims import CONTRACT_ID, python_victim

CHEATER = Path(__file__).resolve().parents[1] / "redteam" / "cheater.py"


def test_a_config_the_contract_lets_the_generator_change_still_judges_by_the_pin(prefect_harness, tmp_path):
    workspace = python_victim(tmp_path / "ws")
    contract = workspace / ".sprintflow/contracts" / f"{CONTRACT_ID}.json"
    data = json.loads(contract.read_text())
    data["estimatedFiles"].append("sprintflow.toml")  # so the guard keeps the edit, for a reviewer
    contract.write_text(json.dumps(data))
    outcomes = run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} config_commands")
    evaluation = eval_path(workspace, CONTRACT_ID, 1)
    result = EvalResult.model_validate_json(evaluation.read_text())
    assert outcomes[CONTRACT_ID] == "needs-rework"
    assert 'command = "true"' in (workspace / "sprintflow.toml").read_text()  # kept, as the contract allowed
    unit = next(s for s in result.strategy_results if s.strategy == "unit-test")
    assert unit.result.value == "fail" and "2 tests: 1 passed, 1 failed" in unit.details  # the pinned command ran
    assert any("sprintflow.toml decides how the code is judged" in item.description and "true" in item.description
               for item in result.generator_feedback)
    assert not (workspace / ".sprintflow/pin.json").exists()  # the finished sprint released its pin


def test_a_killed_sprint_resumes_with_its_pin(prefect_harness, tmp_path):
    from sprintflow.sprint.pin import pin_judge

    workspace = python_victim(tmp_path / "ws")
    pin_judge(workspace)  # as a sprint killed after it started leaves it
    (workspace / "sprintflow.toml").write_text(
        (workspace / "sprintflow.toml").read_text().replace("--junitxml", "--co --junitxml"))
    run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} honest")
    result = EvalResult.model_validate_json(
        eval_path(workspace, CONTRACT_ID, 1).read_text())
    unit = next(s for s in result.strategy_results if s.strategy == "unit-test")
    assert unit.result.value == "pass" and "2 passed" in unit.details  # the pinned command ran the tests
    # An edit after the pin is part of the change the sprint judges: not judged, and undone.
    assert any("sprintflow.toml (modified)" in item.description for item in result.generator_feedback
               if item.priority.value == "critical")
    assert "--co" not in (workspace / "sprintflow.toml").read_text()
