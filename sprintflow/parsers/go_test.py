"""``go test``'s own output: each failing test (the innermost subtest) with the lines it logged.

``--- FAIL: TestJSON/nested (0.00s)`` names a test; the indented ``file_test.go:12: message``
lines below it are what it reported, relative to its package's folder; the package comes after
them (``FAIL	example.com/m/codec	0.01s``) and ``go.mod`` under a root says which folder that is.
Passing tests are listed only with ``-v`` (which prints ``=== RUN`` for every test): then every
innermost test that ended is counted, as the flaky re-run of the failing tests alone needs; without
it no test counts are claimed: the diagnostics explain a failure, the exit code makes it.
"""

from __future__ import annotations

import re
from pathlib import Path

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    TestStatus,
    _root_list,
    failure_report,
    report_parser,
    text_lines,
)

__all__ = ["parse_go_test"]

_FAIL = re.compile(r"^(?P<indent>\s*)--- FAIL: (?P<name>\S+) \([\d.]+s\)$")
_ENDED = re.compile(r"^\s*--- (?P<status>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+s\)$")
_STATUS: dict[str, TestStatus] = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}
_OTHER = re.compile(r"^\s*(?:--- (?:PASS|SKIP)|=== (?:RUN|PAUSE|CONT|NAME))\b")
_LOGGED = re.compile(r"^\s+(?P<file>[\w.\-/]+\.go):(?P<line>\d+): (?P<message>.*)$")
_PACKAGE = re.compile(r"^(?:FAIL|ok)\s+(?P<package>\S+)\s+(?:[\d.]+s|\(cached\)|\[)")


@report_parser("go-test")
def parse_go_test(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what ``go test`` printed.

    Example:
        >>> report = parse_go_test("--- FAIL: TestJSON (0.00s)\\n    --- FAIL: TestJSON/nested (0.00s)\\n"
        ...                        "        codec_test.go:7: got 1, want 2\\nFAIL\\nFAIL\\tex.com/m\\t0.01s\\n")
        >>> d = report.diagnostics[0]
        >>> d.test, d.file, d.line, d.message, report.counts.total
        ('TestJSON/nested', 'codec_test.go', 7, 'TestJSON/nested: got 1, want 2', 0)
        >>> parse_go_test("=== RUN   TestA\\n=== RUN   TestA/x\\n--- PASS: TestA (0.00s)\\n"
        ...               "    --- PASS: TestA/x (0.00s)\\nPASS\\nok  \\tex.com/m\\t0.01s\\n").counts
        TestCounts(total=1, passed=1, failed=0, skipped=0)
    """
    module = _module(roots)
    failures: list[TestFailure] = []
    tests: list[TestCase] = []
    pending: list[tuple[str, list[str]]] = []
    ended: dict[str, TestStatus] = {}
    current: tuple[str, list[str]] | None = None
    verbose = False
    for line in text_lines(text):
        if end := _ENDED.match(line):
            ended[end["name"]] = _STATUS[end["status"]]
        if fail := _FAIL.match(line):
            current = (fail["name"], [])
            pending.append(current)
        elif package := _PACKAGE.match(line):
            folder = _folder(package["package"], module)
            failures += _failures(pending, folder)
            tests += _innermost(ended, folder)
            pending, ended, current = [], {}, None
        elif _OTHER.match(line):
            verbose = verbose or line.lstrip().startswith("=== RUN")
            current = None
        elif current is not None and line.startswith((" ", "\t")):
            current[1].append(line)
    failures += _failures(pending, "")
    return failure_report("go", [*tests, *_innermost(ended, "")] if verbose else [], failures)


def _innermost(ended: dict[str, TestStatus], folder: str) -> list[TestCase]:
    """The tests that ended, but not a parent whose subtests are listed (it ends as they did)."""
    return [TestCase(f"./{folder} {name}" if folder else name, status) for name, status in ended.items()
            if not any(other.startswith(f"{name}/") for other in ended)]


def _failures(pending: list[tuple[str, list[str]]], folder: str) -> list[TestFailure]:
    """The innermost failing tests (a parent fails because its subtest did), located in ``folder``."""
    names = {name for name, _ in pending}
    found = []
    for name, lines in pending:
        if any(other.startswith(f"{name}/") for other in names) and not any(_LOGGED.match(ln) for ln in lines):
            continue
        logged = next((m for ln in lines if (m := _LOGGED.match(ln))), None)
        message = "\n".join(ln.strip() for ln in lines)
        if logged:
            message = "\n".join([logged["message"], *(ln.strip() for ln in lines[lines.index(logged.string) + 1:])])
        file = f"{folder}/{logged['file']}" if logged and folder else (logged["file"] if logged else None)
        test = f"./{folder} {name}" if folder else name
        found.append(TestFailure(test=name, message=message.strip() or "the test failed", file=file,
                                 line=int(logged["line"]) if logged else None, test_id=test))
    return found


def _module(roots: Roots) -> str | None:
    """The module path the ``go.mod`` under one of the roots declares."""
    for root in _root_list(roots):
        try:
            text = (Path(root) / "go.mod").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if match := re.search(r"^module\s+(\S+)", text, re.MULTILINE):
            return match[1]
    return None


def _folder(package: str, module: str | None) -> str:
    """A package's folder relative to the module root ('' for the root package or an unknown module)."""
    if module is None or not (package == module or package.startswith(module + "/")):
        return ""
    return package[len(module):].strip("/")
