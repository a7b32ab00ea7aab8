"""sprintflow: planner -> generator -> evaluator sprints for AI coding agents, as Prefect 3 flows."""

from sprintflow.errors import (
                               ConfigError,
                               DocumentError,
                               EngineError,
                               ExecutorUnavailable,
                               InfrastructureError,
                               InputError,
                               SprintflowError,
                               TransitionError,
                               WorkspaceError,
)

__all__ = [
    "ConfigError", "DocumentError", "EngineError", "ExecutorUnavailable", "InfrastructureError",
    "InputError", "SprintflowError", "TransitionError", "WorkspaceError",
]
