"""Containment: a host command that can change nothing outside its own tree and outlives nothing.

Every command sprintflow runs on the host for someone else's code (the generator and the other
engines, strategies with the local executor, sprintflow's own git) runs contained:

* in its own PID namespace: when it ends, or is killed at its deadline, everything it started
  dies with it (``setsid`` daemons and double forks included);
* in its own mount namespace, whose view :mod:`~sprintflow.io.contain_init` builds: the whole
  file system read-only, a private ``/tmp`` (showing, read-only, what the command's words and
  ``PATH`` name there: :func:`named_under_tmp`) and minimal ``/dev``, then the spec's binds (its
  tree, writable), discarded paths (writes vanish: HOME always, so an engine keeps its login
  and nothing it leaves there reaches a later command), hidden paths (an empty cover), daemons'
  sockets covered, and sprintflow's own state (the judge's store, the Prefect home, the
  history) always hidden;
* without capabilities and with no-new-privileges, so it cannot lift any of it;
* optionally in its own network namespace with only loopback.

Built with util-linux's ``unshare`` and ``setpriv``: as root directly, otherwise in a user
namespace. Where neither works, :func:`containment_unavailable` says why and commands run
uncontained (every caller records that). Where they work but a view cannot be built, the command
does not run at all (:class:`~sprintflow.errors.ContainmentFailed`).

Example:
    >>> spec = Containment(binds=(Bind("/srv/app", "/srv/app", writable=True),), hide=("/srv/app/.secrets",))
    >>> spec.binds[0].writable, spec.network
    (True, True)
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import contain_init

__all__ = ["HIDDEN_WRITE", "SETUP_FAILED", "STARTED", "Bind", "Containment", "containment_unavailable",
           "contained_argv", "named_under_tmp", "own_state"]

HIDDEN_WRITE = contain_init.HIDDEN_WRITE
"""How the namespace's init reports a file the command wrote where it was hidden (then thrown away)."""
SETUP_FAILED = contain_init.SETUP_FAILED
"""How the namespace's init says it could not build the view (the command did not run)."""
STARTED = contain_init.STARTED
"""How the namespace's init says the view is built and the command is starting."""


@dataclass(frozen=True)
class Bind:
    """``source`` shown at ``target`` inside the namespace; read-only unless ``writable``."""

    source: str
    target: str
    writable: bool = False


@dataclass(frozen=True)
class Containment:
    """How one command is contained (see the module docstring); a plain value."""

    binds: tuple[Bind, ...] = ()
    """Mounted in order, before anything is hidden: the command's own tree, its dependencies."""
    hide: tuple[str, ...] = ()
    """Absolute paths covered for the command; what it writes there is thrown away and reported."""
    discard: tuple[str, ...] = ()
    """Folders the command may write, whose writes vanish when it ends; HOME always is one."""
    network: bool = True
    """False: a network namespace of its own, with loopback only."""
    keep_state: bool = field(default=False, repr=False)
    """True only for sprintflow's own tools that must see its state; never for someone else's code."""


def own_state() -> tuple[str, ...]:
    """Where sprintflow keeps what judges and records: hidden from every contained command.

    The judge's store (and any other under ``~/.cache/sprintflow``), the Prefect home (its
    database holds every run's artifacts) and the shared history, when they exist.
    """
    from sprintflow.settings import get_settings

    settings = get_settings()
    prefect_home = os.environ.get("PREFECT_HOME") or str(Path.home() / ".prefect")
    # The judge's home (wherever it is configured), and every cache of sprintflow's under HOME.
    paths = [str(settings.judge_home_path), str(Path.home() / ".cache" / "sprintflow"), prefect_home]
    if settings.history is not None:
        paths.append(str(settings.history))
    return tuple(str(Path(p).resolve()) for p in paths if os.path.lexists(p))


def _docker_sockets() -> list[str]:
    host = os.environ.get("DOCKER_HOST", "")
    return [host.removeprefix("unix://")] if host.startswith("unix://") else []


@functools.cache
def _prefix() -> tuple[list[str], str] | tuple[None, str]:
    """The argv that starts the namespaces (up to the spec), or None and why containment is unavailable."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if not unshare or not setpriv:
        return None, "util-linux's unshare and setpriv are not installed"
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    # setpriv --pdeathsig: unshare dies with sprintflow, even a SIGKILLed one; --kill-child then ends the
    # namespace's init, and the kernel everything in the namespace.
    prefix = [setpriv, "--pdeathsig", "KILL", unshare, *user, "--fork", "--pid", "--mount-proc", "--mount",
              "--propagation", "private", "--kill-child=SIGKILL"]
    probe_argv = _argv(prefix, setpriv, Containment(network=False), ["/bin/true"])
    try:
        # From /: the init returns to the caller's folder, which the private /tmp covers when it lies there.
        probe = subprocess.run(probe_argv, capture_output=True, timeout=30, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"unshare could not run: {exc}"
    refusal = probe.stderr.decode(errors="replace")
    if probe.returncode != 0 and contain_init.SETUP_FAILED not in refusal:
        return None, f"unshare refused ({refusal.strip()[-300:]})"
    # The namespaces work but the view could not be built (a mount refused): that is containment
    # broken, not unavailable. Running uncontained would fail open; every command says why instead.
    return prefix, setpriv


def _argv(prefix: list[str], setpriv: str, containment: Containment, argv: Sequence[str],
          cwd: str | None = None, search_path: str = "", status_fd: int | None = None) -> list[str]:
    hidden = list(containment.hide) + ([] if containment.keep_state else list(own_state()))
    binds = [Bind(top, top) for top in named_under_tmp([*argv, search_path])] + list(containment.binds)
    if cwd is not None and not any(_inside(cwd, b.target) for b in binds):
        binds.insert(0, Bind(cwd, cwd))  # where it starts stays visible (a private /tmp would cover it), read-only
    spec = ["--setpriv", setpriv, "--home", str(Path.home())]
    spec += ["--status-fd", str(status_fd)] if status_fd is not None else []
    for bind in binds:
        spec += ["--bind", bind.source, bind.target, "rw" if bind.writable else "ro"]
    spec += [part for path in containment.discard for part in ("--discard", path)]
    spec += [part for path in hidden for part in ("--hide", path)]
    spec += [part for path in _docker_sockets() for part in ("--socket", path)]
    network = [] if containment.network else ["--net"]
    spec += [] if containment.network else ["--no-network"]
    return [*prefix, *network, sys.executable, "-I", "-S", contain_init.__file__, *spec, "--", *argv]


def containment_unavailable() -> str | None:
    """Why commands cannot be contained here (see :class:`Containment`), or None when they can.

    Example:
        >>> containment_unavailable() is None or isinstance(containment_unavailable(), str)
        True
    """
    prefix, why = _prefix()
    return why if prefix is None else None


def contained_argv(argv: Sequence[str], containment: Containment, cwd: str | None = None,
                   search_path: str = "", status_fd: int | None = None) -> list[str] | None:
    """``argv`` wrapped in its namespaces (starting in ``cwd``, finding programs on ``search_path``,
    the command's ``PATH``), or None where containment is unavailable. With ``status_fd`` (passed to
    the process), the init writes there :data:`STARTED`, or :data:`SETUP_FAILED` and why, and closes it
    before the command starts; without, a failure goes to stderr."""
    prefix, setpriv = _prefix()
    return None if prefix is None else _argv(prefix, setpriv, containment, argv, cwd, search_path, status_fd)


_UNDER_TMP = re.compile(r"(?<![\w.~-])/tmp/[^/\s'\"`;|&<>(){}=:,]+")


def named_under_tmp(texts: Sequence[str]) -> list[str]:
    """The entries of ``/tmp`` that a command's words and ``PATH`` name (its program, its script, a
    virtualenv): shown to it read-only, since the private ``/tmp`` would cover them. They are the
    operator's, named in the configured command or the environment; a link is followed only when
    it stays in ``/tmp`` (one out of it could lead to a hidden path), and the hidden paths are
    covered afterwards as everywhere.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        ...     named_under_tmp([f"python3 {folder}/engine.py --fast", "/usr/bin:/tmp/no-such-venv/bin"]) == [folder]
        True
    """
    found: set[str] = set()
    for text in texts:
        for top in _UNDER_TMP.findall(text):
            real = os.path.realpath(top)
            if real == top and os.path.lexists(top):
                found.add(top)
    return sorted(found)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
