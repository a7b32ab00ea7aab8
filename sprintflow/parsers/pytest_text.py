"""pytest's own terminal output: ``pytest``, ``pytest -q`` and ``pytest -v``, pytest 7 to 9."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
)

__all__ = ["parse_pytest_output"]

_SECTION = re.compile(r"^=+ (?P<title>.+?) =+$")
_BLOCK = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_SUMMARY_ITEM = re.compile(r"(?P<n>\d+) (?P<what>passed|failed|errors?|skipped|xfailed|xpassed|deselected|"
                           r"warnings?|rerun)")
_FINAL = re.compile(r"^=*\s*(?:(?:\d+ \w+(?:, )?)+|no tests ran) in [\d.]+s\b")
_SHORT = re.compile(r"^(?P<what>FAILED|ERROR) (?P<nodeid>\S+?)(?: - (?P<message>.*))?$")
_VERBOSE = re.compile(r"^(?P<nodeid>\S+::\S.*?) (?P<status>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_PROGRESS = re.compile(r"^(?:(?P<file>\S+\.py) )?(?P<marks>[.FEsxXR]+)\s*(?:\[\s*\d+%\])?$")
_MARK_STATUS: dict[str, TestStatus] = {".": "passed", "F": "failed", "E": "failed", "s": "skipped",
                                       "x": "skipped", "X": "passed"}
_VERBOSE_STATUS: dict[str, TestStatus] = {"PASSED": "passed", "FAILED": "failed", "ERROR": "failed",
                                          "SKIPPED": "skipped", "XFAIL": "skipped", "XPASS": "passed"}


@dataclass
class _Scan:
    """What one pass over the output collected."""

    blocks: list[tuple[str, list[str]]] = field(default_factory=list)
    short: list[re.Match[str]] = field(default_factory=list)
    verbose: list[TestCase] = field(default_factory=list)
    progress: list[tuple[str, str]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    recognised: bool = False


@report_parser("pytest", counts_tests=True)
def parse_pytest_output(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what pytest prints: failures, collection errors, the short summary, the counts.

    Each failure (and each error collecting a test module) is located at its
    innermost frame in the workspace — ``tests/test_x.py:1`` for a module whose
    import fails — with its ``E`` lines as the message. Passed and skipped tests
    are named when ``-v`` printed their ids; otherwise they are counted from the
    closing summary line (``3 failed, 905 passed in 16.09s``).

    Example:
        >>> report = parse_pytest_output(
        ...     "==== ERRORS ====\\n____ ERROR collecting tests/test_x.py ____\\n"
        ...     "tests/test_x.py:1: in <module>\\n    import nope\\n"
        ...     "E   ModuleNotFoundError: No module named 'nope'\\n"
        ...     "=== short test summary info ===\\nERROR tests/test_x.py\\n"
        ...     "==== 2 passed, 1 error in 0.10s ====")
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.message
        ('tests/test_x.py', 'tests/test_x.py', 1, "ModuleNotFoundError: No module named 'nope'")
        >>> report.counts
        TestCounts(total=3, passed=2, failed=1, skipped=0)
    """
    scan = _scan(text_lines(text))
    if not scan.recognised:
        raise ReportError("pytest output has no session header, progress, failure or summary line; "
                          f"it starts with {text.strip()[:80]!r}")
    failures = _failures(scan, roots)
    return failure_report("pytest", _tests(scan, failures), failures)


def _scan(lines: list[str]) -> _Scan:
    scan = _Scan()
    section = ""
    block: list[str] | None = None
    for line in lines:
        if _FINAL.match(line):
            scan.recognised = True
            scan.counts = _counts(line)
            block = None
            continue
        header = _SECTION.match(line)
        if header:
            section = header["title"].lower()
            scan.recognised = True
            block = None
            continue
        if section in ("failures", "errors"):
            name = _BLOCK.match(line)
            if name:
                block = []
                scan.blocks.append((name["name"], block))
            elif block is not None:
                block.append(line)
        elif section == "short test summary info":
            if short := _SHORT.match(line):
                scan.short.append(short)
        elif verbose := _VERBOSE.match(line):
            scan.verbose.append(TestCase(verbose["nodeid"], _VERBOSE_STATUS[verbose["status"]],
                                         _node_file(verbose["nodeid"])))
            scan.recognised = True
        elif progress := _PROGRESS.match(line):
            scan.progress.append((progress["file"] or "", progress["marks"]))
    return scan


def _counts(line: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in _SUMMARY_ITEM.finditer(line):
        what = item["what"].removesuffix("s") if item["what"] in ("errors", "warnings") else item["what"]
        counts[what] = int(item["n"])
    return counts


def _failures(scan: _Scan, roots: Roots) -> list[TestFailure]:
    nodeids = [short["nodeid"] for short in scan.short]
    failures: list[TestFailure] = []
    for name, lines in scan.blocks:
        failure = _block_failure(name, lines, nodeids, roots)
        # A module collected twice (a doctest-modules run over tests/) reports its import error twice.
        if not any((f.test, f.line, f.message) == (failure.test, failure.line, failure.message) for f in failures):
            failures.append(failure)
    named = {f.test for f in failures}
    # `--tb=no` (or a summary without its block): the short summary line is all there is.
    for short in scan.short:
        if short["nodeid"] not in named and not any(short["nodeid"].endswith(n) for n in named):
            path = relativise(short["nodeid"].split("::")[0], roots)
            failures.append(TestFailure(test=short["nodeid"], message=short["message"] or short["what"].lower(),
                                        file=path))
    return failures


def _block_failure(name: str, lines: list[str], nodeids: list[str], roots: Roots) -> TestFailure:
    collecting = name.startswith("ERROR collecting ")
    body = "\n".join(lines)
    error_lines = [line[1:].strip() for line in lines if line.startswith("E ")]
    message = "\n".join(error_lines) or _last_line(lines)
    frame = innermost_frame(body, roots)
    file, line = (frame[0], frame[1]) if frame else (None, None)
    test = _nodeid(name, nodeids, file)
    if collecting and file is None:
        file = relativise(test, roots)
    expected, received = expected_received(message)
    return TestFailure(test=test, message=message, file=file, line=line, expected=expected,
                       received=received, stack=body.strip() or None)


def _nodeid(name: str, nodeids: list[str], file: str | None) -> str:
    """The block's test id as the short summary names it (``tests/a.py::TestX::test_y``)."""
    for prefix in ("ERROR collecting ", "ERROR at setup of ", "ERROR at teardown of "):
        name = name.removeprefix(prefix)
    suffix = "::" + name.replace(".", "::")
    for nodeid in nodeids:
        if nodeid == name or nodeid.endswith(suffix):
            return nodeid
    if name.endswith(".py") or "::" in name or file is None:
        return name
    return f"{file}{suffix}"


def _node_file(nodeid: str) -> str | None:
    """The test file of a pytest node id (``tests/test_a.py::test_b``); None for a placeholder name."""
    path = nodeid.split("::")[0]
    return path if path.endswith(".py") else None


def _last_line(lines: list[str]) -> str:
    return next((line.strip() for line in reversed(lines) if line.strip()), "the test failed")


def _tests(scan: _Scan, failures: list[TestFailure]) -> list[TestCase]:
    collection = {f.test for f in failures if f.test.endswith(".py")}
    tests = [TestCase(f.test, "load_error" if f.test in collection else "failed", _node_file(f.test))
             for f in failures]
    if scan.verbose:
        failed = {f.test for f in failures}
        return tests + [case for case in scan.verbose if case.name not in failed]
    if scan.counts:
        passed = scan.counts.get("passed", 0) + scan.counts.get("xpassed", 0)
        skipped = scan.counts.get("skipped", 0) + scan.counts.get("xfailed", 0)
    else:  # no closing line (the run was cut short): count the progress marks
        marks = "".join(m for _, m in scan.progress)
        passed = sum(_MARK_STATUS.get(m) == "passed" for m in marks)
        skipped = sum(_MARK_STATUS.get(m) == "skipped" for m in marks)
    # pytest names passing tests only with -v; these stand for them in the counts.
    tests += [TestCase(f"(passed test {i + 1})", "passed") for i in range(passed)]
    tests += [TestCase(f"(skipped test {i + 1})", "skipped") for i in range(skipped)]
    return tests
