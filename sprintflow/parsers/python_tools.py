"""Python checkers: ``ruff check`` (JSON, full and concise) and mypy (plain, ``--pretty``, JSON lines)."""

from __future__ import annotations

import json
import re

from sprintflow.errors import ReportError
from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, load_json, relativise, report_parser, text_lines

__all__ = ["parse_mypy", "parse_ruff_json", "parse_ruff_text"]


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
_MYPY_LINE = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?(?:\d+:\d+:)? "
                        r"(?P<sev>error|warning|note): (?P<msg>.*)$")
_MYPY_CODE = re.compile(r"\s+\[(?P<code>[\w-]+)\]$")
_MYPY_SUMMARY = re.compile(r"^(Success: no issues found|Found \d+ errors?)")
_MAX_NOTES = 6


@report_parser("mypy")
def parse_mypy(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse mypy's output: the default, ``--pretty`` (``pretty = true``) and ``-O json``.

    ``--pretty`` wraps long messages onto unindented lines (the ``[code]`` lands
    on the last one) and adds the source line and a caret, indented; the parts
    of a message are joined again and the code frame dropped. ``note:`` lines
    at the place of the error before them are its details and are kept in its
    message. Empty
    output and ``Success: no issues found`` mean no diagnostics; any other
    output without a single mypy line is an error (mypy crashed or was not run).

    Example:
        >>> report = parse_mypy('/w/src/a.py:12: error: Incompatible return value type (got "int",\\n'
        ...                     'expected "str")  [return-value]\\n        return 1\\n               ^',
        ...                     ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.code, d.message
        ('src/a.py', 12, 'return-value', 'Incompatible return value type (got "int", expected "str")')
    """
    lines = text_lines(text)
    if any(line.startswith("{") for line in lines):
        json_report = _mypy_json(lines, roots)
        if json_report is not None:
            return json_report
    entries: list[dict] = []
    current: dict | None = None
    recognised = False
    for line in lines:
        match = _MYPY_LINE.match(line)
        if match:
            recognised = True
            current = _mypy_entry(match, roots, entries)
        elif _MYPY_SUMMARY.match(line):
            recognised, current = True, None
        elif current is not None and line.strip() and not line[:1].isspace():
            current["parts"].append(line.strip())  # --pretty wrapped the message here
        else:
            current = None  # a code frame, a blank line: the message is complete
    if "".join(lines).strip() and not recognised:
        raise ReportError(f"mypy output has no mypy line (file:line: error: …); "
                          f"it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=[_mypy_diagnostic(entry) for entry in entries])


def _mypy_entry(match: re.Match[str], roots: Roots, entries: list[dict]) -> dict | None:
    """Start an error, or attach a note to the error it explains; returns what later lines extend.

    A note explains the error just before it at the same place; a note elsewhere
    (``reveal_type``) is no error's detail and is dropped.
    """
    file = relativise(match["file"], roots)
    if match["sev"] == "note":
        owner = entries[-1] if entries else None
        if owner and (owner["file"], owner["line"]) == (file, int(match["line"])) and \
                len(owner["notes"]) < _MAX_NOTES:
            note = {"parts": [match["msg"].strip()]}
            owner["notes"].append(note)
            return note
        return None
    entry = {"file": file, "line": int(match["line"]),
             "col": int(match["col"]) if match["col"] else None, "sev": match["sev"],
             "parts": [match["msg"].strip()], "notes": []}
    entries.append(entry)
    return entry


def _mypy_diagnostic(entry: dict) -> Diagnostic:
    message = " ".join(entry["parts"])
    code_match = _MYPY_CODE.search(message)
    code = code_match["code"] if code_match else None
    if code_match:
        message = message[:code_match.start()]
    notes = [_MYPY_CODE.sub("", " ".join(note["parts"])) for note in entry["notes"]]
    if notes:
        message += "\n" + "\n".join(notes)
    return Diagnostic(tool="mypy", file=entry["file"], line=entry["line"], column=entry["col"], code=code,
                      message=message.strip(), severity=entry["sev"])


def _mypy_json(lines: list[str], roots: Roots) -> ParsedReport | None:
    """``mypy -O json``: one JSON object per finding (mypy 1.11+); ``None`` if these are not such lines."""
    diagnostics = []
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            finding = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(finding, dict) or "file" not in finding:
            return None
        if finding.get("severity") == "note":
            continue
        message = str(finding.get("message", "")) + (f"\n{finding['hint']}" if finding.get("hint") else "")
        diagnostics.append(Diagnostic(
            tool="mypy", file=relativise(str(finding["file"]), roots), line=finding.get("line"),
            column=column + 1 if isinstance(column := finding.get("column"), int) else None,
            code=finding.get("code"), message=message,
            severity="warning" if finding.get("severity") == "warning" else "error"))
    return ParsedReport(diagnostics=diagnostics)


# Concise, and ruff < 0.12 full:  src/a.py:1:8: F401 [*] `os` imported but unused
_RUFF_LINE = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): "
                        r"(?P<code>[A-Z]+\d+|SyntaxError|invalid-syntax|[a-z]+(?:-[a-z]+)+):? "
                        r"(?:\[\*\] )?(?P<msg>.*)$")
# ruff >= 0.12 full: the code and message first, then ` --> src/a.py:1:8`
_RUFF_HEADER = re.compile(r"^(?P<code>[A-Z]+\d+|SyntaxError|invalid-syntax|[a-z]+(?:-[a-z]+)+):? "
                          r"(?:\[\*\] )?(?P<msg>.+)$")
_RUFF_ARROW = re.compile(r"^\s*--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)\s*$")
_RUFF_SUMMARY = re.compile(r"^(?:Found \d+ errors?|All checks passed!|\[\*\] \d+ fixable)")


@report_parser("ruff-text")
def parse_ruff_text(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``ruff check``'s human-readable output: ``full`` (both renderings) and ``concise``.

    Ruff 0.5 to 0.11 print ``file:line:col: CODE message`` then a code frame;
    0.12 and later print ``CODE message`` then `` --> file:line:col``; ``concise``
    is the first line alone. A syntax error is ``SyntaxError`` or
    ``invalid-syntax`` depending on the version, kept as given.

    Example:
        >>> report = parse_ruff_text("F401 [*] `os` imported but unused\\n --> /w/app.py:1:8\\n"
        ...                          "Found 1 error.", ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.file, d.line, d.column, d.code, d.message
        ('app.py', 1, 8, 'F401', '`os` imported but unused')
    """
    diagnostics: list[Diagnostic] = []
    pending: re.Match[str] | None = None
    recognised = False
    for line in text_lines(text):
        located = _RUFF_LINE.match(line)
        arrow = _RUFF_ARROW.match(line)
        if located:
            diagnostics.append(_ruff_diagnostic(located, located, roots))
            pending = None
        elif arrow and pending is not None:
            diagnostics.append(_ruff_diagnostic(pending, arrow, roots))
            pending = None
        elif _RUFF_SUMMARY.match(line):
            recognised = True
        elif not line[:1].isspace():
            pending = _RUFF_HEADER.match(line)
    if not diagnostics and not recognised and "".join(text_lines(text)).strip():
        raise ReportError(f"ruff output has no finding (file:line:col: CODE message) and no summary; "
                          f"it starts with {text.strip()[:80]!r}")
    return ParsedReport(diagnostics=diagnostics)


def _ruff_diagnostic(head: re.Match[str], where: re.Match[str], roots: Roots) -> Diagnostic:
    code = head["code"]
    return Diagnostic(tool="ruff", file=relativise(where["file"], roots), line=int(where["line"]),
                      column=int(where["col"]), code=code, message=head["msg"].strip(), severity="error")
