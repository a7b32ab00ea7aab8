"""ESLint ``--format json`` (the same shape in ESLint 8 and 9)."""

from __future__ import annotations

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, load_json, relativise, report_parser

__all__ = ["parse_eslint_json"]


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
