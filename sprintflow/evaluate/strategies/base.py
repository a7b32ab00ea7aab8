"""The strategy plugin base: run a command in an executor, parse its report once, judge it.

Every strategy type is a subclass registered by its ``type``; the subclasses
say only what differs (their default command, their report format, their
verdict). The judgement fails closed: a command that could not start, timed
out, or whose report cannot be read is a failure, never a pass. Judging writes
nothing into the workspace: recording a test run and its bugs is a separate
step (:mod:`sprintflow.evaluate.steps`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from sprintflow.errors import ConfigError, OutsideWorkspace, ReportError
from sprintflow.io.confine import confined, read_confined
from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport, parse_report
from sprintflow.sandbox.executors import CommandSpec, Executor
from sprintflow.schemas import Diagnostic, Outcome, ProjectConfig, SprintContract, StrategyResult, StrategyType
from sprintflow.schemas.strategies import CommandSettings, StrategyConfig
from sprintflow.schemas.testrun import TestRun

from ..autofix import without_autofix
from ..canary import Canary
from ..excerpt import combined_output, relevant_output
from ..inference import ReportSpec, infer_report
from ..outcomes import Reference

__all__ = ["EXCERPT_CHARS", "Judged", "Strategy", "StrategyRun", "register", "strategy_for"]

EXCERPT_CHARS = 4000
MAX_DIAGNOSTIC_LINES = 30
MAX_REPORT_BYTES = 64 << 20
"""A report file larger than this is not read: the strategy fails, saying so."""

C = TypeVar("C", bound=StrategyConfig)


@dataclass(frozen=True)
class StrategyRun:
    """Everything one strategy run needs; plain values, so it crosses task boundaries."""

    workspace: Path
    strategy: StrategyConfig
    project: ProjectConfig
    executor: Executor
    contract: SprintContract | None = None
    """The contract under evaluation: the unit its bugs are filed under, and test coverage."""
    reference: Reference | None = None
    """What this check's run on the sprint's baseline said (:mod:`..outcomes`); None outside a sprint."""
    planted: Canary | None = None
    """The canary planted in this run's layer (:mod:`..canary`), when one was."""

    @property
    def timeout(self) -> float:
        return self.strategy.timeout or self.project.executor.default_timeout

    @property
    def roots(self) -> list[str]:
        """The workspace as the command saw it and as the host sees it, stripped from reported paths."""
        return [self.executor.workspace_path(self.workspace), str(self.workspace.resolve())]


@dataclass(frozen=True)
class Judged:
    """A strategy's verdict, and the test run it saw when it ran tests (recorded afterwards)."""

    result: StrategyResult
    test_run: TestRun | None = None
    stdout: str = ""
    stderr: str = ""
    reference: Reference | None = None
    """What the run said of its tests, as a baseline's reference (kept when the baseline is judged)."""
    planted: tuple[str, ...] = ()
    """The test files the run appended canaries to in its layer (the judge's writes, not the strategy's)."""


class Strategy(Generic[C]):
    """One strategy type: what it runs, how it reads the output, how it judges.

    Not abstract: the base is a whole command strategy. It runs :meth:`command`,
    parses its report when a format is known, and judges by exit code and error
    count, so typecheck is only its settings; other types override :meth:`verdict`
    (or :meth:`judge` entirely, as api-check does). What each must say is its
    ``type``, which :func:`register` files it under.
    """

    type: ClassVar[StrategyType]
    default_command: ClassVar[str | None] = None
    """The seed's default command; ``commands.<command_key>`` and the entry's command override it."""
    command_key: ClassVar[str | None] = None
    """The key of ``commands`` (bober's) that overrides the default command."""
    needs_build: ClassVar[bool] = False
    keeps_tool_caches: ClassVar[bool] = False
    """A checker that runs none of the project's code: the judge keeps its incremental caches from one
    judged run for the next (:mod:`sprintflow.judge.caches`)."""
    """Waits for the build strategy (it serves or tests the build's output)."""

    def __init__(self, config: C, project: ProjectConfig):
        self.config = config
        self.project = project

    # What runs
    def command(self) -> str | None:
        """The command: the entry's own, else its config's, else ``commands.<key>``, else the seed's default."""
        settings = self.config.config
        if self.config.command:
            return self.config.command
        if isinstance(settings, CommandSettings) and settings.command:
            return settings.command
        configured = getattr(self.project.commands, self.command_key) if self.command_key else None
        return configured or self.default_command

    def check(self) -> None:
        """Raise ConfigError for what can never run, before anything runs."""
        if self.command() is None:
            raise ConfigError(f"{self.config.name}: no command configured (set `command` on the strategy)")

    def report_spec(self, workspace: Path) -> ReportSpec | None:
        """How to read what the command reports: the config's ``format`` (and ``report``), else what the
        command line says (the tool behind ``npm run``, reporter flags, the tool's default output)."""
        settings = self.config.config
        if isinstance(settings, CommandSettings) and settings.format:
            return ReportSpec(settings.format, settings.report, "stdout")
        command = self.command()
        return infer_report(command, workspace) if command else None

    def outputs(self, workspace: Path) -> list[str]:
        """Workspace paths this strategy is expected to write (beyond tool caches): its report."""
        spec = self.report_spec(workspace)
        return [spec.report_path] if spec and spec.report_path else []

    # How it is judged
    def judge(self, run: StrategyRun) -> Judged:
        """Run, parse once, judge: a command strategy's whole verdict (a fixing checker told to report)."""
        command = without_autofix(self.command() or "")
        spec = self.report_spec(run.workspace)
        try:
            report = _report_file(run.workspace, spec)
        except ReportError as exc:
            return Judged(result(run, Outcome.failed, details=f"Nothing was run: {exc}."))
        if report is not None:
            try:
                report.unlink(missing_ok=True)  # a stale report must never judge a new run
            except OSError as exc:
                stale = spec.report_path if spec else ""
                return Judged(result(run, Outcome.failed, details=f"Nothing was run: the stale report {stale} "
                                                                  f"cannot be removed: {exc}."))
        outcome = execute(run, run.planted.judged_command(command, run.workspace) if run.planted else command,
                          dict(run.planted.env) if run.planted else None)
        failure = infrastructure_failure(run, command, outcome)
        if failure:
            return Judged(failure)
        try:
            parsed = self.parse(run, spec, outcome)
        except ReportError as exc:
            source = spec.report_path if spec and spec.report_path else "what it printed"
            return Judged(result(run, Outcome.failed, exit_code=outcome.exit_code, output=excerpt(outcome),
                                 duration_ms=duration_ms(outcome),
                                 details=f"Could not read the tool's report ({source}), so the result is "
                                         f"unknown: {exc}"))
        return self.judge_output(run, command, outcome, parsed)

    def parse(self, run: StrategyRun, spec: ReportSpec | None, outcome: CommandResult) -> ParsedReport | None:
        """The tool's report (a file the command wrote, or what it printed) parsed, once.

        A format the config did not name was inferred from the command: its findings then
        explain a failure but never make one, so a tool that exited 0 has only warnings.
        """
        if spec is None:
            return None
        report = _report_file(run.workspace, spec)
        if report is not None:
            text = _read_report(run.workspace, spec.report_path or "")
        else:
            text = outcome.stdout if spec.stream == "stdout" else combined_output(outcome.stdout, outcome.stderr)
        parsed = parse_report(spec.format, text, run.roots)
        settings = self.config.config
        configured = isinstance(settings, CommandSettings) and bool(settings.format)
        if not configured and outcome.exit_code == 0:
            parsed.diagnostics = [d.model_copy(update={"severity": "warning"}) for d in parsed.diagnostics]
        return parsed

    def judge_output(self, run: StrategyRun, command: str, outcome: CommandResult,
                     parsed: ParsedReport | None) -> Judged:
        verdict, details = self.verdict(run, command, outcome, parsed)
        diagnostics = parsed.diagnostics if parsed else []
        return Judged(result(run, verdict, exit_code=outcome.exit_code,
                             error_count=parsed.error_count if parsed else None,
                             output=excerpt(outcome, diagnostics), details=details, diagnostics=diagnostics,
                             duration_ms=duration_ms(outcome)))

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        """Pass on exit code 0 with no error in the report."""
        return exit_code_verdict(command, outcome, parsed)


STRATEGIES: dict[StrategyType, type[Strategy]] = {}
"""Strategy type -> its plugin class."""

S = TypeVar("S", bound=type[Strategy])


def register(cls: S) -> S:
    """Class decorator: make ``cls`` the plugin of its strategy type (one plugin per type)."""
    kind = vars(cls).get("type")
    if not isinstance(kind, StrategyType) or STRATEGIES.get(kind, cls) is not cls:
        raise TypeError(f"{cls.__name__} must name a strategy type of its own (type = StrategyType.…)")
    STRATEGIES[kind] = cls
    return cls


def strategy_for(config: StrategyConfig, project: ProjectConfig) -> Strategy:
    """The plugin that runs ``config``.

    Example:
        >>> from sprintflow.schemas import ProjectConfig, parse_strategy
        >>> strategy = strategy_for(parse_strategy({"type": "lint"}), ProjectConfig())
        >>> type(strategy).__name__, strategy.command()
        ('LintStrategy', 'npm run lint')
    """
    return STRATEGIES[config.type](config, project)


# Helpers the plugins share
def result(run: StrategyRun, outcome: Outcome, **fields: object) -> StrategyResult:
    return StrategyResult(strategy=run.strategy.name, required=run.strategy.required, result=outcome,
                          **fields)  # type: ignore[arg-type]  # the StrategyResult fields, by name


def duration_ms(outcome: CommandResult) -> int:
    return round(outcome.duration_s * 1000)


JUDGED_ENV = {"RUST_BACKTRACE": "1"}
"""Set for every check, in both executors: a Rust test's panic says where in the project it failed only in
its backtrace when it panicked elsewhere (an assert_cmd assertion panics in the standard library); the
cargo parser keeps the project's own frame and drops the rest."""


def execute(run: StrategyRun, command: str, env: dict[str, str] | None = None) -> CommandResult:
    spec = CommandSpec(command=command, timeout=run.timeout, network=run.strategy.network,
                       image=run.strategy.image, env={**JUDGED_ENV, **(env or {})})
    return run.executor.run(run.workspace, spec)


def infrastructure_failure(run: StrategyRun, command: str, outcome: CommandResult) -> StrategyResult | None:
    """A command that never started or hit its deadline: a failure with the reason, never a pass."""
    if outcome.error:
        details = f"Command `{command}` could not run: {outcome.error}"
    elif outcome.timed_out:
        details = f"Timed out: command `{command}` did not finish within {run.timeout:g} s and was killed " \
                  f"with everything it started. {timeout_cause(outcome, run.timeout)}"
    else:
        return None
    return result(run, Outcome.failed, exit_code=outcome.exit_code, details=details, output=excerpt(outcome),
                  duration_ms=duration_ms(outcome))


def timeout_cause(outcome: CommandResult, timeout: float) -> str:
    """What a timed-out command's output says of why: still printing near the end is slow work,
    silent for long before it is a hang.

    Example:
        >>> timeout_cause(CommandResult(exit_code=None, timed_out=True, quiet_s=1.5), 60)[:41]
        'It was still printing output 2 s before i'
    """
    if outcome.quiet_s is not None and outcome.quiet_s <= min(QUIET_HANG_S, max(timeout / 4, 0.5)):
        return (f"It was still printing output {outcome.quiet_s:.0f} s before its end: it was working, not "
                "stuck. A slow environment or too short a timeout (the strategy's timeout, "
                "executor.defaultTimeout), or a suite that grew too large for it.")
    silent = (f"It printed nothing in its last {outcome.quiet_s:.0f} s" if outcome.quiet_s is not None
              else "It printed nothing at all")
    return (f"{silent}: look for a hang: an unresolved promise, an open server or connection, "
            "or a prompt waiting for input.")


QUIET_HANG_S = 10.0
"""Silence shorter than this (or a quarter of a shorter timeout) before a deadline is work in progress."""


def excerpt(outcome: CommandResult, diagnostics: list[Diagnostic] | None = None) -> str:
    """The relevant part of the output: located findings first, else the lines around the first error."""
    if diagnostics:
        lines = [format_diagnostic(d) for d in diagnostics[:MAX_DIAGNOSTIC_LINES]]
        if len(diagnostics) > MAX_DIAGNOSTIC_LINES:
            lines.append(f"… and {len(diagnostics) - MAX_DIAGNOSTIC_LINES} more")
        return "\n".join(lines)
    return relevant_output(combined_output(outcome.stdout, outcome.stderr))


def _report_file(workspace: Path, spec: ReportSpec | None) -> Path | None:
    """The report file a strategy reads, when it is one inside the workspace (never a path leading out)."""
    if spec is None or spec.report_path is None:
        return None
    try:
        return confined(workspace, spec.report_path)
    except OutsideWorkspace as exc:
        raise ReportError(f"the report {exc}; name one inside the workspace") from None


def _read_report(workspace: Path, report_path: str) -> str:
    """The report the command wrote, read without following a path out of the workspace."""
    try:
        data = read_confined(workspace, report_path, MAX_REPORT_BYTES)
    except FileNotFoundError:
        raise ReportError(f"the command did not write its report {report_path}") from None
    except (OutsideWorkspace, OSError) as exc:
        raise ReportError(f"the report cannot be read: {exc}") from None
    return data.decode("utf-8", errors="replace")


def format_diagnostic(d: Diagnostic) -> str:
    where = f"{d.file}:{d.line}" if d.file and d.line else (d.file or "")
    code = f" {d.code}" if d.code else ""
    return f"{where}:{code} {d.message}".strip(": ").replace("\n", " ")[:400]


def exit_code_verdict(command: str, outcome: CommandResult, parsed: ParsedReport | None) -> tuple[Outcome, str]:
    """Pass on exit code 0 with no error and no failed test in the report; else the exit code and the first
    error. A runner told (or configured) to go on past failing tests exits 0: its report still names them.

    Example:
        >>> from sprintflow.parsers import TestCounts, TestFailure
        >>> failed = ParsedReport(counts=TestCounts(2, 1, 1, 0), failures=[TestFailure("CalcTest.adds", "4 != 0")])
        >>> exit_code_verdict("mvn -q test", CommandResult(exit_code=0), failed)
        (<Outcome.failed: 'fail'>, '`mvn -q test` exited 0, but its tests failed: CalcTest.adds.')
    """
    errors = parsed.error_count if parsed else 0
    # The failures the report names, not its totals: a canary the judge took out of the names may
    # still be in a runner's per-class totals.
    failures = parsed.failures if parsed else []
    if outcome.exit_code == 0 and failures and not errors:
        return Outcome.failed, f"`{command}` exited 0, but its tests failed: {', '.join(f.test for f in failures[:5])}."
    if outcome.exit_code == 0 and not errors:
        return Outcome.passed, f"`{command}` exited 0" + (" with no errors." if parsed else ".")
    found = f" with {errors} error(s)" if errors else ""
    first = f"; first: {format_diagnostic(_first_error(parsed))}" if errors and parsed else ""
    return Outcome.failed, f"`{command}` exited {outcome.exit_code}{found}{first}."


def _first_error(parsed: ParsedReport) -> Diagnostic:
    return next((d for d in parsed.diagnostics if d.severity == "error"), parsed.diagnostics[0])

