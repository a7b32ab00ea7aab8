"""``go test``'s output, plain and ``-json``: each failing test (the innermost subtest) with the lines it
logged, its panic, and the package that did not build.

``--- FAIL: TestJSON/nested (0.00s)`` names a test; the indented ``file_test.go:12: message``
lines below it are what it reported (with ``-v``, the lines above it, after its ``=== RUN``),
relative to its package's folder; the package comes after
them (``FAIL	example.com/m/codec	0.01s``) and ``go.mod`` under a root says which folder that is.
A panic (``panic: runtime error: …`` and the goroutine's stack) ends the test binary: it is the failing
test's message, located at the innermost frame in the workspace, which is where the code panicked
(the test's own line is named beside). A package whose code or tests do not compile
(``FAIL	example.com/m [build failed]``) ran no test: its compiler errors are findings at file:line, as
``go build`` reports them (one problem, whichever command found it), told apart from failing tests by
naming no test and by their hint.
Passing tests are listed only with ``-v`` (which prints ``=== RUN`` for every test): then every
innermost test that ended is counted, as the flaky re-run of the failing tests alone needs; without
it no test counts are claimed: the diagnostics explain a failure, the exit code makes it.
``go test -json`` is the same output cut into events (``{"Action": "output", "Package", "Test",
"Output"}``, ``pass``/``fail``/``skip``, ``build-output``): each test's status is its event's, and
every test is counted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    TestStatus,
    _root_list,
    failure_report,
    relativise,
    report_parser,
    text_lines,
)
from .go_tools import go_findings

__all__ = ["parse_go_test", "parse_go_test_json"]

_FAIL = re.compile(r"^(?P<indent>\s*)--- FAIL: (?P<name>\S+) \([\d.]+s\)$")
_ENDED = re.compile(r"^\s*--- (?P<status>PASS|FAIL|SKIP): (?P<name>\S+) \([\d.]+s\)$")
_STATUS: dict[str, TestStatus] = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped",
                                  "pass": "passed", "fail": "failed", "skip": "skipped"}
_OTHER = re.compile(r"^\s*(?:--- (?:PASS|SKIP)|=== (?:RUN|PAUSE|CONT|NAME))\b")
_RUNNING = re.compile(r"^\s*=== (?:RUN|CONT|NAME)\s+(?P<name>\S+)")
_MARKER = re.compile(r"^\s*(?:--- (?:PASS|FAIL|SKIP): |=== (?:RUN|PAUSE|CONT|NAME)\b)")
_LOGGED = re.compile(r"^\s+(?P<file>[\w.\-/]+\.go):(?P<line>\d+): (?P<message>.*)$")
_PACKAGE = re.compile(r"^(?:FAIL|ok)\s+(?P<package>\S+)\s+(?:[\d.]+s|\(cached\)|\[)")
_PANIC = re.compile(r"^panic: (?P<message>.*?)(?: \[recovered(?:, repanicked)?\])?$")
_FRAME = re.compile(r"^\t(?P<file>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")
_TEST_FRAME = re.compile(r"\.(?P<name>(?:Test|Example|Fuzz)\w*)\(")
_TIMED_OUT = re.compile(r"^\s+(?P<name>(?:Test|Example|Fuzz)\S*) \(")
_MAX_EVENTS_LINE = 1 << 20


@dataclass
class _Test:
    """One test's block of output: its name and the lines under it (what it logged, its panic)."""

    name: str
    lines: list[str] = field(default_factory=list)


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
    pending: list[_Test] = []
    ended: dict[str, TestStatus] = {}
    current: _Test | None = None
    running: str | None = None
    streamed: dict[str, list[str]] = {}
    panicking = verbose = False
    lines = text_lines(text)
    for line in lines:
        if end := _ENDED.match(line):
            ended[end["name"]] = _STATUS[end["status"]]
        if package := _PACKAGE.match(line):
            folder = _folder(package["package"], module)
            failures += _failures(pending, folder, roots)
            tests += _innermost(ended, folder)
            pending, ended, current, panicking = [], {}, None, False
        elif panicking and current is not None:
            current.lines.append(line)
        elif fail := _FAIL.match(line):
            current = _Test(fail["name"], streamed.pop(fail["name"], []))
            pending.append(current)
        elif _PANIC.match(line):
            # The binary dies here; a panic outside any test (init, TestMain) is named from its stack.
            if current is None:
                current = _Test("")
                pending.append(current)
            current.lines.append(line)
            panicking = True
        elif _OTHER.match(line):
            verbose = verbose or line.lstrip().startswith("=== RUN")
            running = marker["name"] if (marker := _RUNNING.match(line)) else None
            current = None
        elif current is not None and line.startswith((" ", "\t")):
            current.lines.append(line)
        elif running is not None and line.startswith((" ", "\t")):
            streamed.setdefault(running, []).append(line)  # -v: a test logs before its `--- FAIL`
    failures += _failures(pending, "", roots)
    report = failure_report("go", [*tests, *_innermost(ended, "")] if verbose else [], failures)
    report.diagnostics += _build_errors(lines, roots)
    return report


@report_parser("go-test-json", counts_tests=True)
def parse_go_test_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``go test -json``: one event per line; lines that are no event (the go command's own
    messages, compiler errors of older Go versions) are read as plain output.

    Example:
        >>> events = [{"Action": "run", "Package": "ex.com/m", "Test": "TestA"},
        ...           {"Action": "output", "Package": "ex.com/m", "Test": "TestA", "Output": "    a_test.go:9: bad\\n"},
        ...           {"Action": "fail", "Package": "ex.com/m", "Test": "TestA"},
        ...           {"Action": "skip", "Package": "ex.com/m", "Test": "TestB"}]
        >>> report = parse_go_test_json("\\n".join(json.dumps(e) for e in events))
        >>> [(d.test, d.file, d.line) for d in report.diagnostics], report.counts
        ([('TestA', 'a_test.go', 9)], TestCounts(total=2, passed=0, failed=1, skipped=1))
    """
    module = _module(roots)
    packages: dict[str, dict[str, _Test]] = {}
    statuses: dict[str, dict[str, TestStatus]] = {}
    plain: list[str] = []
    for event in _events(text, plain):
        package, test, action = str(event.get("Package") or ""), event.get("Test"), event.get("Action")
        if action == "build-output":
            plain.extend(str(event.get("Output") or "").splitlines())
        elif action == "output":  # a package's own output (a timeout's panic) is the block of test ""
            block = packages.setdefault(package, {}).setdefault(str(test or ""), _Test(str(test or "")))
            block.lines.extend(str(event.get("Output") or "").splitlines())
        elif action in ("pass", "fail", "skip") and test:
            statuses.setdefault(package, {})[str(test)] = _STATUS[str(action)]
    failures: list[TestFailure] = []
    tests: list[TestCase] = []
    for package in {**packages, **statuses}:
        ended = statuses.get(package, {})
        folder = _folder(package, module)
        blocks = packages.get(package, {})
        failing = [blocks.get(name) or _Test(name) for name, status in ended.items() if status == "failed"]
        if "" in blocks and any(_PANIC.match(ln) for ln in blocks[""].lines):
            failing.append(blocks[""])
        failures += _failures([_Test(t.name, [ln for ln in t.lines if not _MARKER.match(ln)]) for t in failing],
                              folder, roots)
        tests += _innermost(ended, folder)
    report = failure_report("go", tests, failures)
    report.diagnostics += _build_errors([*plain, *(ln for b in packages.values() if "" in b for ln in b[""].lines)],
                                        roots)
    return report


def _events(text: str, plain: list[str]) -> list[dict]:
    """The JSON events of ``text``; every other line goes to ``plain``."""
    events = []
    for line in text_lines(text):
        if not line.startswith("{"):
            plain.append(line)
            continue
        if len(line) > _MAX_EVENTS_LINE:
            raise ReportError(f"go test -json event of {len(line)} characters is too long to read")
        try:
            event = json.loads(line)
        except ValueError:
            plain.append(line)
            continue
        if not isinstance(event, dict):
            raise ReportError(f"go test -json line is not an event object: {line[:120]}")
        events.append(event)
    return events


def _build_errors(lines: list[str], roots: Roots) -> list[Diagnostic]:
    """The compiler's findings in the output (a package or its tests that did not build: no test ran).
    What a test logged is indented, so it is never taken for one."""
    return [d.model_copy(update={"hint": "the package or its tests did not build, so none of its tests ran"})
            for d in go_findings(lines, roots)]


def _innermost(ended: dict[str, TestStatus], folder: str) -> list[TestCase]:
    """The tests that ended, but not a parent whose subtests are listed (it ends as they did)."""
    return [TestCase(f"./{folder} {name}" if folder else name, status) for name, status in ended.items()
            if not any(other.startswith(f"{name}/") for other in ended)]


def _failures(pending: list[_Test], folder: str, roots: Roots) -> list[TestFailure]:
    """The innermost failing tests (a parent fails because its subtest did), located in ``folder``."""
    names = {test.name for test in pending}
    found = []
    for test in pending:
        panic = next((i for i, ln in enumerate(test.lines) if _PANIC.match(ln)), None)
        if panic is not None:
            found.append(_panicked(test, panic, folder, roots))
            continue
        lines = test.lines
        if any(other.startswith(f"{test.name}/") for other in names) and not any(_LOGGED.match(ln) for ln in lines):
            continue
        logged = next((m for ln in lines if (m := _LOGGED.match(ln))), None)
        message = _collapsed([ln.strip() for ln in lines])
        if logged:
            message = _collapsed([logged["message"], *(ln.strip() for ln in lines[lines.index(logged.string) + 1:])])
        file = f"{folder}/{logged['file']}" if logged and folder else (logged["file"] if logged else None)
        found.append(TestFailure(test=test.name, message=message.strip() or "the test failed", file=file,
                                 line=int(logged["line"]) if logged else None, test_id=_test_id(test.name, folder)))
    return found


def _collapsed(lines: list[str]) -> str:
    """The lines, a run of the same line (a check failing in a loop) written once with its count.

    Example:
        >>> _collapsed(["got 1", "a_test.go:9: got 1", "a_test.go:9: got 1", "done"])
        'got 1\\na_test.go:9: got 1 (2 times)\\ndone'
    """
    kept: list[tuple[str, int]] = []
    for line in lines:
        if kept and kept[-1][0] == line:
            kept[-1] = (line, kept[-1][1] + 1)
        else:
            kept.append((line, 1))
    return "\n".join(line if count == 1 else f"{line} ({count} times)" for line, count in kept)


def _panicked(test: _Test, start: int, folder: str, roots: Roots) -> TestFailure:
    """A panic: its message, at the innermost frame of the workspace (where it panicked); the test
    named by its block, else by the stack (a panic outside ``--- FAIL``) or the timeout's list."""
    lines = test.lines[start:]
    message = _PANIC.match(lines[0])["message"]  # type: ignore[index]
    frames = [(relativise(m["file"], roots), int(m["line"])) for ln in lines if (m := _FRAME.match(ln))]
    own = [frame for frame in frames if not frame[0].startswith("/")]
    name = test.name or next((m["name"] for ln in lines if (m := _TEST_FRAME.search(ln) or _TIMED_OUT.match(ln))),
                             "panic")
    file, line = own[0] if own else (None, None)
    if own and len(own) > 1:
        message += f" (called from {own[-1][0]}:{own[-1][1]})"
    signal = next((ln for ln in lines[1:3] if ln.startswith("[signal ")), None)
    message = f"panic: {message}" + (f"\n{signal}" if signal else "")
    return TestFailure(test=name, message=message, file=file, line=line, code="panic",
                       test_id=_test_id(name, folder))


def _test_id(name: str, folder: str) -> str:
    return f"./{folder} {name}" if folder else name


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
