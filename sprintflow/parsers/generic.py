"""The fallback for any other tool: every ``path:line[:col]`` (or ``path(line,col)``) it prints."""

from __future__ import annotations

import re

from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, innermost_frame, relativise, report_parser, text_lines

__all__ = ["MAX_GENERIC_DIAGNOSTICS", "parse_locations"]

MAX_GENERIC_DIAGNOSTICS = 50
# src/a.ts:12:5: message   src/a.py:12: message   /w/src/a.ts(12,5): error TS2322: message
_LOCATION = re.compile(r"(?P<file>(?:[\w.@+~-]+/)*[\w.@+~-]*[\w-]\.[A-Za-z][\w]{0,5})"
                       r"(?::(?P<line>\d+)(?::(?P<col>\d+))?|\((?P<pline>\d+)(?:,(?P<pcol>\d+))?\))")
# Where a location can end: ":12" or "(12". The path before one is searched for in a bounded
# window, because searching a whole line is quadratic on long runs of word characters (minified
# code, base64), and the code under test decides what its tools print.
_ANCHOR = re.compile(r"[:(]\d")
_PATH_WINDOW = 256
_ANCHORS_PER_LINE = 8
_SEVERITY = re.compile(r"^[\s:,-]*(?:(?P<sev>error|warning|warn|note|info)\b[\s:]*)?(?:(?P<code>[\w/@-]+)\s*:\s+)?",
                       re.IGNORECASE)
_VENDOR = ("node_modules/", "site-packages/", "dist-packages/", "/usr/lib/", "node:", "internal/")
_STACK_FRAME = re.compile(r"^\s*(?:at |File \")")


@report_parser("generic")
def parse_locations(text: str, roots: Roots = ()) -> ParsedReport:
    """Every distinct workspace location a tool printed, with the rest of its line as the message.

    For tools we have no parser for. Library and runtime paths, URLs and paths
    outside the workspace are skipped; stack frames count only when nothing
    else names a place (then the innermost frame in the workspace does). A line
    that says ``warning`` (and not ``error``) is a warning. Never raises: output
    without a location simply has no diagnostics.

    Example:
        >>> report = parse_locations("/w/src/a.ts(12,5): error eqeqeq : Expected '==='.\\n"
        ...                          "see https://example.com:443/x.html", ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.message
        ('src/a.ts', 12, 5, 'eqeqeq', "Expected '==='.")
    """
    diagnostics: list[Diagnostic] = []
    seen: set[tuple[str, int]] = set()
    lines = text_lines(text)
    for line in lines:
        if _STACK_FRAME.match(line) or "://" in line:
            continue
        diagnostic = _diagnostic(line, roots)
        if diagnostic and (diagnostic.file, diagnostic.line) not in seen and len(diagnostics) < MAX_GENERIC_DIAGNOSTICS:
            seen.add((diagnostic.file or "", diagnostic.line or 0))
            diagnostics.append(diagnostic)
    if not diagnostics:
        frame = innermost_frame("\n".join(lines), roots)
        if frame and not frame[0].startswith("/"):
            first = next((ln.strip() for ln in lines if ln.strip()), "")
            diagnostics.append(Diagnostic(tool="generic", file=frame[0], line=frame[1], column=frame[2],
                                          message=first[:500] or "the command failed here"))
    return ParsedReport(diagnostics=diagnostics)


def _first_location(line: str) -> re.Match[str] | None:
    for number, anchor in enumerate(_ANCHOR.finditer(line)):
        if number == _ANCHORS_PER_LINE:
            return None
        window_end = anchor.start() + 24  # ":123456:7890" or "(123456,7890)"
        match = _LOCATION.search(line, max(0, anchor.start() - _PATH_WINDOW), window_end)
        if match:
            return match
    return None


def _diagnostic(line: str, roots: Roots) -> Diagnostic | None:
    match = _first_location(line)
    if not match or any(marker in match["file"] for marker in _VENDOR):
        return None
    start = match.start()
    absolute = start > 0 and line[start - 1] == "/"
    path = line[start - 1:match.end("file")] if absolute else match["file"]
    file = relativise(path, roots)
    if file.startswith("/"):
        return None  # outside the workspace
    rest = line[match.end():]
    head = _SEVERITY.match(rest)
    severity = (head["sev"] or "").lower() if head else ""
    code = head["code"] if head and head["code"] and (severity or head["code"][:1].isupper()) else None
    message = rest[head.end():].strip() if head and (severity or code) else rest.strip(" :-")
    before = line[:start - 1 if absolute else start].strip(" :-")
    if not message:
        message = before or line.strip()
    is_warning = severity in ("warning", "warn") or ("warning" in line.lower() and "error" not in line.lower())
    return Diagnostic(tool="generic", file=file, line=int(match["line"] or match["pline"]),
                      column=int(col) if (col := match["col"] or match["pcol"]) else None, code=code,
                      message=message[:500], severity="warning" if is_warning else "error")
