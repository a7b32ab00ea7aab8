"""The mutation check: do the tests that passed fail when the changed code changes?

A test run that passes says nothing about the change if its tests pass whatever the changed code
does. After a unit-test run passed, the judge mutates the lines the change touched (against the
sprint's baseline, :mod:`.changes`) with the ecosystem's own mutation tool and runs the same test
command against each mutant, in a layer of its own (the judged tree, without the run's canaries):

* **pytest**: cosmic-ray, through its runner in ``sandbox/scripts/mutate_python.py``;
* **vitest, jest**: Stryker (``@stryker-mutator/core`` and the runner's plugin, from the project's
  own ``node_modules``: a project without them is told how to add them, and judged without it);
  ``sandbox/scripts/stryker_plan.cjs`` chooses its mutants (at most ``maxMutants``, by Stryker's own
  instrumenter) and puts them in their functions (Stryker names none);
* **go test** and the other runners: none yet; the result says the check was unavailable.

Which changed files are tests is the mutation run's to say, never a name's: every changed file of
the runner's language is handed to the tool, and those its runner collected tests from are left
out (the pytest plugin's collection; Stryker's ``testFiles``).

A changed function none of whose mutants was killed fails the criterion, at file:line: "the tests
pass whatever this code does". A timeout is not a kill; a mutant the tool could not judge counts
neither way; mutants left when the budget ran out are not run. The kill rate goes into the
StrategyResult (``mutation``), the history and the report. Bounded by
``config.mutation`` of the unit-test strategy (``maxMutants``, ``budget``, ``mutantTimeout``;
``enabled = false`` turns it off).

What it does not prove: the tests' assertions are the code under test's neighbours, so code that
detects its own mutation (and fails on purpose) is counted as tested; the check grades tests, it
is not a defence against forgery (the canaries are, :mod:`..canary`).

Example:
    >>> from sprintflow.schemas.evaluation import MutantRecord
    >>> found = summarize("cosmic-ray 8.7.0", [MutantRecord(file="a.py", line=3, function="f", operator="x",
    ...                                                     status="survived")], 1200)
    >>> found.kill_rate, [(f.function, f.killed) for f in found.functions]
    (0.0, [('f', 0)])
    >>> [d.message for d in untested(found)]
    ['the tests pass whatever this code does: none of 1 mutant of f was killed']
"""

from __future__ import annotations

import json
import secrets
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

from sprintflow.io.confine import read_confined
from sprintflow.judge.baseline import load_baseline
from sprintflow.judge.tree import WorkspaceStore
from sprintflow.sandbox.executors import CommandSpec, Executor
from sprintflow.schemas import Diagnostic, Outcome, StrategyResult
from sprintflow.schemas.evaluation import MutantRecord, MutantStatus, MutatedFunction, MutationResult
from sprintflow.schemas.strategies import MutationSettings

from .changes import ChangedFile, changed_files

__all__ = ["MutationJob", "measure", "summarize", "untested", "with_mutation"]

FOLDER = ".sprintflow-mutation"
"""Where in the layer the judge writes the tool's job and the tool its report."""
MAX_REPORT_BYTES = 8 << 20
SHOWN_SURVIVORS = 10
UNAVAILABLE = 3
"""The runner's exit code when its tool is not installed where the tests run."""
_PYTHON = (".py",)
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
_STRYKER_RUNNERS = {"vitest": "@stryker-mutator/vitest-runner", "jest": "@stryker-mutator/jest-runner"}
_STRYKER_STATUS: dict[str, MutantStatus] = {
    "Killed": "killed", "Survived": "survived", "NoCoverage": "survived", "Timeout": "timeout",
    "CompileError": "error", "RuntimeError": "error"}


@dataclass(frozen=True)
class MutationJob:
    """What the mutation check of one test run needs, decided by the plan (a plain value)."""

    settings: MutationSettings
    tree: Path
    """The judged tree: its source files are compared with the baseline's."""
    workspace: Path
    """The real workspace: its judge store holds the baseline, its ``node_modules`` the tools."""
    pin_id: str

    def changes(self, runner: str) -> list[ChangedFile]:
        """The changed source files of the runner's language, against the baseline."""
        store = WorkspaceStore(self.workspace)
        manifest = load_baseline(store, self.pin_id).manifest

        def baseline_text(rel: str) -> str | None:
            entry = manifest.get(rel)
            if entry is None or entry.kind != "file":
                return None
            try:
                return store.objects.path(entry.key).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                return None

        return changed_files(self.tree, baseline_text, _PYTHON if runner == "pytest" else _JS)


def measure(job: MutationJob, runner: str, layer: Path, executor: Executor, commands: list[str],
            unmutated_s: float, network: bool = False, image: str | None = None,
            tests: tuple[str, ...] = ()) -> MutationResult | None:
    """Mutate the changed lines in ``layer`` and run the judging tests against each mutant; None when the
    change touched no source file of the runner's language.

    ``commands`` are the test commands that judge (the strategy's, then the held-out evals'): with
    cosmic-ray a mutant any of them fails is killed; Stryker runs the project's own runner config.
    ``tests`` are the files the judged test run collected tests from: Stryker's plan leaves them out
    (cosmic-ray's run tells them itself, before it chooses)."""
    if runner != "pytest" and runner not in _STRYKER_RUNNERS:
        return MutationResult(tool=runner, status="unavailable",
                              reason=f"no mutation tool judges {runner}'s tests yet: the change's tests were not "
                                     "mutation-checked")
    changes = job.changes(runner)
    if not changes:
        return None
    tool = "cosmic-ray" if runner == "pytest" else "Stryker"
    missing = _stryker_missing(job.workspace, runner) if tool == "Stryker" else None
    if missing:
        return MutationResult(tool=tool, status="unavailable", reason=missing)
    (layer / FOLDER).mkdir(exist_ok=True)
    settings = job.settings
    mutant_timeout = settings.mutant_timeout or 3 * unmutated_s + 10
    started = time.monotonic()
    if tool == "cosmic-ray":
        run_command = _cosmic_ray(layer, executor, changes, commands, settings, mutant_timeout)
    else:
        run_command = _stryker(layer, executor, changes, runner, settings, mutant_timeout, tests)
    outcome = executor.run(layer, CommandSpec(command=run_command, timeout=settings.budget + mutant_timeout + 60,
                                              network=network, image=image))
    elapsed = int((time.monotonic() - started) * 1000)
    report = layer / FOLDER / "report.json"
    if outcome.exit_code == UNAVAILABLE:
        return MutationResult(tool=tool, status="unavailable", reason=outcome.stdout.strip()[-300:])
    if outcome.timed_out or not report.is_file():
        why = (f"it did not finish within its budget of {settings.budget:g} s (raise config.mutation.budget "
               "or lower maxMutants)") if outcome.timed_out or outcome.exit_code == 124 else \
            f"it wrote no report (exit {outcome.exit_code}: {(outcome.stderr or outcome.stdout)[-300:].strip()})"
        return MutationResult(tool=tool, status="failed", reason=f"{tool} could not measure the change: {why}",
                              duration_ms=elapsed)
    try:
        name, mutants = (_cosmic_ray_report if tool == "cosmic-ray" else _stryker_report)(layer, changes)
    except (OSError, ValueError, ValidationError) as exc:
        return MutationResult(tool=tool, status="failed", reason=f"{tool}'s run cannot be judged: {exc}",
                              duration_ms=elapsed)
    return summarize(name, mutants, elapsed)


def summarize(tool: str, mutants: list[MutantRecord], duration_ms: int | None) -> MutationResult:
    """The kill rate and the changed functions' tally of what the mutants did.

    A changed function that has mutants but none that ran to a verdict (the budget ran out first, or
    none could be loaded) cannot be told tested: the check fails rather than pass it unjudged.

    Example:
        >>> left = MutantRecord(file="a.py", line=3, function="slow", operator="x", status="not-run")
        >>> summarize("cosmic-ray", [left], 10).reason
        'no mutant of a.py:3 slow ran to a verdict (1 not run when the budget ran out, 0 could not be loaded)'
    """
    ran = [m for m in mutants if m.status in ("killed", "survived", "timeout")]
    functions: dict[tuple[str, str], list[MutantRecord]] = {}
    for mutant in ran:
        functions.setdefault((mutant.file, mutant.function), []).append(mutant)
    unjudged = [m for m in mutants if (m.file, m.function) not in functions]
    if unjudged:
        first = unjudged[0]
        group = [m for m in unjudged if (m.file, m.function) == (first.file, first.function)]
        left = sum(m.status == "not-run" for m in group)
        return MutationResult(tool=tool, status="failed", duration_ms=duration_ms, mutants=len(ran),
                              not_run=sum(m.status == "not-run" for m in mutants),
                              errors=sum(m.status == "error" for m in mutants),
                              reason=f"no mutant of {first.file}:{min(m.line for m in group)} {first.function} ran "
                                     f"to a verdict ({left} not run when the budget ran out, {len(group) - left} "
                                     f"could not be loaded)")
    killed = sum(m.status == "killed" for m in ran)
    return MutationResult(
        tool=tool, status="measured" if ran else "nothing to judge",
        reason=None if ran else "no mutant of the changed lines ran to a verdict",
        mutants=len(ran), killed=killed, survived=sum(m.status == "survived" for m in ran),
        timeouts=sum(m.status == "timeout" for m in ran), errors=sum(m.status == "error" for m in mutants),
        not_run=sum(m.status == "not-run" for m in mutants), kill_rate=round(killed / len(ran), 4) if ran else None,
        functions=[MutatedFunction(file=file, line=min(m.line for m in group), function=function,
                                   mutants=len(group), killed=sum(m.status == "killed" for m in group))
                   for (file, function), group in sorted(functions.items())],
        survivors=[m for m in ran if m.status != "killed"][:SHOWN_SURVIVORS], duration_ms=duration_ms)


def untested(mutation: MutationResult) -> list[Diagnostic]:
    """A finding for each changed function whose tests pass whatever it does (no mutant killed)."""
    return [Diagnostic(tool="mutation", severity="error", code="untested-change", file=f.file, line=f.line,
                       message=f"the tests pass whatever this code does: none of {f.mutants} "
                               f"mutant{'s' if f.mutants > 1 else ''} of {f.function} was killed")
            for f in mutation.functions if f.killed == 0]


def with_mutation(result: StrategyResult, mutation: MutationResult | None) -> StrategyResult:
    """The strategy's result with its mutation check: failed, at file:line, when a changed function
    is untested, and failed when the check could not finish (code under test may have stopped it)."""
    if mutation is None:
        return result
    if mutation.status == "failed":
        return result.model_copy(update={
            "mutation": mutation, "result": Outcome.failed,
            "details": f"The tests passed, but whether they test the change could not be told: {mutation.reason}. "
                       f"{result.details}"})
    findings = untested(mutation)
    if not findings:
        return result.model_copy(update={"mutation": mutation})
    return result.model_copy(update={
        "mutation": mutation, "result": Outcome.failed, "diagnostics": [*findings, *result.diagnostics],
        "error_count": (result.error_count or 0) + len(findings),
        "details": f"The tests passed, but {findings[0].message} ({findings[0].file}:{findings[0].line}); "
                   f"{mutation.killed} of {mutation.mutants} mutants of the change killed. {result.details}"})


def _cosmic_ray(layer: Path, executor: Executor, changes: list[ChangedFile], commands: list[str],
                settings: MutationSettings, mutant_timeout: float) -> str:
    job = {"files": {c.path: [list(r) for r in c.lines] for c in changes},
           "commands": commands, "maxMutants": settings.max_mutants,
           "budget": settings.budget, "mutantTimeout": mutant_timeout, "seed": secrets.randbits(32),
           "report": f"{FOLDER}/report.json"}
    (layer / FOLDER / "job.json").write_text(json.dumps(job), encoding="utf-8")
    runner = shlex.quote(executor.script("mutate_python.py"))
    return f"{shlex.quote(executor.python)} {runner} {FOLDER}/job.json"


def _cosmic_ray_report(layer: Path, changes: list[ChangedFile]) -> tuple[str, list[MutantRecord]]:
    data = json.loads(read_confined(layer, f"{FOLDER}/report.json", MAX_REPORT_BYTES))
    return str(data["tool"]), TypeAdapter(list[MutantRecord]).validate_python(data["mutants"])


def _stryker_missing(workspace: Path, runner: str) -> str | None:
    packages = ("@stryker-mutator/core", _STRYKER_RUNNERS[runner])
    absent = [p for p in packages if not (workspace / "node_modules" / p / "package.json").is_file()]
    if not absent:
        return None
    return (f"Stryker is not installed in the project, so the change's tests were not mutation-checked: "
            f"npm install --save-dev {' '.join(packages)}")


def _stryker(layer: Path, executor: Executor, changes: list[ChangedFile], runner: str, settings: MutationSettings,
             mutant_timeout: float, tests: tuple[str, ...] = ()) -> str:
    """The plan of Stryker's run (``sandbox/scripts/stryker_plan.cjs``: at most ``maxMutants`` of the mutants
    of the changed lines, by Stryker's own instrumenter, spread over the changed functions; the files in
    ``tests`` left out), then Stryker: its JSON report, one test process (the machine's other core is the
    judge's). In place: the layer is already a throwaway copy of the judged tree, so Stryker's own copy of
    the project is not made. The plan writes the (empty) report itself when the changed lines have no
    mutant; Stryker, given nothing to mutate, would fail."""
    options = {"testRunner": runner, "plugins": [_STRYKER_RUNNERS[runner]],
               "reporters": ["json"], "jsonReporter": {"fileName": f"{FOLDER}/report.json"},
               "coverageAnalysis": "perTest", "concurrency": 1, "timeoutMS": int(mutant_timeout * 1000),
               "timeoutFactor": 1.5, "incremental": False, "cleanTempDir": True, "inPlace": True,
               "tempDirName": f"{FOLDER}/stryker-tmp", "logLevel": "warn", "fileLogLevel": "off",
               "disableTypeChecks": True}
    job = {"files": {c.path: [list(r) for r in c.lines] for c in changes},
           "tests": sorted(set(tests) & {c.path for c in changes}), "maxMutants": settings.max_mutants,
           "seed": secrets.randbits(32), "stryker": options, "config": f"{FOLDER}/stryker.json",
           "functions": f"{FOLDER}/functions.json"}
    (layer / FOLDER / "stryker-job.json").write_text(json.dumps(job), encoding="utf-8")
    plan = shlex.quote(executor.script("stryker_plan.cjs"))
    return (f"timeout -k 5 60 node {plan} {FOLDER}/stryker-job.json && {{ [ -f {FOLDER}/report.json ] || "
            f"timeout -s INT -k 15 {int(settings.budget)} node node_modules/@stryker-mutator/core/bin/stryker.js "
            f"run {FOLDER}/stryker.json; }}")


def _stryker_report(layer: Path, changes: list[ChangedFile]) -> tuple[str, list[MutantRecord]]:
    """Stryker's mutation-testing-report-schema JSON, one record per mutant of the changed lines.

    A file its ``testFiles`` shows the runner collected tests from is a test: its mutants are dropped
    (only the run says what a test is, not a name). A mutant belongs to the innermost function around
    it (``stryker_plan.cjs``, by the project's TypeScript compiler: Stryker names none); without
    that map, each changed line stands alone (stricter: it needs a killed mutant of its own)."""
    data = json.loads(read_confined(layer, f"{FOLDER}/report.json", MAX_REPORT_BYTES))
    tests = {Path(rel).as_posix() for rel, entry in dict(data.get("testFiles") or {}).items()
             if list(dict(entry).get("tests") or [])}
    plan = _stryker_plan(layer)
    # The plan left out the files the unit-test run named tests; Stryker's own run must agree, or a
    # changed source file would go unmutated on the report's word alone.
    for rel in plan.tests if plan else ():
        if rel not in tests:
            raise ValueError(f"{rel} was left out as a test file, but Stryker's run collected no test from it: "
                             "its changes were not mutation-checked")
    functions = plan.functions if plan else None
    mutants = []
    for path, entry in dict(data["files"]).items():
        rel = Path(path).as_posix()
        if rel in tests:
            continue
        for mutant in entry["mutants"]:
            start = mutant["location"]["start"]
            line, column = int(start["line"]), int(start["column"])
            status = _STRYKER_STATUS.get(str(mutant["status"]), "not-run")
            mutants.append(MutantRecord(file=rel, line=line, operator=str(mutant["mutatorName"]), status=status,
                                        function=_function_at(functions, rel, line, column)))
    return f"Stryker {data.get('framework', {}).get('version', '')}".strip(), mutants


class _Span(BaseModel):
    name: str
    start: tuple[int, int]
    end: tuple[int, int]


class _Plan(BaseModel):
    functions: dict[str, list[_Span]] | None = None
    """The changed files' functions; None when the project has no TypeScript to tell them."""
    tests: list[str] = []
    """The changed files the plan left out as tests."""


def _stryker_plan(layer: Path) -> _Plan | None:
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
