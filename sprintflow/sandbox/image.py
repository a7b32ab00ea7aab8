"""Build the default sandbox image locally, with no registry.

There is no container registry on our machines, so the image is made from
Debian's packages: ``debootstrap --variant=minbase`` into a folder, the
toolchains installed with apt in a chroot, then ``tar | docker import``.
Teams with a registry skip this and point ``executor.image`` at any image.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sprintflow.errors import ExecutorUnavailable, InputError
from sprintflow.schemas import DEFAULT_IMAGE

from .setup_container import host_ca_bundle

_log = logging.getLogger("sprintflow.sandbox").info
"""Where progress goes unless the caller says: a log, never stdout (it may carry a --json document)."""

__all__ = ["APT_PACKAGES", "PIP_PACKAGES", "SANDBOX_UID", "build_sandbox_image"]

SANDBOX_UID = 1000
"""The unprivileged user the image creates; containers run as it or as the workspace owner."""

APT_PACKAGES = [
    "nodejs", "npm", "python3", "python-is-python3", "python3-pip", "python3-venv", "chromium",
    "fonts-liberation", "ca-certificates", "procps", "coreutils", "git",
]
"""Node.js and Python toolchains plus Chromium for the playwright strategy. ``python-is-python3``: the
commands people write say ``python -m pytest`` and ``python -m compileall``, which pass on a host with a
``python`` and were "command not found" in a sandbox with only ``python3``."""

PIP_PACKAGES = ["pytest", "ruff", "mypy", "cosmic-ray>=8.7,<9"]
"""The Python dev tools the python strategies call (Debian's are too old or missing)."""

DEFAULT_MIRROR = "http://deb.debian.org/debian"


def _apt_mirror() -> str:
    """The host's Debian mirror, so the build uses whatever this machine can reach."""
    for source in Path("/etc/apt/sources.list.d").glob("*.sources"):
        for line in source.read_text(errors="replace").splitlines():
            if line.startswith("URIs:") and "security" not in line:
                return line.split(None, 1)[1].strip()
    return DEFAULT_MIRROR


def _run(argv: list[str], log: Path, **kwargs) -> None:
    with log.open("ab") as sink:
        sink.write(f"\n$ {' '.join(argv)}\n".encode())
        sink.flush()
        proc = subprocess.run(argv, stdout=sink, stderr=subprocess.STDOUT, **kwargs)
    if proc.returncode:
        tail = log.read_text(errors="replace")[-3000:]
        raise ExecutorUnavailable(f"sandbox build step failed ({' '.join(argv[:3])} …, exit "
                                  f"{proc.returncode}); full log: {log}\n{tail}")


def build_sandbox_image(tag: str = DEFAULT_IMAGE, *, suite: str = "bookworm",
                        mirror: str | None = None, extra_packages: list[str] | None = None,
                        progress: Callable[[str], object] = _log) -> str:
    """Build ``tag`` from Debian packages and ``docker import`` it; returns the image id.

    Needs root, ``debootstrap`` and a running Docker engine. Takes ~2 minutes.
    (No doctest: running one would rebuild and retag the image every test uses.)
    """
    for tool in ("debootstrap", "chroot", "tar"):
        if shutil.which(tool) is None:
            raise InputError(f"{tool} is not installed (apt-get install -y debootstrap)")
    if os.geteuid() != 0:
        raise InputError("building the sandbox image needs root (debootstrap and chroot)")
    import docker  # imported here: building is rare, and the import costs start-up time

    try:
        docker.from_env().ping()
    except Exception as exc:  # any failure to reach the engine means the same thing
        raise ExecutorUnavailable(f"no Docker engine answers ({exc}); start dockerd first") from None
    work = Path(tempfile.mkdtemp(prefix="sprintflow-sandbox-"))
    root, log = work / "root", work / "build.log"
    progress(f"building {tag} in {work} (log: {log})")
    try:
        started = time.monotonic()
        progress(f"[1/4] debootstrap {suite} (minbase)")
        _run(["debootstrap", "--variant=minbase", suite, str(root), mirror or _apt_mirror()], log)
        shutil.copy("/etc/resolv.conf", root / "etc/resolv.conf")
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
               "HOME": "/root", "LANG": "C.UTF-8"}
        progress("[2/4] apt-get install " + " ".join(APT_PACKAGES + (extra_packages or [])))
        _run(["chroot", str(root), "apt-get", "install", "-y", "-q", "--no-install-recommends",
              *APT_PACKAGES, *(extra_packages or [])], log, env=env)
        progress("[3/4] pip install " + " ".join(PIP_PACKAGES) + "; user sandbox")
        # The host's CA bundle: PyPI may sit behind a proxy that only the host trusts.
        bundle = host_ca_bundle()
        if bundle is not None:
            shutil.copy(bundle, root / "tmp/host-ca.crt")
        _run(["chroot", str(root), "pip3", "install", "-q", "--no-cache-dir",
              *(["--cert", "/tmp/host-ca.crt"] if bundle else []), "--break-system-packages", *PIP_PACKAGES],
             log, env=env)
        (root / "tmp/host-ca.crt").unlink(missing_ok=True)
        _run(["chroot", str(root), "useradd", "--uid", str(SANDBOX_UID), "--create-home", "sandbox"],
             log, env=env)
        _run(["chroot", str(root), "sh", "-c", "apt-get clean && rm -rf /var/lib/apt/lists/*"],
             log, env=env)
        (root / "workspace").mkdir(exist_ok=True)
        progress("[4/4] docker import")
        image_id = _import(root, tag, log)
        progress(f"built {tag} ({image_id[:19]}) in {time.monotonic() - started:.0f} s")
        return image_id
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _import(root: Path, tag: str, log: Path) -> str:
    changes = ["ENV LANG=C.UTF-8", "ENV PATH=/usr/local/bin:/usr/bin:/bin",
               "ENV CHROMIUM_PATH=/usr/bin/chromium", "WORKDIR /workspace", f"USER {SANDBOX_UID}"]
    tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."],
                           stdout=subprocess.PIPE)
    argv = ["docker", "import", *[a for c in changes for a in ("--change", c)], "-", tag]
    with log.open("ab") as sink:
        proc = subprocess.run(argv, stdin=tar.stdout, stdout=subprocess.PIPE, stderr=sink)
    if tar.stdout is not None:
        tar.stdout.close()  # so tar gets SIGPIPE if docker import died early
    tar.wait()
    if proc.returncode or tar.returncode:
        raise ExecutorUnavailable(f"docker import failed (exit {proc.returncode}); log: {log}")
    return proc.stdout.decode().strip()
