"""go test's mutants: gremlins (github.com/go-gremlins/gremlins), the judge's own build of it
(:mod:`sprintflow.sandbox.gremlins`: the Go runtime layer has it, the host's commands see it read-only),
run by ``sandbox/scripts/mutate_go.py``.

Decisions, where gremlins and the check differ:

* **Which lines.** gremlins mutates the lines of a ``git diff`` (``--diff``); the layer is no git
  repository, so the runner hands gremlins a ``git`` of its own that answers with the changed lines,
  and leaves every other source file out (``--exclude-files``). ``_test.go`` files are never mutated
  (gremlins' rule and Go's: only they are tests).
* **The cap.** gremlins cannot cap its mutants; a line of the diff is all its mutants or none. The
  runner's dry run lists the mutants of the changed lines, and it chooses lines: one of each changed
  function first (every function gets one, whatever the cap, as ``maxMutants`` says), then lines
  across the functions while the total stays within the cap. Mutants of the lines not chosen are
  ``not-run``.
* **The budget.** gremlins writes no report when it is stopped; the runner reads its log as it goes
  and, when the budget runs out, stops it and keeps what finished (the rest is ``not-run``).
* **The tests.** Each mutant runs ``go test ./...`` of the module (gremlins' ``--integration``, with
  ``-coverpkg ./...``), not the strategy's command: a module's tests in every package judge its code,
  held-out evals in the tree among them; the survivors of a function none of whose mutants was killed are
  written back token by token (:func:`token_edit`) and judged by the held-out evals' commands too
  (:func:`sprintflow.evaluate.mutation._judged_by_held_out`). gremlins times a mutant against a multiple
  of its own coverage run, chosen so that it gets at least about ``mutantTimeout``.
* **Statuses.** KILLED is killed; LIVED and NOT COVERED (no test runs the line) survived; TIMED OUT is
  a timeout, not a kill; NOT VIABLE (the mutant does not build) is an error.
* **Functions.** gremlins names none: :func:`go_functions` finds the top-level function or method around
  each mutant with a small scan of the judged file (comments, strings and runes skipped, braces matched;
  a method is ``Type.Name``); a mutant outside every function (a package-level initializer) is in
  ``<package>``.

gremlins mutates operators only (arithmetic, comparisons, logic, increments, assignments, loop control):
a changed function without one has no mutant, and nothing to judge.

Example:
    >>> go_functions("package p\\n\\nfunc (s *Stack[T]) Push(v T) {\\n\\ts.items = append(s.items, v)\\n}\\n")
    [('Stack.Push', 3, 5)]
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from sprintflow.io.confine import read_confined
from sprintflow.io.containment import containment_unavailable
from sprintflow.kinds import ExecutorName
from sprintflow.sandbox.gremlins import DOCKER_BIN, HOST_BIN, VERSION, GremlinsUnavailable, build
from sprintflow.schemas.evaluation import MutantRecord, MutantStatus

from .changes import ChangedFile
from .tools import FOLDER, MAX_REPORT_BYTES, UNAVAILABLE, MutationTool, SourceEdit, ToolRun, register

__all__ = ["Gremlins", "go_functions", "parse_report", "report", "token_edit"]

REPORT = f"{FOLDER}/report.json"
PLAN = f"{FOLDER}/gremlins-plan.json"
_STATUS: dict[str, MutantStatus | None] = {
    "KILLED": "killed", "LIVED": "survived", "NOT COVERED": "survived", "TIMED OUT": "timeout",
    "NOT VIABLE": "error", "RUNNABLE": "not-run", "SKIPPED": None}
"""gremlins' statuses; SKIPPED is a mutant off the changed lines gremlins was given (not one of ours)."""
_MAX_SOURCE_BYTES = 1 << 20


@register("go")
class Gremlins(MutationTool):
    name = "gremlins"
    suffixes = (".go",)

    def command(self, run: ToolRun) -> str:
        """The runner (``sandbox/scripts/mutate_go.py``) on a job of the changed non-test files, their
        functions and the bounds; on the host, the judge's gremlins is built first (once)."""
        local = run.executor.kind == ExecutorName.LOCAL
        unavailable = _host_gremlins() if local else None
        if unavailable is not None:
            return f"echo {shlex.quote(unavailable)}; exit {UNAVAILABLE}"
        sources = [c for c in run.changes if not c.path.endswith("_test.go")]
        settings = run.settings
        job = {"files": {c.path: [list(r) for r in c.lines] for c in sources},
               "functions": {c.path: [list(span) for span in go_functions(_source(run.layer, c.path))]
                             for c in sources},
               "maxMutants": settings.max_mutants, "budget": settings.budget, "mutantTimeout": run.mutant_timeout,
               "gremlins": [HOST_BIN if local else DOCKER_BIN], "tool": f"gremlins {VERSION}",
               "report": REPORT, "plan": PLAN}
        run.job_file("gremlins-job.json").write_text(json.dumps(job), encoding="utf-8")
        runner = shlex.quote(run.executor.script("mutate_go.py"))
        return f"{shlex.quote(run.executor.python)} {runner} {FOLDER}/gremlins-job.json"

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        return report(run.layer, self._mutated(run))

    def edits(self, run: ToolRun) -> list[SourceEdit | None]:
        """Each mutant as the token gremlins wrote in place of the one at its position (its report names
        only the mutator: :func:`token_edit`)."""
        source = functools.cache(lambda rel: _source(run.layer, rel))
        return [token_edit(source(m.file), m.file, m.line, column, m.operator)
                for m, column in _read(run.layer, self._mutated(run))[1]]

    @staticmethod
    def _mutated(run: ToolRun) -> list[ChangedFile]:
        return [c for c in run.changes if not c.path.endswith("_test.go")]


def _host_gremlins() -> str | None:
    """Why the host's commands cannot have the judge's gremlins (built here once), or None."""
    why = containment_unavailable()
    if why is not None:
        return (f"the judge's gremlins is shown to host commands only read-only, in their containment, which is "
                f"unavailable here ({why}): the change's tests were not mutation-checked")
    try:
        build()
    except GremlinsUnavailable as exc:
        return f"{exc}: the change's tests were not mutation-checked"
    return None


def _source(layer: Path, rel: str) -> str:
    try:
        return read_confined(layer, rel, _MAX_SOURCE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


class _Mutation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: StrictStr
    status: StrictStr
    line: StrictInt = Field(ge=1)
    column: StrictInt = Field(ge=0)


class _File(BaseModel):
    model_config = ConfigDict(extra="ignore")
    file_name: StrictStr = Field(min_length=1)
    mutations: list[_Mutation]


class _Report(BaseModel):
    """gremlins' JSON report (``--output``): what the check reads of it."""

    model_config = ConfigDict(extra="ignore")
    files: list[_File]
    partial: bool = False


class _Plan(BaseModel):
    """What the runner chose (``gremlins-plan.json``)."""

    tool: StrictStr
    candidates: list[tuple[StrictStr, StrictInt, StrictInt, StrictStr, StrictStr]]
    """The dry run's mutants of the changed lines: file, line, column, type, status."""
    chosen: dict[str, list[StrictInt]]
    partial: bool = False
    timeoutCoefficient: int | None = None  # noqa: N815  (the runner's JSON)


def parse_report(text: str | bytes, changes: list[ChangedFile],
                 functions: dict[str, list[tuple[str, int, int]]]) -> list[MutantRecord]:
    """One record per mutant of gremlins' JSON report on a changed line (ValueError, saying what is wrong,
    when it is not gremlins' report)."""
    return [record for record, _ in _parsed(text, changes, functions)]


def _parsed(text: str | bytes, changes: list[ChangedFile],
            functions: dict[str, list[tuple[str, int, int]]]) -> list[tuple[MutantRecord, int]]:
    """The report's mutants of the changed lines, each with its column."""
    try:
        data = _Report.model_validate_json(text)
    except ValidationError as exc:
        raise ValueError(f"gremlins' report is malformed: {_first_error(exc)}") from None
    lines = {c.path: c.lines for c in changes}
    records = []
    for entry in data.files:
        rel = _relative(entry.file_name)
        for mutation in entry.mutations:
            if mutation.status not in _STATUS:
                raise ValueError(f"gremlins' report has a mutant of {rel}:{mutation.line} with an unknown status "
                                 f"{mutation.status!r}")
            status = _STATUS[mutation.status]
            if status is None or not any(start <= mutation.line <= end for start, end in lines.get(rel, ())):
                continue
            records.append((MutantRecord(file=rel, line=mutation.line, operator=mutation.type, status=status,
                                         function=_function_at(functions.get(rel, []), mutation.line)),
                            mutation.column))
    return records


def report(layer: Path, changes: list[ChangedFile]) -> tuple[str, list[MutantRecord]]:
    """The runner's plan and gremlins' report in ``layer``: a record per mutant of the changed lines, those
    the cap or the budget left out ``not-run``."""
    tool, mutants = _read(layer, changes)
    return tool, [record for record, _ in mutants]


def _read(layer: Path, changes: list[ChangedFile]) -> tuple[str, list[tuple[MutantRecord, int]]]:
    """:func:`report`'s mutants, each with its column."""
    try:
        plan = _Plan.model_validate_json(read_confined(layer, PLAN, MAX_REPORT_BYTES))
    except ValidationError as exc:
        raise ValueError(f"the gremlins runner's plan is malformed: {_first_error(exc)}") from None
    functions = {c.path: go_functions(_source(layer, c.path)) for c in changes}
    mutants = _parsed(read_confined(layer, REPORT, MAX_REPORT_BYTES), changes, functions)
    reported = Counter((m.file, m.line, m.operator) for m, _ in mutants)  # a line may have two of a kind
    for rel, line, column, kind, _ in plan.candidates:
        rel = _relative(rel)
        if reported[(rel, line, kind)] > 0:
            reported[(rel, line, kind)] -= 1
            continue
        if not any(c.path == rel for c in changes):
            continue
        if line in plan.chosen.get(rel, ()) and not plan.partial:
            raise ValueError(f"gremlins did not report the mutant {kind} of {rel}:{line} it was given")
        mutants.append((MutantRecord(file=rel, line=line, operator=kind, status="not-run",
                                     function=_function_at(functions.get(rel, []), line)), column))
    return plan.tool, mutants


_TOKEN_MUTATIONS: dict[str, dict[str, str]] = {
    "ARITHMETIC_BASE": {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*"},
    "CONDITIONALS_BOUNDARY": {">=": ">", ">": ">=", "<=": "<", "<": "<="},
    "CONDITIONALS_NEGATION": {"==": "!=", "!=": "==", ">=": "<", ">": "<=", "<=": ">", "<": ">="},
    "INCREMENT_DECREMENT": {"++": "--", "--": "++"},
    "INVERT_ASSIGNMENTS": {"+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "%=": "%="},
    "INVERT_BITWISE": {"&": "|", "|": "&", "^": "&", "&^": "&", "<<": ">>", ">>": "<<"},
    "INVERT_BWASSIGN": {"&=": "|=", "|=": "&=", "^=": "&=", "&^=": "&=", "<<=": ">>=", ">>=": "<<="},
    "INVERT_LOGICAL": {"&&": "||", "||": "&&"},
    "INVERT_LOOPCTRL": {"break": "continue", "continue": "break"},
    "INVERT_NEGATIVES": {"-": "+"},
    "REMOVE_SELF_ASSIGNMENTS": dict.fromkeys(("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "&^=", "<<=", ">>="),
                                             "="),
}
"""What each of gremlins' mutators writes in place of the token it mutates (gremlins v0.6.0's own table,
``internal/engine/mappings.go``; its ``%=`` stays ``%=``)."""
_GO_TOKEN = re.compile(r"[A-Za-z_]\w*|<<=|>>=|&\^=|\.\.\.|&&|\|\||<-|\+\+|--|==|!=|<=|>=|:=|<<|>>|&\^"
                       r"|[-+*/%&|^]=|\S")
"""A Go token where it starts (the longest operator, or a word), to tell which one gremlins mutated."""


def token_edit(source: str, rel: str, line: int, column: int, kind: str) -> SourceEdit | None:
    """gremlins' mutant as the source it writes: the token at ``line``:``column`` (1-based, the column in
    bytes, as Go's positions count) replaced as the mutator does; None when the token there is not one
    the mutator changes (the source is not the one gremlins mutated).

    Example:
        >>> token_edit("package p\\n\\nfunc f(a, b int) bool {\\n\\treturn a < b // é\\n}\\n", "p.go", 4, 11,
        ...            "CONDITIONALS_BOUNDARY")
        SourceEdit(file='p.go', start=(4, 11), end=(4, 12), replacement='<=')
        >>> token_edit("package p\\n\\nvar s = \\"é\\" + x\\n", "p.go", 3, 14, "ARITHMETIC_BASE").start
        (3, 13)
    """
    lines = source.splitlines()
    if not 1 <= line <= len(lines) or column < 1:
        return None
    start = len(lines[line - 1].encode("utf-8")[:column - 1].decode("utf-8", "ignore"))
    token = _GO_TOKEN.match(lines[line - 1], start)
    replacement = _TOKEN_MUTATIONS.get(kind, {}).get(token.group()) if token else None
    if token is None or replacement is None:
        return None
    return SourceEdit(rel, (line, start + 1), (line, token.end() + 1), replacement)


def _relative(name: str) -> str:
    rel = name.replace("\\", "/")
    if rel.startswith("/") or ".." in rel.split("/") or "\0" in rel:
        raise ValueError(f"gremlins' report names a file outside the module: {name!r}")
    return rel.removeprefix("./")


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the document"
    return f"{where}: {error['msg']}"


def _function_at(spans: list[tuple[str, int, int]], line: int) -> str:
    return next((name for name, start, end in spans if start <= line <= end), "<package>")


_TOKENS = re.compile(r"""
    (?P<newline>\n)
  | [ \t\r\f]+
  | //[^\n]*
  | (?P<block>/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | "(?:\\.|[^"\\\n])*"
  | '(?:\\.|[^'\\\n])+'
  | (?P<ident>[^\W\d]\w*)
  | \d[\w.]*
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)


def _tokens(source: str) -> list[tuple[str, str, int]]:
    """Go's tokens as far as functions need them: (kind, text, line); kind is ``ident``, ``punct``,
    ``newline`` or ``literal`` (comments dropped; a comment or raw string over lines counts its lines)."""
    found: list[tuple[str, str, int]] = []
    line = 1
    for match in _TOKENS.finditer(source):
        kind = match.lastgroup
        text = match.group()
        if kind == "newline":
            found.append(("newline", "\n", line))
        elif kind == "ident":
            found.append(("ident", text, line))
        elif kind == "punct":
            found.append(("punct", text, line))
        elif kind == "raw":
            found.append(("literal", text, line))
        elif text[:1] in "\"'0123456789":
            found.append(("literal", text, line))
        elif kind == "block" and "\n" in text:
            found.append(("newline", "\n", line))
        line += text.count("\n")
    return found


def go_functions(source: str) -> list[tuple[str, int, int]]:
    """The top-level functions and methods of a Go file with a body: (name, first line, last line).

    Example:
        >>> go_functions('package p\\n\\n// Add adds.\\nfunc Add(a, b int) int {\\n\\treturn a + b // }\\n}\\n'
        ...              'func f() interface{ M() } {\\n\\treturn nil\\n}\\nfunc asm(x int) int\\n'
        ...              'var g = func() int { return "}" }\\n')
        [('Add', 4, 6), ('f', 7, 9)]
    """
    tokens = _tokens(source)
    spans: list[tuple[str, int, int]] = []
    depth = index = 0
    while index < len(tokens):
        kind, text, line = tokens[index]
        if kind == "punct" and text in "{}":
            depth = depth + 1 if text == "{" else max(0, depth - 1)
        elif kind == "ident" and text == "func" and depth == 0:
            found = _declaration(tokens, index)
            if found is not None:
                name, end, after = found
                if end is not None:
                    spans.append((name, line, end))
                index = after
                continue
        index += 1
    return spans


def _matching(tokens: list[tuple[str, str, int]], index: int) -> int:
    """The index of the token that closes the bracket at ``index`` (or the last token)."""
    opening = tokens[index][1]
    closing = {"(": ")", "[": "]", "{": "}"}[opening]
    level = 0
    for at in range(index, len(tokens)):
        kind, text, _ = tokens[at]
        if kind == "punct" and text == opening:
            level += 1
        elif kind == "punct" and text == closing:
            level -= 1
            if level == 0:
                return at
    return len(tokens) - 1


def _declaration(tokens: list[tuple[str, str, int]], index: int) -> tuple[str, int | None, int] | None:
    """The function declared at ``tokens[index]`` (``func``): its name, its last line (None: no body) and the
    index after it; None when it is no declaration (a function literal or type)."""
    at = index + 1
    receiver = None
    if at < len(tokens) and tokens[at][1] == "(":
        close = _matching(tokens, at)
        names, level = [], 0
        for kind, text, _ in tokens[at + 1:close]:
            level += (text == "[") - (text == "]") if kind == "punct" else 0
            if kind == "ident" and level == 0:
                names.append(text)
        receiver = names[-1] if names else None
        at = close + 1
    if at + 1 >= len(tokens) or tokens[at][0] != "ident" or tokens[at + 1][1] not in "([":
        return None
    name = f"{receiver}.{tokens[at][1]}" if receiver else tokens[at][1]
    at += 1
    if tokens[at][1] == "[":
        at = _matching(tokens, at) + 1
    if at >= len(tokens) or tokens[at][1] != "(":
        return None
    at = _matching(tokens, at) + 1
    previous = ""
    while at < len(tokens):
        kind, text, _ = tokens[at]
        if kind == "punct" and text in "([":
            at = _matching(tokens, at) + 1
            previous = ")"
            continue
        if kind == "punct" and text == "{":
            close = _matching(tokens, at)
            if previous in ("interface", "struct"):
                at, previous = close + 1, "}"
                continue
            return name, tokens[close][2], close + 1
        if kind == "newline":
            if previous and (previous[-1].isalnum() or previous[-1] in ")]}_"):
                return name, None, at  # a declaration without a body (assembly)
        elif kind != "newline":
            previous = text
        at += 1
    return name, None, at
