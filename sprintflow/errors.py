"""The one exception hierarchy of sprintflow, with the exit code the CLI gives each.

::

    SprintflowError                       every error we raise on purpose
    ├── InputError               exit 2   something the user gave us is wrong (the message names it)
    │   ├── DocumentError                 a JSON document failed its schema or rules (file, JSON path)
    │   ├── ConfigError                   sprintflow.toml / [tool.sprintflow] / bober.config.json is wrong
    │   └── WorkspaceError                the workspace is missing or unreadable, or git refused;
    │       ├── WorkspaceBusy             another sprint or evaluation is working on it
    │       └── OutsideWorkspace          a path leads out of the workspace (``..``, a symlink, a device)
    ├── TransitionError          exit 2   an illegal contract or bug status change was asked for
    ├── ConditionUndecidable     (caught) a passCondition cannot judge this output: its strategy fails
    ├── EngineError              exit 2   an engine's answers were unusable every time (malformed input)
    ├── InfrastructureError      exit 3   the machinery failed, not the code under test (no verdict);
    │   ├── ExecutorUnavailable           the only errors Prefect is allowed to retry
    │   ├── ContainmentFailed             a contained command's view could not be built: it never ran
    │   ├── EngineUnavailable             an engine the shell could not start (not found, not executable)
    │   └── OutOfMemory                   the process ran out of memory (the machine's or its limit)
    ├── ReportError              exit 3   a tool's report could not be read, so nothing was judged
    └── TestRunCrashed           exit 3   a test run crashed before it could judge the code

Exit codes everywhere: 0 pass, 1 the code under test failed (a verdict, never an
error), 2 the input is wrong, 3 no verdict could be reached. Anything that is not
a ``SprintflowError`` is a bug in sprintflow and keeps its traceback, except running
out of memory, which the CLI says as an ``OutOfMemory`` (:meth:`OutOfMemory.of`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

__all__ = [
    "ConditionUndecidable",
    "EngineUnavailable",
    "ConfigError",
    "ContainmentFailed",
    "DiskFull",
    "DocumentError",
    "EngineError",
    "ExecutorUnavailable",
    "InfrastructureError",
    "InputError",
    "OutOfMemory",
    "OutsideWorkspace",
    "Problem",
    "ReportError",
    "SprintflowError",
    "TestRunCrashed",
    "TransitionError",
    "WorkspaceBusy",
    "WorkspaceError",
]


class SprintflowError(Exception):
    """Base class of every error sprintflow raises on purpose."""

    exit_code = 2
    """What the CLI exits with when this error ends a command."""


class InputError(SprintflowError):
    """Something the user gave us (a file, a flag, a path) is wrong."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document, located by file and JSON path.

    ``path`` is a JSON path (``""`` is the whole document, shown as ``$``), or
    None where a JSON path does not apply (a line of a JSON-lines file, a file
    that cannot be read at all).

    Example:
        >>> str(Problem("c.json", "successCriteria/0", "a custom criterion needs a customCommand"))
        'c.json: successCriteria/0: a custom criterion needs a customCommand'
        >>> str(Problem("cases.jsonl:3", None, "invalid JSON"))
        'cases.jsonl:3: invalid JSON'
    """

    file: str
    path: str | None
    message: str

    def __str__(self) -> str:
        if self.path is None:
            return f"{self.file}: {self.message}"
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


class WorkspaceBusy(WorkspaceError):
    """Another sprint or evaluation holds the workspace; this one refused to run beside it."""


class OutsideWorkspace(WorkspaceError):
    """A path from a document, a config, a tool's output or the sandbox leads out of the workspace,
    or names something that is not a regular file; nothing was read or written through it."""


class ConditionUndecidable(SprintflowError):
    """A passCondition cannot judge this output (a coercion JavaScript would do silently);
    the strategy fails with the reason."""


class TransitionError(SprintflowError):
    """A contract or bug status change the state machine does not allow."""


class InfrastructureError(SprintflowError):
    """The machinery failed (Docker API, a vanished container), not the code under test.

    Prefect retries these and only these: a real test failure is never retried.
    """

    exit_code = 3


class DiskFull(InfrastructureError, OSError):
    """The disk refused a write (full, over quota, read-only): the environment, not the code under test.

    Also an OSError, so what stores what it can (``store_or_note``) still takes it in stride.

    Example:
        >>> str(DiskFull(28, "No space left on device", "/w/.sprintflow/pin.json"))
        'cannot write /w/.sprintflow/pin.json: No space left on device'
    """

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


class ExecutorUnavailable(InfrastructureError):
    """The requested executor cannot run here (no Docker engine, no image)."""


class ContainmentFailed(InfrastructureError):
    """A contained command's view could not be built (a mount refused), so the command never ran: the
    machine's failure, whatever the command was. No verdict rather than a failure blamed on the code;
    Prefect retries it as any machinery failure."""


class EngineUnavailable(InfrastructureError):
    """An engine command the shell could not start (exit 127 not found, 126 not executable): no verdict on
    the code, and no iteration spent."""


class OutOfMemory(InfrastructureError):
    """The process ran out of memory: the machine's, or the limit it runs under (``ulimit -v``, a
    container's). Not a bug, so no traceback: :meth:`of` tells it from the errors the libraries raise.

    Example:
        >>> str(OutOfMemory.of(MemoryError("malloc of size 268435456 failed"))).split(": ")[0]
        'out of memory (malloc of size 268435456 failed)'
        >>> OutOfMemory.of(ValueError("x")) is None
        True
    """

    @classmethod
    def of(cls, exc: BaseException) -> OutOfMemory | None:
        """``exc`` as an OutOfMemory when it says the process ran out: Python's, Arrow's and numpy's
        MemoryError, DuckDB's out-of-memory error, or the forms an address-space limit takes elsewhere (a
        library the loader could not map at import, a thread whose stack could not be had); None for
        anything else."""
        duckdb = sys.modules.get("duckdb")  # imported only by what queries the history: never here
        text = str(exc)
        out = isinstance(exc, MemoryError) or (duckdb is not None and isinstance(exc, duckdb.OutOfMemoryException))
        if not out and not any(sign in text for sign in _NO_MEMORY_SIGNS):
            return None
        detail = (text.strip().removeprefix("Out of Memory Error: ").splitlines() or [type(exc).__name__])[0]
        return cls(f"out of memory ({detail}): free memory or raise this process's limit, or give it less work "
                   "(a report: --since)")


_NO_MEMORY_SIGNS = ("failed to map segment from shared object", "can't start new thread",
                    "Failed to launch worker thread")
"""What the dynamic loader, Python's threads and Arrow's say when an address-space limit refuses them."""


class EngineError(SprintflowError):
    """An engine gave an unusable answer every time it was asked (an engine that cannot even start
    is an ``InfrastructureError``)."""


class ReportError(SprintflowError):
    """A tool's report (JSON, JUnit XML, compiler output) could not be parsed.

    Inside an evaluation this fails the strategy with the reason (fail closed);
    it reaches the CLI only when a command was asked to read one report.
    """

    exit_code = 3


class TestRunCrashed(SprintflowError):
    """A test run crashed (no report, no test collected, a timeout): the tests, not the code, act next."""

    __test__ = False  # an error, not a pytest test class
    exit_code = 3
