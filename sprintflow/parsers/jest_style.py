"""vitest ``--reporter=json`` and jest ``--json``: both write jest's aggregated result shape."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from sprintflow.errors import ReportError

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    expected_received,
    failure_report,
    innermost_frame,
    load_json,
    relativise,
    report_parser,
    strip_ansi,
    without_stack,
)
from .runner_text import TSC_LOCATION

__all__ = ["parse_jest_json", "parse_vitest_json"]

# jest's statuses for a test that did not run; vitest uses "skipped" and "todo".
_NOT_RUN = {"skipped", "pending", "todo", "disabled", "focused"}


@report_parser("vitest", counts_tests=True)
def parse_vitest_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse a vitest JSON report (vitest 1.x, 2.x and 3.x).

    Example:
        >>> report = parse_vitest_json(json.dumps({"testResults": [{
        ...     "name": "/w/a.test.ts", "status": "failed", "assertionResults": [{
        ...         "fullName": "api 404", "title": "404", "status": "failed",
        ...         "failureMessages": ["AssertionError: expected 500 to be 404\\n"
        ...                             "    at /w/a.test.ts:10:35"]}]}]}), ["/w"])
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('api 404', 'a.test.ts', 10, '404', '500')
    """
    return _parse_jest_shape("vitest", load_json(text, "vitest", "vitest run --reporter=json"), roots)


@report_parser("jest", counts_tests=True)
def parse_jest_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse a jest JSON report (jest 29 and 30, with or without ``--colors``).

    Example:
        >>> report = parse_jest_json(json.dumps({"testResults": [{
        ...     "name": "/w/a.test.js", "status": "failed", "assertionResults": [{
        ...         "fullName": "api 404", "title": "404", "status": "failed",
        ...         "failureMessages": ["Error: expect(received).toBe(expected)\\n\\n"
        ...                             "Expected: 404\\nReceived: 500\\n"
        ...                             "    at Object.toBe (/w/a.test.js:9:35)"]}]}]}), ["/w"])
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('api 404', 'a.test.js', 9, '404', '500')
    """
    return _parse_jest_shape("jest", load_json(text, "jest", "jest --json"), roots)


def _parse_jest_shape(tool: str, data: Any, roots: Roots) -> ParsedReport:
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        raise ReportError(f"{tool} report should be a JSON object with a testResults array")
    # Counted from the tests themselves: vitest 1.x counts skipped tests in numPassedTests.
    tests: list[TestCase] = []
    failures: list[TestFailure] = []
    for suite in data["testResults"]:
        suite_file = relativise(suite["name"], roots)
        assertions = suite.get("assertionResults") or []
        for test in assertions:
            status = test["status"]
            if status == "failed":
                failures.append(_test_failure(test, suite_file, roots))
            elif status not in _NOT_RUN and status != "passed":
                # fail closed: a status we do not know is never silently a pass or a skip
                raise ReportError(f"{tool} report has an unknown test status {status!r} in {suite_file}")
            tests.append(TestCase(_test_name(test), "skipped" if status in _NOT_RUN else status, suite_file))
        if suite.get("status") == "failed" and not any(t["status"] == "failed" for t in assertions):
            failures.append(_suite_failure(suite_file, suite.get("message") or "", roots))
            tests.append(TestCase(suite_file, "load_error", suite_file))
    return failure_report(tool, tests, failures)


def _test_name(test: dict) -> str:
    return str(test.get("fullName") or " ".join([*test.get("ancestorTitles", []), test["title"]])).strip()


def _test_failure(test: dict, suite_file: str, roots: Roots) -> TestFailure:
    stack = strip_ansi("\n".join(test.get("failureMessages") or []))
    # Where the assertion failed (the stack) beats where the test was declared (location).
    frame = innermost_frame(stack, roots)
    location = test.get("location") or {}
    file, line, column = frame or (suite_file, location.get("line"), location.get("column"))
    expected, received = expected_received(stack)
    if expected is None and received is None:
        expected, received = _matcher_values(test)
    titles = [*(test.get("ancestorTitles") or []), test.get("title") or _test_name(test)]
    return TestFailure(test=_test_name(test), message=without_stack(stack), file=file, line=line,
                       column=column, expected=expected, received=received, stack=stack,
                       test_id=" > ".join([suite_file, *(str(t) for t in titles)]))


def _matcher_values(test: dict) -> tuple[str | None, str | None]:
    """jest's own values for a failed matcher: a deep-equal diff has no Expected:/Received: line."""
    for detail in test.get("failureDetails") or []:
        result = detail.get("matcherResult") if isinstance(detail, dict) else None
        if result and "expected" in result and "actual" in result:
            return json.dumps(result["expected"]), json.dumps(result["actual"])
    return None, None


def _suite_failure(suite_file: str, message: str, roots: Roots) -> TestFailure:
    """A test file that failed outside its tests: a broken import, a failing ``afterAll``, a type error.

    ts-jest fails a test file on a type error in any file it imports; the
    failure is located at that error, with its TS code.
    """
    message = strip_ansi(message)
    tsc = TSC_LOCATION.search(message)
    if tsc:
        return TestFailure(test=suite_file, message=f"{tsc['code']}: {tsc['msg'].strip()}",
                           file=relativise(tsc["file"], roots), line=int(tsc["line"] or tsc["pline"]),
                           column=int(tsc["col"] or tsc["pcol"]), stack=message, code=tsc["code"])
    frame = innermost_frame(message, roots)
    file, line, column = frame or (suite_file, None, None)
    # jest heads the text with "● Test suite failed to run"; the reason follows it.
    lines = [ln for ln in without_stack(message).splitlines() if not ln.strip().startswith("●")]
    reason = textwrap.dedent("\n".join(lines)).strip() or "the test file failed to load"
    return TestFailure(test=suite_file, message=reason,
                       file=file, line=line, column=column, stack=message)
