"""``tsc`` output: the plain form (``--pretty false``, the default when piped) and ``--pretty``."""

from __future__ import annotations

import re

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, relativise, report_parser, text_lines

__all__ = ["parse_tsc"]

_HEADERS = (
    # src/a.ts(12,5): error TS2345: message
    re.compile(r"^(?P<file>\S.*?)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) "
               r"(?P<code>TS\d+): (?P<msg>.*)$"),
    # src/a.ts:12:5 - error TS2345: message            (--pretty, colours stripped)
    re.compile(r"^(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning) "
               r"(?P<code>TS\d+): (?P<msg>.*)$"),
    # error TS5058: The specified path does not exist  (no file: a config or CLI problem)
    re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$"),
)


@report_parser("tsc")
def parse_tsc(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``tsc --noEmit`` output into one diagnostic per error.

    An error's indented follow-up lines ("Types of parameters … are incompatible")
    belong to its message; code frames and the ``Found N errors`` summary are skipped.
    Empty output means a clean compile, also when ``npm run`` announced the script.

    Example:
        >>> report = parse_tsc("/workspace/src/a.ts(12,5): error TS2345: Bad argument.",
        ...                    ["/workspace"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code
        ('src/a.ts', 12, 5, 'TS2345')
    """
    diagnostics: list[dict] = []
    current: dict | None = None
    lines = text_lines(text)
    for line in lines:
        header = _header(line)
        if header:
            current = _diagnostic_fields(header, roots)
            diagnostics.append(current)
        elif current and line[:1].isspace() and line.strip():
            current["message"] += "\n" + line.strip()
        else:
            # A blank line ends a message: what follows in --pretty is a code frame.
            current = None
    if "".join(lines).strip() and not diagnostics:
        raise ReportError(f"tsc output has no diagnostic line (file(line,col): error TSxxxx: …); "
                          f"it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=[Diagnostic(tool="tsc", **d) for d in diagnostics])


def _header(line: str) -> re.Match[str] | None:
    return next((m for m in (p.match(line) for p in _HEADERS) if m), None)


def _diagnostic_fields(match: re.Match[str], roots: Roots) -> dict:
    found = match.groupdict()
    return {
        "file": relativise(found["file"], roots) if found.get("file") else None,
        "line": int(found["line"]) if found.get("line") else None,
        "column": int(found["col"]) if found.get("col") else None,
        "code": found["code"],
        "severity": found["sev"],
        "message": found["msg"].strip(),
    }
