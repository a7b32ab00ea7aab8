"""typecheck: the code type-checks with zero errors (tsc by default; mypy, pyright … when the command runs them)."""

from __future__ import annotations

from sprintflow.schemas import StrategyType
from sprintflow.schemas.strategies import TypecheckStrategy as TypecheckConfig

from .base import Strategy, register

__all__ = ["TypecheckStrategy"]


@register
class TypecheckStrategy(Strategy[TypecheckConfig]):
    type = StrategyType.typecheck
    keeps_tool_caches = True
    default_command = "npx tsc --noEmit --pretty false"
    command_key = "typecheck"
