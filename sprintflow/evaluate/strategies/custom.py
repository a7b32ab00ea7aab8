"""custom: a user-defined check; exit 0 passes, and with ``parseOutput = "json"`` its passCondition must hold."""

from __future__ import annotations

import json
from typing import Any

from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport
from sprintflow.schemas import Outcome, StrategyType
from sprintflow.schemas.strategies import CustomStrategy as CustomConfig

from ..expressions import ConditionUndecidable, parse_condition
from .base import Strategy, StrategyRun, exit_code_verdict, register

__all__ = ["CustomStrategy", "last_json"]


@register
class CustomStrategy(Strategy[CustomConfig]):
    type = StrategyType.custom

    def check(self) -> None:
        super().check()
        settings = self.config.config
        if settings.pass_condition:
            parse_condition(settings.pass_condition)

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        verdict, details = exit_code_verdict(command, outcome, parsed)
        settings = self.config.config
        if settings.parse_output != "json":
            return verdict, details
        try:
            output = last_json(outcome.stdout)
        except ValueError as exc:
            return Outcome.failed, f"{details} Its output is not JSON ({exc}), so parseOutput=json cannot judge it."
        condition = settings.pass_condition
        if not condition:
            return verdict, details
        try:
            held = parse_condition(condition).holds(output)
        except ConditionUndecidable as exc:
            return Outcome.failed, f"{details} passCondition `{condition}` cannot be judged on this output: {exc}."
        if verdict is Outcome.passed and not held:
            return Outcome.failed, f"passCondition `{condition}` is false for output {json.dumps(output)[:300]}."
        return verdict, f"{details} passCondition `{condition}` is {'true' if held else 'false'}."


def last_json(stdout: str) -> Any:
    """The command's JSON: the whole stdout, else its last line that parses.

    Example:
        >>> last_json('progress…\\n{"passed": true}\\n')
        {'passed': True}
    """
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
