"""Files that never tear: atomic writes, locked one-line appends, file locks.

Every file sprintflow writes goes through :func:`atomic_write` (temp file in the
same folder, fsync, rename, fsync of the folder), so a crash leaves either the
old or the new file, never half. Every ndjson append is one ``write`` of one
whole line under an exclusive lock; :func:`read_ndjson` skips and reports a torn
last line instead of failing. :func:`file_lock` is the one advisory lock.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, TypeVar

from sprintflow.errors import DiskFull, InputError

from .confine import NotRegular, clear_way, open_regular
from .documents import loads_json
from .layout import STATE_DIR, STATE_GITIGNORE

__all__ = ["NdjsonLine", "append_ndjson", "atomic_write", "atomic_write_text", "file_lock", "fsync_dir",
           "prepare_parent", "read_ndjson", "remove_owned", "store_or_note"]

T = TypeVar("T")


def prepare_parent(path: Path) -> None:
    """Create ``path``'s folder. Inside a ``.sprintflow`` folder, whatever stands in the way (a symlink
    or a file planted by code that ran in the workspace) is removed first: ours are never links, and a
    write through one would land outside the workspace."""
    parts = path.parts
    if STATE_DIR not in parts:
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    workspace = Path(*parts[:parts.index(STATE_DIR)])
    clear_way(workspace, path)
    if path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    _ignore_state(workspace / STATE_DIR)


def _ignore_state(state: Path) -> None:
    """Give ``.sprintflow/`` its ``.gitignore`` when it has none: every write into the folder comes here
    first, so no command can create it without one. Written in place, once (``O_EXCL``): a
    ``.gitignore`` people edited is theirs."""
    try:
        fd = os.open(state / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    except OSError:
        return  # a read-only or odd folder: the write that needed the folder reports its own error
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(STATE_GITIGNORE)
    except OSError:  # a full disk: no half-written file; the write that needed the folder says so
        (state / ".gitignore").unlink(missing_ok=True)


def remove_owned(path: Path) -> None:
    """Remove a file or folder sprintflow owns, without following a planted symlink out of it."""
    prepare_parent(path)
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def atomic_write(path: Path | str, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(handle)`` on a temp file beside ``path``, fsync it, rename it to ``path``.

    Temp files start with a dot, so a folder listing never shows a half-written file.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "a.bin"
        >>> atomic_write(target, lambda handle: handle.write(b"x"))
        >>> target.read_bytes()
        b'x'
    """
    path = Path(path)
    prepare_parent(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        _raise_disk_full(exc, path)
        raise
    fsync_dir(path.parent)


_DISK_REFUSED = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def _raise_disk_full(exc: BaseException, path: Path) -> None:
    """A write the disk refused is the environment's failure: said in one line, exit 3, not a traceback."""
    if isinstance(exc, OSError) and not isinstance(exc, DiskFull) and exc.errno in _DISK_REFUSED:
        raise DiskFull(exc.errno, exc.strerror or os.strerror(exc.errno), str(path)) from None


def store_or_note(what: str, write: Callable[[], T], unstored: list[str]) -> T | None:
    """``write()``, or None when the disk refuses it (full, read-only, over quota), with ``what`` and
    the reason added to ``unstored``.

    For what is written after a verdict: the verdict must still be shown and its
    exit code returned, and the caller names what was lost. Our writes are atomic
    or taken back, so a refused one leaves nothing half-written.

    Example:
        >>> unstored = []
        >>> store_or_note("the history row", lambda: Path("/no/such/folder/row").write_text("x"), unstored)
        >>> unstored
        ['the history row: No such file or directory']
    """
    try:
        return write()
    except OSError as exc:
        unstored.append(f"{what}: {exc.strerror or exc}")
        return None


def atomic_write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "evals" / "eval-x-1.json"
        >>> atomic_write_text(target, "{}")
        >>> target.read_text()
        '{}'
    """
    data = text.encode("utf-8")
    atomic_write(path, lambda handle: handle.write(data))


def fsync_dir(folder: Path | str) -> None:
    """Make a rename or unlink in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def file_lock(path: Path | str, *, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the ``with`` block.

    With ``wait=False`` the value is False when another holder has it, and
    nothing is held: the caller decides what to do instead of waiting.

    Example:
        >>> import tempfile
        >>> lock = Path(tempfile.mkdtemp()) / ".lock"
        >>> with file_lock(lock) as held, file_lock(lock, wait=False) as second:
        ...     held, second
        (True, False)
    """
    path = Path(path)
    prepare_parent(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)  # closing releases the lock


def append_ndjson(path: Path | str, record: dict[str, Any]) -> None:
    """Append one JSON record as one line, in one ``write``, under an exclusive lock.

    The lock also covers the repair of a torn last line left by a crashed
    writer: a newline is written first so the new record starts on its own line.
    A write that fails (a full disk) is taken back: the file ends as it was.

    Example:
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "events.ndjson"
        >>> append_ndjson(log, {"a": 1}); append_ndjson(log, {"a": 2})
        >>> [line.record for line in read_ndjson(log)]
        [{'a': 1}, {'a': 2}]
    """
    path = Path(path)
    prepare_parent(path)
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # keep the torn line as it is; start ours on a fresh line
        try:
            if os.write(fd, line) != len(line):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            os.fsync(fd)
        except OSError as exc:
            os.ftruncate(fd, size)  # shrinking needs no space
            _raise_disk_full(exc, path)
            raise
    finally:
        os.close(fd)  # closing releases the lock


class NdjsonLine(NamedTuple):
    number: int
    record: dict[str, Any] | None
    error: str | None


def read_ndjson(path: Path | str) -> Iterator[NdjsonLine]:
    """Yield every line of an ndjson file, parsed; a bad line comes with its error.

    Raises:
        InputError: the path is a FIFO, a socket or a device, not a file (it names it).

    Streams the file, so a large history costs constant memory.

    Example:
        >>> import tempfile
        >>> log = Path(tempfile.mkdtemp()) / "torn.ndjson"
        >>> _ = log.write_text('{"a": 1}\\n{"a": ')
        >>> [(line.number, line.error is None) for line in read_ndjson(log)]
        [(1, True), (2, False)]
    """
    path = Path(path)
    try:
        handle = open_regular(path)
    except FileNotFoundError:
        return
    except NotRegular as exc:  # a FIFO, a socket, a device: no ledger at all (a torn line is one), never a wait
        raise InputError(str(exc.strerror)) from None
    except OSError as exc:  # a folder, unreadable
        yield NdjsonLine(0, None, f"{path}: cannot be read: {exc.strerror or exc}")
        return
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = loads_json(raw.decode("utf-8").rstrip("\r\n"))
            except UnicodeDecodeError as exc:
                yield NdjsonLine(number, None, f"{path}:{number}: not UTF-8: byte 0x{raw[exc.start]:02x} "
                                               f"at column {exc.start + 1}")
                continue
            except ValueError as exc:  # bad JSON, NaN, 5000-digit numbers, deep nesting
                torn = "torn line (a writer crashed mid-write): " if not raw.endswith(b"\n") else ""
                yield NdjsonLine(number, None, f"{path}:{number}: {torn}{exc}")
                continue
            if not isinstance(record, dict):
                yield NdjsonLine(number, None, f"{path}:{number}: not a JSON object")
                continue
            yield NdjsonLine(number, record, None)
