"""Per-test history from a plain ``pytest -q`` run: its summary lines name the tests, for real evaluations."""

from __future__ import annotations

import json
from pathlib import Path

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.history.sources import load_history
from sprintflow.orchestration.runs import run_flow
from sprintflow.reporting import analytics as r
from sprintflow.reporting.report import build_report

CONTRACT = "sprint-spec-calc-1"
TESTS = '''from calc import add


def test_add():
    assert add(2, 2) == 4


def test_add_negative():
    assert add(-1, -1) == -2
'''


def _workspace(root: Path) -> Path:
    (root / ".sprintflow" / "contracts").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TESTS)
    (root / "calc.py").write_text("def add(a, b):\n    return a + b if a > 0 else 0\n")
    # No format and no report file: the unit-test strategy reads pytest's own terminal output.
    (root / "sprintflow.toml").write_text('[[evaluator.strategies]]\ntype = "unit-test"\n'
                                          'command = "python3 -m pytest -q -p no:cacheprovider tests"\n')
    contract = {
        "contractId": CONTRACT, "specId": "spec-calc", "sprintNumber": 1, "title": "Add", "description": "Add.",
        "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        "dependsOn": [], "features": [], "generatorNotes": "n", "evaluatorNotes": "e",
        "successCriteria": [{"criterionId": "sc-1-1", "description": "Adding works.",
                             "verificationMethod": "unit-test", "required": True}],
        "estimatedFiles": ["calc.py"], "estimatedDuration": "small", "iterationHistory": []}
    (root / ".sprintflow" / "contracts" / f"{CONTRACT}.json").write_text(json.dumps(contract))
    return root


def test_plain_pytest_output_gives_each_test_its_history_flips_and_bugs(prefect_harness, tmp_path):
    workspace = _workspace(tmp_path / "calc")
    contract = str(workspace / ".sprintflow" / "contracts" / f"{CONTRACT}.json")
    assert run_flow(evaluate_flow, str(workspace), contract, executor="local").overall_result == "fail"
    (workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert run_flow(evaluate_flow, str(workspace), contract, executor="local").overall_result == "pass"

    history = load_history(workspace)
    failing = "tests/test_calc.py::test_add_negative"
    assert failing in set(history.tests["test"])
    linked = history.evals[(history.evals["kind"] == "strategy") & history.evals["test_run"].notna()]
    assert len(linked) == 2  # both evaluations' runs are kept and linked to their strategy rows
    per_test = r.test_history(history.tests, history.bugs).set_index("test")
    assert per_test.loc[failing, ["failed", "bugs_opened"]].tolist() == [1, 1]
    # `pytest -q` names the tests that failed (its summary lines), not those that passed: the passing run
    # counts 2 passed tests but cannot say which, so the bug stays open until a run names the test passing.
    assert per_test.loc[failing, "bugs_open_now"] == 1 and per_test.loc[failing, "last_passed"] == False  # noqa: E712
    report = build_report(history, workspace=str(workspace))
    assert failing in set(report.tables["test-history"]["test"])
    assert failing in set(report.tables["test-outcomes"]["test"])
