"""Biome's default output (``biome lint``, ``biome check``, ``biome ci``): each finding with its message.

A finding is a header line, ``src/a.js:3:9 lint/suspicious/noDebugger  FIXABLE  ━━━━``, then the
message after its severity mark (``×`` error, ``!`` warning, ``i`` information), then a code
frame and advice. A formatting finding names the file alone (``src/a.js format ━━━``). The
closing ``check ━━━`` block is the run's summary, not a finding.
"""

from __future__ import annotations

import re

from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, relativise, report_parser, text_lines

__all__ = ["parse_biome"]

_HEADER = re.compile(r"^(?P<file>\S+?)(?::(?P<line>\d+):(?P<col>\d+))? (?P<rule>[\w/-]+)"
                     r"(?:\s+(?:FIXABLE|SKIPPED|INTERNAL|VERBOSE))*\s+━+\s*$")
_MARK = re.compile(r"^\s+(?P<mark>[×!i✖⚠ℹ]) (?P<message>\S.*)$")
_SUMMARY_RULES = frozenset({"check", "lint", "format", "ci", "internalError/io"})


@report_parser("biome")
def parse_biome(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what biome printed.

    Example:
        >>> report = parse_biome("src/a.js:3:9 lint/suspicious/noDebugger  FIXABLE  ━━━━\\n\\n"
        ...                      "  × This is an unexpected use of the debugger statement.\\n")
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.message
        ('src/a.js', 3, 9, 'lint/suspicious/noDebugger', 'This is an unexpected use of the debugger statement.')
    """
    diagnostics: list[Diagnostic] = []
    header: re.Match[str] | None = None
    for line in text_lines(text):
        if found := _HEADER.match(line):
            summary = found["line"] is None and found["rule"] in _SUMMARY_RULES and "." not in found["file"]
            header = None if summary else found
        elif header is not None and (mark := _MARK.match(line)):
            diagnostics.append(_finding(header, mark, roots))
            header = None
    return ParsedReport(diagnostics=diagnostics)


def _finding(header: re.Match[str], mark: re.Match[str], roots: Roots) -> Diagnostic:
    return Diagnostic(tool="biome", file=relativise(header["file"], roots),
                      line=int(header["line"]) if header["line"] else None,
                      column=int(header["col"]) if header["col"] else None, code=header["rule"],
                      severity="error" if mark["mark"] in "×✖" else "warning", message=mark["message"].strip())
