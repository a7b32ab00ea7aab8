"""``@playwright/test``: ``--reporter=json`` (nested suites of specs, one test per project), and the
``list`` and ``line`` reporters people see in a terminal."""

from __future__ import annotations

import posixpath
import re
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
    text_lines,
)

__all__ = ["parse_playwright_json", "parse_playwright_text"]

# A flaky test failed, then passed on a retry: it passed, and the report says so.
_OUTCOMES: dict[str, TestStatus] = {"expected": "passed", "flaky": "passed", "unexpected": "failed",
                                    "skipped": "skipped"}


@report_parser("playwright", counts_tests=True)
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


# `  ✘  2 [chromium] › tests/app.spec.js:8:1 › status (80ms)` (list; `ok`/`x` without unicode)
_LISTED = re.compile(r"^\s+(?P<mark>[✓✘×-]|ok|x|°)\s+\d+ (?P<title>.+?)(?: \([\d.]+m?s\))?\s*$")
# `  1) [chromium] › tests/app.spec.js:8:1 › status ─────` (list and line)
_FAILURE_HEAD = re.compile(r"^\s+\d+\) (?P<title>.+?)\s*─*\s*$")
_TITLE_FILE = re.compile(r"(?:^|› )(?P<file>[^\s›]+?):(?P<line>\d+):(?P<col>\d+)")
_COUNT = re.compile(r"^\s+(?P<n>\d+) (?P<what>passed|failed|skipped|flaky|did not run|interrupted)\b")
_RUNNING = re.compile(r"^Running \d+ tests? using \d+ workers?")
_CODE_FRAME = re.compile(r"^\s*> (?P<line>\d+) \|")
_FRAME_LINE = re.compile(r"^\s*>?\s*\d+ \|", re.MULTILINE)
_PW_MARKS: dict[str, TestStatus] = {"✓": "passed", "ok": "passed", "✘": "failed", "×": "failed", "x": "failed",
                                    "-": "skipped", "°": "skipped"}


@report_parser("playwright-text", counts_tests=True)
def parse_playwright_text(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse the ``list`` and ``line`` reporters of ``playwright test`` (``list`` is the default).

    Example:
        >>> report = parse_playwright_text(
        ...     "Running 2 tests using 1 worker\\n\\n"
        ...     "  1) [chromium] › tests/a.spec.ts:8:5 › status ──────\\n\\n"
        ...     "    Error: expect(received).toBe(expected)\\n\\n    Expected: 404\\n    Received: 500\\n\\n"
        ...     "        at /w/tests/a.spec.ts:10:18\\n\\n  1 failed\\n  1 passed (2.1s)", ["/w"])
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('[chromium] › tests/a.spec.ts:8:5 › status', 'tests/a.spec.ts', 10, '404', '500')
        >>> report.counts
        TestCounts(total=2, passed=1, failed=1, skipped=0)
    """
    lines = text_lines(text)
    if not any(_RUNNING.match(line) or _COUNT.match(line) for line in lines):
        raise ReportError("playwright output has no 'Running N tests' line and no summary; "
                          f"it starts with {text.strip()[:80]!r}")
    failures = _text_failures(lines, roots)
    named = {f.test for f in failures}
    tests = [TestCase(f.test, "failed") for f in failures]
    tests += [TestCase(m["title"], _PW_MARKS[m["mark"]]) for line in lines
              if (m := _LISTED.match(line)) and _PW_MARKS[m["mark"]] != "failed" and m["title"] not in named]
    counts: dict[str, int] = {}
    for line in lines:
        if m := _COUNT.match(line):
            counts[m["what"]] = counts.get(m["what"], 0) + int(m["n"])
    for status, words in (("passed", ("passed", "flaky")), ("skipped", ("skipped", "did not run"))):
        missing = sum(counts.get(w, 0) for w in words) - sum(t.status == status for t in tests)
        tests += [TestCase(f"({status} test {i + 1})", _PW_MARKS["ok" if status == "passed" else "-"])
                  for i in range(max(0, missing))]
    return failure_report("playwright", tests, failures)


def _text_failures(lines: list[str], roots: Roots) -> list[TestFailure]:
    failures: dict[str, TestFailure] = {}
    head: re.Match[str] | None = None
    block: list[str] = []
    for line in [*lines, "  0) end ─"]:
        start = _FAILURE_HEAD.match(line)
        if start or (head and _COUNT.match(line)):
            if head is not None and head["title"] not in failures:
                failures[head["title"]] = _text_failure(head["title"], block, roots)
            head, block = start, []
        elif head is not None:
            block.append(line)
    return list(failures.values())


def _text_failure(title: str, block: list[str], roots: Roots) -> TestFailure:
    body = "\n".join(block)
    declared = _TITLE_FILE.search(title)
    file = relativise(declared["file"], roots) if declared else None
    line = int(declared["line"]) if declared else None
    column = int(declared["col"]) if declared else None
    if frame := innermost_frame(body, roots):
        file, line, column = frame
    elif code_frame := next((m for ln in block if (m := _CODE_FRAME.match(ln))), None):
        line, column = int(code_frame["line"]), None
    paragraphs = [p.strip() for p in body.strip().split("\n\n") if p.strip()]
    message_parts = [p for p in paragraphs[:3]
                     if not _FRAME_LINE.search(p) and not p.lstrip().startswith(("at ", "Call log:"))]
    message = "\n".join(" ".join(ln.strip() for ln in p.splitlines()) for p in message_parts) or "the test failed"
    expected, received = expected_received(body)
    return TestFailure(test=title, message=message, file=file, line=line, column=column,
                       expected=expected, received=received, stack=body.strip() or None)
