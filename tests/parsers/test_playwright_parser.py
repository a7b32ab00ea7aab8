"""parse_playwright_json against real @playwright/test 1.65.1 JSON reports (Debian chromium)."""

import json
from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import TestCounts, parse_playwright_json

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
ROOT = "/tmp/sfrec/pw"


def read(name: str) -> str:
    return (REPORTS / "playwright" / name).read_text(encoding="utf-8")


def test_counts_follow_the_final_outcome_a_flaky_test_passed():
    report = parse_playwright_json(read("1.65.1.json"), [ROOT])
    # stats: expected 1, flaky 1, unexpected 4, skipped 1
    assert report.counts == TestCounts(total=7, passed=2, failed=4, skipped=1)
    assert report.error_count == 4


def test_failures_are_located_at_the_error():
    failures = parse_playwright_json(read("1.65.1.json"), [ROOT]).failures
    assert [(f.test, f.file, f.line, f.column) for f in failures] == [
        ("shop › missing page answers 404", "tests/app.spec.js", 14, 31),
        ("shop › reads the cart", "tests/app.spec.js", 20, 17),
        ("shop › shows the total", "tests/app.spec.js", 25, 42),
        # The timeout itself has no location; the click it interrupted has.
        ("shop › times out", "tests/app.spec.js", 31, 34),
    ]
    assert [(f.expected, f.received) for f in failures] == [
        ("404", "500"), (None, None), ('"42"', None), (None, None)]


def test_messages_are_free_of_colour_codes():
    failures = parse_playwright_json(read("1.65.1.json"), [ROOT]).failures
    assert failures[0].message == ("Error: expect(received).toBe(expected) // Object.is equality\n\n"
                                   "Expected: 404\nReceived: 500")
    assert failures[1].message == "TypeError: Cannot read properties of undefined (reading 'items')"
    assert failures[3].message == "Test timeout of 500ms exceeded."
    assert all("\x1b" not in (f.stack or "") for f in failures)


def test_each_failure_is_a_playwright_diagnostic():
    d = parse_playwright_json(read("1.65.1.json"), [ROOT]).diagnostics[0]
    assert (d.tool, d.file, d.line, d.column, d.expected, d.received) == (
        "playwright", "tests/app.spec.js", 14, 31, "404", "500")


def test_a_spec_file_that_failed_to_load_is_a_failure():
    report = parse_playwright_json(read("1.65.1-load-error.json"), [ROOT])
    assert report.counts == TestCounts(total=1, passed=0, failed=1, skipped=0)
    [f] = report.failures
    assert (f.test, f.file, f.line, f.column) == (
        "broken-tests/broken.spec.js", "broken-tests/broken.spec.js", 2, 21)
    assert f.message.startswith("Error: Cannot find module './does-not-exist'")


def test_without_an_error_location_the_spec_is_used():
    data = {"config": {"rootDir": "/w/e2e"}, "suites": [{"title": "a.spec.ts", "file": "a.spec.ts",
            "specs": [{"title": "home", "file": "a.spec.ts", "line": 3, "column": 5, "tests": [
                {"projectName": "chromium", "status": "unexpected",
                 "results": [{"status": "interrupted"}]}]}]}]}
    [f] = parse_playwright_json(json.dumps(data), ["/w"]).failures
    assert (f.test, f.file, f.line, f.column, f.message) == (
        "[chromium] home", "e2e/a.spec.ts", 3, 5, "test ended unexpected")


@pytest.mark.parametrize("text, problem", [
    ("", "playwright report is empty"),
    ("Running 7 tests using 1 worker", "playwright report is not valid JSON"),
    ("[]", "should be a JSON object with a suites array"),
    ('{"suites": [{"specs": [{"file": "a.spec.ts", "tests": [{"status": "unexpected"}]}]}]}',
     "unexpected shape: KeyError: 'title'"),
    ('{"suites": [{"specs": [{"title": "t", "tests": [{"status": "exploded"}]}]}]}',
     "unknown test status 'exploded' for 't'"),
])
def test_malformed_reports_raise_report_error(text, problem):
    with pytest.raises(ReportError, match=problem):
        parse_playwright_json(text)
