"""Warm tool caches the judge owns: a checker's incremental cache, kept from one judged run for the next.

A type checker run cold pays for the whole standard library and every dependency on every
evaluation (mypy on the Python example: 5.4 s cold, 0.45 s warm). The judge keeps what such a
run wrote in its caches area and puts it in the next run's layer, so the next evaluation of a
changed tree checks only what changed, as a developer's terminal does.

What may never happen is a cache changing a verdict. So:

* **Only caches whose tool revalidates every input are kept** (:data:`KEPT`), and only from the
  checkers that run none of the project's code (lint and typecheck strategies): mypy's
  ``.mypy_cache`` (per module: path, size, mtime, else content hash; dependencies tracked) and
  TypeScript's ``*.tsbuildinfo`` (a hash of each file's text), which tsc writes when the project's
  tsconfig asks for ``incremental`` (its setting, for the TypeScript it has: sprintflow adds no
  flag). Not eslint's or ruff's (they skip an unchanged file whose cross-file inputs changed:
  type-aware or import rules would go stale; ruff takes 0.2 s cold anyway), nor test runners' or
  byte code (the code under test runs in the same process and could write them). Whatever else a
  layer wrote is thrown away with it.
* **Only the generator never writes one.** The workspace's own cache folders are not part of
  the judged tree (:mod:`.areas`); a kept cache comes from the judge's layer of one strategy and
  is only ever read by that strategy (the key names it, its command and its executor).
* **A tool's freshness check must be exact.** mypy trusts a module whose size and whole-second
  mtime match its cache. A judged tree's files are hard links to the store's objects, so a
  changed file is a new object with a new mtime; but two objects written in the same second
  with the same size would look alike. The tree a cache was written from is kept with it
  (each file's object and size), and a cache is used only when no file of the tree judged now
  is a different object with the same size and second: else the tool runs cold.

A cache that cannot be read, copied or kept costs a cold run, never a verdict.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .tree import WorkspaceStore, stat_picture

__all__ = ["KEPT", "MAX_KEPT_BYTES", "ToolCache", "tool_cache"]

logger = logging.getLogger("sprintflow.judge.caches")

KEPT = (".mypy_cache", "*.tsbuildinfo")
"""The caches kept (a folder or a file name anywhere in the layer): tools that revalidate every input."""
MAX_KEPT_BYTES = 2 * 2**30
"""A cache larger than this is not kept (the next run is cold): a cache must not fill the judge's disk."""
FILES, TREE = "files", "tree.json"

Objects = dict[str, tuple[int, int, int]]
"""Relative path -> (inode, mtime in ns, size) of each regular file of a judged tree."""


@dataclass(frozen=True)
class ToolCache:
    """One strategy's kept cache: where it lives, and the tree the judge is judging now."""

    folder: Path
    tree: Path

    def seed(self, layer: Path) -> bool:
        """Put the kept cache into ``layer`` (a layer's upper folder, before its run); whether it did.

        Nothing is put when nothing was kept, or when the tool could mistake a changed file of this
        tree for the one it cached (see the module's notes); a copy that fails midway is taken out
        again, so the run is cold, never half warm.
        """
        kept = self.folder / FILES
        if not kept.is_dir():
            return False
        try:
            before = _objects(json.loads((self.folder / TREE).read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, IndexError):
            return False
        alike = _alike_but_changed(before, tree_objects(self.tree))
        if alike:
            logger.info("tool cache not used: %d file(s) changed without changing size or second, e.g. %s",
                        len(alike), alike[0])
            return False
        copied: list[Path] = []
        try:
            for entry in sorted(kept.iterdir()):
                copied.append(layer / entry.name)
                _copy(entry, layer / entry.name)
        except OSError as exc:  # a concurrent evaluation replaced the cache while it was copied
            logger.info("tool cache not used: %s", exc)
            for path in copied:
                _remove(path)
            return False
        logger.info("tool cache %s: the run starts warm, from an earlier judged run", self.folder.name)
        return True

    def keep(self, layer: Path) -> None:
        """Keep the caches of :data:`KEPT` that a finished run wrote in ``layer`` (its upper folder,
        unmounted), moved out of it, with this tree's objects; what was kept before is replaced."""
        found = _kept_paths(layer)
        if not found or sum(_size(path) for path in found) > MAX_KEPT_BYTES:
            return
        fresh = self.folder.with_name(f"{self.folder.name}.new-{uuid.uuid4().hex[:8]}")
        try:
            for path in found:
                _move(path, fresh / FILES / path.relative_to(layer))
            objects = tree_objects(self.tree)
            (fresh / TREE).write_text(json.dumps({rel: list(v) for rel, v in objects.items()}), encoding="utf-8")
            _replace(self.folder, fresh)
        except OSError as exc:
            logger.warning("tool cache not kept: %s", exc)
            _remove(fresh)


def tool_cache(workspace: Path, tree: Path, identity: Mapping[str, object]) -> ToolCache:
    """The kept cache of the strategy ``identity`` names (its config, command, executor), in the judge's
    folder for ``workspace``, for a run on the judged tree ``tree``."""
    key = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:32]
    return ToolCache(WorkspaceStore(workspace).root / "tool-caches" / key, tree)


def tree_objects(tree: Path) -> Objects:
    """Each regular file of ``tree`` as the object it is (a judged tree's files are store objects)."""
    import stat

    return {rel: (ino, mtime, size) for rel, (mode, ino, size, mtime, _ctime) in stat_picture(tree).items()
            if stat.S_ISREG(mode)}


def _objects(data: object) -> Objects:
    if not isinstance(data, dict):
        raise ValueError("not an object")
    return {str(rel): (int(v[0]), int(v[1]), int(v[2])) for rel, v in data.items()}


def _alike_but_changed(before: Objects, now: Objects) -> list[str]:
    """Paths holding another object now whose size and whole-second mtime are those of the cached one.

    Example:
        >>> second = 1_700_000_000 * 10**9
        >>> _alike_but_changed({"a.py": (1, second, 10), "b.py": (2, second, 5)},
        ...                    {"a.py": (3, second + 500, 10), "b.py": (4, second + 10**9, 5)})
        ['a.py']
    """
    alike = []
    for rel, (ino, mtime, size) in now.items():
        old = before.get(rel)
        if old is None or (old[0], old[1]) == (ino, mtime):
            continue
        if old[2] == size and old[1] // 10**9 == mtime // 10**9:
            alike.append(rel)
    return sorted(alike)


def _kept_paths(layer: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(layer):
        for name in list(dirs):
            if any(fnmatch.fnmatch(name, pattern) for pattern in KEPT):
                found.append(Path(folder, name))
                dirs.remove(name)
        found += [Path(folder, name) for name in files if any(fnmatch.fnmatch(name, p) for p in KEPT)]
    return [path for path in found if not path.is_symlink()]


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(Path(folder, name).lstat().st_size for folder, _, names in os.walk(path) for name in names)


def _copy(source: Path, target: Path) -> None:
    """Copy a file or a folder with its owners and modes: a container's user must be able to write what
    it wrote last time (and create files in its folders)."""
    if not source.is_dir() or source.is_symlink():
        _copy_one(source, target)
        return
    for folder, _dirs, files in os.walk(source):
        into = target / Path(folder).relative_to(source)
        into.mkdir(parents=True, exist_ok=True)
        shutil.copystat(folder, into)
        _own_like(Path(folder), into)
        for name in files:
            _copy_one(Path(folder, name), into / name)


def _copy_one(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, target, follow_symlinks=False)
    _own_like(source, target)


def _move(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(source, target)  # the layer is thrown away: moved, with its owners and times
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        _copy(source, target)


def _own_like(source: Path, target: Path) -> None:
    if os.geteuid() == 0:
        info = source.lstat()
        os.lchown(target, info.st_uid, info.st_gid)


def _replace(folder: Path, fresh: Path) -> None:
    """``fresh`` becomes ``folder``; an evaluation copying the old one meanwhile falls back to cold."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    old = folder.with_name(f"{folder.name}.old-{uuid.uuid4().hex[:8]}")
    try:
        os.rename(folder, old)
    except FileNotFoundError:
        pass
    os.rename(fresh, folder)
    _remove(old)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except OSError:
            pass
