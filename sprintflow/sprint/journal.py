"""The iteration journal: present means the iteration's generator (and tester) step finished.

One atomically written JSON file per iteration
(:meth:`~sprintflow.io.layout.WorkspaceLayout.journal_file`), so a sprint killed
at any moment knows, when started again, which steps are done.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import WorkspaceLayout

__all__ = ["read_journal", "write_journal"]


def write_journal(workspace: Path, contract_id: str, iteration: int, entry: dict[str, Any]) -> None:
    """Record an iteration's finished steps (atomic: present means done).

    Example:
        >>> import tempfile
        >>> workspace = Path(tempfile.mkdtemp())
        >>> write_journal(workspace, "sprint-s-1", 1, {"ok": True})
        >>> read_journal(workspace, "sprint-s-1", 1), read_journal(workspace, "sprint-s-1", 2)
        ({'ok': True}, None)
    """
    path = WorkspaceLayout(workspace).journal_file(contract_id, iteration)
    atomic_write_text(path, json.dumps(entry, indent=2) + "\n")


def read_journal(workspace: Path, contract_id: str, iteration: int) -> dict[str, Any] | None:
    """The journal entry of an iteration, or None when its steps have not finished."""
    path = WorkspaceLayout(workspace).journal_file(contract_id, iteration)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
