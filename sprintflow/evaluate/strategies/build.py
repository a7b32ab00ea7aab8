"""build: the full build pipeline exits 0 and (with ``verifyOutput``) leaves its output behind."""

from __future__ import annotations

from pathlib import Path

from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport
from sprintflow.schemas import Outcome, StrategyType
from sprintflow.schemas.strategies import BuildStrategy as BuildConfig

from .base import Strategy, StrategyRun, exit_code_verdict, register

__all__ = ["BuildStrategy"]


@register
class BuildStrategy(Strategy[BuildConfig]):
    type = StrategyType.build
    default_command = "npm run build"
    command_key = "build"

    def outputs(self, workspace: Path) -> list[str]:
        return [*super().outputs(workspace), self.config.config.output_dir]

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        verdict, details = exit_code_verdict(command, outcome, parsed)
        settings = self.config.config
        if verdict is not Outcome.passed or not settings.verify_output:
            return verdict, details
        output_dir = run.workspace / settings.output_dir
        if not output_dir.is_dir() or not any(output_dir.iterdir()):
            return Outcome.failed, (f"`{command}` exited 0 but the output directory {settings.output_dir}/ "
                                    "is missing or empty (verifyOutput).")
        return verdict, f"{details} Output directory {settings.output_dir}/ is present and non-empty."
