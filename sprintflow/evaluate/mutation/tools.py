"""The mutation tools, one module each, registered by the test runner whose tests they judge.

A tool says which files it mutates (``suffixes``), whether it is there to run (``missing``), the
one command that runs it in the mutation layer (``command``: it reads a job the judge wrote in
:data:`FOLDER` and writes its report there) and what its report says (``report``: one
:class:`MutantRecord` per mutant of the changed lines). The judge around it (:func:`..measure`)
is the same for every tool: the budget, the timeouts, a report that is missing or malformed.

Example:
    >>> from sprintflow.evaluate import mutation
    >>> {runner: TOOLS[runner].name for runner in sorted(TOOLS)}  # doctest: +NORMALIZE_WHITESPACE
    {'cargo': 'cargo-mutants', 'go': 'gremlins', 'jest': 'Stryker', 'maven': 'PIT', 'pytest': 'cosmic-ray',
     'vitest': 'Stryker'}
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from sprintflow.sandbox.executors import Executor
from sprintflow.schemas.evaluation import MutantRecord
from sprintflow.schemas.strategies import MutationSettings

from .changes import ChangedFile

__all__ = ["FOLDER", "MAX_REPORT_BYTES", "TOOLS", "UNAVAILABLE", "MutationTool", "SourceEdit", "ToolRun", "register"]

FOLDER = ".sprintflow-mutation"
"""Where in the layer the judge writes the tool's job and the tool its report."""
MAX_REPORT_BYTES = 8 << 20
UNAVAILABLE = 3
"""A runner's exit code when its tool is not installed where the tests run."""


@dataclass(frozen=True)
class ToolRun:
    """One mutation run: where, what changed, and its bounds."""

    runner: str
    """The test runner whose tests judge the mutants (``pytest``, ``vitest``, ``go``...)."""
    layer: Path
    """The mutation layer: a throwaway copy of the judged tree, the tool's job folder in it."""
    executor: Executor
    changes: list[ChangedFile]
    commands: list[str]
    """The judging test commands: the strategy's, then the held-out evals'."""
    settings: MutationSettings
    mutant_timeout: float
    """Seconds one mutant's test run may take before it counts as a timeout (not a kill)."""
    tests: tuple[str, ...] = ()
    """The files the judged test run collected tests from."""

    def job_file(self, name: str) -> Path:
        """A file of the tool's job folder in the layer."""
        return self.layer / FOLDER / name


@dataclass(frozen=True)
class SourceEdit:
    """A mutant as the source it writes: ``replacement`` for the code from ``start`` to ``end`` of ``file``
    (1-based lines and columns, counted in characters, ``end`` exclusive), as the tool's report places it."""

    file: str
    start: tuple[int, int]
    end: tuple[int, int]
    replacement: str


class MutationTool:
    """One ecosystem's mutation tool: a subclass per tool, registered with :func:`register`."""

    name: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]]
    """The source files it mutates."""

    def missing(self, workspace: Path, runner: str) -> str | None:
        """Why the tool cannot run for this project (what to install), or None."""
        return None

    def command(self, run: ToolRun) -> str:
        """The shell command that runs the tool in the layer; it writes ``FOLDER/report.json``."""
        raise NotImplementedError

    def report(self, run: ToolRun) -> tuple[str, list[MutantRecord]]:
        """The tool's name and version, and a record per mutant of the changed lines (ValueError when
        the report cannot be judged)."""
        raise NotImplementedError

    def edits(self, run: ToolRun) -> list[SourceEdit | None]:
        """Each mutant of :meth:`report` (in its order) as the source it writes, so that the held-out evals'
        commands can judge the survivors; empty when the tool's report does not say (PIT mutates byte code)
        or its own run judges them already (cosmic-ray)."""
        return []

    def why_it_failed(self, output: str) -> str:
        """The part of a failed run's output that says why: its end, unless the tool says it elsewhere."""
        return output[-300:].strip()


TOOLS: dict[str, MutationTool] = {}
"""The tool of each test runner."""


def register(*runners: str) -> Callable[[type[MutationTool]], type[MutationTool]]:
    """Register a tool for the runners whose tests it judges."""
    def add(cls: type[MutationTool]) -> type[MutationTool]:
        tool = cls()
        for runner in runners:
            TOOLS[runner] = tool
        return cls
    return add
