"""``@playwright/test`` ``--reporter=json``: nested suites of specs, one test per project."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from sprintflow.errors import ReportError

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    TestStatus,
    expected_received,
    failure_report,
    innermost_frame,
    load_json,
    relativise,
    report_parser,
    strip_ansi,
)

__all__ = ["parse_playwright_json"]

# A flaky test failed, then passed on a retry: it passed, and the report says so.
_OUTCOMES: dict[str, TestStatus] = {"expected": "passed", "flaky": "passed", "unexpected": "failed",
                                    "skipped": "skipped"}


@report_parser("playwright")
def parse_playwright_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse a Playwright JSON report; a test file that failed to load is a failure too.

    Spec files are named relative to the config's ``rootDir``; they are resolved
    against it, then made relative to the workspace.

    Example:
        >>> import json
        >>> report = parse_playwright_json(json.dumps({"config": {"rootDir": "/w/e2e"},
        ...     "suites": [{"title": "a.spec.ts", "specs": [{"title": "home", "file": "a.spec.ts",
        ...         "line": 3, "tests": [{"status": "unexpected", "results": [{"error": {
        ...             "message": "Expected: 404\\nReceived: 500"}}]}]}]}]}), ["/w"])
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('home', 'e2e/a.spec.ts', 3, '404', '500')
    """
    data = load_json(text, "playwright", "playwright test --reporter=json")
    if not isinstance(data, dict) or not isinstance(data.get("suites"), list):
        raise ReportError("playwright report should be a JSON object with a suites array")
    root_dir = (data.get("config") or {}).get("rootDir") or ""
    failures = [_load_failure(error, roots) for error in data.get("errors") or []]
    tests = [TestCase(failure.test, "load_error") for failure in failures]
    for titles, spec, test in _tests(data["suites"]):
        status = test.get("status")
        outcome = _OUTCOMES.get(str(status))
        if outcome is None:  # fail closed: never guess what an unknown status means
            raise ReportError(f"playwright report has an unknown test status {status!r} "
                              f"for {spec['title']!r}")
        tests.append(TestCase(_test_name(titles, spec, test), outcome))
        if outcome == "failed":
            failures.append(_test_failure(titles, spec, test, root_dir, roots))
    return failure_report("playwright", tests, failures)


def _test_name(titles: list[str], spec: dict, test: dict) -> str:
    project = test.get("projectName")
    name = " › ".join([*titles, spec["title"]])
    return f"[{project}] {name}" if project else name


def _tests(suites: list[dict],
           titles: list[str] | None = None) -> Iterator[tuple[list[str], dict, dict]]:
    for suite in suites:
        # The outermost suites are the spec files: their titles are file names, not describes.
        inner = [] if titles is None else [*titles, suite["title"]]
        for spec in suite.get("specs") or []:
            for test in spec.get("tests") or []:
                yield inner, spec, test
        yield from _tests(suite.get("suites") or [], inner)


def _test_failure(titles: list[str], spec: dict, test: dict, root_dir: str,
                  roots: Roots) -> TestFailure:
    error = _last_error(test.get("results") or [])
    message = strip_ansi(error.get("message") or f"test ended {test.get('status')}")
    stack = strip_ansi(error.get("stack") or "")
    file = relativise(posixpath.join(root_dir, spec["file"]), roots)
    line, column = spec.get("line"), spec.get("column")
    where = error.get("location")
    if where:
        file, line, column = relativise(where["file"], roots), where["line"], where["column"]
    elif frame := innermost_frame(stack, roots):
        file, line, column = frame
    expected, received = expected_received(message)
    return TestFailure(test=_test_name(titles, spec, test), message=message,
                       file=file, line=line, column=column, expected=expected,
                       received=received, stack=stack or None)


def _last_error(results: list[dict]) -> dict[str, Any]:
    """The last attempt's error, located by its first located error when it has no location.

    A timeout's own error ("Test timeout of 500ms exceeded.") has no location;
    the action it interrupted, listed beside it, has one.
    """
    for result in reversed(results):
        error = result.get("error") or {}
        located: dict[str, Any] = next(
            (e for e in result.get("errors") or [] if e.get("location")), {})
        if error or located:
            return {**located, **error}
    return {}


def _load_failure(error: dict, roots: Roots) -> TestFailure:
    """A top-level error: a spec file that could not be imported, a broken config."""
    where = error.get("location") or {}
    file = relativise(where["file"], roots) if where.get("file") else None
    message = strip_ansi(error.get("message") or "playwright reported an error")
    return TestFailure(test=file or "playwright", message=message, file=file,
                       line=where.get("line"), column=where.get("column"),
                       stack=strip_ansi(error.get("stack") or "") or None)
