"""git, through the process layer: always with a timeout, failures inside the error hierarchy."""

from __future__ import annotations

import os
from pathlib import Path

from sprintflow.errors import WorkspaceError

from .process import run_command

__all__ = ["GIT_TIMEOUT_S", "git", "head_sha"]

GIT_TIMEOUT_S = 600.0


def git(*args: str, cwd: Path | str | None = None, timeout: float = GIT_TIMEOUT_S) -> str:
    """Run ``git ARGS`` and return its stdout; a failure is a ``WorkspaceError`` with git's own words.

    git gets our environment (a clone may need the user's credentials helper or SSH agent).

    Example:
        >>> git("--version").startswith("git version")
        True
    """
    result = run_command(["git", *args], cwd=cwd or ".", timeout=timeout, env=dict(os.environ))
    if not result.ok:
        why = result.error or ("timed out" if result.timed_out else f"exit {result.exit_code}")
        raise WorkspaceError(f"git {' '.join(args)} failed ({why}): {result.stderr.strip()[-2000:]}")
    return result.stdout


def head_sha(workspace: Path | str) -> str | None:
    """The ``HEAD`` commit of ``workspace``, or None outside a git repository (or without git).

    Example:
        >>> import tempfile
        >>> head_sha(tempfile.mkdtemp()) is None
        True
    """
    try:
        return git("rev-parse", "--verify", "-q", "HEAD", cwd=workspace, timeout=10).strip() or None
    except WorkspaceError:
        return None
