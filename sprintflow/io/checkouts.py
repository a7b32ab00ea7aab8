"""Workspaces that come from git: a mirror per repository in a checkout cache, a fresh tree per run.

The remote is fetched into a bare mirror that only sprintflow writes (with the user's credentials,
:func:`~sprintflow.io.git.git_remote`). Each run then gets its workspace cloned anew from that
mirror, with only ``.sprintflow/`` (history and results accumulate across scheduled runs) carried
over: nothing an agent left in the last run's tree, its ``.git/`` included, survives into the next.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from pathlib import Path

from sprintflow.settings import Settings, get_settings

from .git import git, git_remote

__all__ = ["CHECKOUTS_ENV", "checkout_folder", "checkouts_root", "update_checkout"]

CHECKOUTS_ENV = Settings.variable("checkouts")
"""Where git workspaces are cloned (default ``~/.cache/sprintflow/checkouts``)."""


def checkouts_root() -> Path:
    return get_settings().checkouts or Path.home() / ".cache" / "sprintflow" / "checkouts"


def checkout_folder(url: str) -> Path:
    """Where ``url``'s workspace is checked out (every branch of it: one at a time).

    Example:
        >>> checkout_folder("https://git.example.com/team/app.git").name
        'app-2fa03f02'
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    return checkouts_root() / f"{name}-{hashlib.sha256(url.encode()).hexdigest()[:8]}"


def update_checkout(url: str, branch: str) -> Path:
    """The workspace of ``url`` at ``branch``'s latest commit, cloned anew from the mirror (fetched first)."""
    target = checkout_folder(url)
    mirror = target.with_name(f"{target.name}.mirror.git")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not (mirror / "HEAD").is_file():
        git_remote("clone", "--mirror", "--quiet", url, str(mirror))
    else:
        git_remote("fetch", "--quiet", "--prune", "origin", cwd=mirror)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    git("clone", "--quiet", "--no-hardlinks", "--branch", branch, str(mirror), "tree", cwd=fresh, writes_tree=True,
        reads=[str(mirror)], keep_state=True)
    state = target / ".sprintflow"
    if state.is_dir() and not state.is_symlink():
        state.rename(fresh / "tree" / ".sprintflow")
    if target.exists() or target.is_symlink():
        shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
    (fresh / "tree").rename(target)
    fresh.rmdir()
    return target
