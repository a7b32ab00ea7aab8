"""PID 1 of a contained command's namespaces: build its view of the machine, run it, report.

Run by :mod:`sprintflow.io.containment` as ``python3 -I -S contain_init.py SPEC... -- ARGV...`` inside
fresh PID and mount namespaces (and a network namespace when the spec has no network). It uses
the standard library only and imports nothing of sprintflow's: it runs before anything can be
trusted. It runs before every contained command, so it imports as little as it can (no json, no
socket: about 20 ms in all). The spec is argv: ``--setpriv PATH``, ``--home PATH``, ``--bind SOURCE
TARGET rw|ro``, ``--discard PATH``, ``--hide PATH``, ``--socket PATH``, ``--no-network`` and
``--status-fd N``.

What the command sees, built in this order:

1. every mount read-only (``/proc``, ``/sys`` and ``/dev`` aside), so nothing outside its tree can
   be written: not sprintflow's install, not the virtualenvs, not the system;
2. a private ``/tmp`` and ``/dev/shm``, and a minimal ``/dev`` (null, zero, full, random, urandom,
   tty, a private devpts): no raw disk to read around the file system;
3. HOME as an overlay whose writes vanish with the namespace (an engine keeps its login; nothing
   it leaves there reaches a later command);
4. the spec's binds, in order, from descriptors opened before anything moved (so a bind's source
   can be hidden afterwards, or live under the new ``/tmp``), writable where the spec says; then
   the other discarded paths (dependency folders inside the bound tree);
5. the hidden paths: an empty tmpfs over a folder, ``/dev/null`` over a file; what the command
   writes there is thrown away and reported (``sprintflow-hidden-write:PATH`` on stderr);
6. every Unix socket under ``/run`` covered (a Docker socket is a way out of any sandbox);
7. loopback up in a private network namespace.

Then it starts the command without capabilities (``setpriv``), forwards signals to it, reaps
orphans, and exits with the command's status, which ends the namespace and everything in it.
A setup step that fails says ``sprintflow-contain-failed:REASON`` and exits 125: the command
never runs outside the view it was promised. It says so on the status descriptor, where one is
given, and otherwise on stderr; there it says ``sprintflow-contain-started`` once the view is
built, and closes it before the command starts. The caller believes only that descriptor: what
the command prints can pass neither for a view that failed nor for one that was built.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the signal module imports enum: 8 ms of every command
import ctypes
import os
import stat
import sys

HIDDEN_WRITE = "sprintflow-hidden-write:"
SETUP_FAILED = "sprintflow-contain-failed:"
STARTED = "sprintflow-contain-started"

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
_KEPT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
               "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME}
"""Per-mount flags a remount must repeat (in a user namespace they are locked)."""
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
UNTOUCHED = ("/proc", "/sys", "/dev")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


class SetupFailed(Exception):
    pass


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(value: str | None) -> bytes | None:
        return None if value is None else os.fsencode(value)

    if _libc.mount(raw(source), raw(target), raw(fstype), flags, raw(data)) != 0:
        error = ctypes.get_errno()
        raise SetupFailed(f"mount {fstype or ''} {source or ''} on {target}: {os.strerror(error)}")


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    return os.fsdecode(field.encode().decode("unicode_escape").encode("latin-1"))


def _writable_mounts() -> list[tuple[str, int]]:
    """Each writable mount point outside ``UNTOUCHED``, with the flags that make it read-only."""
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
        mounts = [line.split() for line in handle]
    writable = []
    for fields in mounts:
        point, options = _unescape(fields[4]), fields[5].split(",")
        if "ro" in options or any(point == top or point.startswith(top + "/") for top in UNTOUCHED):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in options:
            flags |= _KEPT_FLAGS.get(option, 0)
        writable.append((point, flags))
    return writable


def read_only_everywhere() -> None:
    """Remount every writable mount read-only; a failure counts only if the mount is still there after.

    The namespace is a copy of the machine's, taken while other evaluations mount and remove their
    views: removing a mount point's folder in another namespace detaches its copy here, at any
    moment (and the folder can outlive it for a while). So the first pass lets failures go, and
    a second reading of mountinfo says which mounts are still writable: remounting those again
    fails for a reason that is real.
    """
    for point, flags in _writable_mounts():
        try:
            mount(None, point, None, flags)
        except SetupFailed:
            pass  # judged by the second reading
    for point, flags in _writable_mounts():
        if os.path.exists(point):  # one no path leads to (its folder was removed) is no way out
            mount(None, point, None, flags)


def private_tmp_and_dev() -> None:
    mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    devices = {name: os.open(f"/dev/{name}", os.O_PATH) for name in DEVICES if os.path.exists(f"/dev/{name}")}
    mount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=0755")
    for name, fd in devices.items():
        open(f"/dev/{name}", "w").close()
        mount(f"/proc/self/fd/{fd}", f"/dev/{name}", None, MS_BIND)
        os.close(fd)
    os.mkdir("/dev/pts")
    mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    os.symlink("pts/ptmx", "/dev/ptmx")
    os.mkdir("/dev/shm")
    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"/dev/{name}")


def bind(fd: int, target: str, writable: bool) -> None:
    if not os.path.lexists(target):
        if not target.startswith("/tmp/"):  # only ever create inside our own /tmp, never in a real tree
            raise SetupFailed(f"bind target {target} does not exist")
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.makedirs(target)
        else:  # a file is bound onto an empty file of its own
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "x").close()
    mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_REMOUNT | MS_BIND | (0 if writable else MS_RDONLY))


def discard(path: str, index: int) -> None:
    if not os.path.isdir(path) or os.path.islink(path):
        return
    base = f"/tmp/.sprintflow-discard-{index}"
    os.makedirs(f"{base}/upper")
    os.makedirs(f"{base}/work")
    mount("sprintflow-discard", path, "overlay", 0, f"lowerdir={path},upperdir={base}/upper,workdir={base}/work")


def hide(path: str) -> str | None:
    """Cover ``path``; returns it when it is a folder whose tmpfs later shows what was written there."""
    if os.path.isdir(path) and not os.path.islink(path):
        mount("sprintflow-hidden", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m")
        return path
    if os.path.lexists(path):
        mount("/dev/null", path, None, MS_BIND)
    return None


def cover_sockets(top: str = "/run", depth: int = 4) -> None:
    """Every Unix socket under ``top``: covered, so nothing can talk to a daemon (Docker, containerd) there."""
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISSOCK(info.st_mode):
            mount("/dev/null", entry.path, None, MS_BIND)
        elif stat.S_ISDIR(info.st_mode) and depth > 1:
            cover_sockets(entry.path, depth - 1)


class _InterfaceRequest(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("flags", ctypes.c_short), ("pad", ctypes.c_char * 22)]


def loopback_up() -> None:
    """``ip link set lo up``, through the ioctls (the socket module would cost its import)."""
    sock = _libc.socket(2, 2, 0)  # AF_INET, SOCK_DGRAM
    if sock < 0:
        raise SetupFailed(f"socket: {os.strerror(ctypes.get_errno())}")
    try:
        request = _InterfaceRequest(name=b"lo")
        if _libc.ioctl(sock, 0x8913, ctypes.byref(request)) != 0:  # SIOCGIFFLAGS
            raise SetupFailed(f"loopback: {os.strerror(ctypes.get_errno())}")
        request.flags |= 1  # IFF_UP
        if _libc.ioctl(sock, 0x8914, ctypes.byref(request)) != 0:  # SIOCSIFFLAGS
            raise SetupFailed(f"loopback: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(sock)


def parse_spec(args: list[str]) -> dict:
    """The spec from argv (up to ``--``); see the module docstring."""
    spec: dict = {"binds": [], "discard": [], "hide": [], "sockets": [], "network": True, "home": None,
                  "setpriv": None, "status_fd": None}
    index = 0
    while index < len(args):
        flag = args[index]
        if flag == "--bind":
            spec["binds"].append((args[index + 1], args[index + 2], args[index + 3] == "rw"))
            index += 4
        elif flag in ("--discard", "--hide", "--socket"):
            spec[{"--discard": "discard", "--hide": "hide", "--socket": "sockets"}[flag]].append(args[index + 1])
            index += 2
        elif flag in ("--home", "--setpriv"):
            spec[flag[2:]] = args[index + 1]
            index += 2
        elif flag == "--status-fd":
            spec["status_fd"] = int(args[index + 1])
            index += 2
        elif flag == "--no-network":
            spec["network"] = False
            index += 1
        else:
            raise SetupFailed(f"unknown option {flag!r}")
    return spec


def build_view(spec: dict) -> list[str]:
    """Every step of the module docstring; returns the hidden folders."""
    sources = [(os.open(source, os.O_PATH), target, writable)
               for source, target, writable in spec["binds"]]
    read_only_everywhere()
    private_tmp_and_dev()
    if spec["home"]:
        discard(spec["home"], 0)
    for fd, target, writable in sources:
        bind(fd, target, writable)
        os.close(fd)
    for index, path in enumerate(spec["discard"], start=1):
        discard(path, index)
    hidden = [folder for path in spec["hide"] if (folder := hide(path))]
    for path in spec["sockets"]:
        if os.path.exists(path):
            mount("/dev/null", path, None, MS_BIND)
    cover_sockets()
    if not spec["network"]:
        loopback_up()
    return hidden


def report_hidden_writes(folders: list[str]) -> None:
    for folder in folders:
        for root, _dirs, files in os.walk(folder):
            for name in files:
                sys.stderr.write(f"{HIDDEN_WRITE}{os.path.join(root, name)}\n")
    sys.stderr.flush()


def run(argv: list[str], setpriv: str, cwd: str) -> int:
    child = os.fork()
    if child == 0:
        try:
            os.chdir(cwd)  # again, by name: the old working directory may now lie under a bind
            os.execv(setpriv, [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--", *argv])
        except OSError as exc:
            sys.stderr.write(f"{argv[0]}: {exc.strerror}\n")
        os._exit(127)
    def forward(number: int, _frame: object) -> None:
        try:
            os.kill(child, number)
        except ProcessLookupError:
            pass  # it ended first: a timeout signals the whole group, the command with us

    for sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):  # PID 1 ignores what it has no handler for
        _signal.signal(sig, forward)
    while True:
        pid, status = os.wait()  # orphans are reparented to us: reap them as well
        if pid == child:
            return os.waitstatus_to_exitcode(status)


def tell(status_fd: int | None, message: str) -> None:
    """Say ``message`` on the status descriptor and close it (the command must never hold it), else on stderr."""
    if status_fd is None:
        sys.stderr.write(f"{message}\n")
        return
    os.write(status_fd, message.encode("utf-8", "surrogateescape"))
    os.close(status_fd)


def main() -> int:
    split = sys.argv.index("--")
    argv = sys.argv[split + 1:]
    cwd = os.getcwd()
    spec: dict = {"status_fd": None}
    try:
        spec = parse_spec(sys.argv[1:split])
        hidden = build_view(spec)
    except (SetupFailed, OSError, ValueError, IndexError) as exc:
        tell(spec["status_fd"], f"{SETUP_FAILED}{exc}")
        return 125
    if spec["status_fd"] is not None:
        tell(spec["status_fd"], STARTED)
    status = run(argv, spec["setpriv"], cwd)
    report_hidden_writes(hidden)
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main())
