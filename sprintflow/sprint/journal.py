"""The iteration journal: present means the iteration's generator (and tester) step finished.

One atomically written JSON file per iteration
(:meth:`~sprintflow.io.layout.WorkspaceLayout.journal_file`), so a sprint killed
at any moment knows, when started again, which steps are done.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas.journal import IterationJournal

__all__ = ["read_journal", "write_journal"]

MAX_JOURNAL_BYTES = 16 << 20
"""A journal keeps the ends of the engine's output: anything larger is not one of ours."""


def write_journal(workspace: Path, contract_id: str, iteration: int, entry: IterationJournal) -> None:
    """Record an iteration's finished steps (atomic: present means done).

    Example:
        >>> import tempfile
        >>> workspace = Path(tempfile.mkdtemp())
        >>> write_journal(workspace, "sprint-s-1", 1, IterationJournal(ok=True, reason=None))
        >>> read_journal(workspace, "sprint-s-1", 1).ok, read_journal(workspace, "sprint-s-1", 2)
        (True, None)
    """
    path = WorkspaceLayout(workspace).journal_file(contract_id, iteration)
    atomic_write_text(path, entry.to_json())


def read_journal(workspace: Path, contract_id: str, iteration: int) -> IterationJournal | None:
    """The journal entry of an iteration, or None when its steps have not finished.

    A journal that is not one (not a regular file, too large, torn, not the model) is not trusted:
    the step runs again rather than being taken as done.
    """
    path = WorkspaceLayout(workspace).journal_file(contract_id, iteration)
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_JOURNAL_BYTES:
            return None
        return IterationJournal.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None
