"""The content hash of a workspace: the cache key of a strategy run, and the flakiness key."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["IGNORED_DIRS", "workspace_hash"]

IGNORED_DIRS = frozenset({
    ".git", ".sprintflow", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache",
    ".ruff_cache", ".venv", "venv", "dist", "build", "coverage", "test-results",
    "playwright-report", ".next", ".turbo", ".cache",
})
"""Tool outputs and caches: they change when strategies run, not when the code does.
Dependencies are represented by their lock files (package-lock.json, uv.lock …)."""


def workspace_hash(workspace: Path | str, extra_ignored: frozenset[str] = frozenset()) -> str:
    """SHA-256 over every file's relative path, mode and content, in a stable order.

    Example:
        >>> workspace_hash("examples/python-api")[:12]
        '3f9a…'
    """
    root = Path(workspace)
    ignored = IGNORED_DIRS | extra_ignored
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in ignored)
        for name in sorted(files):
            path = Path(folder, name)
            if path.is_symlink():
                digest.update(f"L {path.relative_to(root)} {os.readlink(path)}\n".encode())
                continue
            digest.update(f"F {path.relative_to(root)} {path.stat().st_mode & 0o111}\n".encode())
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()
