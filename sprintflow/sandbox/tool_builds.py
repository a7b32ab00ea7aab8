"""The tools the judge builds once for itself (the mutation tools of Go and Rust): never the workspace's.

A tool is built into a fresh folder beside its place in the sandbox cache and renamed into place
when it is whole, under a lock, so two processes never build it twice and none sees half of it. A
build that failed is remembered (its reason in ``<folder>.failed``) and not tried again for
:data:`RETRY_AFTER_S`: each check that needs the tool would wait for it otherwise.

Example:
    >>> import tempfile
    >>> place = Path(tempfile.mkdtemp()) / "tool-1.0"
    >>> def install(fresh):
    ...     _ = (fresh / "tool").write_text("#!/bin/sh\\n"); (fresh / "tool").chmod(0o755)
    >>> said = []
    >>> built_once(place, "tool", install, "tool 1.0", said.append).name, said[0]
    ('tool', 'building tool 1.0 (once)')
    >>> built_once(place, "tool", install, "tool 1.0", said.append) == place / "tool", len(said)  # built: no word
    (True, 2)
    >>> def broken(fresh):
    ...     return "no compiler"
    >>> built_once(place.with_name("other"), "tool", broken, "other", said.append)
    Traceback (most recent call last):
    ...
    sprintflow.sandbox.tool_builds.ToolUnavailable: other was not built: no compiler
    >>> built_once(place.with_name("other"), "tool", install, "other", said.append)  # not again within the hour
    Traceback (most recent call last):
    ...
    sprintflow.sandbox.tool_builds.ToolUnavailable: other was not built: its build failed less than an hour ago \
(no compiler)
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sprintflow.io.files import file_lock

__all__ = ["RETRY_AFTER_S", "ToolUnavailable", "built_binary", "built_once"]

RETRY_AFTER_S = 3600


class ToolUnavailable(Exception):
    """The tool could not be built here: the message says why."""


def built_binary(place: Path, binary: str) -> Path | None:
    """The tool's binary (``binary``: its path in ``place``), or None when it has not been built here."""
    found = place / binary
    return found if found.is_file() and os.access(found, os.X_OK) else None


def built_once(place: Path, binary: str, install: Callable[[Path], str | None], what: str,
               progress: Callable[[str], object]) -> Path:
    """The tool's binary, ``install(fresh)`` having built it into a fresh folder the first time (it returns
    why it failed, or None); :class:`ToolUnavailable` when it was not built, now or within the last hour."""
    found = built_binary(place, binary)
    if found is not None:
        return found
    place.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(place.parent / f"{place.name}.lock"):
        found = built_binary(place, binary)
        if found is not None:  # another process built it meanwhile
            return found
        failed = place.with_name(f"{place.name}.failed")
        if failed.is_file() and time.time() - failed.stat().st_mtime < RETRY_AFTER_S:
            reason = failed.read_text(encoding="utf-8", errors="replace").strip()[-400:]
            raise ToolUnavailable(f"{what} was not built: its build failed less than an hour ago ({reason})")
        fresh = place.with_name(f"{place.name}.new-{uuid.uuid4().hex[:8]}")
        fresh.mkdir()
        progress(f"building {what} (once)")
        started = time.monotonic()
        why = install(fresh)
        if why is None and built_binary(fresh, binary) is None:
            why = f"the build left no {binary}"
        if why is not None:
            shutil.rmtree(fresh, ignore_errors=True)
            failed.write_text(why, encoding="utf-8")
            raise ToolUnavailable(f"{what} was not built: {why}")
        shutil.rmtree(place, ignore_errors=True)
        fresh.rename(place)
        failed.unlink(missing_ok=True)
        progress(f"built {what} in {time.monotonic() - started:.0f} s: {place}")
    return place / binary
