"""What a build writes is seen only by what runs on it, at the path the build wrote it; nothing
sprintflow keeps for itself is seen by any strategy or named by any result, first run or cached."""

from __future__ import annotations

import json
import sys

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.orchestration.runs import run_flow

CONTRACT = {
    "contractId": "sprint-b-1", "specId": "b", "sprintNumber": 1, "title": "t", "description": "d",
    "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
    "generatorNotes": "", "evaluatorNotes": "", "estimatedDuration": "small",
    "successCriteria": [
        {"criterionId": "sc-1-1", "description": "It builds.", "verificationMethod": "build", "required": True},
        {"criterionId": "sc-1-2", "description": "It lints.", "verificationMethod": "lint", "required": True},
        {"criterionId": "sc-1-3", "description": "The build's output is served.", "verificationMethod": "custom",
         "customCommand": "test -f dist/app.py && grep -q generated dist/app.py", "required": True}]}
# The "linter" fails on any file it is not meant to read: build output, or sprintflow's own state.
LINT = """found=$(find . -type f | grep -E '^[.]/(dist|[.]sprintflow)/')
test -z "$found" || { echo "$found"; exit 1; }
"""


def test_build_output_is_stacked_only_under_what_needs_it_first_and_cached(prefect_harness, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    (workspace / "lint.sh").write_text(LINT)
    (workspace / "sprintflow.toml").write_text(
        '[[evaluator.strategies]]\ntype = "build"\ncommand = "mkdir -p dist && echo \'# generated\' > dist/app.py"\n'
        '\n[[evaluator.strategies]]\ntype = "lint"\ncommand = "sh lint.sh"\n'
        f'\n[[evaluator.strategies]]\ntype = "unit-test"\ncommand = "{sys.executable} -m pytest -q tests"\n')
    (workspace / "tests").mkdir()
    (workspace / "tests" / "test_app.py").write_text("def test_fails():\n    assert 1 == 2\n")
    (workspace / "contract.json").write_text(json.dumps(CONTRACT))
    for run in ("first", "cached"):
        result = run_flow(evaluate_flow, str(workspace), str(workspace / "contract.json"), executor="local",
                          use_cache=True)
        by_name = {s.strategy: s for s in result.strategy_results}
        assert by_name["build"].cached is (run == "cached")
        assert by_name["lint"].result.value == "pass", (run, by_name["lint"].output)
        assert [c.result.value for c in result.criteria_results] == ["pass"] * 3, run
        assert by_name["unit-test"].result.value == "fail"  # its details name the TestRun it recorded
        text = result.to_json()
        assert ".sprintflow/" not in text and "/view-" not in text, run
