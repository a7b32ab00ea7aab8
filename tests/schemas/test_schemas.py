import json

import pytest

from sprintflow.errors import DocumentError, TransitionError
from sprintflow.schemas import ContractStatus, EvalResult, SprintContract, load_document
from sprintflow.schemas.validation import KINDS, SCHEMA_DIR, generated_schema, validate_data

SEED_CONTRACT = {
    "contractId": "sprint-spec-20260326-user-auth-1", "specId": "spec-20260326-user-auth", "sprintNumber": 1,
    "title": "Implement user registration", "description": "Registration end to end.", "status": "proposed",
    "createdAt": "2026-03-26T10:00:00Z", "updatedAt": "2026-03-26T10:00:00Z", "completedAt": None,
    "dependsOn": [], "features": ["feat-1"],
    "successCriteria": [
        {"criterionId": "sc-1-1", "description": "The project builds with zero errors.",
         "verificationMethod": "build", "required": True},
        {"criterionId": "sc-1-2", "description": "POST /api/auth/register returns 201.",
         "verificationMethod": "api-check", "required": True},
    ],
    "generatorNotes": "n", "evaluatorNotes": "e", "estimatedFiles": ["src/a.ts"],
    "estimatedDuration": "medium", "iterationHistory": [], "lastEvalId": None,
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_committed_schema_files_match_the_models(kind):
    committed = json.loads((SCHEMA_DIR / f"{kind}.schema.json").read_text())
    assert committed == generated_schema(kind), "run `python -m sprintflow.schemas` to regenerate"


def test_seed_contract_round_trips_with_camel_case_names():
    contract = SprintContract.model_validate(SEED_CONTRACT)
    assert contract.success_criteria[1].verification_method.value == "api-check"
    dumped = contract.to_dict()
    assert dumped["contractId"] == SEED_CONTRACT["contractId"]
    assert set(SEED_CONTRACT) <= set(dumped)


def test_unknown_fields_from_other_tools_are_kept():
    data = dict(SEED_CONTRACT, boberExtra={"x": 1})
    assert SprintContract.model_validate(data).to_dict()["boberExtra"] == {"x": 1}


def test_status_machine_allows_the_seed_transitions_only():
    contract = SprintContract.model_validate(SEED_CONTRACT)
    with pytest.raises(TransitionError, match="proposed to completed"):
        contract.transition(ContractStatus.completed)
    contract.transition(ContractStatus.in_progress)
    contract.transition(ContractStatus.needs_rework)
    contract.transition(ContractStatus.in_progress)
    contract.transition(ContractStatus.completed)
    assert contract.completed_at == contract.updated_at
    with pytest.raises(TransitionError):
        contract.transition(ContractStatus.in_progress)


def test_schema_problems_name_the_json_path():
    bad = json.loads(json.dumps(SEED_CONTRACT))
    bad["successCriteria"][1]["verificationMethod"] = "vibes"
    del bad["title"]
    problems = validate_data(bad, "contract", "c.json")
    paths = {p.path for p in problems}
    assert "successCriteria/1/verificationMethod" in paths
    assert "$" in paths and any("'title' is a required property" in p.message for p in problems)


def test_rules_catch_ids_missing_build_and_vague_wording():
    bad = json.loads(json.dumps(SEED_CONTRACT))
    bad["contractId"] = "sprint-x"
    bad["successCriteria"] = [{"criterionId": "sc-2-0", "description": "The page looks good.",
                               "verificationMethod": "manual", "required": True}]
    messages = [str(p) for p in validate_data(bad, "contract", "c.json")]
    assert any("contractId" in m and "sprint-spec-20260326-user-auth-1" in m for m in messages)
    assert any("sc-1-<n>" in m for m in messages)
    assert any("needs at least one build criterion" in m for m in messages)
    assert any("vague criterion ('looks good')" in m for m in messages)


def test_load_document_reports_invalid_json_with_line(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{\n  "contractId": "x",\n  oops\n}')
    with pytest.raises(DocumentError, match=r"c.json: invalid JSON at line 3 column 3"):
        load_document(path, SprintContract)


def test_eval_result_schema_accepts_seed_example_shape():
    data = {
        "evalId": "eval-sprint-s-1-1", "contractId": "sprint-s-1", "specId": "s", "timestamp": "2026-01-01T00:00:00Z",
        "iteration": 1, "overallResult": "fail",
        "score": {"criteriaTotal": 1, "criteriaPassed": 0, "criteriaFailed": 1, "criteriaSkipped": 0,
                  "requiredPassed": 0, "requiredFailed": 1, "requiredTotal": 1},
        "strategyResults": [{"strategy": "build", "required": True, "result": "fail", "exitCode": 1,
                             "output": "x", "errorCount": 1, "details": "d"}],
        "criteriaResults": [], "regressions": [],
        "generatorFeedback": [{"priority": "critical", "category": "bug", "file": "a.ts", "line": None,
                               "description": "d", "expected": "e", "reproduction": "r"}],
        "summary": "s",
    }
    assert validate_data(data, "eval-result", "e.json") == []
    assert EvalResult.model_validate(data).generator_feedback[0].line is None
