"""Content hashes of a workspace: the cache key of a strategy run, the flakiness key,
and the before/after picture the sprint guardrails compare."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["IGNORED_DIRS", "file_digest", "file_hashes", "workspace_hash"]

IGNORED_DIRS = frozenset({
    ".git", ".sprintflow", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
    ".ruff_cache", ".venv", "venv", "dist", "build", "coverage", "test-results",
    "playwright-report", ".next", ".turbo", ".cache",
})
"""Tool outputs and caches: they change when strategies run, not when the code does.
Dependencies are represented by their lock files (package-lock.json, uv.lock …)."""


def _files(root: Path, ignored: frozenset[str]) -> Iterator[Path]:
    """Every file under ``root``; a symlink to a folder counts as a file (its target), never entered."""
    for folder, dirs, files in os.walk(root):
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = sorted(d for d in dirs if d not in ignored and d not in links)
        for name in sorted(files + [d for d in links if d not in ignored]):
            yield Path(folder, name)


def file_digest(path: Path) -> str:
    """Digest of one file's content and executable bit (a symlink: its target; a FIFO, socket or device:
    its kind, since opening one could block forever)."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}"
    digest = hashlib.sha256(b"x" if info.st_mode & 0o111 else b"-")
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(root: Path | str, ignored: frozenset[str] = IGNORED_DIRS) -> dict[str, str]:
    """Relative path -> digest of content and executable bit, for every file under ``root``.

    Example:
        >>> sorted(file_hashes("examples/python-api"))[:2]
        ['broken.expected.json', 'broken.patch']
    """
    root = Path(root)
    return {str(path.relative_to(root)): file_digest(path) for path in _files(root, ignored)}


def workspace_hash(workspace: Path | str, extra_ignored: frozenset[str] = frozenset()) -> str:
    """One SHA-256 over every file's relative path and digest, in a stable order.

    Example:
        >>> len(workspace_hash("examples/python-api"))
        64
    """
    combined = hashlib.sha256()
    for name, digest in file_hashes(workspace, IGNORED_DIRS | extra_ignored).items():
        combined.update(f"{name}\0{digest}\n".encode())
    return combined.hexdigest()
