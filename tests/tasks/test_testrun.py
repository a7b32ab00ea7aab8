import json

import pytest
from pydantic import ValidationError
from sprintflow.schemas.testrun import TestRun


def test_result_json_uses_the_seeds_snake_case_names_and_round_trips():
    run = TestRun.model_validate({
        "run_id": "run-20260513-1031", "loop": "L1", "ok": True,
        "summary": {"total": 5, "passed": 4, "failed": 1},
        "failures": [{"test": "缺 body title → 400", "expected": 400, "got": 500,
                      "stack": "TypeError: ...", "hint": "先做存在性判断", "bug_id": "bug-1"}],
        "next_action": "retry_coder", "acceptance_coverage": 1.0, "duration_ms": 1245,
    })
    data = json.loads(run.to_json())
    assert data["ok"] is False  # derived from the summary, never trusted from the file
    assert list(data).count("ok") == 1
    assert data["loop"] == "L1"  # fields of other tools survive
    assert data["summary"] == {"total": 5, "passed": 4, "failed": 1, "skipped": 0}
    assert data["failures"][0]["got"] == 500 and data["next_action"] == "retry_coder"
    assert TestRun.model_validate(data).to_dict() == data


@pytest.mark.parametrize("bad", [
    {"failures": [{"test": "t", "hint": ""}]},
    {"acceptance_coverage": 1.5},
    {"next_action": "retry_everyone"},
])
def test_invalid_results_are_rejected(bad):
    with pytest.raises(ValidationError):
        TestRun.model_validate({"run_id": "r", "next_action": "done", **bad})
