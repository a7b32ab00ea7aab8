"""typecheck: the code type-checks with zero errors (tsc by default, mypy when the command runs it)."""

from __future__ import annotations

from sprintflow.schemas import StrategyType
from sprintflow.schemas.strategies import TypecheckStrategy as TypecheckConfig

from .base import Strategy, register

__all__ = ["TypecheckStrategy"]


@register
class TypecheckStrategy(Strategy[TypecheckConfig]):
    type = StrategyType.typecheck
    default_command = "npx tsc --noEmit --pretty false"
    command_key = "typecheck"
    default_format = "tsc"

    def report_format(self, command: str) -> str | None:
        configured = self.config.config.format
        if configured:
            return configured
        if "tsc" in command:
            return "tsc"
        return "mypy" if "mypy" in command else None
