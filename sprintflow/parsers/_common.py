"""What every parser shares: the report types, path and colour clean-up, JSON loading.

A parser turns one tool's raw output into a :class:`ParsedReport`. Test runners
also fill ``counts`` and ``failures``; every failure is mirrored as a
:class:`Diagnostic` so lint, typecheck and test results read the same way.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic
from sprintflow.schemas.strategies import REPORT_FORMATS

__all__ = [
    "ParsedReport",
    "Roots",
    "TestCase",
    "TestCounts",
    "TestFailure",
    "TestStatus",
    "expected_received",
    "failure_report",
    "innermost_frame",
    "load_json",
    "relativise",
    "report_parser",
    "strip_ansi",
    "strip_runner_noise",
    "text_lines",
    "without_stack",
]

Roots = str | Iterable[str]
"""Workspace roots as the tool saw them: ``/workspace`` in a container, the host path outside."""


@dataclass(frozen=True)
class TestCounts:
    """How many tests a runner ran, and how they ended."""

    __test__ = False  # a report type, not a pytest test class

    total: int
    passed: int
    failed: int
    skipped: int


TestStatus = Literal["passed", "failed", "skipped", "load_error"]
"""How a test ended; ``load_error`` is a test file that could not even be collected."""


@dataclass(frozen=True)
class TestCase:
    """One test a runner's report names, with how it ended."""

    __test__ = False  # a report type, not a pytest test class

    name: str
    """Built exactly like ``TestFailure.test``, so the two can be matched."""
    status: TestStatus
    file: str | None = None
    """The test file the runner collected it from, where the report says (relative to the tree): the
    baseline's run tells the judge which files are tests, whatever their names (:mod:`..outcomes`)."""


@dataclass(frozen=True)
class TestFailure:
    """One failed test (or a test file that could not even load)."""

    __test__ = False

    test: str
    """Full name: describe blocks and title for JS runners, ``classname.name`` for JUnit."""
    message: str
    """The error text without its stack trace, colour codes removed."""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    expected: str | None = None
    received: str | None = None
    stack: str | None = None
    code: str | None = None
    """The compiler's code when a test file failed on a type error (ts-jest: ``TS2322``)."""
    test_id: str | None = None
    """The runner's whole id where ``test`` lacks the file (``test/a.test.ts > api > 404``)."""


@dataclass
class ParsedReport:
    """What one tool report says, in the workspace's terms.

    Example:
        >>> report = ParsedReport(diagnostics=[Diagnostic(tool="tsc", message="m")])
        >>> report.error_count
        1
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    counts: TestCounts | None = None
    """Set by test runners only; ``None`` for compilers and linters."""
    failures: list[TestFailure] = field(default_factory=list)
    tests: list[TestCase] = field(default_factory=list)
    """Every test the report names, each with its status (test runners only)."""

    @property
    def error_count(self) -> int:
        """Error-severity diagnostics; for a test runner that is one per failed test."""
        return sum(d.severity == "error" for d in self.diagnostics)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def strip_ansi(text: str) -> str:
    """Remove terminal colour codes (jest ``--colors``, Playwright, ``tsc --pretty``).

    Example:
        >>> strip_ansi("Expected: \\x1b[32m404\\x1b[39m")
        'Expected: 404'
    """
    return _ANSI.sub("", text)


# `npm run` announces the script (`> pkg@1.0.0 lint`, then `> eslint .`) and its failure.
_SCRIPT_HEADER = re.compile(r"^> \S+@\S+ \S+")
_RUNNER_NOISE = re.compile(
    r"^(?:npm (?:ERR!|error|warn|WARN|notice)(?:\s|$)"
    r"|\s*ELIFECYCLE\s+Command failed|\u2009?ELIFECYCLE"
    r"|yarn run v[\d.]+$|\$ \S.*$|Done in [\d.]+s\.$|error Command failed with exit code \d+\.$"
    r"|info Visit https://yarnpkg\.com)")


def strip_runner_noise(text: str) -> str:
    """Drop what npm, pnpm and yarn print around a script: headers and failure chatter.

    Example:
        >>> strip_runner_noise("\\n> app@1.0.0 lint\\n> eslint .\\n\\nsrc/a.js\\nnpm ERR! code ELIFECYCLE")
        '\\n\\nsrc/a.js'
    """
    kept: list[str] = []
    in_header = False
    for line in text.split("\n"):
        in_header = bool(_SCRIPT_HEADER.match(line)) or (in_header and line.startswith("> "))
        if not in_header and not _RUNNER_NOISE.match(line):
            kept.append(line)
    return "\n".join(kept)


def text_lines(text: str) -> list[str]:
    """A human-readable report's lines: colours, \\r redraws and package-manager noise removed.

    Example:
        >>> text_lines("\\x1b[31mFAIL\\x1b[39m a.test.js\\r\\n")
        ['FAIL a.test.js', '']
    """
    lines = strip_ansi(text).replace("\r\n", "\n").split("\n")
    return strip_runner_noise("\n".join(line.rsplit("\r", 1)[-1] for line in lines)).split("\n")


def relativise(path: str, roots: Roots) -> str:
    """Make a path the tool printed relative to the workspace, when it lies under a root.

    The longest matching root wins, so nested roots behave; paths outside every
    root (the standard library, another checkout) come back unchanged.

    Example:
        >>> relativise("file:///workspace/src/a.ts", ["/workspace"])
        'src/a.ts'
    """
    path = path.removeprefix("file://")
    for root in sorted(_root_list(roots), key=len, reverse=True):
        root = root.rstrip("/")
        if root and path.startswith(root + "/"):
            return path[len(root) + 1:]
    return path.removeprefix("./")


def _root_list(roots: Roots) -> list[str]:
    # A bare string is one root, not an iterable of one-letter roots.
    return [roots] if isinstance(roots, str) else list(roots)


def load_json(text: str, fmt: str, hint: str) -> Any:
    """Decode a JSON report, or say which report was broken and how to get a good one.

    Example:
        >>> load_json('[]', "eslint", "eslint --format json")
        []
    """
    if not text.strip():
        raise ReportError(f"{fmt} report is empty; expected the JSON of `{hint}`")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        start = text.strip()[:60]
        raise ReportError(f"{fmt} report is not valid JSON ({exc}); it starts with {start!r}. "
                          f"Expected the JSON of `{hint}`") from exc


Parser = Callable[[str, Roots], ParsedReport]

PARSERS: dict[str, Parser] = {}
"""Report format name -> its parser, as :func:`report_parser` registers them."""
TEST_RUNNER_FORMATS: set[str] = set()
"""Formats whose parser fills ``counts``, ``failures`` and ``tests``."""


def report_parser(fmt: str, *, counts_tests: bool = False) -> Callable[[Callable[..., ParsedReport]], Parser]:
    """Register a parser as the one of ``fmt`` (a name of :data:`~sprintflow.schemas.strategies.REPORT_FORMATS`),
    made to raise :class:`ReportError` for a report of the wrong shape. ``counts_tests``: it fills the
    report's counts, failures and tests.

    Reports come from other programs, perhaps written by the code under test; a missing key, a string
    where a number belongs, 100,000 levels of nesting must become a clear, catchable error instead of a
    stray traceback.
    """
    if fmt not in REPORT_FORMATS or fmt in PARSERS:
        raise ValueError(f"{fmt!r} is not a report format of REPORT_FORMATS, or has a parser already")

    def decorate(parse: Callable[..., ParsedReport]) -> Parser:
        @functools.wraps(parse)
        def guarded(text: str, roots: Roots = ()) -> ParsedReport:
            try:
                return parse(text, roots)
            except ReportError:
                raise
            except RecursionError:
                raise ReportError(f"the {fmt} report is nested too deeply to read") from None
            except (KeyError, IndexError, TypeError, ValueError, AttributeError, SyntaxError) as exc:
                raise ReportError(f"{fmt} report has an unexpected shape: "
                                  f"{type(exc).__name__}: {str(exc)[:200]}") from None

        PARSERS[fmt] = guarded
        if counts_tests:
            TEST_RUNNER_FORMATS.add(fmt)
        return guarded

    return decorate


# `at fn (/abs/file.js:1:2)`, `at file:///abs/file.js:1:2`, `at tests/a.test.js:1:2`
_JS_FRAME = re.compile(r"^\s*at (?:.*?\()?(?P<file>[^\s()]+?):(?P<line>\d+):(?P<col>\d+)\)?\s*$",
                       re.MULTILINE)
# pytest's long/short tracebacks (`tests/a.py:12: in test_x`) and native ones.
_PY_FRAME = re.compile(r'^(?P<file>[^\s:"][^:\n"]*\.py):(?P<line>\d+):(?: |$)'
                       r'|^\s*File "(?P<nfile>[^"]+\.py)", line (?P<nline>\d+)', re.MULTILINE)
_VENDOR = ("node_modules/", "site-packages/", "dist-packages/", "/lib/python", "node:", "<")


def innermost_frame(stack: str, roots: Roots) -> tuple[str, int, int | None] | None:
    """The innermost stack frame in the workspace's own code, as ``(file, line, column)``.

    JavaScript stacks list the innermost frame first, Python tracebacks last.
    Frames in dependencies and the runtime are skipped; a frame the tool printed
    relative, or under a root, is preferred over another absolute path.

    Example:
        >>> innermost_frame("Error: x\\n    at /w/node_modules/r.js:1:1\\n    at /w/a.test.js:9:35",
        ...                 ["/w"])
        ('a.test.js', 9, 35)
    """
    frames: list[tuple[str, int, int | None]] = []
    for match in _JS_FRAME.finditer(stack):
        frames.append((match["file"], int(match["line"]), int(match["col"])))
    for match in reversed(list(_PY_FRAME.finditer(stack))):
        file, line = match["file"] or match["nfile"], match["line"] or match["nline"]
        frames.append((file, int(line), None))
    own = [(relativise(f, roots), line, col) for f, line, col in frames
           if not any(marker in f for marker in _VENDOR)]
    inside = [frame for frame in own if not frame[0].startswith("/")]
    candidates = inside or own
    return candidates[0] if candidates else None


def without_stack(text: str) -> str:
    """The error message part of an error text: up to its first JavaScript stack frame.

    Example:
        >>> without_stack("TypeError: boom\\n    at a.js:1:2")
        'TypeError: boom'
    """
    match = _JS_FRAME.search(text)
    return (text[:match.start()] if match else text).strip()


# jest, Playwright: `Expected: 404` / `Received: 500` (also `Expected string: "x"`).
_EXPECTED_LINE = re.compile(r"^\s*Expected(?: [a-z ]+)?: (?P<value>.+)$", re.MULTILINE)
_RECEIVED_LINE = re.compile(r"^\s*Received(?: [a-z ]+)?: (?P<value>.+)$", re.MULTILINE)
# chai (vitest): `expected 500 to be 404 // Object.is equality`, `expected {…} to deeply equal {…}`
# (`to be a number`, `to be an instance of …` name a kind, not a value: no match.)
_CHAI = re.compile(r"expected (?P<received>.+?) to (?:be|(?:deeply |strictly )?equal) (?!an? )"
                   r"(?P<expected>.+?)(?: // .*)?$", re.MULTILINE)
# pytest: `assert 500 == 404`, `E       AssertionError: assert 500 == 404`
_PYTEST = re.compile(r"^(?:E\s+)?(?:AssertionError: )?assert (?P<received>.+?) == (?P<expected>.+)$",
                     re.MULTILINE)


def expected_received(message: str) -> tuple[str | None, str | None]:
    """Pull the expected and received values out of an assertion message.

    Example:
        >>> expected_received("AssertionError: expected 500 to be 404 // Object.is equality")
        ('404', '500')
        >>> expected_received("Expected: 404\\nReceived: 500")
        ('404', '500')
    """
    message = strip_ansi(message)
    found = _stated_values(message)
    # A value shown cut (`{ items: [ …(2) ] }` on both sides) says nothing: the diff shows what differs.
    if found[0] is not None and (found[0] == found[1] or "…" in found[0] + (found[1] or "")):
        return _diff_values(message) or found
    return found


def _stated_values(message: str) -> tuple[str | None, str | None]:
    expected, received = _EXPECTED_LINE.search(message), _RECEIVED_LINE.search(message)
    if expected or received:
        return (expected["value"].strip() if expected else None,
                received["value"].strip() if received else None)
    for pattern in (_CHAI, _PYTEST):
        match = pattern.search(message)
        if match:
            return match["expected"].strip(), match["received"].strip()
    return None, None


def _diff_values(message: str) -> tuple[str, str] | None:
    """The lines a ``- Expected / + Received`` diff (jest, vitest) shows differing, each side in one line.

    Example:
        >>> _diff_values("- Expected\\n+ Received\\n\\n  {\\n-   a: 1,\\n+   a: 2,\\n  }")
        ('a: 1,', 'a: 2,')
    """
    header = _DIFF_HEADER.search(message)
    if header is None:
        return None
    minus: list[str] = []
    plus: list[str] = []
    for line in message[header.end():].splitlines():
        if change := _DIFF_LINE.match(line):
            (minus if change["sign"] == "-" else plus).append((change["text"] or "").strip())
    if not minus and not plus:
        return None
    return " ".join(minus)[:300], " ".join(plus)[:300]


_DIFF_HEADER = re.compile(r"^\s*- Expected(?:\s+- \d+)?\s*\n\s*\+ Received(?:\s+\+ \d+)?\s*$", re.MULTILINE)
_DIFF_LINE = re.compile(r"^\s*(?P<sign>[-+])(?: (?P<text>.*)|(?P<empty>))$")


def failure_report(tool: str, tests: Sequence[TestCase], failures: Sequence[TestFailure]) -> ParsedReport:
    """A test runner's report: every test, the failures, and one diagnostic per failure.

    Counts come from ``tests``: a test file that could not load counts as failed.

    Example:
        >>> report = failure_report("vitest", [TestCase("a b", "failed"), TestCase("a c", "passed"),
        ...                                    TestCase("a d", "skipped")],
        ...                         [TestFailure(test="a b", message="boom")])
        >>> report.counts, report.error_count
        (TestCounts(total=3, passed=1, failed=1, skipped=1), 1)
    """
    diagnostics = [
        Diagnostic(tool=tool, message=f"{f.test}: {f.message}", file=f.file, line=f.line,
                   column=f.column, expected=f.expected, received=f.received, code=f.code,
                   test=f.test_id or f.test)
        for f in failures
    ]
    statuses = [test.status for test in tests]
    counts = TestCounts(total=len(statuses), passed=statuses.count("passed"),
                        failed=statuses.count("failed") + statuses.count("load_error"),
                        skipped=statuses.count("skipped"))
    return ParsedReport(diagnostics=diagnostics, counts=counts, failures=list(failures), tests=list(tests))
