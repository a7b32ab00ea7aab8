"""Files that never tear: atomic writes and locked one-line appends.

Every document sprintflow writes goes through ``atomic_write_text`` (temp file,
fsync, rename), so a crash leaves either the old or the new file, never half.
Every ndjson append is one ``write`` of one whole line under an exclusive lock;
``read_ndjson`` skips and reports a torn last line instead of failing.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

__all__ = ["NdjsonLine", "append_ndjson", "atomic_write_text", "read_ndjson", "sprintflow_dir"]


def sprintflow_dir(workspace: Path | str) -> Path:
    """The workspace's ``.sprintflow/`` folder, where every artifact lives."""
    return Path(workspace) / ".sprintflow"


def atomic_write_text(path: Path | str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (temp file in the same folder, fsync, rename).

    Example:
        >>> atomic_write_text(".sprintflow/evals/eval-x-1.json", doc.to_json())
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def append_ndjson(path: Path | str, record: dict[str, Any]) -> None:
    """Append one JSON record as one line, in one ``write``, under an exclusive lock.

    The lock also covers the repair of a torn last line left by a crashed
    writer: a newline is written first so the new record starts on its own line.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line  # keep the torn line as it is; start ours on a fresh line
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


class NdjsonLine(NamedTuple):
    number: int
    record: dict[str, Any] | None
    error: str | None


def read_ndjson(path: Path | str) -> Iterator[NdjsonLine]:
    """Yield every line of an ndjson file, parsed; a bad line comes with its error, never raises.

    Streams the file, so a large history costs constant memory.
    """
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                torn = "torn line (a writer crashed mid-write)" if not raw.endswith(b"\n") else "invalid JSON"
                yield NdjsonLine(number, None, f"{path}:{number}: {torn}: {exc}")
                continue
            if not isinstance(record, dict):
                yield NdjsonLine(number, None, f"{path}:{number}: not a JSON object")
                continue
            yield NdjsonLine(number, record, None)
