"""The evaluation's view of the workspace: every strategy sees the same tree, and what it writes stays its own.

Each strategy (and each custom or manual criterion) runs in a layer of its own:
an overlay mount whose lower layer is the workspace, read-only, and whose upper
layer collects whatever the strategy writes. So no strategy can change what
another strategy, the guard or the next iteration sees, and the workspace is
byte-identical after an evaluation. A strategy that needs the build's output
(api-check, playwright) stacks the build's upper layer under its own.

After a strategy, its upper layer says exactly what it wrote: tool outputs and
caches (``dist/``, ``.pytest_cache/`` … and its own report) are expected; any
other file it created, changed or deleted is a source it modified, and fails it.

Overlay mounts need root (or a user namespace, which other processes cannot
see into). Without them, strategies run in the workspace itself, which is copied
into memory first and put back afterwards, so the workspace is still unchanged
after the evaluation and changed sources are still named, but strategies that
run at the same time share what they write.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sprintflow.io.hashing import IGNORED_DIRS
from sprintflow.io.owner import owner_gone, owner_label
from sprintflow.io.process import run_command

__all__ = ["TOOL_OUTPUTS", "EvaluationView", "open_view", "overlay_unavailable", "reclaim_views"]

TOOL_OUTPUTS = ("*.tsbuildinfo", ".eslintcache", "*.pyc", ".coverage", ".coverage.*", "junit*.xml",
                "npm-debug.log*", ".DS_Store")
"""File names tools write as a side effect; with ``IGNORED_DIRS`` folders, never a source change."""


VIEW_PREFIX = "sprintflow-view-"
OWNER_FILE = "owner"


@functools.cache
def overlay_unavailable() -> str | None:
    """Why overlay mounts cannot be used here, or None when they can (probed once)."""
    if os.geteuid() != 0:
        return "overlay mounts need root"
    # Shaped like a view, with its owner: a process killed while probing leaves a mount that the
    # next evaluation reclaims (reclaim_views).
    probe = _owned_view_folder()
    layer = probe / "probe"
    try:
        for name in ("lower", "upper", "work", "merged"):
            (layer / name).mkdir(parents=True)
        mounted = _mount(layer / "merged", [layer / "lower"], layer / "upper", layer / "work")
        if mounted is not None:
            return mounted
        _unmount(layer / "merged")
        return None
    finally:
        shutil.rmtree(probe, ignore_errors=True)


def _mount(merged: Path, lowers: list[Path], upper: Path, work: Path) -> str | None:
    options = f"lowerdir={':'.join(str(p) for p in lowers)},upperdir={upper},workdir={work}"
    result = run_command(["mount", "-t", "overlay", "sprintflow-view", "-o", options, str(merged)], cwd="/",
                         timeout=30, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return None if result.ok else f"mount -t overlay failed: {(result.stderr or result.error or '').strip()}"


def _unmount(merged: Path) -> None:
    """Unmount now (a lazy unmount would keep the upper layer busy for the layers stacked on it)."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    if not run_command(["umount", str(merged)], cwd="/", timeout=30, env=env).ok:
        run_command(["umount", "-l", str(merged)], cwd="/", timeout=30, env=env)  # still busy: detach it


@dataclass(frozen=True)
class EvaluationView:
    """The layers of one evaluation; a plain value, so it crosses task boundaries."""

    workspace: Path
    root: Path | None
    """The folder holding the layers; None when overlays are unavailable (see :func:`overlay_unavailable`)."""

    @contextmanager
    def layer(self, name: str, below: Iterable[str] = ()) -> Iterator[Path]:
        """Mount the layer ``name`` (over the upper layers of ``below``, over the workspace); yield its root."""
        if self.root is None:
            yield self.workspace
            return
        base = self.root / name
        upper, work, merged = base / "upper", base / "work", base / "merged"
        for folder in (upper, work, merged):
            folder.mkdir(parents=True, exist_ok=True)
        stacked = [self.root / other / "upper" for other in below]
        lowers = [folder for folder in stacked if folder.is_dir()] + [self.workspace]
        failure = _mount(merged, lowers, upper, work)
        if failure is not None:
            from sprintflow.errors import InfrastructureError

            raise InfrastructureError(f"cannot mount the evaluation view of {name}: {failure}")
        try:
            yield merged
        finally:
            _unmount(merged)

    def changed_sources(self, name: str, expected: Iterable[str] = ()) -> list[str]:
        """Files the layer ``name`` created, changed or deleted that are not tool outputs, sorted.

        ``expected`` adds the strategy's own outputs (its report, the build's output folder).
        """
        if self.root is None:
            return []
        upper = self.root / name / "upper"
        allowed = list(expected)
        changed = []
        for path in _files(upper):
            rel = path.relative_to(upper).as_posix()
            if _is_output(rel, allowed) or _same_as_below(path, self.workspace / rel):
                continue
            changed.append(rel)
        return sorted(changed)

    def outputs(self, name: str) -> Path | None:
        """The folder holding what the layer ``name`` wrote (None without layers)."""
        return None if self.root is None else self.root / name / "upper"

    def seed(self, name: str, outputs: Path) -> None:
        """Put earlier outputs (a cached build's) into the layer ``name``, for the layers stacked on it."""
        if self.root is None or not outputs.is_dir():
            return
        shutil.copytree(outputs, self.root / name / "upper", symlinks=True, dirs_exist_ok=True)

    def close(self) -> None:
        """Unmount whatever is left and delete the layers."""
        if self.root is not None:
            _remove_layers(self.root)


def _remove_layers(root: Path) -> None:
    for merged in root.glob("*/merged"):
        if os.path.ismount(merged):
            _unmount(merged)
    shutil.rmtree(root, ignore_errors=True)


def open_view(workspace: Path) -> EvaluationView:
    """The view of one evaluation: overlay layers under a fresh temp folder, or the workspace itself.

    The folder names its owner, so the layers a killed evaluation left mounted are
    unmounted and deleted by the next one (:func:`reclaim_views`).
    """
    if overlay_unavailable() is not None:
        return EvaluationView(workspace, None)
    _reclaim_once()
    return EvaluationView(workspace, _owned_view_folder())


def _owned_view_folder() -> Path:
    """A fresh folder for layers, naming this process as its owner (see :func:`reclaim_views`)."""
    root = Path(tempfile.mkdtemp(prefix=VIEW_PREFIX))
    (root / OWNER_FILE).write_text(owner_label())
    return root


def reclaim_views(folder: Path | None = None) -> list[Path]:
    """Unmount and delete the views whose owner died (SIGKILL leaves them mounted); the ones removed.

    Views of live evaluations, of other machines, or without an owner file are left alone.
    """
    removed = []
    for root in Path(folder or tempfile.gettempdir()).glob(f"{VIEW_PREFIX}*"):
        try:
            owner = (root / OWNER_FILE).read_text()
        except OSError:
            continue
        if owner_gone(owner):
            _remove_layers(root)
            removed.append(root)
    return removed


@functools.cache
def _reclaim_once() -> None:
    reclaim_views()


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            yield Path(folder, name)


def _is_output(rel: str, allowed: list[str]) -> bool:
    parts = rel.split("/")
    if any(part in IGNORED_DIRS for part in parts[:-1]):
        return True
    if any(fnmatch.fnmatch(parts[-1], pattern) for pattern in TOOL_OUTPUTS):
        return True
    return any(rel == a.rstrip("/") or rel.startswith(a.rstrip("/") + "/") for a in allowed)


def _same_as_below(upper_file: Path, lower_file: Path) -> bool:
    """A copy-up that left the content as it was (a tool that rewrote a file unchanged) is no change."""
    info = upper_file.lstat()
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
        return False  # an overlay whiteout: the file was deleted
    try:
        return lower_file.is_file() and upper_file.read_bytes() == lower_file.read_bytes()
    except OSError:
        return False
