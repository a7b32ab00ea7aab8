"""Start host processes: one command with a deadline, or a long-running child such as a server.

The single place sprintflow starts host processes: the LocalExecutor, engines,
git, image builds and the local Prefect server all come through here, so
deadlines, killing, capping and scrubbing behave the same everywhere. (The
api-check runner, a stdlib-only script that runs beside the code under test
inside the executor, starts the server under test itself.)
"""

from __future__ import annotations

import os
import pwd
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sprintflow.errors import ContainmentFailed

from .containment import HIDDEN_WRITE, SETUP_FAILED, STARTED, Containment, contained_argv
from .secrets import mask_secrets, strategy_env

__all__ = ["CappedBuffer", "Child", "CommandResult", "as_user", "kill_group", "quiet_since", "run_command", "spawn",
           "stop_group", "stop_process"]

KILL_GRACE_S = 2.0


class CappedBuffer:
    """Keeps the first and last ``limit // 2`` bytes of a stream; counts the rest.

    Memory stays flat however much a command prints: the head usually holds
    the first error, the tail the runner's summary. The text comes out with
    credentials masked, so no command output we keep or show carries one.
    """

    def __init__(self, limit: int):
        self.head_limit = limit // 2
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.tail_limit = limit - self.head_limit
        self.total = 0
        self.last_write: float | None = None
        """When the stream last carried output (``time.monotonic``)."""

    def write(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.last_write = time.monotonic()
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= self.tail_limit:
            self.tail_size -= len(self.tail.popleft())

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - min(self.tail_size, self.tail_limit)

    def text(self) -> str:
        tail = b"".join(self.tail)[-self.tail_limit:] if self.tail else b""
        head = bytes(self.head).decode("utf-8", errors="replace")
        marker = f"\n[... {self.dropped} bytes of output dropped ...]\n" if self.dropped else ""
        return mask_secrets(head + marker + tail.decode("utf-8", errors="replace"))


def quiet_since(*streams: CappedBuffer) -> float | None:
    """Seconds since any of ``streams`` last carried output; None when none did."""
    last = max((s.last_write for s in streams if s.last_write is not None), default=None)
    return None if last is None else time.monotonic() - last


@dataclass
class CommandResult:
    """What one command did. ``exit_code`` is None when it never started."""

    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    duration_s: float = 0.0
    dropped_bytes: int = 0
    error: str | None = None
    """Why the command could not start or finish (not the command's own failure)."""
    hidden_writes: list[str] = field(default_factory=list)
    """Files a contained command wrote into paths hidden from it (absolute; the writes were discarded)."""
    quiet_s: float | None = None
    """Seconds between its last output and its end; None when it printed nothing."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and self.error is None


def kill_group(pgid: int, reap: Callable[[], object] = lambda: None) -> None:
    """SIGTERM a process group, then SIGKILL whatever is left after a grace period.

    ``reap`` (e.g. ``Popen.poll``) collects our own child, whose zombie would
    otherwise keep the group alive for the whole grace period.
    """
    for sig, pause in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 0)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + pause
        while time.monotonic() < deadline:
            reap()
            if not _group_alive(pgid):
                return
            time.sleep(0.05)


def _group_alive(pgid: int) -> bool:
    """Does any process of the group still run? Zombies do not count: orphaned children
    are reaped by PID 1, which in some containers never does it."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        entries = None
    if entries is None:
        try:
            os.killpg(pgid, 0)
            return True
        except ProcessLookupError:
            return False
    for pid in entries:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # it exited while we looked
        if int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _pump(stream: IO[bytes], sink: CappedBuffer) -> None:
    # read1: whatever is there now (up to 64 KiB), not a full block; Popen pipes are buffered readers.
    for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
        sink.write(chunk)
    stream.close()


def run_command(command: str | list[str], *, cwd: Path | str, timeout: float,
                output_limit: int = 1_000_000, env: Mapping[str, str] | None = None,
                stdin: bytes | None = None, shell: bool | None = None,
                contain: Containment | None = None, user: str | None = None) -> CommandResult:
    """Run ``command`` in its own process group; kill the whole group at ``timeout``.

    A string runs through ``/bin/sh -c`` (so ``&&`` and pipes work). The group is
    killed after the command exits too. With ``contain``, the command runs in its
    own namespaces (see :class:`~sprintflow.io.containment.Containment`): whatever it started,
    in the group or not, dies with it, and it can write nothing outside its binds. Where
    containment is unavailable it runs as without; where its view cannot be built it does not run
    at all (:class:`~sprintflow.errors.ContainmentFailed`).

    Example:
        >>> from sprintflow.io.containment import Containment
        >>> run_command("echo hi && exit 3", cwd=".", timeout=5).exit_code
        3
        >>> run_command("(setsid sleep 60 &) ; echo started", cwd=".", timeout=5, contain=Containment()).stdout
        'started\\n'
    """
    shell = isinstance(command, str) if shell is None else shell
    given = command if isinstance(command, str) else " ".join(command)
    environment = dict(env) if env is not None else strategy_env()
    status: tuple[int, int] | None = None  # the view's init says on it whether the command started
    if contain is not None:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) and shell else \
            ([command] if isinstance(command, str) else command)
        status = os.pipe()
        contained = contained_argv(argv, contain, str(Path(cwd).resolve()), environment.get("PATH", ""),
                                   status_fd=status[1])
        if contained is not None:
            command, shell = contained, False
        else:
            _closed(status)
            status = None
    out, err = CappedBuffer(output_limit), CappedBuffer(output_limit)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            command, shell=shell, cwd=cwd, env=environment,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            pass_fds=status[1:] if status else (), **as_user(user),
        )
    except OSError as exc:
        _closed(status)
        return CommandResult(exit_code=None, error=f"could not start {command!r}: {exc}")
    if status is not None:
        os.close(status[1])  # the init's copy is the only writer left
    pumps = [threading.Thread(target=_pump, args=(s, b), daemon=True)
             for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for pump in pumps:
        pump.start()
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True).start()
    timed_out = False
    try:
        timed_out = not _wait_exit(proc, timeout)
    finally:
        kill_group(proc.pid, reap=proc.poll)
        proc.wait()
        for pump in pumps:
            pump.join(timeout=5)
    code = proc.returncode
    stderr, hidden_writes = _split_marked(err.text(), HIDDEN_WRITE)
    if status is not None:
        _check_started(status[0], given, code, stderr)
    return CommandResult(
        exit_code=128 - code if code < 0 else code,
        stdout=out.text(), stderr=stderr, timed_out=timed_out,
        duration_s=time.monotonic() - started, dropped_bytes=out.dropped + err.dropped,
        hidden_writes=hidden_writes, quiet_s=quiet_since(out, err),
    )


def _closed(pipe: tuple[int, int] | None) -> None:
    for fd in pipe or ():
        os.close(fd)


def _check_started(status: int, command: str, code: int, stderr: str) -> None:
    """Raise :class:`ContainmentFailed` unless the view's init said on ``status`` that it started the command.

    Only the init writes there, and it closes the pipe before the command starts: whatever the command
    prints, it cannot pass for a view that failed (or for one that was built).
    """
    os.set_blocking(status, False)  # the command has ended: whatever the init wrote is in the pipe
    told = b""
    try:
        while chunk := os.read(status, 4096):
            told += chunk
    except BlockingIOError:
        pass
    finally:
        os.close(status)
    said = told.decode(errors="replace")
    if said.startswith(STARTED):
        return
    reason = said.removeprefix(SETUP_FAILED).strip() or \
        f"its namespace ended (exit {code}) before the command started: {stderr.strip()[-300:] or 'no output'}"
    raise ContainmentFailed(f"`{command}` never ran: its containment could not be built: {reason}")


def _split_marked(stderr: str, marker: str) -> tuple[str, list[str]]:
    """The lines of ``stderr`` the namespace's init marked with ``marker``, apart from the command's own."""
    if marker not in stderr:
        return stderr, []
    lines = stderr.splitlines(keepends=True)
    marked = [line[len(marker):].strip() for line in lines if line.startswith(marker)]
    return "".join(line for line in lines if not line.startswith(marker)), marked


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait for ``proc`` to exit; False at ``timeout``.

    ``Popen.wait(timeout=)`` polls with sleeps of up to 50 ms, which adds ~15 ms
    to every short command (measured: a 50 ms engine took 66 ms). A pidfd wakes
    us the moment the process exits; other platforms fall back to polling.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        exited = bool(poller.poll(max(0.0, timeout) * 1000))
    finally:
        os.close(fd)
    if exited:
        proc.wait()
    return exited


def _feed(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
        pipe.close()
    except (BrokenPipeError, OSError):
        pass  # the command stopped reading; its exit code tells the story


Child = subprocess.Popen[bytes]
"""A long-running child started with :func:`spawn`."""


def spawn(argv: list[str], *, env: Mapping[str, str], stdout: IO[bytes] | int | None = None,
          stderr: IO[bytes] | int | None = None, detach: bool = False, user: str | None = None) -> Child:
    """Start a long-running child (a server) that outlives this call; stop it with :func:`stop_process`.

    ``detach`` starts it in a session and process group of its own: a terminal's
    Ctrl-C does not reach it, it may outlive this process (a background server),
    and stopping it stops everything it started. ``user`` runs it as that user (root only).

    Example:
        >>> child = spawn(["sleep", "30"], env={"PATH": "/usr/bin:/bin"})
        >>> stop_process(child, timeout=5)
        -2
    """
    return subprocess.Popen(argv, env=dict(env), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                            start_new_session=detach, **as_user(user))


def as_user(user: str | None) -> dict[str, Any]:
    """``Popen``'s arguments that run a process as ``user``: its uid, its group and no other.

    Example:
        >>> as_user(None)
        {}
        >>> sorted(as_user("root"))
        ['extra_groups', 'group', 'user']
    """
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def stop_process(process: Child, timeout: float = 20) -> int:
    """Stop a child this process started: SIGINT (a clean shutdown), then SIGKILL; returns its exit status.

    A detached child's whole process group is stopped with it.
    """
    detached = _leads_group(process.pid)
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    if detached:
        kill_group(process.pid)  # whatever it started and left behind
    return process.returncode


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def stop_group(pgid: int, sig: int = signal.SIGINT, timeout: float = 20) -> None:
    """Stop a process group that is not our child (a background server started by another command):
    ``sig`` first (SIGINT lets a server close its database), then SIGKILL whatever is left after ``timeout``."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.1)
    kill_group(pgid)
