"""Who owns something sprintflow left on the machine (a container, a mount), and whether it still lives.

An owner is ``host:pid:start``: the start time tells a live owner from a later
process that reuses its pid, so what a SIGKILLed sprintflow left behind can be
reclaimed at the next start without touching a live run's.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["owner_gone", "owner_label"]


def _start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot), None when no such process lives."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22; the name before ")" may hold spaces


def owner_label(pid: int | None = None) -> str:
    """``host:pid:start`` of this process (or ``pid``).

    Example:
        >>> owner_label().startswith(socket.gethostname() + ":")
        True
    """
    pid = pid or os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def owner_gone(label: str) -> bool:
    """True when ``label`` names a process of this machine that no longer runs.

    Example:
        >>> owner_gone(owner_label()), owner_gone(f"{socket.gethostname()}:999999999:1")
        (False, True)
    """
    host, _, rest = label.partition(":")
    pid, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's: only its deadline or its lease can tell
    return _start_time(int(pid)) != start
