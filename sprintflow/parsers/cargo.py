"""Cargo's output: rustc and clippy diagnostics, ``cargo test`` results, ``cargo fmt --check`` diffs.

The human-readable format (``cargo``) is what ``cargo build``, ``check``, ``clippy``, ``test`` and
``fmt --check`` print by default; one parser reads them all, as a command often chains several:

- a diagnostic is a header (``error[E0425]: cannot find value `x` in this scope``,
  ``warning: unused variable: `y```) and, on one of the next lines, its primary location
  (`` --> src/lib.rs:12:5``); the notes below it may name other places, which are not its own.
  A lint's name is the code: rustc says it in a ``= note: `#[warn(unused_variables)]` on by default``,
  but only for the first finding of each lint, so later ones borrow the code of an earlier finding
  with the same message shape; clippy also names its lint in the help link (``…/index.html#len_zero``).
- ``cargo test`` lists each test (``test tests::name ... ok|FAILED|ignored``), then a
  ``---- tests::name stdout ----`` section per failure holding the panic
  (``thread 'tests::name' panicked at src/lib.rs:10:5:`` and the message, with ``left:`` and
  ``right:`` for ``assert_eq!``), then ``test result: FAILED. 1 passed; 1 failed; 1 ignored; …``.
  Ignored tests count as skipped. ``cargo test -q`` prints dots instead of names: then the counts of
  the ``test result:`` lines are the ones claimed. ``left`` is read as the expected value and
  ``right`` as the received one (Rust does not say which is which; the message keeps both). A doctest
  (``src/lib.rs - hamming (line 77)``) panics at a line of its example, so its name places it.
  A panic placed outside the project's code (``assert_cmd`` panics in ``library/core/src/ops/function.rs``
  of the standard library, a dependency in ``~/.cargo/registry/…``) is placed, in order, at the panic of
  the program the test ran that its message quotes (``thread 'main' panicked at src/main.rs:340:98:``),
  at the first frame in the project's code of the test's backtrace (``RUST_BACKTRACE=1``), or, for the
  standard library and downloaded crates, nowhere (another checkout's path is kept).
  Backtraces are left out of the messages, the ones a message quotes too.
- A test target that does not compile (``error: could not compile `app` (lib test) due to 1 previous
  error``) is a test that could not load: it fails, located at its first compile error.
- ``cargo fmt --check`` prints one ``Diff in /abs/src/lib.rs:81:`` per hunk (older rustfmt:
  ``Diff in /abs/src/lib.rs at line 81:``), numbered from the hunk's first context line; the finding
  (an error: ``--check`` fails on it) is placed on its first changed line.

Paths are as cargo prints them: relative to the workspace root (``member/src/lib.rs`` in a
workspace) for rustc and panics, absolute for rustfmt, so ``roots`` strips the latter.

``cargo-json`` is ``--message-format=json``: one JSON object per line, of which only
``compiler-message`` matters; ``cargo test --message-format=json`` prints its tests' human output on
the same stream, which is read as above. A crate built twice (for the host, as a proc macro's
dependency, and for the target) has each finding twice there, once in the human output (which says
"1 duplicate"): it is kept once.

``cargo-nextest`` is what ``cargo nextest run`` prints: a status line per test
(``        FAIL [   0.010s] (20/97) strsim tests::hamming_diff``: binary, then test), each failure's
output indented below it (``  stdout ───``, ``  stderr ───``), and a ``Summary`` line that also counts
the skipped tests, which are not listed. The build before it is cargo's and read as above.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestCounts,
    TestFailure,
    TestStatus,
    failure_report,
    relativise,
    report_parser,
    text_lines,
)

__all__ = ["RUST_PANIC", "parse_cargo", "parse_cargo_json", "parse_cargo_nextest"]

TOOL = "cargo"

_HEADER = re.compile(r"^(?P<level>error|warning)(?:\[(?P<code>[A-Z]\d{4})\])?: (?P<message>.+)$")
_LOCATION = re.compile(r"^\s*--> (?P<file>.+):(?P<line>\d+):(?P<col>\d+)$")
_LINT_NOTE = re.compile(r"^\s*= note: `#\[(?:warn|deny|forbid)\((?P<lint>[\w:]+)\)\]`")
_CLIPPY_LINK = re.compile(r"^\s*= help: for further information visit https://rust-lang\.github\.io/"
                          r"rust-clippy/\S*#(?P<lint>\w+)$")
# What cargo and rustc say about a build as a whole, located nowhere.
_SUMMARY = re.compile(r"^(?:`[^`]+` \(.*\) generated \d+ warnings?|build failed, waiting for other jobs"
                      r"|aborting due to|\d+ warnings? emitted|test failed, to rerun|doctest failed"
                      r"|\d+ targets? failed|no edition set|test run failed)")
_NOT_COMPILED = re.compile(r"^error: could not compile `(?P<crate>[^`]+)` \((?P<target>[^)]*)\)")
_BACKTICKED = re.compile(r"`[^`]*`")

_RUNNING = re.compile(r"^running \d+ tests?$")
_TEST_LINE = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<status>ok|FAILED|ignored)(?:, .*)?$")
_STATUS: dict[str, TestStatus] = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
_SECTION = re.compile(r"^---- (?P<name>.+) stdout ----$")
_RESULT = re.compile(r"^test result: \w+\. (?P<passed>\d+) passed; (?P<failed>\d+) failed; "
                     r"(?P<ignored>\d+) ignored;")
# Rust 1.73+: `thread 'x' (1234) panicked at src/lib.rs:10:5:` then the message on its own lines.
RUST_PANIC = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at "
                        r"(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+):$", re.MULTILINE)
"""Where a Rust test panicked, as libtest prints it (cargo test, nextest, nextest's JUnit)."""
# Before 1.73: `thread 'x' panicked at 'message', src/lib.rs:10:5`, the message over several lines.
_OLD_PANIC = re.compile(r"^thread '(?P<thread>[^']*)' panicked at '(?P<message>.*)$")
_OLD_PANIC_END = re.compile(r"^(?P<message>.*)', (?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)$")
_PANIC_END = ("note: run with `RUST_BACKTRACE", "stack backtrace:")
# A panic quoted in a test's message (the stderr of a program the test ran, Debug-escaped or boxed).
_QUOTED_PANIC = re.compile(r"thread \\?'[^']*\\?'(?: \(\d+\))? panicked at "
                           r"(?P<file>[^\s:'`][^:'`]*):(?P<line>\d+):(?P<col>\d+):")
# A backtrace frame (`  13: test_version::test_align`) and the line under it (`at ./tests/a.rs:248:40`).
_FRAME = re.compile(r"^\s*\d+: (?P<function>\S.*)$")
_FRAME_AT = re.compile(r"^\s+at (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
_QUOTE_PREFIX = re.compile(r"^[\s│├└─]*")  # assert_cmd's boxes around a program's output
# Code nobody in the project can change: the standard library and the dependencies cargo downloaded.
_FOREIGN = re.compile(r"^/rustc/|/rustlib/|/\.cargo/(?:registry|git)/")
_LEFT = re.compile(r"^\s*left: (?P<value>.*)$")
_RIGHT = re.compile(r"^\s*right: (?P<value>.*)$")
_DOCTEST = re.compile(r"^(?P<file>\S+) - .*\(line (?P<line>\d+)\)$")

_DIFF = re.compile(r"^Diff in (?P<file>.+?)(?::(?P<line>\d+)| at line (?P<at>\d+)):$")
_RUSTFMT_RESET = re.compile(r"\x1b\(B")  # rustfmt's terminal reset, which text_lines leaves behind


@report_parser("cargo", counts_tests=True)
def parse_cargo(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what ``cargo build``, ``check``, ``clippy``, ``test`` or ``fmt --check`` printed.

    Example:
        >>> report = parse_cargo("error[E0425]: cannot find value `x` in this scope\\n"
        ...                      "  --> src/lib.rs:12:5\\n")
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.severity, report.counts
        ('src/lib.rs', 12, 5, 'E0425', 'error', None)
        >>> report = parse_cargo("running 2 tests\\ntest t::a ... ok\\ntest t::b ... FAILED\\n\\nfailures:\\n\\n"
        ...                      "---- t::b stdout ----\\n\\nthread 't::b' (7) panicked at src/lib.rs:9:5:\\n"
        ...                      "assertion `left == right` failed\\n  left: 1\\n right: 2\\n\\n")
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received, report.counts.failed
        ('t::b', 'src/lib.rs', 9, '1', '2', 1)
    """
    return _read(text_lines(_RUSTFMT_RESET.sub("", text)), roots, [])


@report_parser("cargo-json", counts_tests=True)
def parse_cargo_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``cargo … --message-format=json``: its compiler messages, and any test output between them.

    Example:
        >>> line = ('{"reason":"compiler-message","message":{"level":"warning","message":"unused variable",'
        ...         '"code":{"code":"unused_variables"},"spans":[{"is_primary":true,'
        ...         '"file_name":"src/lib.rs","line_start":3,"column_start":9}]}}')
        >>> d = parse_cargo_json(line + '\\n{"reason":"build-finished","success":true}').diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.severity
        ('src/lib.rs', 3, 9, 'unused_variables', 'warning')
    """
    diagnostics: list[Diagnostic] = []
    other: list[str] = []
    messages = 0
    for line in text_lines(text):
        event = _json_object(line)
        if event is None:
            other.append(line)
            continue
        messages += 1
        if event.get("reason") == "compiler-message" and isinstance(event.get("message"), dict):
            found = _json_diagnostic(event["message"], roots)
            # A crate built twice (for the host, as a proc macro's dependency, and for the target)
            # reports each finding twice; the human output says "(1 duplicate)" and shows it once.
            if found is not None and found not in diagnostics:
                diagnostics.append(found)
    if not messages:
        start = text.strip()[:60]
        raise ReportError(f"cargo-json report has no JSON messages; it starts with {start!r}. "
                          "Expected the output of `cargo build --message-format=json`")
    return _read(other, roots, diagnostics)


# --- the human-readable output ----------------------------------------------------------------

@dataclass
class _Run:
    """What one report says, gathered line by line."""

    roots: Roots
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tests: list[TestCase] = field(default_factory=list)
    failures: list[TestFailure] = field(default_factory=list)
    sections: dict[str, list[str]] = field(default_factory=dict)
    reported: list[tuple[int, int, int]] = field(default_factory=list)
    """The counts of each ``test result:`` line: passed, failed, ignored."""
    ran_tests: bool = False
    unloaded: list[tuple[str, Diagnostic | None]] = field(default_factory=list)
    pending: list[Diagnostic] = field(default_factory=list)
    """Errors since the last ``could not compile``: the next one that names a test target owns them."""
    codes: dict[str, str] = field(default_factory=dict)
    """The code of each message shape seen so far (:func:`_shape`)."""


def _read(lines: list[str], roots: Roots, diagnostics: list[Diagnostic]) -> ParsedReport:
    run = _Run(roots, diagnostics=diagnostics)
    run.pending = [d for d in diagnostics if d.severity == "error"]
    header: tuple[re.Match[str], list[str]] | None = None
    section: list[str] | None = None
    diff: tuple[re.Match[str], list[str]] | None = None
    for line in lines:
        if section is not None and not (_SECTION.match(line) or line == "failures:"
                                        or line.startswith("test result: ")):
            section.append(line)
            continue
        section = None
        if diff is not None:
            if line[:1] in (" ", "-", "+") or line == "":
                diff[1].append(line)
                continue
            run.diagnostics += _format_findings(*diff, roots)
            diff = None
        if header is not None and (_HEADER.match(line) or _is_test_output(line) or _DIFF.match(line)
                                   or _SECTION.match(line)):
            _add_compiler_diagnostic(run, *header)
            header = None
        if header is not None:
            header[1].append(line)
        elif match := _HEADER.match(line):
            if not_compiled := _NOT_COMPILED.match(line):
                _not_compiled(run, not_compiled)
            elif not _SUMMARY.match(match["message"]):
                header = (match, [])
        elif match := _DIFF.match(line):
            diff = (match, [])
        elif match := _SECTION.match(line):
            section = run.sections.setdefault(match["name"], [])
        else:
            _test_line(run, line)
    if header is not None:
        _add_compiler_diagnostic(run, *header)
    if diff is not None:
        run.diagnostics += _format_findings(*diff, roots)
    return _report(run)


def _is_test_output(line: str) -> bool:
    return bool(_RUNNING.match(line) or line.startswith("test result: ")
                or line.startswith("test ") and _TEST_LINE.match(line))


def _test_line(run: _Run, line: str) -> None:
    if _RUNNING.match(line):
        run.ran_tests = True
    elif line.startswith("test result: "):
        if result := _RESULT.match(line):
            run.reported.append((int(result["passed"]), int(result["failed"]), int(result["ignored"])))
    elif line.startswith("test ") and (test := _TEST_LINE.match(line)):
        name = test["name"].removesuffix(" - should panic")
        run.tests.append(TestCase(name, _STATUS[test["status"]]))


# --- compiler diagnostics ---------------------------------------------------------------------

def _add_compiler_diagnostic(run: _Run, header: re.Match[str], body: list[str]) -> None:
    """One rustc or clippy finding: located at its first ``-->``; unlocated only when it is an error."""
    location = next((m for line in body if (m := _LOCATION.match(line))), None)
    if location is None and header["level"] != "error":
        return
    # rustc names a lint once per crate: a finding of the same shape before this one has its name.
    shape = _shape(header["message"])
    code = header["code"] or _lint(body) or run.codes.get(shape)
    if code:
        run.codes.setdefault(shape, code)
    diagnostic = Diagnostic(
        tool=TOOL, severity="error" if header["level"] == "error" else "warning", code=code,
        message=header["message"].strip(),
        file=relativise(location["file"], run.roots) if location else None,
        line=int(location["line"]) if location else None,
        column=int(location["col"]) if location else None)
    run.diagnostics.append(diagnostic)
    if diagnostic.severity == "error":
        run.pending.append(diagnostic)


def _lint(body: list[str]) -> str | None:
    """The lint a warning or denied lint belongs to, where this finding names it."""
    for line in body:
        if note := _LINT_NOTE.match(line):
            return note["lint"]
    for line in body:
        if link := _CLIPPY_LINK.match(line):
            return f"clippy::{link['lint']}"
    return None


def _shape(message: str) -> str:
    """A message with its quoted names left out: ``unused variable: `…```."""
    return _BACKTICKED.sub("`…`", message.strip())


def _not_compiled(run: _Run, match: re.Match[str]) -> None:
    """``could not compile `x` (lib test)``: a test target that failed to build could not load."""
    pending, run.pending = run.pending, []
    if "test" not in match["target"].split():
        return
    run.ran_tests = True
    run.unloaded.append((f"{match['crate']} ({match['target']})", pending[0] if pending else None))


# --- test failures ----------------------------------------------------------------------------

def _failure(name: str, lines: list[str], roots: Roots) -> TestFailure:
    """A failing test's section: its panic's place and message, or, failing that, what it printed."""
    location: tuple[str, int, int] | None = None
    message_lines: list[str] = []
    for i, line in enumerate(lines):
        if panic := RUST_PANIC.match(line):
            location = (panic["file"], int(panic["line"]), int(panic["col"]))
            message_lines = _until_end(lines[i + 1:])
            if not _own_code(location[0], roots):
                location = _own_place(name, lines[i + 1:], roots) or (
                    None if _FOREIGN.search(location[0]) else location)
            break
        if (old := _OLD_PANIC.match(line)) and (quoted := _old_panic(old["message"], lines[i + 1:])):
            location, message_lines = quoted
            break
    if not message_lines:
        message_lines = _until_end(lines)
    if doctest := _DOCTEST.match(name):
        # A doctest's panic is numbered within the example, not the file: its name says where it is.
        location = (doctest["file"], int(doctest["line"]), 0)
    message = "\n".join(message_lines).strip() or "the test failed"
    left = next((m["value"].strip() for ln in message_lines if (m := _LEFT.match(ln))), None)
    right = next((m["value"].strip() for ln in message_lines if (m := _RIGHT.match(ln))), None)
    return TestFailure(test=name, message=message,
                       file=relativise(location[0], roots) if location else None,
                       line=location[1] if location else None,
                       column=location[2] or None if location else None,
                       expected=left, received=right)


def _own_code(file: str, roots: Roots) -> bool:
    """Whether a path rustc or a backtrace printed is the project's Rust code: relative to the workspace
    root, not the standard library (``/rustc/…``), a dependency (``~/.cargo/registry/…``) or C."""
    path = relativise(file, roots)
    return path.endswith(".rs") and not path.startswith(("/", "<", "../"))


def _own_place(test: str, after: list[str], roots: Roots) -> tuple[str, int, int] | None:
    """Where a test whose panic is placed in another crate's code failed in the project's.

    ``assert_cmd`` panics in a closure of the standard library (``library/core/src/ops/function.rs``),
    a dependency's own panic is placed in the dependency. The message may quote the panic of the
    program the test ran (its stderr, in the message: ``thread 'main' panicked at src/main.rs:340:98:``),
    the fault itself; else, with ``RUST_BACKTRACE`` set, the test's backtrace names the first frame in the
    project's code (the test's line, or the project's code that called the dependency).
    """
    for line in after:
        if line.startswith(_PANIC_END):
            break
        for quoted in _QUOTED_PANIC.finditer(line):
            if _own_code(quoted["file"], roots):
                return relativise(quoted["file"], roots), int(quoted["line"]), int(quoted["col"])
    blocks = _backtraces(after)
    block = next((b for b in blocks if any(_is_test_frame(function, test) for function, _ in b)),
                 blocks[-1] if blocks else [])
    for _, place in block:
        if place is not None and _own_code(place[0], roots):
            return relativise(place[0], roots), place[1], place[2]
    return None


def _backtraces(lines: list[str]) -> list[list[tuple[str, tuple[str, int, int] | None]]]:
    """Each ``stack backtrace:`` in ``lines``: its frames, each a function and where it is (if printed)."""
    blocks: list[list[tuple[str, tuple[str, int, int] | None]]] = []
    block: list[tuple[str, tuple[str, int, int] | None]] | None = None
    for line in lines:
        if line == "stack backtrace:":
            block = []
            blocks.append(block)
        elif block is None:
            continue
        elif frame := _FRAME.match(line):
            block.append((frame["function"], None))
        elif (at := _FRAME_AT.match(line)) and block and block[-1][1] is None:
            block[-1] = (block[-1][0], (at["file"], int(at["line"]), int(at["col"])))
        elif not line.startswith(" "):
            block = None
    return blocks


def _is_test_frame(function: str, test: str) -> bool:
    """``integration_tests::skip::basic`` (or its ``::{{closure}}``) is the frame of test ``skip::basic``."""
    function = function.removesuffix("::{{closure}}")
    return function == test or function.endswith(f"::{test}")


def _old_panic(first: str, rest: list[str]) -> tuple[tuple[str, int, int], list[str]] | None:
    """The quoted message of a panic before Rust 1.73 and the place after it."""
    message: list[str] = []
    for line in [first, *rest]:
        if end := _OLD_PANIC_END.match(line):
            return (end["file"], int(end["line"]), int(end["col"])), [*message, end["message"]]
        message.append(line)
    return None


def _until_end(lines: list[str]) -> list[str]:
    """A panic message: its lines up to the backtrace note, less the backtraces it quotes."""
    taken: list[str] = []
    in_backtrace = False
    for line in lines:
        if line.startswith(_PANIC_END):
            break
        # A program the test ran printed its own panic, or anyhow its error's backtrace: the message
        # quotes them (`│   stack backtrace:`, `Stack backtrace:`); their frames are noise.
        content = _QUOTE_PREFIX.sub("", line)
        if content.lower() == "stack backtrace:":
            in_backtrace = True
            continue
        if in_backtrace and (_FRAME.match(content) or _FRAME_AT.match(f" {content}")
                             or content.startswith("note: Some details are omitted")):
            continue
        in_backtrace = False
        if content.startswith("note: run with `RUST_BACKTRACE"):
            continue
        taken.append(line)
    while taken and not taken[-1].strip():
        taken.pop()
    return taken


def _report(run: _Run) -> ParsedReport:
    failures = [_failure(name, lines, run.roots) for name, lines in run.sections.items()]
    named = {test.name for test in run.tests}
    tests = run.tests + [TestCase(f.test, "failed") for f in failures if f.test not in named]
    for target, first_error in run.unloaded:
        tests.append(TestCase(target, "load_error"))
        if first_error is not None:
            run.diagnostics.remove(first_error)  # the failure below reports it
        failures.append(TestFailure(
            test=target, message=f"did not compile: {first_error.message}" if first_error else "did not compile",
            file=first_error.file if first_error else None, line=first_error.line if first_error else None,
            column=first_error.column if first_error else None, code=first_error.code if first_error else None))
    if not (run.ran_tests or tests or run.reported):
        return ParsedReport(diagnostics=run.diagnostics)
    report = failure_report(TOOL, tests, failures)
    report.diagnostics = run.diagnostics + report.diagnostics
    passed, failed, ignored = (sum(result[i] for result in run.reported) for i in range(3))
    if passed + failed + ignored > sum(test.status != "load_error" for test in tests):
        # `cargo test -q` prints a dot per test: only the summary lines count them all.
        unloaded = len(run.unloaded)
        report.counts = TestCounts(total=passed + failed + ignored + unloaded, passed=passed,
                                   failed=failed + unloaded, skipped=ignored)
    return report


# --- cargo nextest ---------------------------------------------------------------------------

_NEXTEST_STATUS = re.compile(r"^ +(?P<status>[A-Z][A-Z-]*(?: \d+/\d+)?|TRY \d+ [A-Z-]+) +\[[^\]]*\] "
                             r"(?:\( *\d+/\d+\) )?(?P<binary>\S+) (?P<name>\S+)$")
_NEXTEST_PASSED = ("PASS", "FLAKY", "LEAK")
_NEXTEST_SKIPPED = "SKIP"
_NEXTEST_SUMMARY = re.compile(r"^ +Summary \[.*\] .*tests? run: .*?(?:(?P<skipped>\d+) skipped)?$")
_NEXTEST_RULE = "────────────"


@report_parser("cargo-nextest", counts_tests=True)
def parse_cargo_nextest(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what ``cargo nextest run`` printed: its tests, and cargo's build before them.

    Example:
        >>> report = parse_cargo_nextest(
        ...     "        PASS [   0.01s] (1/2) app t::a\\n        FAIL [   0.01s] (2/2) app t::b\\n"
        ...     "  stderr ───\\n\\n    thread 't::b' (3) panicked at src/lib.rs:4:5:\\n    boom\\n\\n"
        ...     "────────────\\n     Summary [   0.02s] 2 tests run: 1 passed, 1 failed, 1 skipped\\n")
        >>> f = report.failures[0]
        >>> f.test, f.test_id, f.file, f.line, f.message, report.counts
        ('t::b', 'app t::b', 'src/lib.rs', 4, 'boom', TestCounts(total=3, passed=1, failed=1, skipped=1))
    """
    statuses: dict[tuple[str, str], str] = {}
    outputs: dict[tuple[str, str], list[str]] = {}
    output: list[str] | None = None
    skipped = 0
    rest: list[str] = []
    for line in text_lines(text):
        if status := _NEXTEST_STATUS.match(line):
            key = (status["binary"], status["name"])
            statuses[key] = status["status"]
            output = outputs.setdefault(key, []) if _nextest_failed(status["status"]) else None
        elif summary := _NEXTEST_SUMMARY.match(line):
            skipped = int(summary["skipped"] or 0)
            output = None
        elif line.startswith(_NEXTEST_RULE):
            output = None
        elif output is not None and (line.startswith(" ") or not line):
            output.append(line.removeprefix("    "))
        else:
            output = None
            rest.append(line)
    build = _read(rest, roots, [])
    tests = [TestCase(name, "skipped" if status == _NEXTEST_SKIPPED else
                      "failed" if _nextest_failed(status) else "passed") for (_, name), status in statuses.items()]
    tests += [test for test in build.tests if test.status == "load_error"]
    failures = [_with_id(_failure(name, outputs.get((binary, name), []), roots), f"{binary} {name}")
                for (binary, name), status in statuses.items() if _nextest_failed(status)]
    unloaded = {test.name for test in tests if test.status == "load_error"}
    failures += [f for f in build.failures if f.test in unloaded]
    report = failure_report(TOOL, tests, failures)
    report.diagnostics = [d for d in build.diagnostics if d.test is None] + report.diagnostics
    skipped -= sum(test.status == "skipped" for test in tests)  # listed with `--status-level skip`
    if report.counts is not None and skipped > 0:
        counts = report.counts
        report.counts = TestCounts(total=counts.total + skipped, passed=counts.passed, failed=counts.failed,
                                   skipped=counts.skipped + skipped)
    return report


def _nextest_failed(status: str) -> bool:
    """A status that fails the run: FAIL, TIMEOUT, SIGSEGV, ABORT, LEAK-FAIL, ``TRY 2 FAIL``…"""
    words = status.split()
    final = words[-1] if words[0] == "TRY" else words[0]
    return final not in (*_NEXTEST_PASSED, _NEXTEST_SKIPPED)


def _with_id(failure: TestFailure, test_id: str) -> TestFailure:
    return TestFailure(test=failure.test, message=failure.message, file=failure.file, line=failure.line,
                       column=failure.column, expected=failure.expected, received=failure.received,
                       test_id=test_id)


# --- rustfmt ----------------------------------------------------------------------------------

def _format_findings(match: re.Match[str], hunk: list[str], roots: Roots) -> list[Diagnostic]:
    """One finding per ``Diff in`` hunk, on the first line rustfmt would change."""
    start = int(match["line"] or match["at"])
    context = 0
    for line in hunk:
        if line.startswith(("-", "+")):
            break
        context += 1
    removed = next((line[1:].strip() for line in hunk if line.startswith("-")), "")
    added = next((line[1:].strip() for line in hunk if line.startswith("+")), "")
    message = "rustfmt would reformat this code"
    if removed or added:
        message += f": `{removed[:120]}` -> `{added[:120]}`"
    return [Diagnostic(tool=TOOL, code="rustfmt", message=message, file=relativise(match["file"], roots),
                       line=start + context)]


# --- --message-format=json ------------------------------------------------------------------------

def _json_object(line: str) -> dict[str, Any] | None:
    """A line's JSON object, or None for the human-readable lines around them."""
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _json_diagnostic(message: dict[str, Any], roots: Roots) -> Diagnostic | None:
    level = str(message.get("level") or "")
    text = str(message.get("message") or "").strip()
    if not (level == "warning" or level.startswith("error")) or not text or text.startswith("aborting due to"):
        return None  # failure-notes, and the summaries rustc adds
    spans = [span for span in message.get("spans") or [] if isinstance(span, dict)]
    span = next((s for s in spans if s.get("is_primary")), None)
    span = _outside_macros(span) if span is not None else None
    if span is None and level == "warning":
        return None
    code = message.get("code")
    return Diagnostic(
        tool=TOOL, severity="warning" if level == "warning" else "error", message=text.split("\n")[0],
        code=str(code["code"]) if isinstance(code, dict) and code.get("code") else None,
        file=relativise(str(span["file_name"]), roots) if span else None,
        line=int(span["line_start"]) if span else None,
        column=int(span["column_start"]) if span and span.get("column_start") is not None else None)


def _outside_macros(span: dict[str, Any]) -> dict[str, Any]:
    """A span inside a macro of another crate points at its expansion: the call site is the code's."""
    for _ in range(64):
        file = str(span.get("file_name") or "")
        expansion = span.get("expansion")
        if not (file.startswith(("/", "<")) and isinstance(expansion, dict)
                and isinstance(expansion.get("span"), dict)):
            break
        span = expansion["span"]
    return span
