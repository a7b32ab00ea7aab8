"""Paths stay inside the workspace: the one place that decides it.

Every path that comes from a document, a config, a tool's output or the sandbox
is relative to a root (the workspace, or the evaluation's view of it). Code in
the sandbox can plant symlinks and FIFOs anywhere it may write, so the host
never follows a path on its word:

- :func:`relative_path_problem` refuses absolute paths and ``..`` when a config is read;
- :func:`confined` resolves a path and refuses one that leads out of its root;
- :func:`read_confined` reads a regular file only, without following a final
  symlink, and at most a given number of bytes;
- :func:`open_regular` opens a file someone named for reading only when it is a
  regular file (a FIFO or a device could block forever or never end);
- :func:`clear_way` removes what stands in the way of a write we own (a symlink
  or a file where our folder should be), so a write never lands outside.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from sprintflow.errors import OutsideWorkspace

__all__ = ["NotRegular", "clear_way", "confined", "open_regular", "read_confined", "relative_path_problem"]


class NotRegular(OSError):
    """What was to be read is a FIFO, a socket, a device or a folder: it is never opened for reading."""


def open_regular(path: Path | str, *, follow_links: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary, when it is a regular file; never blocks on opening.

    Raises:
        NotRegular: it is something else (the message says what).
        OSError: it cannot be opened (FileNotFoundError when it does not exist).

    Example:
        >>> import os, tempfile
        >>> fifo = Path(tempfile.mkdtemp()) / "bugs.ndjson"; os.mkfifo(fifo)
        >>> open_regular(fifo)
        Traceback (most recent call last):
        ...
        sprintflow.io.confine.NotRegular: .../bugs.ndjson: a FIFO, not a regular file
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device",
                stat.S_IFDIR: "a folder"}.get(stat.S_IFMT(info.st_mode), "a special file")
        raise NotRegular(errno.EINVAL, f"{path}: {kind}, not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def relative_path_problem(value: str) -> str | None:
    """Why ``value`` (from a config or a document) cannot name a file inside the workspace, or None.

    Example:
        >>> relative_path_problem("reports/vitest.json") is None
        True
        >>> relative_path_problem("../../etc/hostname")
        "leaves the workspace ('..')"
    """
    if "\0" in value:
        return "contains a NUL byte"
    path = PurePosixPath(value)
    if path.is_absolute() or value.startswith("~"):
        return "must be relative to the workspace"
    if ".." in path.parts:
        return "leaves the workspace ('..')"
    return None


def confined(root: Path, relative: str | Path) -> Path:
    """``root / relative``, once its real location (every symlink resolved) is known to be inside ``root``.

    Raises:
        OutsideWorkspace: the path is absolute, climbs out with ``..``, or a symlink on it leads out.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "out").symlink_to("/etc")
        >>> confined(root, "out/hostname")
        Traceback (most recent call last):
        ...
        sprintflow.errors.OutsideWorkspace: out/hostname leads outside the workspace (to /etc/hostname)
    """
    problem = relative_path_problem(str(relative))
    if problem:
        raise OutsideWorkspace(f"{relative}: {problem}")
    path = root / relative
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        raise OutsideWorkspace(f"{relative} leads outside the workspace (to {real})")
    return path


def read_confined(root: Path, relative: str | Path, limit: int) -> bytes:
    """The bytes of a regular file inside ``root``: never through a symlink leading out, never a FIFO or
    a device (which could block or never end), at most ``limit`` bytes.

    Raises:
        OutsideWorkspace: as :func:`confined`, or the path is not a regular file, or it is longer than ``limit``.
        FileNotFoundError: there is no such file.
    """
    path = confined(root, relative)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink inside the root: read where it leads, once confined
            return read_confined(root, path.resolve().relative_to(root.resolve()), limit)
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OutsideWorkspace(f"{relative} is not a regular file")
        if info.st_size > limit:
            raise OutsideWorkspace(f"{relative} is {info.st_size:,} bytes, more than the {limit:,} read")
        return handle.read(limit + 1)[:limit]


def clear_way(root: Path, path: Path) -> list[str]:
    """Remove every symlink or non-folder standing where ``path``'s folders below ``root`` should be.

    For writes into places we own (``.sprintflow/``, files the guard puts back): what stands
    there was planted, and following it would write outside. Returns what was removed.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "evals").symlink_to("/tmp")
        >>> clear_way(root, root / "evals" / "eval-1.json")
        ['evals']
        >>> (root / "evals").exists()
        False
    """
    removed = []
    current = root
    for part in path.relative_to(root).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
            removed.append(str(current.relative_to(root)))
    return removed
