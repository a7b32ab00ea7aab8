"""The evaluation's view of the judged tree: every strategy sees the same tree, and what it writes stays its own.

Each strategy (and each custom or manual criterion, and the tester's test run) runs in a layer
of its own over the judged tree the judge built (:mod:`sprintflow.judge.tree`): an overlay mount
whose lower layer is that tree, read-only, and whose upper layer collects whatever the strategy
writes. So no strategy can change what another strategy sees, and nothing reaches the workspace.
A strategy that needs the build's output (api-check, playwright) stacks the build's upper layer
under its own.

After a strategy, its upper layer says exactly what it wrote: tool outputs and caches (``dist/``,
``.pytest_cache/`` … and its own report) are expected; any other file it created, changed or
deleted is a source it modified, and fails it.

Overlay mounts need root (or a user namespace, which other processes cannot see into). Without
them each layer is a copy of the tree, and what the strategy changed in it is found by comparing
the copy with the tree afterwards: the same answers, at the cost of a copy per strategy.
"""

from __future__ import annotations

import filecmp
import fnmatch
import functools
import os
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sprintflow.io.process import run_command
from sprintflow.judge.areas import excluded_area
from sprintflow.judge.tree import owned_scratch, reclaim_scratch, unmount_below

__all__ = ["TOOL_OUTPUTS", "EvaluationView", "open_view", "overlay_unavailable"]

TOOL_OUTPUTS = ("*.tsbuildinfo", ".eslintcache", "*.pyc", ".coverage", ".coverage.*", "junit*.xml",
                "npm-debug.log*", ".DS_Store", "Cargo.lock")
"""File names tools write as a side effect; with the areas that are never judged, never a source change.
``Cargo.lock``: every cargo command writes one where a crate has none (libraries often commit none),
and brings it up to date with Cargo.toml; ``--locked`` is how a project refuses that."""
DELETED = "deleted"
"""Beside a copied layer: the tree's files its strategy deleted."""


@functools.cache
def overlay_unavailable() -> str | None:
    """Why overlay mounts cannot be used here, or None when they can (probed once)."""
    if os.geteuid() != 0:
        return "overlay mounts need root"
    # In a scratch folder naming its owner: a process killed while probing leaves a mount that the
    # next evaluation reclaims.
    probe = owned_scratch("probe-")
    try:
        for name in ("lower", "upper", "work", "merged"):
            (probe / name).mkdir()
        failure = _mount(probe / "merged", [probe / "lower"], probe / "upper", probe / "work")
        if failure is not None:
            return failure
        _unmount(probe / "merged")
        return None
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def _mount(merged: Path, lowers: list[Path], upper: Path, work: Path) -> str | None:
    """Mount a layer. ``volatile``: a layer is thrown away after its strategy, so its unmount need not
    sync the whole file system it lives on (measured: 0.2 s a layer after a generator wrote 200 MB).
    Kernels before 5.10 refuse the option: then it is mounted without."""
    global _VOLATILE
    options = f"lowerdir={':'.join(str(p) for p in lowers)},upperdir={upper},workdir={work}"
    for extra in (",volatile", "") if _VOLATILE else ("",):
        result = run_command(["mount", "-t", "overlay", "sprintflow-view", "-o", options + extra, str(merged)],
                             cwd="/", timeout=30, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
        if result.ok:
            return None
        _VOLATILE = False
    return f"mount -t overlay failed: {(result.stderr or result.error or '').strip()}"


_VOLATILE = True
"""Whether this kernel takes overlayfs's ``volatile`` option (until a mount says it does not)."""


def _unmount(merged: Path) -> None:
    """Unmount now (a lazy unmount would keep the upper layer busy for the layers stacked on it)."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    if not run_command(["umount", str(merged)], cwd="/", timeout=30, env=env).ok:
        run_command(["umount", "-l", str(merged)], cwd="/", timeout=30, env=env)  # still busy: detach it


@dataclass(frozen=True)
class EvaluationView:
    """The layers of one evaluation over a judged tree; a plain value, so it crosses task boundaries."""

    tree: Path
    """The judged tree every layer starts from."""
    root: Path
    """The scratch folder holding the layers."""
    overlays: bool = True
    """False: each layer is a copy of the tree (see :func:`overlay_unavailable`)."""

    @contextmanager
    def layer(self, name: str, below: Iterable[str] = (),
              seed: Callable[[Path], object] | None = None) -> Iterator[Path]:
        """The layer ``name`` (over the upper layers of ``below``, over the tree), ready; yields its root.

        A layer mounted again (a check run again whole after its failing tests, a retried task) starts
        from nothing: what the last run wrote is not this run's, and overlayfs refuses a work folder
        that a ``volatile`` mount used. ``seed`` is given the folder the layer's writes go to, before
        anything runs in it (a kept tool cache: :mod:`sprintflow.judge.caches`).
        """
        base = self.root / name
        if base.exists():
            shutil.rmtree(base)
        upper, work, merged = base / "upper", base / "work", base / "merged"
        for folder in (upper, work, merged):
            folder.mkdir(parents=True, exist_ok=True)
        stacked = [folder for folder in (self.root / other / "upper" for other in below) if folder.is_dir()]
        if not self.overlays:
            yield from self._copied_layer(merged, upper, stacked, seed)
            return
        if seed is not None:
            seed(upper)
        failure = _mount(merged, [*stacked, self.tree], upper, work)
        if failure is not None:
            from sprintflow.errors import InfrastructureError

            raise InfrastructureError(f"cannot mount the evaluation view of {name}: {failure}")
        try:
            yield merged
        finally:
            _unmount(merged)

    def _copied_layer(self, merged: Path, upper: Path, stacked: list[Path],
                      seed: Callable[[Path], object] | None) -> Iterator[Path]:
        shutil.rmtree(merged)
        shutil.copytree(self.tree, merged, symlinks=True)
        for folder in reversed(stacked):
            shutil.copytree(folder, merged, symlinks=True, dirs_exist_ok=True)
        if seed is not None:
            seed(merged)
        try:
            yield merged
        finally:
            deleted = _keep_differences(merged, self.tree, stacked, upper)
            (upper.parent / DELETED).write_text("".join(f"{rel}\n" for rel in deleted))

    def changed_sources(self, name: str, expected: Iterable[str] = ()) -> list[str]:
        """Files the layer ``name`` created, changed or deleted that are not tool outputs, sorted.

        ``expected`` adds the strategy's own outputs (its report, the build's output folder).
        """
        upper = self.root / name / "upper"
        allowed = list(expected)
        changed = []
        for path in _files(upper):
            rel = path.relative_to(upper).as_posix()
            if _is_output(rel, allowed) or _same_as_below(path, self.tree / rel):
                continue
            changed.append(rel)
        deleted = self.root / name / DELETED  # a copied layer's deletions (an overlay keeps whiteouts)
        if deleted.is_file():
            changed += [rel for rel in deleted.read_text().splitlines() if not _is_output(rel, allowed)]
        return sorted(changed)

    def outputs(self, name: str) -> Path:
        """The folder holding what the layer ``name`` wrote."""
        return self.root / name / "upper"

    def seed(self, name: str, outputs: Path) -> None:
        """Put earlier outputs (a cached build's) into the layer ``name``, for the layers stacked on it."""
        if outputs.is_dir():
            shutil.copytree(outputs, self.root / name / "upper", symlinks=True, dirs_exist_ok=True)

    def close(self) -> None:
        """Unmount whatever is left and delete the layers."""
        unmount_below(self.root)
        shutil.rmtree(self.root, ignore_errors=True)


def open_view(tree: Path) -> EvaluationView:
    """The view of one evaluation over the judged tree ``tree``: overlay layers, or copies of it.

    The scratch folder names its owner, so the layers a killed evaluation left mounted are
    unmounted and deleted by the next one.
    """
    _reclaim_once()
    return EvaluationView(tree, owned_scratch("view-"), overlays=overlay_unavailable() is None)


@functools.cache
def _reclaim_once() -> None:
    reclaim_scratch()


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            yield Path(folder, name)


def _keep_differences(copy: Path, tree: Path, stacked: list[Path], upper: Path) -> list[str]:
    """What a copied layer's strategy wrote, kept as an overlay's upper layer would keep it; the files
    of the tree it deleted."""
    for path in _files(copy):
        rel = path.relative_to(copy)
        if any((folder / rel).exists() for folder in stacked) or _same_file(path, tree / rel):
            continue
        (upper / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, upper / rel, follow_symlinks=False)
    return sorted(path.relative_to(tree).as_posix() for path in _files(tree)
                  if not os.path.lexists(copy / path.relative_to(tree)))


def _same_file(path: Path, original: Path) -> bool:
    try:
        if path.is_symlink() or original.is_symlink():
            return path.is_symlink() and original.is_symlink() and os.readlink(path) == os.readlink(original)
        return stat.S_ISREG(path.lstat().st_mode) and filecmp.cmp(path, original, shallow=False)
    except OSError:
        return False


def _is_output(rel: str, allowed: list[str]) -> bool:
    parts = rel.split("/")
    if any(excluded_area("/".join(parts[:i + 1]), part, True) for i, part in enumerate(parts[:-1])):
        return True
    if any(fnmatch.fnmatch(parts[-1], pattern) for pattern in TOOL_OUTPUTS):
        return True
    return any(rel == a.rstrip("/") or rel.startswith(a.rstrip("/") + "/") for a in allowed)


def _same_as_below(upper_file: Path, lower_file: Path) -> bool:
    """A copy-up that left the content as it was (a tool that rewrote a file unchanged) is no change.

    Only regular files are read (a FIFO a strategy left would block), without following links.
    """
    info = upper_file.lstat()
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
        return False  # an overlay whiteout: the file was deleted
    try:
        lower = lower_file.lstat()
    except OSError:
        return False
    if not (stat.S_ISREG(info.st_mode) and stat.S_ISREG(lower.st_mode)) or info.st_size != lower.st_size:
        return False
    return _read_regular(upper_file) == _read_regular(lower_file)


def _read_regular(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if stat.S_ISREG(os.fstat(handle.fileno()).st_mode) else None
