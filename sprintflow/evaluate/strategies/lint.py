"""lint: zero errors; warnings are noted and fail only past ``maxWarnings``."""

from __future__ import annotations

from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport
from sprintflow.schemas import Outcome, StrategyType
from sprintflow.schemas.strategies import LintStrategy as LintConfig

from .base import Strategy, StrategyRun, exit_code_verdict, register

__all__ = ["LintStrategy"]


@register
class LintStrategy(Strategy[LintConfig]):
    type = StrategyType.lint
    keeps_tool_caches = True
    default_command = "npm run lint"
    command_key = "lint"

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        verdict, details = exit_code_verdict(command, outcome, parsed)
        warnings = sum(d.severity == "warning" for d in parsed.diagnostics) if parsed else 0
        limit = self.config.config.max_warnings
        if verdict is Outcome.passed and 0 <= limit < warnings:
            return Outcome.failed, f"{warnings} warnings exceed maxWarnings {limit}."
        if warnings:
            details += f" {warnings} warning(s) noted (warnings do not fail lint)."
        return verdict, details
