"""Strategy configurations: one typed model per strategy type, a discriminated union on ``type``.

An entry of ``evaluator.strategies`` keeps agent-bober's shape
(``{"type", "required", "plugin", "config": {...}}``, eval-strategies-and-feedback-format.md)
plus sprintflow's per-strategy overrides (``command``, ``timeout``, ``image``,
``network``). Each type's ``config`` block is its own model, so a strategy reads
typed fields, never string keys out of a dict. The seed's keys that sprintflow
accepts but does not act on (``tsconfig``, ``coverage`` …) are declared too, so
a bober config loads unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, model_validator

from ._base import MAX_SECONDS, ConfigSection, Image, Seconds
from .evaluation import StrategyType

__all__ = [
    "ApiCheckSettings",
    "ApiCheckStrategy",
    "BuildSettings",
    "BuildStrategy",
    "CommandSettings",
    "CustomSettings",
    "CustomStrategy",
    "Endpoint",
    "LintSettings",
    "LintStrategy",
    "MutationSettings",
    "PlaywrightSettings",
    "PlaywrightStrategy",
    "REPORT_FORMATS",
    "ReportFormat",
    "StrategyConfig",
    "TypecheckSettings",
    "TypecheckStrategy",
    "UnitTestSettings",
    "UnitTestStrategy",
    "parse_strategy",
]


REPORT_FORMATS = (
    "tsc", "eslint", "ruff", "mypy", "vitest", "jest", "junit", "playwright",
    # The tools' default human-readable output, for commands that set no format.
    "pytest", "vitest-text", "jest-text", "eslint-stylish", "ruff-text", "playwright-text", "go-test", "biome",
    "go-test-json", "go-build", "gofmt",
    "cargo", "cargo-json", "cargo-nextest",
    "maven",
    "generic",
)
"""Every report format a strategy's ``format`` may name (each has one parser,
:func:`sprintflow.parsers.report_parser`); several are joined by ``+``."""


def _known_format(value: str | None) -> str | None:
    unknown = [part for part in (value or "").split("+") if part not in REPORT_FORMATS] if value is not None else []
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a report format: one of {', '.join(REPORT_FORMATS)}, "
                         "or several joined by +")
    return value


ReportFormat = Annotated[str, AfterValidator(_known_format)]
"""A report format name of :data:`REPORT_FORMATS`, or several joined by ``+`` (``eslint-stylish+tsc``)."""


class CommandSettings(ConfigSection):
    """What every command-running strategy's ``config`` may say about its command and report."""

    command: str | None = None
    """The command (the seed's custom strategies put it here); the entry's ``command`` wins."""
    format: ReportFormat | None = None
    """Report format (:data:`REPORT_FORMATS`): tsc, eslint, ruff, mypy, vitest, jest, junit, playwright …"""
    report: str | None = None
    """Workspace-relative file the command writes its report to; default: its stdout."""


class BuildSettings(CommandSettings):
    output_dir: str = "dist"
    """Where the build writes its output."""
    verify_output: bool = False
    """Fail a build that exits 0 but leaves ``output_dir`` missing or empty."""


class TypecheckSettings(CommandSettings):
    tsconfig: str | None = None
    """Accepted from the seed; the command decides which tsconfig it reads."""
    strict: bool | None = None
    """Accepted from the seed; strictness is the tsconfig's."""


class LintSettings(CommandSettings):
    fix: bool = False
    """Accepted from the seed; the evaluator never fixes (the generator must)."""
    max_warnings: int = -1
    """More warnings than this fail lint; -1 tolerates any number."""


class MutationSettings(ConfigSection):
    """The mutation check of a test run (on by default): mutants of the lines the change touched must
    make the tests fail. ``enabled = false`` turns it off."""

    enabled: bool = True
    max_mutants: int = Field(default=16, ge=1, le=1000)
    """At most this many mutants, spread over the changed functions (every one gets one, whatever the cap;
    for Stryker, whole syntax nodes: the last one chosen may bring a few over)."""
    budget: float = Field(default=120, gt=0, le=3600)
    """Seconds the whole check may take; mutants not run by then count neither way."""
    mutant_timeout: float | None = Field(default=None, gt=0, le=3600)
    """Seconds one mutant's test run may take (a timeout is not a kill); default: three times the
    unmutated run, plus 10 s."""


class UnitTestSettings(CommandSettings):
    mutation: MutationSettings = Field(default_factory=MutationSettings)
    """The mutation check of the change (cosmic-ray for pytest, Stryker for vitest and jest)."""
    coverage: bool = False
    """Accepted from the seed; coverage thresholds are the test command's to enforce."""
    coverage_threshold: float | None = Field(default=None, ge=0, le=100)
    test_match: str | None = None
    timeout: float | None = Field(default=None, gt=0, le=MAX_SECONDS * 1000)
    """Per-test timeout in milliseconds, as the seed documents it (the runner's setting)."""


class PlaywrightSettings(CommandSettings):
    project: str | None = None
    retries: int | None = Field(default=None, ge=0, le=100)
    timeout: float | None = Field(default=None, gt=0, le=MAX_SECONDS * 1000)
    """Per-test timeout in milliseconds (the seed's; playwright.config decides)."""
    web_server: dict[str, Any] | None = None
    """The seed's webServer block; playwright.config's webServer starts the server."""


class Endpoint(ConfigSection):
    """One HTTP check of the api-check strategy."""

    method: str = "GET"
    path: str = "/"
    body: Any = None
    headers: dict[str, str] = Field(default_factory=dict)
    expected_status: int = Field(default=200, ge=100, le=599)
    expected_body_keys: list[str] = Field(default_factory=list)
    description: str = ""
    criterion: str | None = None
    """A criterion id: that api-check criterion is judged by this endpoint's checks alone."""


class ApiCheckSettings(ConfigSection):
    base_url: str | None = None
    start_server: bool = True
    server_command: str | None = None
    server_ready_pattern: str = "."
    """A regular expression the server prints when it is ready."""
    server_timeout: float = Field(default=15000, gt=0, le=MAX_SECONDS * 1000)
    """Milliseconds to wait for the ready line."""
    endpoints: list[Endpoint] = Field(default_factory=list)


class CustomSettings(CommandSettings):
    """A custom check; keys of its own (``maxSizeKb`` …) are kept for the plugin that reads them."""

    model_config = ConfigDict(extra="allow")

    parse_output: Literal["json"] | None = None
    """``json``: the command prints JSON, which ``pass_condition`` judges."""
    pass_condition: str | None = None
    """An expression over ``output`` (see :mod:`sprintflow.evaluate.expressions`)."""

    @model_validator(mode="after")
    def _condition_has_output(self) -> CustomSettings:
        # Without parsed output the condition would judge nothing; refused wherever the config is read.
        if self.pass_condition and self.parse_output != "json":
            raise ValueError('passCondition needs parseOutput = "json"')
        return self


class _StrategyBase(ConfigSection):
    required: bool = True
    """A failing required strategy fails the sprint; others are recorded only."""
    plugin: str | None = None
    """Human-readable name of a custom check, shown in reports."""
    command: str | None = None
    """Shell command overriding ``commands.<type>`` and the strategy default."""
    timeout: Seconds | None = None
    """Seconds before the command and everything it started are killed."""
    image: Image | None = None
    """Container image for this strategy (DockerExecutor only)."""
    network: bool = False
    """Give the container a network. Off by default: loopback still works inside."""

    @property
    def name(self) -> str:
        """Label in reports: the plugin name of a custom check, else the type."""
        return self.plugin or self.type.value  # type: ignore[attr-defined]  # each subclass has ``type``


class BuildStrategy(_StrategyBase):
    type: Literal[StrategyType.build]
    config: BuildSettings = Field(default_factory=BuildSettings)


class TypecheckStrategy(_StrategyBase):
    type: Literal[StrategyType.typecheck]
    config: TypecheckSettings = Field(default_factory=TypecheckSettings)


class LintStrategy(_StrategyBase):
    type: Literal[StrategyType.lint]
    config: LintSettings = Field(default_factory=LintSettings)


class UnitTestStrategy(_StrategyBase):
    type: Literal[StrategyType.unit_test]
    config: UnitTestSettings = Field(default_factory=UnitTestSettings)


class ApiCheckStrategy(_StrategyBase):
    type: Literal[StrategyType.api_check]
    config: ApiCheckSettings = Field(default_factory=ApiCheckSettings)


class PlaywrightStrategy(_StrategyBase):
    type: Literal[StrategyType.playwright]
    config: PlaywrightSettings = Field(default_factory=PlaywrightSettings)


class CustomStrategy(_StrategyBase):
    type: Literal[StrategyType.custom]
    config: CustomSettings = Field(default_factory=CustomSettings)


StrategyConfig = Annotated[
    BuildStrategy | TypecheckStrategy | LintStrategy | UnitTestStrategy | ApiCheckStrategy | PlaywrightStrategy
    | CustomStrategy,
    Field(discriminator="type"),
]
"""One entry of ``evaluator.strategies``; ``type`` picks the model."""

_ADAPTER: TypeAdapter[StrategyConfig] = TypeAdapter(StrategyConfig)


def parse_strategy(data: dict[str, Any]) -> StrategyConfig:
    """The typed configuration of one strategy entry (camelCase JSON or snake_case).

    Example:
        >>> strategy = parse_strategy({"type": "lint", "config": {"maxWarnings": 3}})
        >>> type(strategy).__name__, strategy.config.max_warnings, strategy.name
        ('LintStrategy', 3, 'lint')
    """
    return _ADAPTER.validate_python(data)
