"""``cargo test``'s and ``cargo nextest run``'s mutants: cargo-mutants, the judge's own build
(:mod:`sprintflow.sandbox.cargo_mutants`: on the host, and in Docker's Rust runtime layer), never the
workspace's; through its runner in ``sandbox/scripts/mutate_rust.py``, which lists the mutants of the
changed lines (``--in-diff``), chooses at most the cap spread over the changed functions, and has
cargo-mutants judge those in place with the test command's tool.

cargo-mutants names each mutant's function (``Type::method`` for a method); a mutant outside any
function stands alone (``line N``). It mutates no ``#[cfg(test)]`` code and no test target, so the
unit tests inside ``src/*.rs`` and the integration tests are never counted as code under test; the
tests that judge a mutant are ``cargo test``'s (or nextest's) of the mutated package, which include
its integration tests (held-out evals built as a ``[[test]]`` target of the package among them), and
of the whole workspace when the command tests the workspace. The project's ``.cargo/mutants.toml``
is not read (``--no-config``): what is mutated and how is the judge's.

The report is cargo-mutants' own ``mutants.out/outcomes.json``, checked against the runner's plan
(``report.json``): every outcome is a mutant that was chosen, of a changed file, and a chosen mutant
without an outcome was not run (the budget ran out). ``CaughtMutant`` is killed, ``MissedMutant``
survived, ``Timeout`` is a timeout (not a kill), ``Unviable`` (it did not build) counts neither way.

Example:
    >>> CargoMutants.name, CargoMutants.suffixes, STATUS["CaughtMutant"], STATUS["Timeout"]
    ('cargo-mutants', ('.rs',), 'killed', 'timeout')
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sprintflow.io.confine import read_confined
from sprintflow.io.containment import containment_unavailable
from sprintflow.kinds import ExecutorName
from sprintflow.sandbox.cargo_mutants import DOCKER_BIN, HOST_BIN, VERSION, build, build_command, host_binary
from sprintflow.schemas.evaluation import MutantRecord, MutantStatus

from .tools import FOLDER, MAX_REPORT_BYTES, MutationTool, SourceEdit, ToolRun, register

__all__ = ["STATUS", "CargoMutants", "report"]

STATUS: dict[str, MutantStatus] = {"CaughtMutant": "killed", "MissedMutant": "survived", "Timeout": "timeout",
                                   "Unviable": "error", "Failure": "error"}
"""cargo-mutants' summary of a mutant's scenario, as the judge counts it."""
OUTCOMES = f"{FOLDER}/mutants.out/outcomes.json"
_CD = re.compile(r"^\s*cd\s+(\S+)\s*&&")


@register("cargo")
class CargoMutants(MutationTool):
    name = "cargo-mutants"
    suffixes = (".rs",)

    def missing(self, workspace: Path, runner: str) -> str | None:
        """None once the judge has its cargo-mutants: built here the first time it is needed (about two
        minutes, once) unless ``scripts/install.sh`` built it."""
        if host_binary() is not None or build() is not None:
            return None
        return (f"cargo-mutants {VERSION} could not be built for the judge (it needs the host's cargo and "
                f"crates.io), so the change's tests were not mutation-checked: run `{build_command()}`")

    def command(self, run: ToolRun) -> str:
        """The runner's job (``sandbox/scripts/mutate_rust.py``), then the runner: where the test command
        runs cargo (its ``cd DIR &&``), which tool (``nextest`` or ``cargo``), the bounds."""
        settings, test = run.settings, run.commands[0] if run.commands else "cargo test"
        docker = run.executor.kind == ExecutorName.DOCKER
        local = host_binary()
        binary = DOCKER_BIN if docker else (HOST_BIN if containment_unavailable() is None or local is None
                                            else str(local))
        where = ("this sandbox image (a project's own image, or a Rust runtime layer built before the judge "
                 "had cargo-mutants or on a system it does not run on)") if docker else "this host"
        cd = _CD.match(test)
        words = set(shlex.split(test, posix=True)) if _quoted_ok(test) else set()
        job = {"binary": binary,
               "unavailable": f"cargo-mutants is not in {where}, so the change's tests were not mutation-checked",
               "files": {c.path: [list(r) for r in c.lines] for c in run.changes},
               "dir": cd.group(1) if cd else ".", "testTool": "nextest" if "nextest" in words else "cargo",
               "testWorkspace": bool(words & {"--workspace", "--all"}),
               "maxMutants": settings.max_mutants, "budget": settings.budget, "mutantTimeout": run.mutant_timeout,
               "seed": secrets.randbits(32), "folder": FOLDER}
        run.job_file("rust-job.json").write_text(json.dumps(job), encoding="utf-8")
        runner = shlex.quote(run.executor.script("mutate_rust.py"))
        return f"{shlex.quote(run.executor.python)} {runner} {FOLDER}/rust-job.json"

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        return report(run.layer, {c.path for c in run.changes})

    def edits(self, run: ToolRun) -> list[SourceEdit | None]:
        return [edit for _, edit in _read(run.layer, {c.path for c in run.changes})[1]]


def _quoted_ok(command: str) -> bool:
    try:
        shlex.split(command, posix=True)
    except ValueError:
        return False
    return True


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class _Position(_Strict):
    line: int = Field(ge=1)
    column: int = Field(ge=0)


class _Span(_Strict):
    start: _Position
    end: _Position


class _Function(_Strict):
    function_name: str = Field(min_length=1, max_length=500)


class _Mutant(_Strict):
    name: str = Field(min_length=1, max_length=2000)
    file: str = Field(min_length=1, max_length=1000)
    function: _Function | None = None
    span: _Span
    genre: str = Field(max_length=100)
    replacement: str | None = Field(default=None, max_length=100_000)


class _Outcome(_Strict):
    scenario: Literal["Baseline"] | dict[Literal["Mutant"], _Mutant]
    summary: Literal["Success", "CaughtMutant", "MissedMutant", "Unviable", "Failure", "Timeout"]


class _Outcomes(_Strict):
    outcomes: list[_Outcome] = Field(max_length=10_000)
    cargo_mutants_version: str


class _Chosen(_Strict):
    name: str
    file: str
    line: int = Field(ge=1)
    function: str


class _Plan(_Strict):
    tool: str = Field(max_length=200)
    root: str = Field(max_length=1000)
    listed: int = Field(ge=0)
    chosen: list[_Chosen] = Field(max_length=10_000)
    exit: int | None
    stopped: bool


def report(layer: Path, changed: set[str]) -> tuple[str, list[MutantRecord]]:
    """The runner's plan and cargo-mutants' ``outcomes.json`` in ``layer``: a record per chosen mutant, of
    the ``changed`` files (tree-relative). A report that does not agree with itself is a ValueError saying
    what is wrong (the check then fails: never a pass on a report the judge cannot read)."""
    tool, mutants = _read(layer, changed)
    return tool, [record for record, _ in mutants]


def _read(layer: Path, changed: set[str]) -> tuple[str, list[tuple[MutantRecord, SourceEdit | None]]]:
    """The chosen mutants, each with the source it writes (its ``replacement`` at its ``span``), once judged."""
    plan = _Plan.model_validate_json(read_confined(layer, f"{FOLDER}/report.json", MAX_REPORT_BYTES))
    chosen: dict[str, _Chosen] = {}
    for planned in plan.chosen:
        _tree_path(plan.root, planned.file, changed)
        if planned.name in chosen:
            raise ValueError(f"the plan chose {planned.name!r} twice")
        chosen[planned.name] = planned
    if not chosen:
        return plan.tool, []
    if plan.exit is None:
        raise ValueError("the plan chose mutants but cargo-mutants did not run")
    if plan.stopped and not (layer / OUTCOMES).is_file():  # the budget ran out before the first verdict
        outcomes = _Outcomes(outcomes=[], cargo_mutants_version=plan.tool.rsplit(" ", 1)[-1])
    else:
        outcomes = _Outcomes.model_validate_json(read_confined(layer, OUTCOMES, MAX_REPORT_BYTES))
    if not plan.tool.endswith(outcomes.cargo_mutants_version):
        raise ValueError(f"outcomes.json is cargo-mutants {outcomes.cargo_mutants_version}'s, the run's is {plan.tool}")
    judged: dict[str, MutantStatus] = {}
    written: dict[str, SourceEdit] = {}
    for outcome in outcomes.outcomes:
        if isinstance(outcome.scenario, str):
            continue  # the baseline (skipped: the judge's own test run passed)
        mutant = outcome.scenario["Mutant"]
        expected = chosen.get(mutant.name)
        if expected is None:
            raise ValueError(f"outcomes.json judged {mutant.name!r}, which was not chosen")
        if mutant.name in judged:
            raise ValueError(f"outcomes.json judged {mutant.name!r} twice")
        function = mutant.function.function_name if mutant.function else f"line {mutant.span.start.line}"
        if (mutant.file, mutant.span.start.line, function) != (expected.file, expected.line, expected.function):
            raise ValueError(f"outcomes.json places {mutant.name!r} at {mutant.file}:{mutant.span.start.line} "
                             f"{function}, the plan at {expected.file}:{expected.line} {expected.function}")
        if outcome.summary == "Success":
            raise ValueError(f"outcomes.json says the mutant {mutant.name!r} was a success: no mutant is one")
        judged[mutant.name] = STATUS[outcome.summary]
        if mutant.replacement is not None:
            span = mutant.span
            written[mutant.name] = SourceEdit(_tree_path(plan.root, mutant.file, changed),
                                              (span.start.line, span.start.column), (span.end.line, span.end.column),
                                              mutant.replacement)
    return plan.tool, [(MutantRecord(file=_tree_path(plan.root, m.file, changed), line=m.line, function=m.function,
                                     operator=_operator(m.name), status=judged.get(name, "not-run")),
                        written.get(name)) for name, m in chosen.items()]


def _tree_path(root: str, file: str, changed: set[str]) -> str:
    """A workspace-relative path of cargo-mutants' as the judged tree's: one of the changed files."""
    path = PurePosixPath(root) / file if root else PurePosixPath(file)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"a mutant's file {file!r} is not inside the judged tree")
    if path.as_posix() not in changed:
        raise ValueError(f"a mutant of {path.as_posix()}, which the change did not touch")
    return path.as_posix()


def _operator(name: str) -> str:
    """What the mutant does, from its name (``src/lib.rs:3:7: replace + with - in add``)."""
    return name.split(": ", 1)[1][:200] if ": " in name else name[:200]
