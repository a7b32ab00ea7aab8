import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sprintflow.cli import cli

REPORTS = Path(__file__).resolve().parent.parent / "fixtures" / "reports"
CONTRACT = (Path(__file__).resolve().parent.parent.parent
            / "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json")


def invoke(*args):
    return CliRunner().invoke(cli, ["testrun", "parse", *args], catch_exceptions=False)


def test_failures_print_the_test_run_and_exit_1():
    result = invoke(str(REPORTS / "vitest/3.2.7.json"), "--format", "vitest",
                    "--root", "/tmp/sfrec/vitest3", "--run-id", "run-1")
    assert result.exit_code == 1
    run = json.loads(result.stdout)
    assert run["run_id"] == "run-1" and run["next_action"] == "retry_coder"
    assert run["summary"] == {"total": 8, "passed": 1, "failed": 6, "skipped": 1}
    assert run["failures"][0]["file"] == "tests/api.test.js" and run["failures"][0]["hint"]


def test_a_green_report_exits_0_with_coverage_and_chinese_hints():
    result = invoke(str(REPORTS / "junit/pytest-9.0.3-pass.xml"), "--format", "junit",
                    "--contract", str(CONTRACT), "--lang", "zh")
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["ok"] and run["next_action"] == "done" and run["run_id"].startswith("run-")
    assert run["acceptance_coverage"] == 0.0 and len(run["uncovered_criteria"]) == 9


def test_a_report_that_is_not_the_format_is_a_crashed_run_exit_3_with_the_reason(tmp_path):
    report = tmp_path / "raw.json"
    report.write_text("<testsuite/>")
    result = invoke(str(report), "--format", "vitest")
    assert result.exit_code == 3
    assert json.loads(result.stdout)["next_action"] == "retry_tester"
    assert f"error: {report}: invalid vitest report" in result.stderr


def test_a_missing_report_or_contract_exits_2_without_a_traceback(tmp_path):
    missing = subprocess.run([sys.executable, "-m", "sprintflow", "testrun", "parse",
                              str(tmp_path / "raw.json"), "--format", "jest"],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == f"error: {tmp_path / 'raw.json'}: no such report file\n"
    bad_contract = invoke(str(REPORTS / "jest/30.5.2.json"), "--format", "jest",
                          "--contract", str(tmp_path / "nope.json"))
    assert bad_contract.exit_code == 2 and "file not found" in bad_contract.stderr
