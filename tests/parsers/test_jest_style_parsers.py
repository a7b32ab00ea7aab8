"""parse_vitest_json (vitest 1.6.1, 2.1.9, 3.2.7) and parse_jest_json (jest 29.7.0, 30.5.2)."""

import json
from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import TestCounts, parse_jest_json, parse_vitest_json

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
VITEST = [("1.6.1.json", "/tmp/sfrec/vitest1"), ("2.1.9.json", "/tmp/sfrec/vitest2"),
          ("3.2.7.json", "/tmp/sfrec/vitest3")]
JEST = [("29.7.0.json", "/tmp/sfrec/jest29"), ("30.5.2.json", "/tmp/sfrec/jest30"),
        ("30.5.2-colors-location.json", "/tmp/sfrec/jest30")]
# One passed, five failed, one skipped, plus the test file that failed to load.
COUNTS = TestCounts(total=8, passed=1, failed=6, skipped=1)


def read(tool: str, name: str) -> str:
    return (REPORTS / tool / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name, root", VITEST)
def test_vitest_failures_are_located_at_the_failing_assertion(name, root):
    report = parse_vitest_json(read("vitest", name), [root])
    assert report.counts == COUNTS
    assert report.error_count == 6
    assert [(f.test, f.file, f.line, f.column) for f in report.failures[:4]] == [
        ("api returns 404 for a missing page", "tests/api.test.js", 10, 35),
        ("api returns 404 with deep equality", "tests/api.test.js", 14, 35),
        ("api reads the user name", "tests/api.test.js", 19, 17),
        ("api summarizes items", "tests/api.test.js", 23, 47),
    ]
    assert [(f.expected, f.received) for f in report.failures[:4]] == [
        ("404", "500"), ("404", "500"), (None, None),
        ("{ count: 2, ids: [ 1, 2 ] }", "{ count: 2, ids: [ 2, 3 ] }"),
    ]
    assert report.failures[2].message.endswith("Cannot read properties of undefined (reading 'name')")


@pytest.mark.parametrize("name, root", VITEST)
def test_vitest_each_failure_is_also_a_diagnostic(name, root):
    report = parse_vitest_json(read("vitest", name), [root])
    first = report.diagnostics[0]
    assert (first.tool, first.file, first.line, first.column) == ("vitest", "tests/api.test.js", 10, 35)
    assert (first.expected, first.received, first.severity) == ("404", "500", "error")
    assert first.message.startswith("api returns 404 for a missing page: ")
    assert "expected 500 to be 404" in first.message
    assert len(report.diagnostics) == len(report.failures)


@pytest.mark.parametrize("name, root", VITEST)
def test_vitest_suite_that_failed_to_load_is_a_failure(name, root):
    broken = parse_vitest_json(read("vitest", name), [root]).failures[-1]
    assert (broken.test, broken.file) == ("tests/broken.test.js", "tests/broken.test.js")
    assert "does-not-exist.js" in broken.message


def test_vitest_timeouts():
    v1 = parse_vitest_json(read("vitest", "1.6.1.json"), ["/tmp/sfrec/vitest1"]).failures[4]
    assert (v1.test, v1.file, v1.line) == ("api answers in time", "tests/api.test.js", None)
    assert v1.message.startswith("Test timed out in 50ms.")
    # vitest 3.2 loses the timeout text in JSON but its stack still points at the test.
    v3 = parse_vitest_json(read("vitest", "3.2.7.json"), ["/tmp/sfrec/vitest3"]).failures[4]
    assert (v3.file, v3.line, v3.column, v3.message) == (
        "tests/api.test.js", 26, 5, "Error: STACK_TRACE_ERROR")


def test_vitest_1_counts_come_from_the_tests_not_its_miscounted_totals():
    # vitest 1.6.1 writes numPassedTests 2 and numPendingTests 0 for one pass and one skip.
    report = parse_vitest_json(read("vitest", "1.6.1.json"), ["/tmp/sfrec/vitest1"])
    assert (report.counts.passed, report.counts.skipped) == (1, 1)


def test_vitest_passing_run():
    report = parse_vitest_json(read("vitest", "3.2.7-pass.json"), ["/tmp/sfrec/vitest3"])
    assert report.counts == TestCounts(total=7, passed=1, failed=0, skipped=6)
    assert (report.failures, report.diagnostics, report.error_count) == ([], [], 0)


@pytest.mark.parametrize("name, root", JEST)
def test_jest_failures_expected_and_received(name, root):
    report = parse_jest_json(read("jest", name), [root])
    assert report.counts == COUNTS
    found = [(f.test, f.file, f.line, f.column, f.expected, f.received) for f in report.failures]
    assert found == [
        ("api returns 404 for a missing page", "tests/api.test.js", 9, 35, "404", "500"),
        ("api returns 404 with deep equality", "tests/api.test.js", 13, 35, "404", "500"),
        ("api reads the user name", "tests/api.test.js", 18, 17, None, None),
        # A deep-equal diff has no Expected:/Received: line; jest's matcher values fill in.
        ("api summarizes items", "tests/api.test.js", 22, 47,
         '{"count": 2, "ids": [1, 2]}', '{"count": 2, "ids": [2, 3]}'),
        ("api answers in time", "tests/api.test.js", 25, 3, None, None),
        ("tests/broken.test.js", "tests/broken.test.js", 1, 21, None, None),
    ]
    assert {d.tool for d in report.diagnostics} == {"jest"}


@pytest.mark.parametrize("name, root", JEST)
def test_jest_messages_have_no_colour_codes_or_stack(name, root):
    report = parse_jest_json(read("jest", name), [root])
    first = report.failures[0]
    assert first.message == ("Error: expect(received).toBe(expected) // Object.is equality\n\n"
                             "Expected: 404\nReceived: 500")
    assert "\x1b" not in first.stack and "node_modules/jest-circus" in first.stack
    assert all("\x1b" not in d.message for d in report.diagnostics)


@pytest.mark.parametrize("name, root", JEST)
def test_jest_suite_that_failed_to_load(name, root):
    broken = parse_jest_json(read("jest", name), [root]).failures[-1]
    assert broken.message.startswith(
        "Cannot find module '../src/does-not-exist.js' from 'tests/broken.test.js'")
    assert "●" not in broken.message


def test_a_failed_suite_whose_tests_passed_is_a_failure():
    # jest fails the file when an afterAll hook throws, though every test passed.
    text = json.dumps({"testResults": [{
        "name": "/w/tests/a.test.js", "status": "failed",
        "message": "  ● Test suite failed to run\n\n    Error: db still open\n"
                   "      at Object.<anonymous> (tests/a.test.js:7:9)\n",
        "assertionResults": [{"fullName": "a ok", "title": "ok", "status": "passed"}]}]})
    report = parse_jest_json(text, ["/w"])
    assert report.counts == TestCounts(total=2, passed=1, failed=1, skipped=0)
    [f] = report.failures
    assert (f.test, f.file, f.line, f.message) == (
        "tests/a.test.js", "tests/a.test.js", 7, "Error: db still open")


def test_jest_timeout_message():
    timeout = parse_jest_json(read("jest", "29.7.0.json"), ["/tmp/sfrec/jest29"]).failures[4]
    assert timeout.message.startswith('Error: thrown: "Exceeded timeout of 50 ms for a test.')


@pytest.mark.parametrize("parse, tool", [(parse_vitest_json, "vitest"), (parse_jest_json, "jest")])
@pytest.mark.parametrize("text, problem", [
    ("", "is empty"),
    ("FAIL tests/a.test.js", "is not valid JSON"),
    ("[]", "should be a JSON object with a testResults array"),
    ('{"numTotalTests": 1}', "should be a JSON object with a testResults array"),
    ('{"testResults": [{"status": "failed"}]}', "unexpected shape: KeyError: 'name'"),
    ('{"testResults": [{"name": "a", "assertionResults": [{"status": "failed"}]}]}',
     "unexpected shape: KeyError: 'title'"),
    ('{"testResults": [{"name": "/w/a", "assertionResults": [{"title": "t", "status": "odd"}]}]}',
     "unknown test status 'odd' in a"),
])
def test_malformed_reports_raise_report_error(parse, tool, text, problem):
    with pytest.raises(ReportError, match=f"^{tool} report .*{problem}"):
        parse(text, ["/w"])
