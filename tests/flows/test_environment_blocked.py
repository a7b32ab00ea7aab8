"""A broken environment stops the contract as blocked, without spending a generator iteration on it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sprintflow.flows.sprint import sprint_flow
from sprintflow.orchestration.runs import run_flow
from tests.fixtures.evals import eval_path
from tests.redteam.victims import CONTRACT_ID, python_victim

CHEATER = Path(__file__).resolve().parents[1] / "redteam" / "cheater.py"


def test_a_missing_tool_blocks_the_contract_and_the_iteration_is_judged_again_later(prefect_harness, tmp_path):
    workspace = python_victim(tmp_path / "ws")
    config = workspace / "sprintflow.toml"
    working = config.read_text()
    config.write_text(working.replace('command = "python3 -m pytest', 'command = "pytest-not-installed'))
    engine = f"{sys.executable} {CHEATER} honest"

    outcomes = run_flow(sprint_flow, str(workspace), engine=engine)
    contract = json.loads((workspace / ".sprintflow/contracts" / f"{CONTRACT_ID}.json").read_text())
    assert outcomes[CONTRACT_ID] == "blocked"
    assert contract["status"] == "in-progress" and contract["iterationHistory"] == []
    result = json.loads(eval_path(workspace, CONTRACT_ID, 1).read_text())
    environment = [f for f in result["generatorFeedback"] if f["category"] == "environment"]
    assert environment and "pytest-not-installed" in environment[0]["description"]

    config.write_text(working)  # the environment is fixed
    journal = workspace / ".sprintflow/runs/sprint" / CONTRACT_ID / "iteration-1.json"
    generated = journal.stat().st_mtime_ns
    outcomes = run_flow(sprint_flow, str(workspace), engine=engine)
    assert outcomes[CONTRACT_ID] == "completed"
    assert journal.stat().st_mtime_ns == generated  # the generator step was not run again
    contract = json.loads((workspace / ".sprintflow/contracts" / f"{CONTRACT_ID}.json").read_text())
    assert [r["iteration"] for r in contract["iterationHistory"]] == [1]
