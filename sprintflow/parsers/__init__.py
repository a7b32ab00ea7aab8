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

from sprintflow.errors import ReportError
from sprintflow.schemas.strategies import REPORT_FORMATS

from ._common import PARSERS, TEST_RUNNER_FORMATS, ParsedReport, Roots, TestCase, TestCounts, TestFailure, TestStatus
from .biome import parse_biome
from .cargo import parse_cargo, parse_cargo_json
from .eslint import parse_eslint_json, parse_eslint_stylish
from .generic import parse_locations
from .go_test import parse_go_test, parse_go_test_json
from .go_tools import parse_go_build, parse_gofmt
from .jest_style import parse_jest_json, parse_vitest_json
from .junit import parse_junit_xml
from .maven import parse_maven
from .playwright import parse_playwright_json, parse_playwright_text
from .pytest_text import parse_pytest_output
from .python_tools import parse_mypy, parse_ruff_json, parse_ruff_text
from .runner_text import parse_jest_text, parse_vitest_text
from .typescript import parse_tsc

__all__ = [
    "PARSERS",
    "ParsedReport",
    "Roots",
    "TestCase",
    "TestCounts",
    "TestFailure",
    "TestStatus",
    "TEST_RUNNER_FORMATS",
    "parse_biome",
    "parse_cargo",
    "parse_cargo_json",
    "parse_eslint_json",
    "parse_eslint_stylish",
    "parse_go_build",
    "parse_go_test",
    "parse_go_test_json",
    "parse_gofmt",
    "parse_jest_json",
    "parse_jest_text",
    "parse_junit_xml",
    "parse_locations",
    "parse_maven",
    "parse_mypy",
    "parse_playwright_json",
    "parse_playwright_text",
    "parse_pytest_output",
    "parse_report",
    "parse_ruff_json",
    "parse_ruff_text",
    "parse_tsc",
    "parse_vitest_json",
    "parse_vitest_text",
]

def parse_report(format: str, text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``text`` as a report of ``format`` (a key of :data:`PARSERS`).

    A combined format, ``a+b`` (a command that runs several tools, such as
    ``eslint . && tsc``), reads the same text with each parser and merges what
    they found; a part whose tool left no trace in the text is skipped, and it
    is an error only when no part can read it.

    Raises:
        ReportError: the format is unknown, or the text is not a report of it.

    Example:
        >>> parse_report("eslint", "not json")
        Traceback (most recent call last):
        ...
        sprintflow.errors.ReportError: eslint report is not valid JSON (Expecting value: line 1 column 1 (char 0)); it starts with 'not json'. Expected the JSON of `eslint --format json`
        >>> report = parse_report("vitest-text+tsc", "src/a.ts(1,7): error TS2322: Bad type.")
        >>> [d.code for d in report.diagnostics]
        ['TS2322']
    """
    parts = format.split("+")
    unknown = [part for part in parts if part not in PARSERS]
    if unknown:
        raise ReportError(f"unknown report format {unknown[0]!r}; known formats: {', '.join(REPORT_FORMATS)}")
    if len(parts) == 1:
        return PARSERS[format](text, roots)
    reports, errors = [], []
    for part in parts:
        try:
            reports.append(PARSERS[part](text, roots))
        except ReportError as exc:
            errors.append(str(exc))
    if not reports:
        raise ReportError(f"no part of {format} could read the output: {'; '.join(errors)}")
    return _merged(reports)


def _merged(reports: list[ParsedReport]) -> ParsedReport:
    """One report from several tools' reports of the same output (duplicates dropped)."""
    diagnostics, seen = [], set()
    for report in reports:
        for d in report.diagnostics:
            key = (d.tool, d.file, d.line, d.column, d.code, d.message)
            if key not in seen:
                seen.add(key)
                diagnostics.append(d)
    runners = [report for report in reports if report.counts is not None]
    if not runners:
        return ParsedReport(diagnostics=diagnostics)
    tests = [test for report in runners for test in report.tests]
    statuses = [test.status for test in tests]
    counts = TestCounts(total=len(tests), passed=statuses.count("passed"),
                        failed=statuses.count("failed") + statuses.count("load_error"),
                        skipped=statuses.count("skipped"))
    return ParsedReport(diagnostics=diagnostics, counts=counts, tests=tests,
                        failures=[f for report in runners for f in report.failures])
