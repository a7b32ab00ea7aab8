"""One sprint or evaluation per workspace: a second one refuses, saying who holds the workspace.

The lock is an advisory lock on ``.sprintflow/lock`` (released by the kernel if
its holder dies, even by SIGKILL, so a killed run never blocks the next). It is
reentrant within a process: the sprint holds it, and the evaluations it runs as
subflows pass through.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sprintflow.errors import WorkspaceBusy

from .files import file_lock, prepare_parent
from .layout import WorkspaceLayout

__all__ = ["workspace_lock"]

_held: dict[str, int] = {}
_guard = threading.Lock()


@contextmanager
def workspace_lock(workspace: Path | str, *, on_busy: Callable[[str], object] | None = None) -> Iterator[None]:
    """Hold the workspace for the ``with`` block, or raise ``WorkspaceBusy`` naming the holder.

    With ``on_busy``, a held workspace is waited for instead: ``on_busy(holder)`` is called
    once, then the block runs when the holder lets go (a deployment run queued behind a
    terminal's run).

    Example:
        >>> import tempfile
        >>> workspace = tempfile.mkdtemp()
        >>> with workspace_lock(workspace), workspace_lock(workspace):  # reentrant in one process
        ...     "working"
        'working'
    """
    path = WorkspaceLayout(Path(workspace)).lock_file
    prepare_parent(path)
    key = str(path.resolve())
    with _guard:
        reentered = key in _held
        if reentered:
            _held[key] += 1
    if reentered:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    with file_lock(path, wait=False) as held:
        if held:
            with _holding(path, key):
                yield
            return
        holder = path.read_text(encoding="utf-8", errors="replace").strip() or "another process"
    if on_busy is None:
        raise WorkspaceBusy(f"{workspace}: {holder} is working on this workspace; wait for it to finish "
                            "(a sprint or evaluation runs alone per workspace)")
    on_busy(holder)
    with file_lock(path), _holding(path, key):
        yield


@contextmanager
def _holding(path: Path, key: str) -> Iterator[None]:
    """With the lock file held: say who holds it, and let this process's nested holds pass."""
    try:  # who holds it, for the message above; a full disk only loses that courtesy
        path.write_text(f"sprintflow (pid {os.getpid()} on {socket.gethostname()}, since "
                        f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC)\n", encoding="utf-8")
    except OSError:
        pass
    with _guard:
        _held[key] = 1
    try:
        yield
    finally:
        with _guard:
            del _held[key]
