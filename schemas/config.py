"""ProjectConfig and StrategyConfig: sprintflow.toml, [tool.sprintflow], bober.config.json."""

from __future__ import annotations

import string
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field
from pydantic.json_schema import SkipJsonSchema

from sprintflow.kinds import ExecutorName

from ._base import MAX_ITERATIONS, ConfigSection, EnvName, Image, Memory, Seconds
from .evaluation import InferredCommand
from .strategies import MutationSettings, StrategyConfig, parse_strategy

__all__ = ["Commands", "EngineConfig", "EvaluatorConfig", "ExecutorConfig", "ProjectConfig",
           "SprintConfig", "TesterConfig", "PRESETS", "DEFAULT_IMAGE",
           "branch_pattern_problem"]

DEFAULT_IMAGE = "sprintflow-sandbox:latest"

BRANCH_PLACEHOLDERS = ("contractId", "specId")


def branch_pattern_problem(pattern: str, **values: str) -> str | None:
    """Why ``pattern`` (with ``values`` for its placeholders, else sample ones) is not a git branch,
    or None.

    Example:
        >>> branch_pattern_problem("sprintflow/{contractId}") is None
        True
        >>> branch_pattern_problem("../{contractId}")
        "'../{contractId}' gives '../sprint-spec-1', which is not a branch name git accepts"
    """
    fields = {name for _, name, _, _ in string.Formatter().parse(pattern) if name is not None}
    unknown = sorted(fields - set(BRANCH_PLACEHOLDERS))
    if unknown:
        return (f"{pattern!r}: unknown placeholder {{{unknown[0]}}}; use "
                + " or ".join(f"{{{p}}}" for p in BRANCH_PLACEHOLDERS))
    name = pattern.format(**{"contractId": "sprint-spec-1", "specId": "spec", **values})
    if (not name or name.startswith(("-", "/")) or name.endswith(("/", ".", ".lock")) or ".." in name
            or any(c in name for c in " ~^:?*[\\\0") or "@{" in name or "//" in name
            or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        return f"{pattern!r} gives {name!r}, which is not a branch name git accepts"
    return None


def _branch_pattern(pattern: str) -> str:
    problem = branch_pattern_problem(pattern)
    if problem:
        raise ValueError(problem)
    return pattern


class Commands(ConfigSection):
    build: str | None = None
    typecheck: str | None = None
    lint: str | None = None
    test: str | None = None


class EvaluatorConfig(ConfigSection):
    strategies: list[StrategyConfig] | None = None
    """None means: the preset's default strategy set."""
    max_iterations: int = Field(default=3, ge=1, le=MAX_ITERATIONS)
    rerun_failures: int = Field(default=1, ge=0, le=5)
    """A failing check runs again this many times on the same snapshot; failing, then passing, is flaky."""
    flaky_fails: bool = False
    """A flaky check fails its strategy (by default it passes, marked flaky)."""


class ExecutorConfig(ConfigSection):
    kind: ExecutorName = ExecutorName.AUTO
    image: Image = DEFAULT_IMAGE
    memory: Memory = "2g"
    cpus: float = Field(default=2.0, gt=0, le=1024)
    pids: int = Field(default=1024, ge=16, le=1 << 22)
    output_limit: int = Field(default=1_000_000, ge=1024, le=1 << 30)
    """Bytes of combined output kept per command; the rest is dropped, memory stays flat."""
    default_timeout: Seconds = 600
    pass_env: list[EnvName] = Field(default_factory=list)
    """Host environment variables strategies get, by name, beyond PATH, HOME, LANG, LC_*, TZ, CI, TMPDIR
    and TERM; values that look like credentials are still masked in everything stored or shown."""


class EngineConfig(ConfigSection):
    planner: str | None = None
    generator: str | None = None
    evaluator: str | None = None
    tester: str | None = None
    """The tester's engine (tester-agent-spec.md); the tester step runs only when one is named."""
    scorer: str | None = None
    """The engine ``sprintflow score`` runs a skill's cases with."""
    timeout: Seconds = 900
    labels: dict[str, str] = Field(default_factory=dict)
    """Names for engine command lines in the history and reports: ``{"engine-a" = "python3 /opt/a.py"}``.
    Unnamed engines are called by their preset, else by their command line with the workspace and
    home folders shortened."""


class SprintConfig(ConfigSection):
    branch_pattern: Annotated[str, AfterValidator(_branch_pattern)] | None = None
    """Commit each iteration on this git branch, e.g. ``sprintflow/{contractId}``; None: no commits."""
    held_out: list[str] = Field(default_factory=lambda: ["evals"])
    """Held-out evaluation data the generator must never touch (protected like .sprintflow/). A custom
    criterion whose command names one of these paths is a held-out eval."""
    held_out_feedback: Literal["opaque", "summary"] = "opaque"
    """What the generator learns of a failed held-out eval: its criterion and description only
    (``opaque``), or also how many of its tests failed (``summary``); never its source, assertions,
    values or output. The EvalResult keeps everything, for people."""


class TesterConfig(ConfigSection):
    """The tester role: an agent of its own writes and runs the tests that judge the generator."""

    tests_dir: str = "tests/sprintflow"
    """The only folder (with its run folder) the tester may write; the generator may not."""
    command: str = "python3 -m pytest -q --junitxml={report} {testsDir}"
    """Runs the tester's tests; ``{testsDir}`` and ``{report}`` are replaced by those settings."""
    format: Literal["vitest", "jest", "junit"] = "junit"
    """Format of the report the command writes."""
    report: str | None = ".sprintflow/reports/tester.xml"
    """Workspace-relative report file the command writes; None: the report is on stdout."""
    timeout: Seconds = 60
    """Seconds before the test run is killed and counted as crashed (the seed's 60 s)."""
    language: Literal["en", "zh"] = "en"
    """Language of the hints written for failed tests."""
    mutation: MutationSettings = Field(default_factory=MutationSettings)
    """The mutation check that grades the tester's tests in a sprint (its kill rate); ``enabled = false``
    turns it off."""


class ProjectConfig(ConfigSection):
    """Everything sprintflow reads about a workspace."""

    preset: Literal["nextjs", "react-vite", "brownfield", "generic"] = "generic"
    commands: Commands = Field(default_factory=Commands)
    evaluator: EvaluatorConfig = Field(default_factory=EvaluatorConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    engines: EngineConfig = Field(default_factory=EngineConfig)
    sprint: SprintConfig = Field(default_factory=SprintConfig)
    protected_paths: list[str] = Field(default_factory=list)
    """More paths (relative to the workspace) the generator may not change."""
    tester: TesterConfig | None = None
    """The tester role's settings; None: defaults, used only when a tester engine is named."""
    inferred: SkipJsonSchema[list[InferredCommand]] = Field(default_factory=list)
    """What was inferred from the project's files when the config was read (never written by people: the
    JSON Schema leaves it out, so a config file naming it is refused)."""

    def strategies(self) -> list[StrategyConfig]:
        """The configured strategies, or the preset's default set."""
        if self.evaluator.strategies is not None:
            return self.evaluator.strategies
        return [parse_strategy(s) for s in PRESETS[self.preset]]


# The seed's default strategy sets by preset.
_WEB = [
    {"type": "typecheck", "required": True},
    {"type": "lint", "required": True},
    {"type": "build", "required": True},
    {"type": "playwright", "required": False},
]
PRESETS: dict[str, list[dict[str, Any]]] = {
    "nextjs": _WEB,
    "react-vite": _WEB,
    "brownfield": [
        {"type": "typecheck", "required": True},
        {"type": "lint", "required": True},
        {"type": "unit-test", "required": True},
    ],
    "generic": [
        {"type": "build", "required": True},
        {"type": "lint", "required": False},
    ],
}
