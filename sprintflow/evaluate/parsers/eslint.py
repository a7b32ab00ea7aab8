"""ESLint ``--format json`` (the same shape in ESLint 7 to 10) and the default ``stylish`` output."""

from __future__ import annotations

import re

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, load_json, relativise, report_parser, text_lines

__all__ = ["parse_eslint_json", "parse_eslint_stylish"]


@report_parser("eslint")
def parse_eslint_json(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ESLint's JSON report: severity 2 is an error, 1 a warning.

    Parsing errors (``fatal``) have no rule and become errors with ``code=None``;
    "File ignored" notices are warnings without a line.

    Example:
        >>> report = parse_eslint_json('[{"filePath": "/w/src/a.js", "messages": [{"ruleId": '
        ...     '"no-unused-vars", "severity": 2, "message": "x is unused", "line": 3, "column": 7}]}]',
        ...     ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.code, d.severity
        ('src/a.js', 3, 'no-unused-vars', 'error')
    """
    files = load_json(text, "eslint", "eslint --format json")
    if not isinstance(files, list):
        raise ReportError(f"eslint report should be a JSON array of files, got {type(files).__name__}")
    return ParsedReport(diagnostics=[
        Diagnostic(tool="eslint", file=relativise(entry["filePath"], roots), line=m.get("line"),
                   column=m.get("column"), code=m.get("ruleId"), message=m["message"],
                   severity="error" if m.get("severity") == 2 else "warning")
        for entry in files
        for m in entry["messages"]
    ])


# `  21:3  error  Unexpected 'debugger' statement  no-debugger` (the rule is absent for parse errors)
_STYLISH_LINE = re.compile(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<msg>.+?)"
                           r"(?:\s{2,}(?P<rule>@?[\w-]+(?:/[\w-]+)*))?\s*$")
_STYLISH_SUMMARY = re.compile(r"^\s*✖ \d+ problems? \(")


@report_parser("eslint-stylish")
def parse_eslint_stylish(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ESLint's default ``stylish`` output: a file name, then its indented findings.

    A clean run prints nothing. Any other output without a single finding or
    summary line is not ESLint's (it crashed, or something else ran).

    Example:
        >>> report = parse_eslint_stylish("/w/src/a.js\\n  3:7  error  'x' is unused  no-unused-vars\\n"
        ...                               "\\n✖ 1 problem (1 error, 0 warnings)", ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.message
        ('src/a.js', 3, 7, 'no-unused-vars', "'x' is unused")
    """
    diagnostics: list[Diagnostic] = []
    current_file: str | None = None
    recognised = False
    for line in text_lines(text):
        match = _STYLISH_LINE.match(line)
        if match and current_file is not None:
            diagnostics.append(Diagnostic(
                tool="eslint", file=relativise(current_file, roots), line=int(match["line"]) or None,
                column=int(match["col"]) or None, code=match["rule"], message=match["msg"].strip(),
                severity="error" if match["sev"] == "error" else "warning"))
        elif _STYLISH_SUMMARY.match(line):
            recognised = True
        elif line.strip() and not line[:1].isspace():
            current_file = line.strip()
    if not diagnostics and not recognised and "".join(text_lines(text)).strip():
        raise ReportError("eslint output has no stylish finding (  line:col  error  message  rule) "
                          f"and no ✖ summary; it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=diagnostics)
