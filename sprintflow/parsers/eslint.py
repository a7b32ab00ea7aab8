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
# The last line of a message ESLint printed over several lines, ending in its rule.
_STYLISH_RULE_END = re.compile(r"^(?P<msg>.*?)\s{2,}(?P<rule>@?[\w-]+(?:/[\w-]+)*)\s*$")


@report_parser("eslint-stylish")
def parse_eslint_stylish(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ESLint's default ``stylish`` output: a file name, then its indented findings.

    A clean run prints nothing. Any other output without a single finding or
    summary line is not ESLint's (it crashed, or something else ran). A rule's
    message may span lines (``@typescript-eslint/ban-types`` prints a paragraph):
    ESLint prints them as they are, so the lines after a finding without a rule,
    up to the blank line before the next file, are its message and end in its rule.

    Example:
        >>> report = parse_eslint_stylish("/w/src/a.js\\n  3:7  error  'x' is unused  no-unused-vars\\n"
        ...                               "\\n✖ 1 problem (1 error, 0 warnings)", ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.message
        ('src/a.js', 3, 7, 'no-unused-vars', "'x' is unused")
        >>> d = parse_eslint_stylish("/w/a.ts\\n  1:9  error  Don't use `Function`.\\nIt is unsafe  ban-types\\n",
        ...                          ["/w"]).diagnostics[0]
        >>> d.file, d.code, d.message
        ('a.ts', 'ban-types', "Don't use `Function`.\\nIt is unsafe")
    """
    diagnostics: list[Diagnostic] = []
    current_file: str | None = None
    recognised = False
    continued = False  # the last finding had no rule: the lines after it may be the rest of its message
    for line in text_lines(text):
        match = _STYLISH_LINE.match(line)
        if match and current_file is not None:
            diagnostics.append(Diagnostic(
                tool="eslint", file=relativise(current_file, roots), line=int(match["line"]) or None,
                column=int(match["col"]) or None, code=match["rule"], message=match["msg"].strip(),
                severity="error" if match["sev"] == "error" else "warning"))
            continued = match["rule"] is None
        elif continued and line.strip():
            diagnostics[-1] = _continued(diagnostics[-1], line)
            continued = diagnostics[-1].code is None
        elif _STYLISH_SUMMARY.match(line):
            recognised = True
        elif line.strip() and not line[:1].isspace():
            current_file = line.strip()
        else:
            continued = False
    if not diagnostics and not recognised and "".join(text_lines(text)).strip():
        raise ReportError("eslint output has no stylish finding (  line:col  error  message  rule) "
                          f"and no ✖ summary; it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=diagnostics)


def _continued(finding: Diagnostic, line: str) -> Diagnostic:
    """The finding with one more line of its message, and its rule when the line ends in it."""
    end = _STYLISH_RULE_END.match(line)
    text, rule = (end["msg"], end["rule"]) if end else (line, None)
    return finding.model_copy(update={"message": f"{finding.message}\n{text.strip()}", "code": rule})
