"""EvalResult and its parts (eval-strategies-and-feedback-format.md).

Seed fields keep their names and meaning. Two additions, both optional so other
tools' files load unchanged: ``StrategyResult.diagnostics`` (parsed file:line
findings) and ``StrategyResult.durationMs`` / ``cached`` for reporting.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

from pydantic import Field, model_validator

from sprintflow.kinds import ExecutorKind

from ._base import MAX_ITERATIONS, Document, SafeId, Timestamp

__all__ = [
    "Category",
    "CriterionResult",
    "Diagnostic",
    "EvalResult",
    "ExecutorRecord",
    "GeneratorFeedback",
    "InferredCommand",
    "JudgedRecord",
    "MutantRecord",
    "MutatedFunction",
    "MutationResult",
    "Outcome",
    "Priority",
    "Regression",
    "Score",
    "StrategyResult",
    "StrategyType",
]


class StrategyType(str, Enum):
    """The seven strategies, declared in the seed's execution order."""

    build = "build"
    typecheck = "typecheck"
    lint = "lint"
    unit_test = "unit-test"
    api_check = "api-check"
    playwright = "playwright"
    custom = "custom"


class Outcome(str, Enum):
    passed = "pass"
    failed = "fail"
    skipped = "skipped"


class Priority(str, Enum):
    critical = "critical"
    high = "high"
    medium = "medium"
    low = "low"


class Category(str, Enum):
    bug = "bug"
    missing_feature = "missing-feature"
    regression = "regression"
    quality = "quality"
    performance = "performance"
    environment = "environment"
    """The check could not run as it should (a missing tool or dependency, a runtime too old,
    memory or disk): something to fix in the sandbox, not in the code."""


class Diagnostic(Document):
    """One finding a tool reported, located in the workspace."""

    tool: str
    """Which parser produced it: tsc, eslint, ruff, mypy, vitest, jest, junit, playwright."""
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    code: str | None = None
    """Rule or error code: TS2345, no-unused-vars, F401 …"""
    severity: Literal["error", "warning"] = "error"
    expected: str | None = None
    received: str | None = None
    hint: str | None = None
    """For a failed test: one or two sentences a coding agent can act on."""
    test: str | None = None
    """For a failed test: the runner's whole id of it (``tests/test_a.py::test_b``,
    ``test/a.test.ts > api > returns 404``), whatever the location says."""


MutantStatus = Literal["killed", "survived", "timeout", "error", "not-run"]
"""How a mutant ended: ``timeout`` is not a kill; ``not-run`` ran out of the time budget."""


class MutantRecord(Document):
    """One mutant of a changed line."""

    file: str
    line: int
    function: str
    """The function (or, where the tool names none, the changed block) the mutant is in."""
    operator: str
    status: MutantStatus


class MutatedFunction(Document):
    """The mutants of one changed function: if none is killed, its tests pass whatever it does."""

    file: str
    line: int
    function: str
    mutants: int
    """Mutants that ran to a verdict (killed, survived or timed out)."""
    killed: int


class MutationResult(Document):
    """The diff-scoped mutation check of a test run: do its tests fail when the changed code changes?"""

    tool: str
    """The mutation tool and version: cosmic-ray, Stryker."""
    status: Literal["measured", "unavailable", "failed", "nothing to judge"]
    """``unavailable``: the tool is not installed (the run is judged without it, ``reason`` says how to
    add it); ``failed``: the tool ran and could not finish (the test run cannot be believed: it
    fails); ``nothing to judge``: no mutant of the changed lines ran to a verdict."""
    reason: str | None = None
    mutants: int = 0
    """Mutants that ran to a verdict."""
    killed: int = 0
    survived: int = 0
    timeouts: int = 0
    errors: int = 0
    """Mutants the tool could not judge (a mutant that cannot load); counted neither way."""
    not_run: int = 0
    """Mutants left when the time budget ran out."""
    kill_rate: float | None = None
    """killed / mutants (timeouts are not kills); None when no mutant ran."""
    functions: list[MutatedFunction] = Field(default_factory=list)
    survivors: list[MutantRecord] = Field(default_factory=list)
    """The first surviving mutants, for people."""
    duration_ms: int | None = None


_EARLIER_TEST_RUN_NOTE = re.compile(
    r"\bTestRun (?P<run>[A-Za-z0-9][A-Za-z0-9._-]*) (?:recorded|in \.sprintflow/runs/)")


class StrategyResult(Document):
    strategy: str
    required: bool
    result: Outcome
    exit_code: int | None = None
    output: str = ""
    """Relevant output excerpt, capped; never the full dump."""
    error_count: int | None = None
    details: str = ""
    """Explanation, especially for failures."""
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    duration_ms: int | None = None
    cached: bool = False
    """True when reused from an identical earlier run (same workspace hash and config)."""
    flaky: bool = False
    """True when it failed, then passed when run again on the same snapshot of the workspace."""
    compromised: str | None = None
    """Why its test runner cannot be believed (a canary the judge planted did not behave); it failed."""
    mutation: MutationResult | None = None
    """The mutation check of the lines the change touched (unit tests; None: not run)."""
    test_run: str | None = None
    """The TestRun the run recorded (``.sprintflow/runs/<testRun>/``): the key from this result to its
    tests in the history. None: it recorded none."""

    @model_validator(mode="after")
    def _test_run_of_an_earlier_result(self) -> StrategyResult:
        """A result written before this field named its TestRun only in its details: read it from there once.

        Example:
            >>> StrategyResult.model_validate({"strategy": "unit-test", "required": True, "result": "fail",
            ...     "details": "`pytest` exited 1. TestRun run-20260513-103115 recorded; bugs opened none"}).test_run
            'run-20260513-103115'
        """
        if self.test_run is None and (found := _EARLIER_TEST_RUN_NOTE.search(self.details)):
            self.test_run = found["run"]
        return self


class CriterionResult(Document):
    criterion_id: str
    description: str
    required: bool
    result: Outcome
    evidence: str
    feedback: str = ""
    held_out: bool = False
    """A held-out eval: the generator's feedback names it and its description only, never its evidence."""
    compromised: str | None = None
    """Why the test runner of its command cannot be believed (a canary did not behave); it failed."""


class Regression(Document):
    description: str
    evidence: str
    severity: Literal["critical", "major", "minor"]
    affected_files: list[str] = Field(default_factory=list)


class GeneratorFeedback(Document):
    priority: Priority
    category: Category
    file: str | None = None
    line: int | None = None
    description: str
    expected: str
    reproduction: str | None = None


class Score(Document):
    criteria_total: int
    criteria_passed: int
    criteria_failed: int
    criteria_skipped: int
    required_passed: int
    required_failed: int
    required_total: int


class ExecutorRecord(Document):
    """Where the strategies ran and under which limits: what it takes to judge the same way again."""

    kind: ExecutorKind
    image: str | None = None
    """The image strategies ran in (Docker), unless a strategy named its own."""
    image_id: str | None = None
    """That image's content digest (``sha256:…``): the same name may later point at another image."""
    memory: str | None = None
    """Memory limit of each container (Docker; on the host commands run without one)."""
    cpus: float | None = None
    pids: int | None = None
    network: list[str] = Field(default_factory=list)
    """Strategies that ran with network; every other one had none (Docker; the host shares its own)."""
    output_limit: int
    """Bytes of output kept per command stream; the middle of a longer output is dropped and counted."""
    pass_env: list[str] = Field(default_factory=list)
    """Host variables passed to strategies by name, beyond the allowlist."""
    uncontained: str | None = None
    """Why the host's commands ran without containment (no user namespaces, no util-linux): they could
    read and write the workspace and the rest of the machine. None: contained, or in Docker."""


class JudgedRecord(Document):
    """What an evaluation judged: a verdict belongs to this tree, this sprint run and this contract."""

    tree_digest: str
    """The judged tree's digest (its files' contents and modes)."""
    pin_id: str | None = None
    """The sprint run (its pin); None for an evaluation outside a sprint."""
    contract_revision: str | None = None


class InferredCommand(Document):
    """A strategy or command the configuration left open, filled in from what the project has."""

    strategy: StrategyType
    command: str
    source: str
    """What it was inferred from: ``package.json scripts.build``, ``pyproject.toml [tool.ruff]`` …"""


class EvalResult(Document):
    eval_id: SafeId
    """``eval-<contractId>-<iteration>-<stamp>``: one per evaluation, so judging an iteration again (another
    executor, a resumed sprint) keeps both; files written before the stamp end at the iteration."""
    contract_id: SafeId
    spec_id: SafeId
    timestamp: Timestamp
    iteration: int = Field(ge=1, le=MAX_ITERATIONS)
    overall_result: Literal["pass", "fail"]
    score: Score
    strategy_results: list[StrategyResult] = Field(default_factory=list)
    criteria_results: list[CriterionResult] = Field(default_factory=list)
    regressions: list[Regression] = Field(default_factory=list)
    generator_feedback: list[GeneratorFeedback] = Field(default_factory=list)
    summary: str
    executor: ExecutorRecord | None = None
    tester_mutation: MutationResult | None = None
    """The tester's tests graded by the mutation check of the change (a sprint with a tester)."""
    judged: JudgedRecord | None = None
    """What was judged; a sprint trusts the verdict again only for the same tree, run and contract."""
    inferred: list[InferredCommand] = Field(default_factory=list)
    """The strategies and commands the configuration left open and the project's files decided."""
    """How the strategies ran (sprintflow's addition to the seed's EvalResult)."""
