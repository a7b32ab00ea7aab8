"""A snapshot/restore of files the tester may not change (the generator is judged by :mod:`sprintflow.judge`).

A :class:`Snapshot` hashes and copies a *scope* of workspace files before an
agent runs and, afterwards, puts back every file of that scope that changed,
appeared or vanished. The scope is a function of the workspace, so the same
mechanism serves both directions:

* a deny-list (:func:`paths_scope`): the generator may change anything but
  ``.sprintflow/``, the held-out evals and the tester's tests;
* an allow-list (:func:`outside_scope`): the tester may change nothing but its
  tests folder and its run folder.

Copies are kept in memory, never on disk, so nothing the agent can write
reaches them (and a hard link could not be trusted: an agent could modify a
linked file in place).

Example:
    >>> import tempfile
    >>> app = Path(tempfile.mkdtemp())
    >>> (app / "evals").mkdir(); _ = (app / "evals" / "held_out.txt").write_text("42")
    >>> snapshot = Snapshot(app, paths_scope(["evals"]))
    >>> _ = (app / "evals" / "held_out.txt").write_text("weakened")  # the agent runs
    >>> snapshot.restore(), (app / "evals" / "held_out.txt").read_text()
    (['evals/held_out.txt'], '42')
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from sprintflow.io.confine import clear_way
from sprintflow.io.hashing import IGNORED_DIRS, file_digest, file_hashes

__all__ = ["Scope", "Snapshot", "before_after_diff", "matches", "outside_scope", "paths_scope"]

Scope = Callable[[Path], dict[str, str]]
"""Workspace -> relative path -> digest of every file the snapshot watches."""

SANDBOX_IGNORED = IGNORED_DIRS - {".sprintflow"}
"""Caches and tool outputs stay unwatched, but ``.sprintflow/`` (contracts, evals) is watched."""


def before_after_diff(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """Paths whose digest differs, including files that appeared or vanished.

    Example:
        >>> sorted(before_after_diff({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"}))
        ['b', 'c']
    """
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``patterns``, lies under one, or matches one as a glob.

    Example:
        >>> matches("tests/sprintflow/test_a.py", ["tests/sprintflow"])
        True
    """
    return any(path == p or path.startswith(p.rstrip("/") + "/") or fnmatch.fnmatch(path, p)
               for p in patterns)


def paths_scope(paths: Iterable[str], ignored: frozenset[str] = frozenset()) -> Scope:
    """A scope of the named files and folders, ignoring folders named in ``ignored`` inside them.

    Example:
        >>> import tempfile
        >>> app = Path(tempfile.mkdtemp())
        >>> (app / "evals" / "cache").mkdir(parents=True); _ = (app / "evals" / "a.py").write_text("")
        >>> _ = (app / "evals" / "cache" / "b").write_text("")
        >>> sorted(paths_scope(["evals", "missing"], ignored=frozenset({"cache"}))(app))
        ['evals/a.py']
    """
    names = [p.rstrip("/") for p in paths]

    def scope(workspace: Path) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for rel in names:
            target = workspace / rel
            if target.is_dir() and not target.is_symlink():
                hashes.update({f"{rel}/{k}": v for k, v in file_hashes(target, ignored).items()})
            elif target.exists() or target.is_symlink():
                hashes[rel] = file_digest(target)
        return hashes

    return scope


def outside_scope(allowed: Iterable[str], ignored: frozenset[str] = SANDBOX_IGNORED) -> Scope:
    """A scope of every file except the ``allowed`` paths and the ``ignored`` folder names."""
    kept = list(allowed)

    def scope(workspace: Path) -> dict[str, str]:
        return {rel: digest for rel, digest in file_hashes(workspace, ignored).items()
                if not matches(rel, kept)}

    return scope


@dataclass(frozen=True)
class _Saved:
    """A file as it was: its bytes and mode, or a symlink's target. Kept in memory only."""

    data: bytes
    mode: int
    link: str | None = None


def _save(path: Path) -> _Saved | None:
    """The file's bytes, or a symlink's target; None for a FIFO, socket or device (never opened: it could block)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return _Saved(b"", 0, link=os.readlink(path))
    if not stat.S_ISREG(info.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        return _Saved(handle.read(), info.st_mode & 0o7777)


def _put_back(saved: _Saved, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if saved.link is not None:
        target.symlink_to(saved.link)
        return
    target.write_bytes(saved.data)
    target.chmod(saved.mode)


class Snapshot:
    """The files of a scope, hashed and copied into this process's memory, until :meth:`restore`.

    The copies never touch the disk: an agent that can write anywhere on the
    machine cannot edit what will be put back.
    """

    def __init__(self, workspace: Path, scope: Scope):
        self.workspace = workspace
        self.scope = scope
        self.before = scope(workspace)
        self.copies = {rel: saved for rel in self.before if (saved := _save(workspace / rel)) is not None}

    def changed(self) -> list[str]:
        """Paths of the scope changed, created or deleted since the snapshot, sorted."""
        return sorted(before_after_diff(self.before, self.scope(self.workspace)))

    def original(self, rel: str) -> bytes | None:
        """A file's bytes when the snapshot was taken; None when it did not exist."""
        saved = self.copies.get(rel)
        return None if saved is None else saved.data

    def restore(self, only: Iterable[str] | None = None) -> list[str]:
        """Undo every change inside the scope (or only those named); return the paths undone, sorted.

        Everything changed is removed before anything is put back, so a file
        that became a folder (or the reverse) is put back too.
        """
        changed = self.changed()
        if only is not None:
            wanted = set(only)
            changed = [rel for rel in changed if rel in wanted]
        for rel in changed:
            # A folder the snapshot saw may now be a symlink leading out: remove it, never write through it.
            clear_way(self.workspace, self.workspace / rel)
            _remove(self.workspace / rel)
        for rel in changed:
            if rel in self.copies:
                clear_way(self.workspace, self.workspace / rel)
                _put_back(self.copies[rel], self.workspace / rel)
        return changed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
