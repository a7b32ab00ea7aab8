"""The mutation check: do the tests that passed fail when the changed code changes?

A test run that passes says nothing about the change if its tests pass whatever the changed code
does. After a unit-test run passed, the judge mutates the lines the change touched (against the
sprint's baseline, :mod:`.changes`) with the ecosystem's own mutation tool and runs the same test
command against each mutant, in a layer of its own (the judged tree, without the run's canaries), then the
held-out evals' commands against the survivors of each changed function it found untested (where the
tool's report says what source each mutant wrote, :func:`_judged_by_held_out`):

* **pytest**: cosmic-ray (:mod:`.cosmic_ray`);
* **vitest, jest**: Stryker (:mod:`.stryker`);
* **go test**: gremlins (:mod:`.gremlins`), built by the judge (:mod:`sprintflow.sandbox.gremlins`);
* **cargo test, cargo nextest**: cargo-mutants (:mod:`.cargo_mutants`), built by the judge
  (:mod:`sprintflow.sandbox.cargo_mutants`);
* **Maven (Surefire)**: PIT (:mod:`.pitest`), from Maven Central by the setup step;
* any other runner: none; the result says the check was unavailable.

Each tool is a module of its own, registered by runner in :mod:`.tools`.

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
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from sprintflow.io.confine import read_confined
from sprintflow.judge.baseline import load_baseline
from sprintflow.judge.tree import WorkspaceStore
from sprintflow.sandbox.executors import CommandSpec, Executor
from sprintflow.schemas import Diagnostic, Outcome, StrategyResult
from sprintflow.schemas.evaluation import MutantRecord, MutatedFunction, MutationResult
from sprintflow.schemas.strategies import MutationSettings

from . import cargo_mutants, cosmic_ray, gremlins, pitest, stryker  # noqa: F401  (each registers its tool)
from .changes import ChangedFile, changed_files
from .tools import FOLDER, MAX_REPORT_BYTES, TOOLS, UNAVAILABLE, MutationTool, ToolRun

__all__ = ["FOLDER", "MutationJob", "measure", "summarize", "untested", "with_mutation"]

SHOWN_SURVIVORS = 10


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

        return changed_files(self.tree, baseline_text, TOOLS[runner].suffixes)


def measure(job: MutationJob, runner: str, layer: Path, executor: Executor, commands: list[str],
            unmutated_s: float, network: bool = False, image: str | None = None,
            tests: tuple[str, ...] = ()) -> MutationResult | None:
    """Mutate the changed lines in ``layer`` and run the judging tests against each mutant; None when the
    change touched no source file of the runner's language.

    ``commands`` are the test commands that judge (the strategy's, then the held-out evals'): with
    cosmic-ray a mutant any of them fails is killed; Stryker runs the project's own runner config.
    ``tests`` are the files the judged test run collected tests from: Stryker's plan leaves them out
    (cosmic-ray's run tells them itself, before it chooses)."""
    tool = TOOLS.get(runner)
    if tool is None:
        return MutationResult(tool=runner, status="unavailable",
                              reason=f"no mutation tool judges {runner}'s tests yet: the change's tests were not "
                                     "mutation-checked")
    changes = job.changes(runner)
    if not changes:
        return None
    missing = tool.missing(job.workspace, runner)
    if missing:
        return MutationResult(tool=tool.name, status="unavailable", reason=missing)
    (layer / FOLDER).mkdir(exist_ok=True)
    settings = job.settings
    run = ToolRun(runner, layer, executor, changes, commands, settings,
                  settings.mutant_timeout or 3 * unmutated_s + 10, tests)
    started = time.monotonic()
    outcome = executor.run(layer, CommandSpec(command=tool.command(run),
                                              timeout=settings.budget + run.mutant_timeout + 60,
                                              network=network, image=image))
    elapsed = int((time.monotonic() - started) * 1000)
    if outcome.exit_code == UNAVAILABLE:
        return MutationResult(tool=tool.name, status="unavailable", reason=outcome.stdout.strip()[-300:])
    if outcome.timed_out or not run.job_file("report.json").is_file():
        why = (f"it did not finish within its budget of {settings.budget:g} s (raise config.mutation.budget "
               "or lower maxMutants)") if outcome.timed_out or outcome.exit_code == 124 else \
            f"it wrote no report (exit {outcome.exit_code}: {tool.why_it_failed(outcome.stderr or outcome.stdout)})"
        return MutationResult(tool=tool.name, status="failed", duration_ms=elapsed,
                              reason=f"{tool.name} could not measure the change: {why}")
    try:
        name, mutants = tool.report(run)
        mutants = _judged_by_held_out(tool, run, mutants, settings.budget - elapsed / 1000, network, image)
    except (OSError, ValueError, KeyError, TypeError, ValidationError) as exc:
        return MutationResult(tool=tool.name, status="failed", reason=f"{tool.name}'s run cannot be judged: {exc}",
                              duration_ms=elapsed)
    return summarize(name, mutants, int((time.monotonic() - started) * 1000))


def _judged_by_held_out(tool: MutationTool, run: ToolRun, mutants: list[MutantRecord], seconds_left: float,
                        network: bool, image: str | None) -> list[MutantRecord]:
    """The survivors of each changed function none of whose mutants the strategy's tests killed, judged
    again by the held-out evals' commands (``run.commands[1:]``): a mutant one of them fails is killed.

    The tool's own run judges with the strategy's test command alone (cosmic-ray's judges with all of
    them itself, so it gives no edits); here each survivor is written back as the source the tool's report
    says it wrote (``sandbox/scripts/judge_survivors.py``, in the same layer), within what is left of the
    budget, but never less than a clean run and a mutant's run. Tools whose report cannot say
    (:meth:`MutationTool.edits` empty) leave their survivors as they are."""
    held_out = run.commands[1:]
    tested = {(m.file, m.function) for m in mutants if m.status == "killed"}

    def in_question(mutant: MutantRecord) -> bool:
        return mutant.status == "survived" and (mutant.file, mutant.function) not in tested

    if not held_out or not any(map(in_question, mutants)):
        return mutants
    chosen = [(index, edit) for index, (mutant, edit) in enumerate(zip(mutants, tool.edits(run), strict=False))
              if edit is not None and in_question(mutant)]
    if not chosen:
        return mutants
    budget = max(seconds_left, 2 * run.mutant_timeout * len(held_out))
    job = {"commands": held_out, "budget": budget, "mutantTimeout": run.mutant_timeout,
           "report": f"{FOLDER}/survivors.json",
           "mutants": [{"file": e.file, "start": e.start, "end": e.end, "replacement": e.replacement,
                        "group": f"{mutants[i].file} {mutants[i].function}"} for i, e in chosen]}
    run.job_file("survivors-job.json").write_text(json.dumps(job), encoding="utf-8")
    judge = f"{shlex.quote(run.executor.python)} {shlex.quote(run.executor.script('judge_survivors.py'))}"
    outcome = run.executor.run(run.layer, CommandSpec(command=f"{judge} {FOLDER}/survivors-job.json",
                                                      timeout=budget + run.mutant_timeout + 60,
                                                      network=network, image=image))
    try:
        statuses = _Survivors.model_validate_json(read_confined(run.layer, f"{FOLDER}/survivors.json",
                                                                MAX_REPORT_BYTES)).statuses
    except (OSError, ValueError) as exc:
        raise ValueError(f"the held-out evals' run on its survivors wrote no readable report (exit "
                         f"{outcome.exit_code}: {exc})") from exc
    if len(statuses) != len(chosen):
        raise ValueError(f"the held-out evals judged {len(statuses)} survivors of {len(chosen)}")
    judged = list(mutants)
    for (index, _), status in zip(chosen, statuses, strict=True):
        if status is not None:
            judged[index] = mutants[index].model_copy(update={"status": status})
    return judged


class _Survivors(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    passing: list[str]
    statuses: list[Literal["killed", "survived", "timeout", "error", "not-run"] | None]


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
