"""The one exception hierarchy of sprintflow.

::

    SprintflowError                 every error we raise on purpose (CLI exit 2)
    ├── InputError                  something the user gave us is wrong
    │   ├── DocumentError           a JSON document failed its schema or rules
    │   ├── ConfigError             sprintflow.toml / bober.config.json is wrong
    │   ├── WorkspaceError          the workspace is missing or unreadable
    │   └── ReportError             a tool report could not be parsed
    ├── TransitionError             an illegal contract status change
    ├── InfrastructureError         the machinery failed, not the code under test;
    │   └── ExecutorUnavailable     the only errors Prefect is allowed to retry
    └── EngineError                 an engine call failed (kept as a failed step)

The CLI turns any ``SprintflowError`` into a clear message and exit code 2;
anything else is a bug in sprintflow and keeps its traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ReportError",
    "ConfigError",
    "DocumentError",
    "EngineError",
    "ExecutorUnavailable",
    "InfrastructureError",
    "InputError",
    "Problem",
    "SprintflowError",
    "TransitionError",
    "WorkspaceError",
]


class SprintflowError(Exception):
    """Base class of every error sprintflow raises on purpose."""

    exit_code = 2


class InputError(SprintflowError):
    """Something the user gave us (a file, a flag, a path) is wrong."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document, located by file and JSON path."""

    file: str
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path or '$'}: {self.message}"


class DocumentError(InputError):
    """A document failed to parse, to match its schema or to follow its rules."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class ConfigError(InputError):
    """The project configuration is malformed or names something unknown."""


class WorkspaceError(InputError):
    """The workspace does not exist or cannot be read."""


class TransitionError(SprintflowError):
    """A contract status change the state machine does not allow."""


class InfrastructureError(SprintflowError):
    """The machinery failed (Docker API, a vanished container), not the code under test.

    Prefect retries these and only these: a real test failure is never retried.
    """


class ExecutorUnavailable(InfrastructureError):
    """The requested executor cannot run here (no Docker engine, no image)."""


class EngineError(SprintflowError):
    """An engine command could not be run or gave an unusable answer."""


class ReportError(InputError):
    """A tool's report (JSON, JUnit XML, compiler output) could not be parsed."""
