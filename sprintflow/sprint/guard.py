"""One snapshot/restore mechanism for files an agent must not change.

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

import difflib
import fnmatch
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.io.confine import clear_way
from sprintflow.io.hashing import IGNORED_DIRS, file_digest, file_hashes
from sprintflow.io.layout import STATE_DIR
from sprintflow.schemas import ProjectConfig, SprintContract

from .harness import describe_change, harness_files, reaches_into_judge, test_files

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


def _save(path: Path) -> _Saved:
    if path.is_symlink():
        return _Saved(b"", 0, link=os.readlink(path))
    return _Saved(path.read_bytes(), path.stat().st_mode & 0o7777)


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
        self.copies = {rel: _save(workspace / rel) for rel in self.before}

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


@dataclass
class GuardReport:
    """What the generator step changed that it should not have."""

    tampered: list[str] = field(default_factory=list)
    """Protected files changed, added or removed (all restored)."""
    harness: list[str] = field(default_factory=list)
    """Harness files the generator changed, each with what changed (all restored)."""
    tests: list[str] = field(default_factory=list)
    """Existing tests the generator changed or deleted, each with what happened (all restored)."""
    reviewed: dict[str, str] = field(default_factory=dict)
    """Harness files and tests changed that estimatedFiles names: kept, with their diff for a reviewer."""
    reaches: list[str] = field(default_factory=list)
    """Lines the generator added that reach into the test runner (``file:line reaches into …``)."""
    unexpected: list[str] = field(default_factory=list)
    """Files changed outside the contract's estimatedFiles (reported, kept)."""
    changed: list[str] = field(default_factory=list)


class Guard:
    """Watches what the generator must not change, and undoes it after the generator step.

    Hidden (the generator cannot even read them while it runs, see :meth:`hidden`):
    ``.sprintflow/`` (contracts, results, the pinned judge), the held-out evals
    and any ``also`` (the tester's tests: the code writer must not weaken the tests
    that judge it). Protected: those, and ``protected_paths``. Harness files
    (:mod:`~sprintflow.sprint.harness`) are judge inputs: changes are undone unless
    the contract's ``estimatedFiles`` names them. Every copy is kept in memory.
    """

    def __init__(self, workspace: Path, project: ProjectConfig, contract: SprintContract,
                 also: tuple[str, ...] = ()):
        self.workspace = workspace
        self.secret = [STATE_DIR, *project.sprint.held_out, *also]
        self.expected = contract.estimated_files
        self.before_all = file_hashes(workspace)
        self.sources = _small_files(workspace, self.before_all)
        # The state folder's reports and history are outputs, not judge inputs: not worth a copy.
        state = paths_scope([STATE_DIR], ignored=frozenset({"history", "report"}))
        others = paths_scope([*self.secret[1:], *project.protected_paths])
        self.snapshot = Snapshot(workspace, lambda root: {**state(root), **others(root)})
        self.harness = Snapshot(workspace, harness_files)
        self.tests = Snapshot(workspace, test_files)

    def hidden(self) -> tuple[str, ...]:
        """The absolute paths to hide from the generator's view of the workspace."""
        return tuple(str((self.workspace / rel).resolve()) for rel in self.secret if (self.workspace / rel).exists())

    def check_and_restore(self) -> GuardReport:
        """Compare, undo what the generator may not change, and report."""
        tampered = self.snapshot.restore()
        harness, harness_diffs = self._judge_inputs(self.harness, self.harness.changed())
        # New tests are welcome; changing or deleting the tests that are there is not.
        tests, test_diffs = self._judge_inputs(self.tests, [r for r in self.tests.changed() if r in self.tests.before])
        changed = sorted(before_after_diff(self.before_all, file_hashes(self.workspace)))
        unexpected = [f for f in changed if not matches(f, self.expected)]
        reaches = [hit for rel in changed if (self.workspace / rel).is_file()
                   for hit in reaches_into_judge(rel, self.sources.get(rel), self.workspace / rel)]
        return GuardReport(tampered=tampered, harness=harness, tests=tests, reviewed={**harness_diffs, **test_diffs},
                           reaches=reaches, unexpected=unexpected, changed=changed)

    def _judge_inputs(self, snapshot: Snapshot, changed: list[str]) -> tuple[list[str], dict[str, str]]:
        """Undo changes to judge inputs the contract does not name; describe them, and diff the named ones."""
        reviewed = [rel for rel in changed if matches(rel, self.expected)]
        undone = [rel for rel in changed if rel not in reviewed]
        described = [describe_change(rel, snapshot.original(rel), self.workspace / rel) for rel in undone]
        diffs = {rel: _diff(rel, snapshot.original(rel), self.workspace / rel) for rel in reviewed}
        snapshot.restore(only=undone)
        return described, diffs


SOURCE_COPY_LIMIT = 64 << 20
"""Bytes of small workspace files kept to tell the lines a generator added from those already there."""


def _small_files(workspace: Path, files: dict[str, str], file_limit: int = 256 << 10) -> dict[str, bytes]:
    """The content of the workspace's small files, up to :data:`SOURCE_COPY_LIMIT` in all."""
    kept: dict[str, bytes] = {}
    budget = SOURCE_COPY_LIMIT
    for rel in files:
        path = workspace / rel
        try:
            size = path.lstat().st_size
            if path.is_symlink() or size > file_limit or size > budget:
                continue
            kept[rel] = path.read_bytes()
        except OSError:
            continue
        budget -= size
    return kept


def _diff(rel: str, before: bytes | None, after: Path, limit: int = 4000) -> str:
    """A unified diff of a harness file, bounded, for a reviewer."""
    old = (before or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    new = after.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) if after.is_file() else []
    text = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))
    return text if len(text) <= limit else text[:limit] + "\n[… diff cut]\n"
