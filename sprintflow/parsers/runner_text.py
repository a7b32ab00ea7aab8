"""The default reporters of vitest (1.x to 3.x) and jest (27 to 30): what ``vitest run`` and ``jest`` print.

Both name a failed test with the file, the describe blocks and the title, then
the error, then where it failed. Passing tests are listed only sometimes (vitest
3 for a file with a failure, jest for a single file), so tests that are not
named are counted from the closing ``Tests`` line. A test file that could not
load (a broken import, ts-jest's type errors) is a ``load_error``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
    relativise,
    report_parser,
    text_lines,
    without_stack,
)

__all__ = ["TSC_LOCATION", "parse_jest_text", "parse_vitest_text"]

# A ts-jest type error inside a failed suite, as tsc prints it (plain or --pretty, colours stripped).
TSC_LOCATION = re.compile(r"(?P<file>[^\s(]+\.[cm]?[jt]sx?)(?::(?P<line>\d+):(?P<col>\d+) - |\((?P<pline>\d+),"
                           r"(?P<pcol>\d+)\): )error (?P<code>TS\d+): (?P<msg>.+)")

# --- vitest --------------------------------------------------------------------------------------

_V_FAIL = re.compile(r"^\s*FAIL\s+(?P<name>.+?)\s*$")
_V_SUITE = re.compile(r"^(?P<file>\S+) \[ (?P=file) \]$")
_V_WHERE = re.compile(r"^\s*❯ (?P<file>\S+?):(?P<line>\d+):(?P<col>\d+)\s*$")
_V_SEPARATOR = re.compile(r"^⎯{3,}")
_V_TEST = re.compile(r"^\s+(?P<mark>[✓×↓]) (?P<name>.+?)(?: \d+ms)?$")
_V_TESTS = re.compile(r"^\s*Tests\s+(?P<parts>.+?)\s+\((?P<total>\d+)\)")
_V_HEADER = re.compile(r"^\s*(?:RUN\s+v\d|Test Files\s)")
_V_MARKS: dict[str, TestStatus] = {"✓": "passed", "×": "failed", "↓": "skipped"}


@report_parser("vitest-text", counts_tests=True)
def parse_vitest_text(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse vitest's default reporter (stdout and stderr together: vitest splits them).

    Example:
        >>> report = parse_vitest_text(
        ...     " FAIL  test/a.test.ts > api > returns 404\\n"
        ...     "AssertionError: expected 500 to be 404 // Object.is equality\\n\\n"
        ...     " ❯ test/a.test.ts:12:27\\n"
        ...     "      Tests  1 failed | 3 passed (4)", ["/w"])
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('api > returns 404', 'test/a.test.ts', 12, '404', '500')
        >>> report.counts
        TestCounts(total=4, passed=3, failed=1, skipped=0)
    """
    lines = text_lines(text)
    if not any(_V_HEADER.match(line) or _V_TESTS.match(line) or _V_FAIL.match(line) for line in lines):
        raise ReportError("vitest output has no RUN header, FAIL block or Tests summary; "
                          f"it starts with {text.strip()[:80]!r}")
    failures = _unique(_vitest_failure(block, roots) for block in _vitest_blocks(lines))
    listed = [TestCase(m["name"], _V_MARKS[m["mark"]]) for line in lines if (m := _V_TEST.match(line))]
    totals = next((_totals(m["parts"]) for line in lines if (m := _V_TESTS.match(line))), None)
    return failure_report("vitest", _tests(failures, listed, totals), failures)


def _vitest_blocks(lines: list[str]) -> Iterable[list[str]]:
    block: list[str] | None = None
    for line in lines:
        if _V_FAIL.match(line):
            if block:
                yield block
            block = [line]
        elif block is not None and (_V_SEPARATOR.match(line) or _V_TESTS.match(line)):
            yield block
            block = None
        elif block is not None:
            block.append(line)
    if block:
        yield block


def _vitest_failure(block: list[str], roots: Roots) -> TestFailure:
    header = _V_FAIL.match(block[0])
    assert header is not None  # blocks start at a FAIL line
    name = header["name"]
    suite = _V_SUITE.match(name)
    body = "\n".join(block[1:])
    message = body.strip().split("\n\n")[0].strip() or "the test failed"
    where = next((m for line in block[1:] if (m := _V_WHERE.match(line))), None)
    if suite:
        file = relativise(suite["file"], roots)
        tsc = TSC_LOCATION.search(body)
        line, column = (None, None)
        if where:
            file, line, column = relativise(where["file"], roots), int(where["line"]), int(where["col"])
        return TestFailure(test=file, message=message, file=file, line=line, column=column, stack=body,
                           code=tsc["code"] if tsc else None)
    file_part, _, test = name.partition(" > ")
    file, line, column = relativise(file_part, roots), None, None
    if where:
        file, line, column = relativise(where["file"], roots), int(where["line"]), int(where["col"])
    expected, received = expected_received(body)  # the diff below the message, too
    return TestFailure(test=test or name, message=message, file=file, line=line, column=column,
                       expected=expected, received=received, stack=body.strip() or None,
                       test_id=f"{relativise(file_part, roots)} > {test}" if test else None)


# --- jest ----------------------------------------------------------------------------------------

_J_FILE = re.compile(r"^(?P<status>PASS|FAIL) (?P<file>\S+)")
_J_BLOCK = re.compile(r"^  ● (?P<name>.+)$")
_J_TEST = re.compile(r"^\s+(?P<mark>[✓✕○]) (?:skipped )?(?P<name>.+?)(?: \(\d+ m?s\))?$")
_J_TESTS = re.compile(r"^Tests:\s+(?P<parts>.+?),?\s+(?P<total>\d+) total")
_J_CODE_FRAME = re.compile(r"^\s*> (?P<line>\d+) \|")
_J_MARKS: dict[str, TestStatus] = {"✓": "passed", "✕": "failed", "○": "skipped"}
_J_SUITE_FAILED = "Test suite failed to run"


@report_parser("jest-text", counts_tests=True)
def parse_jest_text(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse jest's default reporter (it writes to stderr; read stdout and stderr together).

    Example:
        >>> report = parse_jest_text(
        ...     "FAIL tests/a.test.js\\n  ● api › returns 404\\n\\n    expect(received).toBe(expected)\\n\\n"
        ...     "    Expected: 404\\n    Received: 500\\n\\n      at Object.toBe (tests/a.test.js:9:35)\\n\\n"
        ...     "Tests:       1 failed, 2 passed, 3 total")
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('api › returns 404', 'tests/a.test.js', 9, '404', '500')
        >>> report.counts
        TestCounts(total=3, passed=2, failed=1, skipped=0)
    """
    lines = text_lines(text)
    if not any(_J_FILE.match(line) or _J_TESTS.match(line) for line in lines):
        raise ReportError("jest output has no PASS/FAIL line and no Tests: summary; "
                          f"it starts with {text.strip()[:80]!r}")
    failures = _unique(_jest_failure(file, block, roots) for file, block in _jest_blocks(lines))
    listed = [TestCase(m["name"], _J_MARKS[m["mark"]]) for line in lines if (m := _J_TEST.match(line))]
    totals = next((_totals(m["parts"]) for line in lines if (m := _J_TESTS.match(line))), None)
    return failure_report("jest", _tests(failures, listed, totals), failures)


def _jest_blocks(lines: list[str]) -> Iterable[tuple[str, list[str]]]:
    file, block = "", None
    for line in lines:
        file_match, block_match = _J_FILE.match(line), _J_BLOCK.match(line)
        if file_match or block_match or line.startswith(("Test Suites:", "Summary of all failing tests")):
            if block:
                yield file, block
            block = [line] if block_match else None
            if file_match:
                file = file_match["file"]
        elif block is not None:
            block.append(line)
    if block:
        yield file, block


def _jest_failure(suite_file: str, block: list[str], roots: Roots) -> TestFailure:
    header = _J_BLOCK.match(block[0])
    assert header is not None  # blocks start at a ● line
    name = header["name"].strip()
    body = "\n".join(block[1:])
    file = relativise(suite_file, roots)
    if name == _J_SUITE_FAILED:
        return _suite_failure(file, body, roots)
    message = without_stack(re.split(r"\n\s*\n\s*(?:>?\s*\d+ \|)", body, maxsplit=1)[0]).strip()
    message = "\n".join(line.strip() for line in message.splitlines()) or "the test failed"
    frame = innermost_frame(body, roots)
    line = column = None
    if frame:
        file, line, column = frame
    elif code_frame := next((m for ln in block if (m := _J_CODE_FRAME.match(ln))), None):
        line = int(code_frame["line"])
    expected, received = expected_received(message)
    return TestFailure(test=name, message=message, file=file, line=line, column=column,
                       expected=expected, received=received, stack=body.strip() or None,
                       test_id=f"{relativise(suite_file, roots)} > {name.replace(' › ', ' > ')}")


def _suite_failure(file: str, body: str, roots: Roots) -> TestFailure:
    """A test file that failed to run: located at the type error or the frame that broke it."""
    tsc = TSC_LOCATION.search(body)
    if tsc:
        line, column = int(tsc["line"] or tsc["pline"]), int(tsc["col"] or tsc["pcol"])
        return TestFailure(test=file, message=f"{tsc['code']}: {tsc['msg'].strip()}",
                           file=relativise(tsc["file"], roots), line=line, column=column,
                           stack=body.strip(), code=tsc["code"])
    frame = innermost_frame(body, roots)
    message = without_stack(body).strip().split("\n\n")[0].strip() or "the test file failed to load"
    where: tuple[str, int | None, int | None] = frame or (file, None, None)
    return TestFailure(test=file, message=message, file=where[0], line=where[1], column=where[2],
                       stack=body.strip())


# --- shared --------------------------------------------------------------------------------------

# The summary's words for tests a reporter may not name one by one.
_UNNAMED: tuple[tuple[TestStatus, tuple[str, ...]], ...] = (("passed", ("passed",)),
                                                            ("skipped", ("skipped", "todo", "pending")))
_COUNT = re.compile(r"(?P<n>\d+) (?P<what>failed|passed|skipped|todo|pending)")


def _totals(parts: str) -> dict[str, int]:
    return {m["what"]: int(m["n"]) for m in _COUNT.finditer(parts)}


def _unique(failures: Iterable[TestFailure]) -> list[TestFailure]:
    """jest repeats every failure in its closing "Summary of all failing tests"."""
    seen: dict[tuple[str, str | None, int | None], TestFailure] = {}
    for failure in failures:
        seen.setdefault((failure.test, failure.file, failure.line), failure)
    return list(seen.values())


def _tests(failures: list[TestFailure], listed: list[TestCase],
           totals: dict[str, int] | None) -> list[TestCase]:
    """Every test: the failures, the tests the reporter listed, and unnamed ones to match the totals."""
    tests = [TestCase(f.test, "load_error" if f.test == f.file and f.line is None or _is_suite(f)
                      else "failed") for f in failures]
    named = {f.test for f in failures}
    tests += [case for case in listed if case.status != "failed" and case.name not in named]
    if totals is None:
        return tests
    for status, words in _UNNAMED:
        missing = sum(totals.get(w, 0) for w in words) - sum(case.status == status for case in tests)
        tests += [TestCase(f"({status} test {i + 1})", status) for i in range(max(0, missing))]
    return tests


def _is_suite(failure: TestFailure) -> bool:
    return bool(re.search(r"\.[cm]?[jt]sx?$", failure.test)) and " " not in failure.test
