"""One snapshot/restore mechanism for files an agent must not change.

A :class:`Snapshot` hashes and copies a *scope* of workspace files before an
agent runs and, afterwards, puts back every file of that scope that changed,
appeared or vanished. The scope is a function of the workspace, so the same
mechanism serves both directions:

* a deny-list (:func:`paths_scope`): the generator may change anything but
  ``.sprintflow/``, the held-out evals and the tester's tests;
* an allow-list (:func:`outside_scope`): the tester may change nothing but its
  tests folder and its run folder.

Files are copied, not hard-linked: an agent could modify a linked file in place.

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
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.io.hashing import IGNORED_DIRS, file_digest, file_hashes
from sprintflow.schemas import ProjectConfig, SprintContract

__all__ = ["Guard", "GuardReport", "Scope", "Snapshot", "before_after_diff", "matches", "outside_scope", "paths_scope"]

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


def paths_scope(paths: Iterable[str]) -> Scope:
    """A scope of the named files and folders, with nothing inside them ignored."""
    names = [p.rstrip("/") for p in paths]

    def scope(workspace: Path) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for rel in names:
            target = workspace / rel
            if target.is_dir():
                hashes.update({f"{rel}/{k}": v for k, v in file_hashes(target, frozenset()).items()})
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


class Snapshot:
    """The files of a scope, hashed and copied aside, until :meth:`restore` puts them back."""

    def __init__(self, workspace: Path, scope: Scope):
        self.workspace = workspace
        self.scope = scope
        self.before = scope(workspace)
        self.backup = Path(tempfile.mkdtemp(prefix="sprintflow-guard-"))
        for rel in self.before:
            _copy(workspace / rel, self.backup / rel)

    def restore(self) -> list[str]:
        """Undo every change inside the scope; return the changed paths, sorted.

        Everything changed is removed before anything is copied back, so a file
        that became a folder (or the reverse) is put back too. The copies are
        deleted afterwards.
        """
        changed = sorted(before_after_diff(self.before, self.scope(self.workspace)))
        for rel in changed:
            _remove(self.workspace / rel)
        for rel in changed:
            if rel in self.before:
                _copy(self.backup / rel, self.workspace / rel)
        shutil.rmtree(self.backup, ignore_errors=True)
        return changed


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


@dataclass
class GuardReport:
    """What the generator step changed that it should not have."""

    tampered: list[str] = field(default_factory=list)
    """Protected files changed, added or removed (all restored)."""
    unexpected: list[str] = field(default_factory=list)
    """Files changed outside the contract's estimatedFiles (reported, kept)."""
    changed: list[str] = field(default_factory=list)


class Guard:
    """Snapshots the protected paths before the generator runs; restores them after.

    Protected: ``.sprintflow/``, the held-out evals, ``protected_paths`` and any
    ``also`` (the tester's tests folder: the code writer must not weaken the tests
    that judge it).
    """

    def __init__(self, workspace: Path, project: ProjectConfig, contract: SprintContract,
                 also: tuple[str, ...] = ()):
        self.workspace = workspace
        self.protected = [".sprintflow", *project.sprint.held_out, *project.protected_paths, *also]
        self.expected = contract.estimated_files
        self.before_all = file_hashes(workspace)
        self.snapshot = Snapshot(workspace, paths_scope(self.protected))

    def check_and_restore(self) -> GuardReport:
        """Compare, restore any protected path that changed, and report."""
        tampered = self.snapshot.restore()
        changed = sorted(before_after_diff(self.before_all, file_hashes(self.workspace)))
        unexpected = [f for f in changed if not matches(f, self.expected)]
        return GuardReport(tampered=tampered, unexpected=unexpected, changed=changed)
