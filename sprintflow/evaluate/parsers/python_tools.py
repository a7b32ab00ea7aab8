"""Python checkers: ``ruff check --output-format json`` and mypy's text output."""

from __future__ import annotations

import re

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, load_json, relativise, report_parser

__all__ = ["parse_mypy", "parse_ruff_json"]


@report_parser("ruff")
def parse_ruff_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``ruff check --output-format json``.

    Syntax errors carry ``code`` null (ruff 0.5) or ``invalid-syntax`` (newer);
    both are kept as given. Ruff reports everything as an error unless it says
    ``"severity": "warning"``.

    Example:
        >>> report = parse_ruff_json('[{"code": "F401", "message": "`os` imported but unused", '
        ...     '"filename": "/w/app.py", "location": {"row": 1, "column": 8}}]', ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code
        ('app.py', 1, 8, 'F401')
    """
    findings = load_json(text, "ruff", "ruff check --output-format json")
    if not isinstance(findings, list):
        raise ReportError(f"ruff report should be a JSON array of findings, got {type(findings).__name__}")
    return ParsedReport(diagnostics=[
        Diagnostic(tool="ruff", file=relativise(f["filename"], roots), line=f["location"]["row"],
                   column=f["location"]["column"], code=f.get("code"), message=f["message"],
                   severity="warning" if f.get("severity") == "warning" else "error")
        for f in findings
    ])


# src/a.py:12: error: message  [code]      and, with --show-column-numbers, src/a.py:12:5: …
_MYPY_LINE = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)? "
                        r"(?P<sev>error|warning|note): (?P<msg>.*?)(?:  \[(?P<code>[\w-]+)\])?$")
_MYPY_SUMMARY = re.compile(r"^(Success: no issues found|Found \d+ errors?)")


@report_parser("mypy")
def parse_mypy(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse mypy's default output; ``note:`` lines are context for an error, not findings.

    Empty output and ``Success: no issues found`` mean no diagnostics; any other
    output without a single mypy line is an error (mypy crashed or was not run).

    Example:
        >>> report = parse_mypy('/w/src/a.py:12:5: error: Bad return  [return-value]', ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code
        ('src/a.py', 12, 5, 'return-value')
    """
    diagnostics, recognised = [], False
    for line in text.splitlines():
        match = _MYPY_LINE.match(line)
        recognised = recognised or bool(match or _MYPY_SUMMARY.match(line))
        if match and match["sev"] != "note":
            diagnostics.append(Diagnostic(
                tool="mypy", file=relativise(match["file"], roots), line=int(match["line"]),
                column=int(match["col"]) if match["col"] else None, code=match["code"],
                message=match["msg"], severity=match["sev"]))
    if text.strip() and not recognised:
        raise ReportError(f"mypy output has no mypy line (file:line: error: …); "
                          f"it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=diagnostics)
