"""playwright: end-to-end tests in a real browser; not installed is ``skipped`` (a configuration issue)."""

from __future__ import annotations

import json
from pathlib import Path

from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport
from sprintflow.schemas import Outcome, StrategyType
from sprintflow.schemas.strategies import PlaywrightStrategy as PlaywrightConfig

from .base import Judged, Strategy, StrategyRun, duration_ms, excerpt, register, result
from .unit_test import test_verdict

__all__ = ["PlaywrightStrategy"]


@register
class PlaywrightStrategy(Strategy[PlaywrightConfig]):
    type = StrategyType.playwright
    default_command = "npx playwright test --reporter=json"
    needs_build = True

    def judge(self, run: StrategyRun) -> Judged:
        if not _installed(run):
            # The seed's one allowed skip: flagged as a configuration issue, never a pass.
            return Judged(result(run, Outcome.skipped, details=(
                "Configuration issue: Playwright is not installed in this workspace "
                "(no node_modules/@playwright/test or node_modules/playwright). "
                "Install it with npm and point it at a Chromium (CHROMIUM_PATH) to run E2E checks.")))
        return super().judge(run)

    def judge_output(self, run: StrategyRun, command: str, outcome: CommandResult,
                     parsed: ParsedReport | None) -> Judged:
        if _browser_missing(outcome):
            return Judged(result(run, Outcome.skipped, exit_code=outcome.exit_code, output=excerpt(outcome),
                                 duration_ms=duration_ms(outcome),
                                 details="Configuration issue: Playwright is installed but cannot find a "
                                         "browser; set CHROMIUM_PATH or launchOptions.executablePath."))
        return super().judge_output(run, command, outcome, parsed)

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        return test_verdict(command, outcome, parsed)


def _installed(run: StrategyRun) -> bool:
    modules = run.workspace / "node_modules"
    if (modules / "@playwright/test").is_dir() or (modules / "playwright").is_dir():
        return True
    # In the project's own sandbox the dependencies were installed from package.json, not on the host.
    return getattr(run.executor, "sandbox", None) is not None and _declares_playwright(run.workspace)


def _declares_playwright(workspace: Path) -> bool:
    try:
        manifest = json.loads((workspace / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    declared = {**(manifest.get("dependencies") or {}), **(manifest.get("devDependencies") or {})}
    return "@playwright/test" in declared or "playwright" in declared


def _browser_missing(outcome: CommandResult) -> bool:
    text = outcome.stdout + outcome.stderr
    return outcome.exit_code != 0 and ("Executable doesn't exist" in text or "npx playwright install" in text)
