"""Workspaces that come from git: a clone per repository in a checkout cache, updated per run."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .git import git

__all__ = ["CHECKOUTS_ENV", "checkouts_root", "update_checkout"]

CHECKOUTS_ENV = "SPRINTFLOW_CHECKOUTS"
"""Where git workspaces are cloned (default ``~/.cache/sprintflow/checkouts``)."""


def checkouts_root() -> Path:
    configured = os.environ.get(CHECKOUTS_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "sprintflow" / "checkouts"


def update_checkout(url: str, branch: str) -> Path:
    """Clone ``url`` at ``branch`` into the checkout cache, or update the existing clone to it.

    The clone is reset to the branch's latest commit and cleaned, except for
    ``.sprintflow/`` (history and results accumulate across scheduled runs).
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    target = checkouts_root() / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:8]}"
    if not (target / ".git").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "--branch", branch, url, str(target))
    else:
        git("fetch", "origin", branch, cwd=target)
        git("checkout", "-f", "-B", branch, "FETCH_HEAD", cwd=target)
        git("clean", "-fd", "-e", ".sprintflow", cwd=target)
    return target
