"""Go's checkers: the compiler and ``go vet`` (and staticcheck, golangci-lint), and gofmt.

``go build ./...``, ``go vet ./...``, ``staticcheck ./...`` and ``golangci-lint run`` print one
finding per line as ``path.go:line:col: message``, under a ``# package`` header, with the paths
relative to the directory the command ran in; staticcheck and golangci-lint end the message with
the check that found it, ``(SA4006)`` or ``(errcheck)``, and golangci-lint adds the source line and a
caret below. Indented lines after a finding continue it (the compiler's ``have (…)``/``want (…)``).
``gofmt -l`` lists the files it would change; ``gofmt -d`` prints the diffs, each hunk a finding at
its first changed line.
"""

from __future__ import annotations

import re

from sprintflow.schemas.evaluation import Diagnostic

from ._common import ParsedReport, Roots, relativise, report_parser, text_lines

__all__ = ["go_findings", "parse_go_build", "parse_gofmt"]

# `./a.go:3:2: msg`, `vet: a.go:3:2: msg`, staticcheck's `-: ./a.go:3:2: msg (compile)`.
_FINDING = re.compile(r"^(?:vet: |-: )?(?P<file>[^\s:][^:\n]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.+)$")
_CHECK = re.compile(r"\s\((?P<code>[A-Z]+\d+|[a-z][\w-]*)\)$")


@report_parser("go-build")
def parse_go_build(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what the Go compiler, ``go vet``, staticcheck or golangci-lint printed.

    Example:
        >>> report = parse_go_build("# example.com/m\\n./a.go:3:2: undefined: x\\n"
        ...                         "b.go:9:6: func helper is unused (U1000)\\n")
        >>> [(d.file, d.line, d.column, d.code, d.message) for d in report.diagnostics]
        [('a.go', 3, 2, None, 'undefined: x'), ('b.go', 9, 6, 'U1000', 'func helper is unused')]
    """
    # Anything else (``go build -v``'s package list, the go command's own ``go: …`` errors) is no
    # finding: the exit code decides, and an environment failure is told by its own reader.
    return ParsedReport(diagnostics=go_findings(text_lines(text), roots))


def go_findings(lines: list[str], roots: Roots) -> list[Diagnostic]:
    """Every ``path.go:line:col: message`` finding in ``lines``, continuation lines folded in, each once
    (staticcheck reports a package's compile error again for its test variant)."""
    found: list[Diagnostic] = []
    seen: set[tuple[str, int, int | None, str]] = set()
    current: list[str] | None = None
    for line in lines:
        if match := _FINDING.match(line):
            message, code = match["msg"].strip(), None
            if check := _CHECK.search(message):
                message, code = message[:check.start()].rstrip(), check["code"]
            key = (relativise(match["file"], roots), int(match["line"]), _int(match["col"]), message)
            current = None
            if key in seen:
                continue
            seen.add(key)
            current = [message]
            found.append(Diagnostic(tool="go", file=key[0], line=key[1], column=key[2], message=message,
                                    code=None if code == "compile" else code))
        elif current is not None and line.strip() == "^" and len(current) > 1:
            current.pop()  # golangci-lint's caret under the source line it quoted: neither is the message
            found[-1] = found[-1].model_copy(update={"message": "\n".join(current)})
        elif current is not None and line.startswith("\t") and line.strip() and line.strip() != "^":
            current.append(line.strip())
            found[-1] = found[-1].model_copy(update={"message": "\n".join(current)})
        else:
            current = None
    return found


_DIFF = re.compile(r"^diff (?:-u )?(?P<old>\S+) (?P<file>\S+\.go)$")
_HUNK = re.compile(r"^@@ -(?P<start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_LISTED = re.compile(r"^(?P<file>[^\s:][^:\n]*\.go)$")


@report_parser("gofmt")
def parse_gofmt(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse ``gofmt -l`` (the files it would reformat) or ``gofmt -d`` (one finding per diff hunk).

    ``gofmt -l`` exits 0 whatever it lists: the findings are what fails the check.

    Example:
        >>> [(d.file, d.line) for d in parse_gofmt("util.go\\nsub/b.go\\n").diagnostics]
        [('util.go', None), ('sub/b.go', None)]
        >>> diff = "diff a.go.orig a.go\\n--- a.go.orig\\n+++ a.go\\n@@ -42,3 +42,3 @@\\n }\\n-x :=  1\\n+x := 1\\n"
        >>> [(d.file, d.line) for d in parse_gofmt(diff).diagnostics]
        [('a.go', 43)]
    """
    lines = text_lines(text)
    if any(_DIFF.match(line) for line in lines):
        return ParsedReport(diagnostics=_hunks(lines, roots))
    listed = [_unformatted(relativise(m["file"], roots), None) for ln in lines if (m := _LISTED.match(ln.strip()))]
    # gofmt's own errors (`a.go:3:1: expected declaration`) are findings too.
    return ParsedReport(diagnostics=[*listed, *go_findings(lines, roots)])


def _hunks(lines: list[str], roots: Roots) -> list[Diagnostic]:
    """A finding at the first changed line of each hunk of ``gofmt -d``."""
    found, file, line_no, pending = [], None, 0, False
    for line in lines:
        if match := _DIFF.match(line):
            file, pending = relativise(match["file"], roots), False
        elif (hunk := _HUNK.match(line)) and file is not None:
            line_no, pending = int(hunk["start"]), True
        elif pending and line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
            found.append(_unformatted(file, line_no))
            pending = False
        elif pending and line.startswith(" "):
            line_no += 1
    return found


def _unformatted(file: str | None, line: int | None) -> Diagnostic:
    return Diagnostic(tool="gofmt", file=file, line=line, code="gofmt",
                      message=f"not formatted as gofmt formats it: run gofmt -w {file}")


def _int(value: str | None) -> int | None:
    return int(value) if value else None
