import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from sprintflow.errors import InputError, ReportError
from sprintflow.schemas.contract import SprintContract
from sprintflow.schemas.testrun import TestRun
from sprintflow.testruns.testrun import (
    build_test_run,
    declared_status_codes,
    new_run_id,
    record_test_run,
)


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


# --- build_test_run, on reports recorded from real runs -------------------------------------

REPORTS = Path(__file__).resolve().parent.parent / "fixtures" / "reports"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
ROOTS = ["/tmp/sfrec/vitest1", "/tmp/sfrec/vitest3", "/tmp/sfrec/jest30", "/tmp/sfrec/pyproj"]


def recorded(fmt, name):
    return (REPORTS / fmt / name).read_text()


def run_of(text, fmt, **kwargs):
    kwargs.setdefault("exit_code", 1)
    return build_test_run(text, fmt, run_id="run-20260513-1031", roots=ROOTS, **kwargs)


@pytest.mark.parametrize("fmt, name, passed, failed", [
    ("vitest", "1.6.1.json", 1, 6), ("vitest", "3.2.7.json", 1, 6),
    ("jest", "30.5.2.json", 1, 6), ("junit", "pytest-9.0.3.xml", 1, 7),
])
def test_failing_runs_send_the_coder_back_with_a_hint_per_failure(fmt, name, passed, failed):
    run = run_of(recorded(fmt, name), fmt, stdout="FAIL tests/api.test.js", duration_ms=1245)
    assert (run.summary.passed, run.summary.failed) == (passed, failed)
    assert not run.crashed and run.next_action == "retry_coder" and not run.ok
    assert len(run.failures) == failed and all(f.hint and f.stack for f in run.failures)
    assert len(run.passed_tests) == passed
    status = next(f for f in run.failures if f.expected == 404)
    assert status.got == 500 and "return 404" in status.hint  # numbers stay numbers
    assert run.stdout_tail == "FAIL tests/api.test.js" and run.duration_ms == 1245


@pytest.mark.parametrize("fmt, name", [("vitest", "3.2.7-pass.json"), ("junit", "pytest-9.0.3-pass.xml")])
def test_a_green_run_is_done(fmt, name):
    run = run_of(recorded(fmt, name), fmt, exit_code=0)
    assert run.ok and run.next_action == "done" and run.failures == []


def test_a_green_report_from_a_runner_that_exited_non_zero_is_a_crash():
    run = run_of(recorded("vitest", "3.2.7-pass.json"), "vitest", exit_code=1)
    assert run.crashed and run.next_action == "retry_tester" and "exited with code 1" in run.crash_reason


def test_no_report_is_a_crash_showing_what_the_runner_printed():
    run = run_of(None, "vitest", stdout="x" * 10_000, stderr="SyntaxError: Unexpected token")
    assert run.crashed and run.next_action == "retry_tester" and not run.ok
    assert "no vitest report was written (exit code 1)" in run.crash_reason
    assert run.stdout_tail.endswith("SyntaxError: Unexpected token") and len(run.stdout_tail) == 4000


def test_an_unreadable_report_is_a_crash_not_an_exception():
    run = run_of('{"testResults": [{"name": "a.js"', "jest")
    assert run.crashed and run.crash_reason.startswith("invalid jest report: jest report is not valid JSON")


def test_a_timeout_is_a_crash_even_with_a_partial_report():
    run = run_of(recorded("vitest", "3.2.7.json"), "vitest", timed_out=True, duration_ms=60_000)
    assert run.crashed and "deadline after 60000 ms" in run.crash_reason
    assert run.next_action == "retry_tester"


def test_a_report_without_tests_is_a_crash():
    run = run_of('{"testResults": []}', "vitest")
    assert run.crashed and "lists no test" in run.crash_reason


def test_only_suites_that_failed_to_load_is_a_crash_with_the_reason():
    data = json.loads(recorded("vitest", "3.2.7.json"))
    data["testResults"] = [s for s in data["testResults"] if s["name"].endswith("broken.test.js")]
    run = run_of(json.dumps(data), "vitest")
    assert run.crashed and run.next_action == "retry_tester"
    assert run.crash_reason.startswith("vitest could not load tests/broken.test.js: Cannot find module")
    assert "`../src/does-not-exist.js`" in run.failures[0].hint  # the tester still learns why


def test_a_pytest_collection_error_alone_is_a_crash():
    run = run_of(recorded("junit", "pytest-9.0.3-collection-error.xml"), "junit")
    assert run.crashed and "could not load tests/test_broken.py: ModuleNotFoundError" in run.crash_reason


def test_a_suite_that_failed_to_load_next_to_real_failures_is_the_coders_to_fix():
    assert run_of(recorded("junit", "pytest-9.0.3.xml"), "junit").next_action == "retry_coder"


def test_hints_in_chinese():
    run = run_of(recorded("jest", "30.5.2.json"), "jest", language="zh")
    assert any("应返 404 而不是 500" in f.hint for f in run.failures)


def test_unknown_format_is_a_report_error():
    with pytest.raises(ReportError, match="unknown test report format 'tap'"):
        build_test_run("", "tap", run_id="r")


# --- coverage ---------------------------------------------------------------------------------

def jest_report(*titles):
    return json.dumps({"testResults": [{"name": "/w/t.test.js", "status": "passed", "assertionResults": [
        {"fullName": title, "title": title, "status": "passed"} for title in titles]}]})


def test_coverage_of_the_example_contract():
    contract = SprintContract.model_validate_json(
        (EXAMPLES / "python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json").read_text())
    run = build_test_run(jest_report("[sc-1-5] POST /todos returns 201",
                                     "[SC-1-6][sc-1-4] blank title -> 400", "helper works"),
                         "jest", run_id="r", exit_code=0, contract=contract)
    assert run.acceptance_coverage == round(3 / 9, 4)
    assert run.uncovered_criteria == ["sc-1-1", "sc-1-2", "sc-1-3", "sc-1-7", "sc-1-8", "sc-1-9"]
    assert run.contract_coverage == round(2 / 3, 4) and run.uncovered_status_codes == [200]


def test_coverage_is_none_when_nothing_is_declared():
    run = build_test_run(jest_report("a"), "jest", run_id="r", contract={"successCriteria": []})
    assert run.acceptance_coverage is None and run.contract_coverage is None


def test_full_coverage_from_the_seeds_sample():
    contract = {"successCriteria": [
        {"criterionId": "sc-1-1", "description": "创建后能列出 (GET /api/todos → 200)"},
        {"criterionId": "sc-1-2", "description": "空 title 返 400"},
        {"criterionId": "sc-1-3", "description": "200+ 字符 title 返 400"}],
        "apiChecks": [{"path": "/api/todos", "method": "POST", "expectedStatus": 201}]}
    assert declared_status_codes(contract) == [200, 201, 400]
    run = build_test_run(jest_report("[sc-1-1] 创建后能列出 200", "[sc-1-2] 空 title → 400",
                                     "[sc-1-3] 200+ title → 400", "有效 title → 201 + 返 id"),
                         "jest", run_id="r", contract=contract)
    assert run.acceptance_coverage == 1.0 and run.contract_coverage == 1.0


@pytest.mark.parametrize("description, codes", [
    ("POST /api/todos { title } → 201 | 400", [201, 400]),
    ("responds with 404 or 410 when missing", [404, 410]),
    ("titles longer than 200 characters are cut; status code 422", [422]),
    ("The build exits 0 and takes under 300 seconds.", []),
])
def test_status_codes_in_prose(description, codes):
    assert declared_status_codes({"successCriteria": [{"description": description}]}) == codes


def test_new_run_id_has_the_seeds_form():
    assert re.fullmatch(r"run-\d{8}-\d{6}", new_run_id())


def test_a_run_is_recorded_in_its_own_folder(tmp_path):
    run = run_of(recorded("vitest", "3.2.7.json"), "vitest", stdout="out", stderr="err")
    folder = record_test_run(tmp_path, run.run_id, run, "out", "err")
    assert folder == tmp_path / ".sprintflow" / "runs" / "run-20260513-1031"
    assert sorted(p.name for p in folder.iterdir()) == ["result.json", "stderr.txt", "stdout.txt"]
    assert TestRun.model_validate_json((folder / "result.json").read_text()) == run
    assert (folder / "stdout.txt").read_text() == "out" and (folder / "stderr.txt").read_text() == "err"


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "", ".hidden"])
def test_a_run_id_cannot_leave_the_runs_folder(tmp_path, run_id):
    with pytest.raises(InputError, match="cannot be a file name"):
        record_test_run(tmp_path, run_id, TestRun(run_id="r", next_action="done"), "", "")
