"""The seven verification strategies, one plugin class each, registered by their ``type``.

``strategy_for(config, project)`` gives the plugin that runs one configured
strategy; every plugin subclasses :class:`~.base.Strategy`. Adding a strategy
type means a typed config in :mod:`sprintflow.schemas.strategies` and a
registered class here.
"""

from __future__ import annotations

from . import api_check, build, custom, lint, playwright, typecheck, unit_test
from .base import STRATEGIES, Judged, Strategy, StrategyRun, register, strategy_for

__all__ = ["STRATEGIES", "Judged", "Strategy", "StrategyRun", "api_check", "build", "custom", "lint", "playwright",
           "register", "strategy_for", "typecheck", "unit_test"]
