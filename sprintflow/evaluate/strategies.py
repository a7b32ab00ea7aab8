"""The seven verification strategies: run one, judge it, return a StrategyResult.

Each strategy is one command (or, for api-check, one runner script) executed
by an Executor. The judgement fails closed: a command that could not start,
timed out, or whose report cannot be read is a failure, never a pass. The only
``skipped`` is the seed's: Playwright not installed, flagged as a config issue.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sprintflow.errors import ConfigError, ReportError
from sprintflow.evaluate.executors import CommandSpec, Executor
from sprintflow.evaluate.expressions import evaluate_condition
from sprintflow.evaluate.parsers import ParsedReport, parse_report
from sprintflow.io.process import CommandResult
from sprintflow.schemas import (
    Diagnostic,
    Outcome,
    ProjectConfig,
    SprintContract,
    StrategyConfig,
    StrategyResult,
    StrategyType,
)
from sprintflow.testing.bugs import sync_bugs
from sprintflow.testing.testrun import TEST_REPORT_FORMATS, build_test_run, new_run_id, record_test_run

__all__ = ["DEFAULT_COMMANDS", "StrategyRun", "check_strategy_config", "resolve_command", "run_strategy"]

EXCERPT_CHARS = 4000
MAX_DIAGNOSTIC_LINES = 30

# The seed's default commands; ``commands.<key>`` and a strategy's ``command`` override them.
DEFAULT_COMMANDS: dict[StrategyType, str | None] = {
    StrategyType.build: "npm run build",
    StrategyType.typecheck: "npx tsc --noEmit --pretty false",
    StrategyType.lint: "npm run lint",
    StrategyType.unit_test: "npm test",
    StrategyType.playwright: "npx playwright test --reporter=json",
    StrategyType.api_check: None,
    StrategyType.custom: None,
}
_COMMAND_KEYS = {StrategyType.build: "build", StrategyType.typecheck: "typecheck",
                 StrategyType.lint: "lint", StrategyType.unit_test: "test"}
# Strategies whose output we can read without being told the format.
_DEFAULT_FORMATS = {StrategyType.typecheck: "tsc", StrategyType.playwright: "playwright"}


@dataclass(frozen=True)
class StrategyRun:
    """Everything one strategy run needs; plain values, so it crosses task boundaries."""

    workspace: Path
    strategy: StrategyConfig
    project: ProjectConfig
    executor: Executor
    contract: SprintContract | None = None
    """The contract under evaluation: the unit its bugs are filed under, and test coverage."""

    @property
    def timeout(self) -> float:
        return self.strategy.timeout or self.project.executor.default_timeout


def resolve_command(strategy: StrategyConfig, project: ProjectConfig) -> str | None:
    """The command a strategy runs: its own, else ``commands.<type>``, else the seed's default."""
    if strategy.command:
        return strategy.command
    if strategy.config.get("command"):
        return str(strategy.config["command"])
    key = _COMMAND_KEYS.get(strategy.type)
    configured = getattr(project.commands, key) if key else None
    return configured or DEFAULT_COMMANDS[strategy.type]


def check_strategy_config(strategy: StrategyConfig, project: ProjectConfig) -> None:
    """Raise ConfigError for what can never run, before anything runs."""
    if strategy.type is StrategyType.api_check:
        config = strategy.config
        if config.get("startServer", True) and not config.get("serverCommand"):
            raise ConfigError("api-check: startServer needs a serverCommand")
        if not config.get("baseUrl"):
            raise ConfigError("api-check: config.baseUrl is required")
        if not config.get("endpoints"):
            raise ConfigError("api-check: config.endpoints lists no endpoint to check")
    elif resolve_command(strategy, project) is None:
        raise ConfigError(f"{strategy.name}: no command configured (set `command` on the strategy)")
    if strategy.config.get("passCondition") and strategy.config.get("parseOutput") != "json":
        raise ConfigError(f"{strategy.name}: passCondition needs parseOutput = \"json\"")


def run_strategy(run: StrategyRun) -> StrategyResult:
    """Run one strategy and judge it.

    Example:
        >>> run_strategy(StrategyRun(Path("examples/python-api"), strategy, project,
        ...                          LocalExecutor())).result
        <Outcome.passed: 'pass'>
    """
    check_strategy_config(run.strategy, run.project)
    if run.strategy.type is StrategyType.playwright and not _playwright_installed(run.workspace):
        return _result(run, Outcome.skipped, details=(
            "Configuration issue: Playwright is not installed in this workspace "
            "(no node_modules/@playwright/test or node_modules/playwright). "
            "Install it with npm and point it at a Chromium (CHROMIUM_PATH) to run E2E checks."))
    judge = _JUDGES.get(run.strategy.type, _judge_command)
    return judge(run)


def _playwright_installed(workspace: Path) -> bool:
    modules = workspace / "node_modules"
    return (modules / "@playwright/test").is_dir() or (modules / "playwright").is_dir()


def _result(run: StrategyRun, outcome: Outcome, **fields) -> StrategyResult:
    return StrategyResult(strategy=run.strategy.name, required=run.strategy.required,
                          result=outcome, **fields)


def _execute(run: StrategyRun, command: str, env: dict[str, str] | None = None) -> CommandResult:
    spec = CommandSpec(command=command, timeout=run.timeout, network=run.strategy.network,
                       image=run.strategy.image, env=env or {})
    return run.executor.run(run.workspace, spec)


def _infrastructure_failure(run: StrategyRun, command: str, outcome: CommandResult) -> StrategyResult | None:
    """A command that never started or hit its deadline: a failure with the reason, never a pass."""
    if outcome.error:
        details = f"Command `{command}` could not run: {outcome.error}"
    elif outcome.timed_out:
        details = (f"Command `{command}` did not finish within {run.timeout:g} s and was killed "
                   "with everything it started. Look for a hang: an unresolved promise, an "
                   "open server or connection, or a prompt waiting for input.")
    else:
        return None
    return _result(run, Outcome.failed, exit_code=outcome.exit_code, details=details,
                   output=_excerpt(outcome), duration_ms=round(outcome.duration_s * 1000))


def _excerpt(outcome: CommandResult, diagnostics: list[Diagnostic] | None = None) -> str:
    """The relevant part of the output: located findings first, else the output's tail."""
    if diagnostics:
        lines = [_format_diagnostic(d) for d in diagnostics[:MAX_DIAGNOSTIC_LINES]]
        if len(diagnostics) > MAX_DIAGNOSTIC_LINES:
            lines.append(f"… and {len(diagnostics) - MAX_DIAGNOSTIC_LINES} more")
        return "\n".join(lines)
    text = (outcome.stdout + ("\n" if outcome.stdout and outcome.stderr else "") + outcome.stderr).strip()
    return text if len(text) <= EXCERPT_CHARS else "…" + text[-EXCERPT_CHARS:]


def _format_diagnostic(d: Diagnostic) -> str:
    where = f"{d.file}:{d.line}" if d.file and d.line else (d.file or "")
    code = f" {d.code}" if d.code else ""
    return f"{where}:{code} {d.message}".strip(": ").replace("\n", " ")[:400]


def _report_format(run: StrategyRun, command: str) -> str | None:
    configured = run.strategy.config.get("format")
    if configured:
        return str(configured)
    if run.strategy.type is StrategyType.typecheck and "tsc" not in command:
        return "mypy" if "mypy" in command else None
    return _DEFAULT_FORMATS.get(run.strategy.type)


def _report_path(run: StrategyRun) -> Path | None:
    report = run.strategy.config.get("report")
    return run.workspace / str(report) if report else None


def _parse(run: StrategyRun, command: str, outcome: CommandResult) -> ParsedReport | None:
    """Parse the tool's report (a file the command wrote, or its stdout) when a format is known."""
    fmt = _report_format(run, command)
    if fmt is None:
        return None
    path = _report_path(run)
    if path is not None:
        if not path.is_file():
            raise ReportError(f"the command did not write its report {path.relative_to(run.workspace)}")
        text = path.read_text(encoding="utf-8", errors="replace")
    else:
        text = outcome.stdout
    return parse_report(fmt, text, _roots(run))


def _judge_command(run: StrategyRun) -> StrategyResult:
    """build, typecheck, lint, unit-test, playwright and custom: run, parse, judge."""
    command = resolve_command(run.strategy, run.project) or ""
    report = _report_path(run)
    if report is not None:
        report.unlink(missing_ok=True)  # a stale report must never judge a new run
    outcome = _execute(run, command)
    failure = _infrastructure_failure(run, command, outcome)
    if failure:
        return failure
    try:
        parsed = _parse(run, command, outcome)
    except ReportError as exc:
        return _result(run, Outcome.failed, exit_code=outcome.exit_code, output=_excerpt(outcome),
                       duration_ms=round(outcome.duration_s * 1000),
                       details=f"Could not read the tool's report, so the result is unknown: {exc}")
    if run.strategy.type is StrategyType.playwright and _browser_missing(outcome):
        return _result(run, Outcome.skipped, exit_code=outcome.exit_code, output=_excerpt(outcome),
                       details="Configuration issue: Playwright is installed but cannot find a "
                               "browser; set CHROMIUM_PATH or launchOptions.executablePath.")
    verdict = _VERDICTS.get(run.strategy.type, _exit_code_verdict)
    outcome_, details = verdict(run, command, outcome, parsed)
    diagnostics = parsed.diagnostics if parsed else []
    if run.strategy.type is StrategyType.unit_test and _report_format(run, command) in TEST_REPORT_FORMATS:
        diagnostics, run_note = _record_tests(run, command, outcome, diagnostics)
        details = f"{details} {run_note}"
    errors = parsed.error_count if parsed else None
    return _result(run, outcome_, exit_code=outcome.exit_code, error_count=errors,
                   output=_excerpt(outcome, diagnostics), details=details, diagnostics=diagnostics,
                   duration_ms=round(outcome.duration_s * 1000))


def _record_tests(run: StrategyRun, command: str, outcome: CommandResult,
                  diagnostics: list[Diagnostic]) -> tuple[list[Diagnostic], str]:
    """The tester's view of a unit-test run: a TestRun with hints in runs/<runId>/, bugs synced.

    Returns the diagnostics with each failed test's hint attached, and a note for the details.
    """
    path = _report_path(run)
    report = path.read_text(encoding="utf-8", errors="replace") if path and path.is_file() else outcome.stdout
    run_id = new_run_id()
    test_run = build_test_run(report, str(_report_format(run, command)), run_id=run_id, stdout=outcome.stdout,
                              stderr=outcome.stderr, exit_code=outcome.exit_code, timed_out=outcome.timed_out,
                              duration_ms=round(outcome.duration_s * 1000), contract=run.contract,
                              roots=_roots(run))
    unit = run.contract.contract_id if run.contract else run.workspace.name
    sync = sync_bugs(run.workspace, test_run, unit=unit, run_id=run_id)
    record_test_run(run.workspace, run_id, sync.test_run, outcome.stdout, outcome.stderr)
    hints = {f.test: f.hint for f in sync.test_run.failures}
    with_hints = [d.model_copy(update={"hint": next((h for t, h in hints.items() if d.message.startswith(t)), None)})
                  for d in diagnostics]
    fixed = [m["id"] for m in sync.bugs_transitioned if m["to"] == "fixed"]
    note = (f"TestRun {run_id} in .sprintflow/runs/{run_id}/; bugs opened {sync.bugs_opened or 'none'}, "
            f"fixed {fixed or 'none'}.")
    return with_hints, note


def _roots(run: StrategyRun) -> list[str]:
    return [run.executor.workspace_path(run.workspace), str(run.workspace.resolve())]


def _browser_missing(outcome: CommandResult) -> bool:
    text = outcome.stdout + outcome.stderr
    return outcome.exit_code != 0 and ("Executable doesn't exist" in text or "npx playwright install" in text)


Verdict = Callable[[StrategyRun, str, CommandResult, ParsedReport | None], tuple[Outcome, str]]


def _exit_code_verdict(run: StrategyRun, command: str, outcome: CommandResult,
                       parsed: ParsedReport | None) -> tuple[Outcome, str]:
    errors = parsed.error_count if parsed else 0
    if outcome.exit_code == 0 and not errors:
        return Outcome.passed, f"`{command}` exited 0" + (" with no errors." if parsed else ".")
    found = f" with {errors} error(s)" if errors else ""
    first = f"; first: {_format_diagnostic(_first_error(parsed))}" if errors and parsed else ""
    return Outcome.failed, f"`{command}` exited {outcome.exit_code}{found}{first}."


def _first_error(parsed: ParsedReport) -> Diagnostic:
    return next((d for d in parsed.diagnostics if d.severity == "error"), parsed.diagnostics[0])


def _build_verdict(run: StrategyRun, command: str, outcome: CommandResult,
                   parsed: ParsedReport | None) -> tuple[Outcome, str]:
    result, details = _exit_code_verdict(run, command, outcome, parsed)
    if result is Outcome.passed and run.strategy.config.get("verifyOutput"):
        output_dir = run.workspace / str(run.strategy.config.get("outputDir", "dist"))
        if not output_dir.is_dir() or not any(output_dir.iterdir()):
            return Outcome.failed, (f"`{command}` exited 0 but the output directory "
                                    f"{output_dir.relative_to(run.workspace)}/ is missing or empty "
                                    "(verifyOutput).")
        details += f" Output directory {output_dir.relative_to(run.workspace)}/ is present and non-empty."
    return result, details


def _lint_verdict(run: StrategyRun, command: str, outcome: CommandResult,
                  parsed: ParsedReport | None) -> tuple[Outcome, str]:
    result, details = _exit_code_verdict(run, command, outcome, parsed)
    warnings = sum(d.severity == "warning" for d in parsed.diagnostics) if parsed else 0
    limit = int(run.strategy.config.get("maxWarnings", -1))
    if result is Outcome.passed and 0 <= limit < warnings:
        return Outcome.failed, f"{warnings} warnings exceed maxWarnings {limit}."
    if warnings:
        details += f" {warnings} warning(s) noted (warnings do not fail lint)."
    return result, details


def _test_verdict(run: StrategyRun, command: str, outcome: CommandResult,
                  parsed: ParsedReport | None) -> tuple[Outcome, str]:
    result, details = _exit_code_verdict(run, command, outcome, parsed)
    counts = parsed.counts if parsed else None
    if counts is None:
        return result, details
    tally = f"{counts.total} tests: {counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped."
    if counts.total == 0 and result is Outcome.passed:
        return result, f"{details} No tests found: passing vacuously, as the seed allows for a first sprint."
    if result is Outcome.failed and parsed and parsed.failures:
        first = parsed.failures[0]
        return result, f"{tally} First failure: {first.test}: {first.message.splitlines()[0] if first.message else ''}"
    return result, f"{details} {tally}"


def _custom_verdict(run: StrategyRun, command: str, outcome: CommandResult,
                    parsed: ParsedReport | None) -> tuple[Outcome, str]:
    result, details = _exit_code_verdict(run, command, outcome, parsed)
    config = run.strategy.config
    if config.get("parseOutput") != "json":
        return result, details
    try:
        output = _last_json(outcome.stdout)
    except ValueError as exc:
        return Outcome.failed, f"{details} Its output is not JSON ({exc}), so parseOutput=json cannot judge it."
    condition = config.get("passCondition")
    if not condition:
        return result, details
    held = evaluate_condition(str(condition), output)
    if result is Outcome.passed and not held:
        return Outcome.failed, f"passCondition `{condition}` is false for output {json.dumps(output)[:300]}."
    return result, f"{details} passCondition `{condition}` is {'true' if held else 'false'}."


def _last_json(stdout: str):
    """The command's JSON: the whole stdout, else its last line that parses."""
    text = stdout.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        for line in reversed(text.splitlines()):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object found on stdout")


def _judge_api_check(run: StrategyRun) -> StrategyResult:
    """Start the server, wait for its ready line, check each endpoint, stop it and its children."""
    config = run.strategy.config
    spec = {key: config[key] for key in ("baseUrl", "startServer", "serverCommand",
                                         "serverReadyPattern", "serverTimeout", "endpoints")
            if key in config}
    command = f"python3 {shlex.quote(run.executor.runner('apicheck.py'))}"
    outcome = _execute(run, command, env={"SPRINTFLOW_APICHECK_SPEC": json.dumps(spec)})
    failure = _infrastructure_failure(run, config.get("serverCommand", command), outcome)
    if failure:
        return failure
    try:
        report = json.loads(outcome.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return _result(run, Outcome.failed, exit_code=outcome.exit_code, output=_excerpt(outcome),
                       details="The api-check runner gave no readable result, so nothing was verified.")
    duration = round(outcome.duration_s * 1000)
    if not report["ready"]:
        return _result(run, Outcome.failed, exit_code=outcome.exit_code, duration_ms=duration,
                       output=report["serverOutput"][-EXCERPT_CHARS:],
                       details=(f"The server (`{config.get('serverCommand')}`) never printed "
                                f"/{config.get('serverReadyPattern', '.')}/ within "
                                f"{config.get('serverTimeout', 15000)} ms, or exited first."))
    diagnostics = [_endpoint_diagnostic(check, _roots(run)) for check in report["checks"] if not check["ok"]]
    lines = [_endpoint_line(check) for check in report["checks"]]
    passed = outcome.exit_code == 0 and not diagnostics
    details = (f"All {len(lines)} endpoint checks passed." if passed else
               f"{len(diagnostics)} of {len(lines)} endpoint checks failed.")
    return _result(run, Outcome.passed if passed else Outcome.failed, exit_code=outcome.exit_code,
                   error_count=len(diagnostics), output="\n".join(lines), details=details,
                   diagnostics=diagnostics, duration_ms=duration)


def _endpoint_line(check: dict) -> str:
    got = check["status"] if check["status"] is not None else check["error"]
    mark = "ok  " if check["ok"] else "FAIL"
    missing = f" missing keys {check['missingKeys']}" if check["missingKeys"] else ""
    tag = f"[{check['criterion']}] " if check.get("criterion") else ""
    return f"{mark} {tag}{check['method']} {check['path']} -> {got} (expected {check['expectedStatus']}){missing}"


# A server's own stack trace, to point a 5xx at the line that crashed: Python and Node frames.
_FRAMES = re.compile(r'File "(?P<py>[^"]+)", line (?P<pyline>\d+)|\(?(?P<js>/[^\s():]+):(?P<jsline>\d+):\d+\)?')


def _crash_site(log: str, roots: list[str]) -> tuple[str | None, int | None]:
    """The innermost stack frame inside the workspace (not a library) in the server's log.

    Python prints the innermost frame last; Node prints it first.
    """
    python, node = [], []
    for match in _FRAMES.finditer(log):
        path, line, frames = ((match["py"], match["pyline"], python) if match["py"]
                              else (match["js"], match["jsline"], node))
        for root in roots:
            prefix = root.rstrip("/") + "/"
            if path.startswith(prefix) and "node_modules" not in path:
                frames.append((path[len(prefix):], int(line)))
    if python:
        return python[-1]
    return node[0] if node else (None, None)


def _endpoint_diagnostic(check: dict, roots: list[str]) -> Diagnostic:
    where = f"{check['method']} {check['path']}"
    file, line = _crash_site(check.get("serverLog", ""), roots) if (check["status"] or 0) >= 500 else (None, None)
    if check["error"]:
        message = f"{where} failed: {check['error']}"
    elif check["status"] != check["expectedStatus"]:
        message = (f"{where} returned {check['status']} instead of {check['expectedStatus']}; "
                   f"body: {check['body'][:200]}")
    else:
        message = f"{where} response lacks keys {check['missingKeys']}; body: {check['body'][:200]}"
    if file:
        message += f" The server logged a crash at {file}:{line}."
    return Diagnostic(tool="api-check", message=message, code=check.get("criterion"), file=file, line=line,
                      expected=str(check["expectedStatus"]),
                      received=str(check["status"] if check["status"] is not None else check["error"]))


_JUDGES: dict[StrategyType, Callable[[StrategyRun], StrategyResult]] = {
    StrategyType.api_check: _judge_api_check,
}
_VERDICTS: dict[StrategyType, Verdict] = {
    StrategyType.build: _build_verdict,
    StrategyType.lint: _lint_verdict,
    StrategyType.unit_test: _test_verdict,
    StrategyType.playwright: _test_verdict,
    StrategyType.custom: _custom_verdict,
}
