"""vitest's and jest's mutants: Stryker (``@stryker-mutator/core`` and the runner's plugin, from the
project's own ``node_modules``: a project without them is told how to add them, and judged without
it); ``sandbox/scripts/stryker_plan.cjs`` chooses its mutants (at most ``maxMutants``, by Stryker's
own instrumenter) and puts them in their functions (Stryker names none)."""

from __future__ import annotations

import json
import secrets
import shlex
from pathlib import Path

from pydantic import BaseModel, ValidationError

from sprintflow.io.confine import read_confined
from sprintflow.schemas.evaluation import MutantRecord, MutantStatus

from .tools import FOLDER, MAX_REPORT_BYTES, MutationTool, SourceEdit, ToolRun, register

__all__ = ["Stryker"]

_RUNNERS = {"vitest": "@stryker-mutator/vitest-runner", "jest": "@stryker-mutator/jest-runner"}
_STATUS: dict[str, MutantStatus] = {
    "Killed": "killed", "Survived": "survived", "NoCoverage": "survived", "Timeout": "timeout",
    "CompileError": "error", "RuntimeError": "error"}


@register(*_RUNNERS)
class Stryker(MutationTool):
    name = "Stryker"
    suffixes = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")

    def missing(self, workspace: Path, runner: str) -> str | None:
        packages = ("@stryker-mutator/core", _RUNNERS[runner])
        absent = [p for p in packages if not (workspace / "node_modules" / p / "package.json").is_file()]
        if not absent:
            return None
        return (f"Stryker is not installed in the project, so the change's tests were not mutation-checked: "
                f"npm install --save-dev {' '.join(packages)}")

    def command(self, run: ToolRun) -> str:
        """The plan of Stryker's run (``sandbox/scripts/stryker_plan.cjs``: at most ``maxMutants`` of the
        mutants of the changed lines, by Stryker's own instrumenter, spread over the changed functions; the
        files in ``run.tests`` left out), then Stryker: its JSON report, one test process (the machine's other
        core is the judge's). In place: the layer is already a throwaway copy of the judged tree, so Stryker's
        own copy of the project is not made. The plan writes the (empty) report itself when the changed lines
        have no mutant; Stryker, given nothing to mutate, would fail."""
        settings = run.settings
        options = {"testRunner": run.runner, "plugins": [_RUNNERS[run.runner]],
                   "reporters": ["json"], "jsonReporter": {"fileName": f"{FOLDER}/report.json"},
                   "coverageAnalysis": "perTest", "concurrency": 1, "timeoutMS": int(run.mutant_timeout * 1000),
                   "timeoutFactor": 1.5, "incremental": False, "cleanTempDir": True, "inPlace": True,
                   "tempDirName": f"{FOLDER}/stryker-tmp", "logLevel": "warn", "fileLogLevel": "off",
                   "disableTypeChecks": True}
        job = {"files": {c.path: [list(r) for r in c.lines] for c in run.changes},
               "tests": sorted(set(run.tests) & {c.path for c in run.changes}), "maxMutants": settings.max_mutants,
               "seed": secrets.randbits(32), "stryker": options, "config": f"{FOLDER}/stryker.json",
               "functions": f"{FOLDER}/functions.json"}
        run.job_file("stryker-job.json").write_text(json.dumps(job), encoding="utf-8")
        plan = shlex.quote(run.executor.script("stryker_plan.cjs"))
        return (f"timeout -k 5 60 node {plan} {FOLDER}/stryker-job.json && {{ [ -f {FOLDER}/report.json ] || "
                f"timeout -s INT -k 15 {int(settings.budget)} node node_modules/@stryker-mutator/core/bin/stryker.js "
                f"run {FOLDER}/stryker.json; }}")

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        return report(run.layer)

    def edits(self, run: ToolRun) -> list[SourceEdit | None]:
        return [edit for _, edit in _read(run.layer)[1]]


def report(layer: Path) -> tuple[str, list[MutantRecord]]:
    """Stryker's mutation-testing-report-schema JSON in ``layer``, one record per mutant of the changed lines.

    A file its ``testFiles`` shows the runner collected tests from is a test: its mutants are dropped
    (only the run says what a test is, not a name). A mutant belongs to the innermost function around
    it (``stryker_plan.cjs``, by the project's TypeScript compiler: Stryker names none); without
    that map, each changed line stands alone (stricter: it needs a killed mutant of its own)."""
    tool, mutants = _read(layer)
    return tool, [record for record, _ in mutants]


def _read(layer: Path) -> tuple[str, list[tuple[MutantRecord, SourceEdit | None]]]:
    """The report's mutants, each with the source it writes (its ``replacement`` at its ``location``)."""
    data = json.loads(read_confined(layer, f"{FOLDER}/report.json", MAX_REPORT_BYTES))
    tests = {Path(rel).as_posix() for rel, entry in dict(data.get("testFiles") or {}).items()
             if list(dict(entry).get("tests") or [])}
    plan = _plan(layer)
    # The plan left out the files the unit-test run named tests; Stryker's own run must agree, or a
    # changed source file would go unmutated on the report's word alone.
    for rel in plan.tests if plan else ():
        if rel not in tests:
            raise ValueError(f"{rel} was left out as a test file, but Stryker's run collected no test from it: "
                             "its changes were not mutation-checked")
    functions = plan.functions if plan else None
    mutants: list[tuple[MutantRecord, SourceEdit | None]] = []
    for path, entry in dict(data["files"]).items():
        rel = Path(path).as_posix()
        if rel in tests:
            continue
        source = str(entry.get("source") or "").splitlines()
        for mutant in entry["mutants"]:
            start, end = mutant["location"]["start"], mutant["location"]["end"]
            line, column = int(start["line"]), int(start["column"])
            status = _STATUS.get(str(mutant["status"]), "not-run")
            replacement = mutant.get("replacement")
            edit = SourceEdit(rel, (line, _in_characters(source, line, column)),
                              (int(end["line"]), _in_characters(source, int(end["line"]), int(end["column"]))),
                              replacement) if isinstance(replacement, str) else None
            mutants.append((MutantRecord(file=rel, line=line, operator=str(mutant["mutatorName"]), status=status,
                                         function=_function_at(functions, rel, line, column)), edit))
    return f"Stryker {data.get('framework', {}).get('version', '')}".strip(), mutants


def _in_characters(lines: list[str], line: int, column: int) -> int:
    """A 1-based column counted in UTF-16 code units (JavaScript's, Stryker's) as one counted in characters.

    >>> _in_characters(["const s = '🙂' + x;"], 1, 16)  # the emoji is two code units, one character
    15
    """
    if not 1 <= line <= len(lines) or column < 1:
        return column
    before = lines[line - 1].encode("utf-16-le", "surrogatepass")[:2 * (column - 1)]
    return len(before.decode("utf-16-le", "ignore")) + 1


class _Span(BaseModel):
    name: str
    start: tuple[int, int]
    end: tuple[int, int]


class _Plan(BaseModel):
    functions: dict[str, list[_Span]] | None = None
    """The changed files' functions; None when the project has no TypeScript to tell them."""
    tests: list[str] = []
    """The changed files the plan left out as tests."""


def _plan(layer: Path) -> _Plan | None:
    """What ``stryker_plan.cjs`` wrote beside Stryker's report, or None when it wrote nothing readable
    (every changed line then stands alone)."""
    try:
        return _Plan.model_validate_json(read_confined(layer, f"{FOLDER}/functions.json", MAX_REPORT_BYTES))
    except (OSError, ValueError, ValidationError):
        return None


def _function_at(functions: dict[str, list[_Span]] | None, rel: str, line: int, column: int) -> str:
    if functions is None:
        return f"line {line}"
    around = [span for span in functions.get(rel, ()) if span.start <= (line, column) < span.end]
    return max(around, key=lambda span: span.start).name if around else "<module>"
