"""git, through the process layer: always with a timeout, failures inside the error hierarchy.

A workspace's ``.git/`` is the agent's to write: its config can name programs (hooks, an
fsmonitor, filters, a pager, a signing program) and its files can say where the repository is.
So :func:`git` never trusts it: git runs with a configuration sprintflow controls (no system or
global config, no hooks, no fsmonitor, no signing, no automatic maintenance, no transport but
local files), a minimal environment (no credentials, an empty HOME), contained
(:mod:`~sprintflow.io.containment`: the workspace is all it may write, with ``.sprintflow/``
and anything else the caller names hidden, and no network). Even a program git was tricked into
starting could then read no held-out eval, see no API key and change nothing but the repository.

:func:`git_remote` talks to a remote the user named (a clone needs their credentials helper or
SSH agent), and only ever in a repository sprintflow made and no agent has written.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from sprintflow.errors import WorkspaceError

from .confine import read_confined, relative_path_problem
from .containment import Bind, Containment
from .process import CommandResult, run_command

__all__ = ["GIT_TIMEOUT_S", "SAFE_CONFIG", "git", "git_remote", "head_sha"]

GIT_TIMEOUT_S = 600.0

SAFE_CONFIG = ("core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false",
               "commit.gpgSign=false", "tag.gpgSign=false", "gc.auto=0", "maintenance.auto=false",
               "core.pager=cat", "protocol.allow=never", "protocol.file.allow=always", "credential.helper=",
               "core.askPass=", "diff.external=", "safe.directory=*")
"""Given on the command line, so they win over whatever the repository's config (or a file it
includes) says."""


def _failed(args: tuple[str, ...], result: CommandResult) -> WorkspaceError:
    why = result.error or ("timed out" if result.timed_out else f"exit {result.exit_code}")
    return WorkspaceError(f"git {' '.join(args)} failed ({why}): {result.stderr.strip()[-2000:]}")


def git(*args: str, cwd: Path | str, timeout: float = GIT_TIMEOUT_S, hide: Iterable[str] = (),
        stdin: bytes | None = None, env: dict[str, str] | None = None, writes_tree: bool = False,
        reads: Iterable[str] = (), keep_state: bool = False) -> str:
    """Run ``git ARGS`` in the repository at ``cwd`` that nobody trusts; its stdout.

    ``hide`` names paths (relative to ``cwd``) git and anything it starts must not see, beside
    ``.sprintflow/``; ``env`` adds variables (``GIT_INDEX_FILE`` …) to the minimal environment.
    Only ``.git/`` is writable, unless ``writes_tree`` (a clone into ``cwd``); ``reads`` names more
    folders it may read (a clone's source); ``keep_state`` leaves sprintflow's caches visible (a clone
    from a mirror kept there, which no agent writes).

    Raises:
        WorkspaceError: git failed, with its own words.

    Example:
        >>> git("--version", cwd=".").startswith("git version")
        True
    """
    root = Path(cwd).resolve()
    with tempfile.TemporaryDirectory(prefix="sprintflow-git-home-") as home:
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LC_ALL": "C",
                       "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
                       "GIT_OPTIONAL_LOCKS": "0", **(env or {})}
        hidden = tuple(str(root / rel) for rel in (".sprintflow", *hide))
        # The repository is all it may write: the work tree is read-only to git and what it starts.
        binds = [Bind(str(root), str(root), writable=writes_tree), *(Bind(str(r), str(r)) for r in reads)]
        if not writes_tree and (root / ".git").is_dir() and not (root / ".git").is_symlink():
            binds.append(Bind(str(root / ".git"), str(root / ".git"), writable=True))
        containment = Containment(binds=tuple(binds), hide=hidden, network=False, keep_state=keep_state)
        argv = ["git", *(part for item in SAFE_CONFIG for part in ("-c", item)), *args]
        result = run_command(argv, cwd=root, timeout=timeout, env=environment, stdin=stdin, contain=containment)
    if not result.ok:
        raise _failed(args, result)
    return result.stdout


def git_remote(*args: str, cwd: Path | str = ".", timeout: float = GIT_TIMEOUT_S) -> str:
    """Run ``git ARGS`` against a remote the user named, with their environment (credentials helpers,
    SSH agent) but no hooks; only in a repository sprintflow created and keeps outside every workspace."""
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args]
    result = run_command(argv, cwd=cwd, timeout=timeout, env=dict(os.environ))
    if not result.ok:
        raise _failed(args, result)
    return result.stdout


def head_sha(workspace: Path | str) -> str | None:
    """The ``HEAD`` commit of ``workspace``, or None outside a git repository (or without git).

    Read from the repository's own files where they are the plain ones (``.git/HEAD``, then the
    branch's ref file or ``packed-refs``): git itself costs a contained process, a quarter of a
    second of every evaluation that records its history. No ``.git`` in the workspace or above it is
    no repository; anything else (a worktree's ``.git`` file, reftable, an unborn branch) is git's
    to answer.

    Example:
        >>> import tempfile
        >>> head_sha(tempfile.mkdtemp()) is None
        True
    """
    folder = Path(workspace).resolve()
    for candidate in (folder, *folder.parents):  # where git itself would look, nearest first
        dot_git = candidate / ".git"
        if dot_git.is_dir() and not dot_git.is_symlink():
            found = _head_from_files(dot_git)
            if found is not None:
                return found
            break
        if dot_git.is_symlink() or dot_git.exists():
            break  # a worktree's or submodule's .git file
    else:
        return None  # no repository here or above it
    try:
        return git("rev-parse", "--verify", "-q", "HEAD", cwd=workspace, timeout=10).strip() or None
    except WorkspaceError:
        return None


_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
"""A commit id: SHA-1, or SHA-256 in a repository made with ``--object-format=sha256``."""
MAX_PACKED_REFS = 16 << 20


def _head_from_files(git_dir: Path) -> str | None:
    """What ``HEAD`` names, read from plain files only (never through a link out, a FIFO, or beyond a
    bound), or None when that takes git.

    Example:
        >>> import tempfile
        >>> repo = Path(tempfile.mkdtemp())
        >>> (repo / "refs" / "heads").mkdir(parents=True)
        >>> _ = (repo / "HEAD").write_text("ref: refs/heads/main\\n")
        >>> _head_from_files(repo) is None  # an unborn branch: git says so
        True
        >>> _ = (repo / "packed-refs").write_text("# pack-refs with: peeled\\n" + "a" * 40 + " refs/heads/main\\n")
        >>> _head_from_files(repo) == "a" * 40
        True
    """
    try:
        head = read_confined(git_dir, "HEAD", 4096).decode("ascii").strip()
        if _SHA.fullmatch(head):
            return head  # detached
        ref = head.removeprefix("ref: ")
        if ref == head or not ref.startswith("refs/") or relative_path_problem(ref):
            return None
        try:
            named = read_confined(git_dir, ref, 4096).decode("ascii").strip()
            return named if _SHA.fullmatch(named) else None
        except FileNotFoundError:
            pass
        packed = read_confined(git_dir, "packed-refs", MAX_PACKED_REFS).decode("utf-8")
    except (OSError, UnicodeDecodeError, WorkspaceError):
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.fullmatch(sha):
            return sha
    return None
