"""The tester role inside the sprint loop, for real under the session's Prefect test harness."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sprintflow.flows.sprint import sprint_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult, SprintContract, load_document
from tests.fixtures.evals import eval_path
from tests.fixtures.sprint.make_workspace import ENGINE, TESTER, make_workspace

TESTER_CONFIG = f'''
[engines]
tester = "{sys.executable} {TESTER}"

[tester]
command = "{sys.executable} -m pytest -q -p no:cacheprovider --disable-plugin-autoload --junitxml={{report}} {{testsDir}}"
'''


def _journal(workspace: Path, contract: str, iteration: int) -> dict:
    path = workspace / ".sprintflow/runs/sprint" / contract / f"iteration-{iteration}.json"
    return json.loads(path.read_text())


def _iteration(workspace: Path, contract_id: str, iteration: int) -> EvalResult:
    return EvalResult.model_validate_json(eval_path(workspace, contract_id, iteration).read_text())


def _eval(workspace: Path, eval_id: str) -> EvalResult:
    return EvalResult.model_validate_json((workspace / ".sprintflow/evals" / f"{eval_id}.json").read_text())


def test_the_tester_resumes_retries_and_guards_its_tests_from_the_generator(prefect_harness, tmp_path):
    tiny = make_workspace(tmp_path / "tiny")
    with (tiny / "sprintflow.toml").open("a") as handle:
        handle.write(TESTER_CONFIG)
    # A run killed during iteration 1's tester step: the generator's entry is there, the tester's
    # only started. The resumed step keeps its run id.
    (tiny / "state.txt").write_text("1")
    started = {"ok": True, "reason": None, "tampered": [], "unexpected": [], "changed": ["state.txt"],
               "tester": {"status": "started", "mode": "test", "runId": "run-20260101-000000-tester"}}
    # A finished generator step is trusted for the revision of the contract it was made for.
    contract = load_document(tiny / ".sprintflow/contracts/sprint-spec-tiny-1.json", SprintContract)
    started["contractRevision"] = contract.revision()
    journal = tiny / ".sprintflow/runs/sprint/sprint-spec-tiny-1/iteration-1.json"
    journal.parent.mkdir(parents=True)
    journal.write_text(json.dumps(started))
    # In contract 2's first iteration the generator also tries to delete and weaken the tester's tests
    # (hidden from it: the folder it sees is empty, and what it writes there is thrown away).
    weakening = (f"python3 {ENGINE} && if [ $SPRINTFLOW_CONTRACT_ID-$SPRINTFLOW_ITERATION = "
                 "sprint-spec-tiny-2-1 ]; then rm -rf tests/sprintflow/*; "
                 "echo 'def test_ok(): pass' > tests/sprintflow/test_sprint_spec_tiny_1.py; fi")

    outcomes = run_flow(sprint_flow, str(tiny), engine=weakening, executor="local", max_iterations=3)

    assert outcomes == {"sprint-spec-tiny-1": "completed", "sprint-spec-tiny-2": "completed"}
    first, second = _journal(tiny, "sprint-spec-tiny-1", 1), _journal(tiny, "sprint-spec-tiny-1", 2)
    assert first["tester"]["mode"] == "resume" and first["tester"]["runId"] == started["tester"]["runId"]
    assert first["tester"]["failures"][0]["test"].endswith("[sc-1-2]") and not first["tester"]["ok"]
    assert second["tester"]["mode"] == "retry" and second["tester"]["ok"]
    other = _journal(tiny, "sprint-spec-tiny-2", 1)
    assert other["tester"]["mode"] == "test"
    assert other["hiddenWrites"] == ["tests/sprintflow/test_sprint_spec_tiny_1.py"]
    assert "def test_ok" not in (tiny / "tests/sprintflow/test_sprint_spec_tiny_1.py").read_text()

    failed = _iteration(tiny, "sprint-spec-tiny-1", 1)
    assert any("[sc-1-2] fails. Hint:" in f.description for f in failed.generator_feedback)
    # The generator's tampering with the tests changed nothing and blocked its iteration.
    tampered = _iteration(tiny, "sprint-spec-tiny-2", 1)
    assert tampered.overall_result == "fail"
    assert any("tests/sprintflow/test_sprint_spec_tiny_1.py" in f.description and f.priority.value == "critical"
               for f in tampered.generator_feedback)
    bugs = [json.loads(line) for line in (tiny / ".sprintflow/bugs.ndjson").read_text().splitlines()]
    assert bugs[-1]["status"] == "fixed" and bugs[-1]["test_name"].endswith("[sc-1-2]")
