"""Parsers that turn real tool output into located diagnostics.

One function per report format, each ``parse_x(text, roots) -> ParsedReport``;
``roots`` are the workspace paths the tool may have printed (``/workspace`` in a
container, the host path outside) and are stripped so every file is
workspace-relative. A report that cannot be read raises
:class:`~sprintflow.errors.ReportError`, never a bare traceback and never an
empty result.

Example:
    >>> report = parse_report("tsc", "src/a.ts(12,5): error TS2345: Bad argument.")
    >>> report.error_count, report.diagnostics[0].code
    (1, 'TS2345')
"""

from __future__ import annotations

from collections.abc import Callable

from sprintflow.errors import ReportError

from ._common import ParsedReport, Roots, TestCase, TestCounts, TestFailure, TestStatus
from .eslint import parse_eslint_json
from .jest_style import parse_jest_json, parse_vitest_json
from .junit import parse_junit_xml
from .playwright import parse_playwright_json
from .python_tools import parse_mypy, parse_ruff_json
from .typescript import parse_tsc

__all__ = [
    "PARSERS",
    "ParsedReport",
    "Roots",
    "TestCase",
    "TestCounts",
    "TestFailure",
    "TestStatus",
    "parse_eslint_json",
    "parse_jest_json",
    "parse_junit_xml",
    "parse_mypy",
    "parse_playwright_json",
    "parse_report",
    "parse_ruff_json",
    "parse_tsc",
    "parse_vitest_json",
]

PARSERS: dict[str, Callable[[str, Roots], ParsedReport]] = {
    "tsc": parse_tsc,
    "eslint": parse_eslint_json,
    "ruff": parse_ruff_json,
    "mypy": parse_mypy,
    "vitest": parse_vitest_json,
    "jest": parse_jest_json,
    "junit": parse_junit_xml,
    "playwright": parse_playwright_json,
}
"""Report format name -> parser; the names strategy configs use in ``format``."""


def parse_report(format: str, text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``text`` as a report of ``format`` (a key of :data:`PARSERS`).

    Raises:
        ReportError: the format is unknown, or the text is not a report of it.

    Example:
        >>> parse_report("eslint", "not json")
        Traceback (most recent call last):
        ...
        sprintflow.errors.ReportError: eslint report is not valid JSON (Expecting value: line 1 column 1 (char 0)); it starts with 'not json'. Expected the JSON of `eslint --format json`
    """
    parser = PARSERS.get(format)
    if parser is None:
        raise ReportError(f"unknown report format {format!r}; known formats: {', '.join(PARSERS)}")
    return parser(text, roots)
