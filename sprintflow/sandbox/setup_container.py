"""A setup container: a script run as root with the network and the host's CA, committed as an image.

No image registry is reachable here and ``docker build`` cannot hand pip or npm the host's CA
bundle (this machine's TLS goes through a private CA), so every image sprintflow builds on top
of another one is made this way: the sandbox's dependency layers (:mod:`.layers`) and the
Docker work pool's flow-run image (:mod:`.runner_image`).

The container alone has network (the default bridge). The CA bundle and what the script reads
are mounted, and ``/tmp`` is a tmpfs for package caches, so none of them lands in the image;
the script's variables are exported by its shell, not set on the container, because a commit
would keep those.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from sprintflow.errors import ExecutorUnavailable
from sprintflow.io.owner import owner_label

from .docker_host import DEADLINE_LABEL, LABEL, OWNER_LABEL

__all__ = ["CA_IN_CONTAINER", "SETUP_TIMEOUT_S", "Setup", "ca_environment", "commit_setup", "host_ca_bundle"]

CA_IN_CONTAINER = "/tmp/sprintflow-host-ca.crt"
"""Inside the setup container's tmpfs /tmp, so not even its mount point lands in the committed image."""
SETUP_TIMEOUT_S = 1800

Progress = Callable[[str], object]


def host_ca_bundle() -> Path | None:
    """The CA bundle this host trusts, for tools in a setup container (None when there is none)."""
    for candidate in (os.environ.get("SSL_CERT_FILE"), os.environ.get("PIP_CERT"),
                      os.environ.get("NODE_EXTRA_CA_CERTS"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def ca_environment() -> dict[str, str]:
    """What points node, npm, pip and Python's ssl at :data:`CA_IN_CONTAINER`.

    Example:
        >>> sorted(ca_environment())[:2]
        ['NODE_EXTRA_CA_CERTS', 'PIP_CERT']
    """
    return {name: CA_IN_CONTAINER for name in ("NODE_EXTRA_CA_CERTS", "npm_config_cafile", "PIP_CERT",
                                              "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")}


@dataclass(frozen=True)
class Setup:
    """What one setup container runs, and what its commit says."""

    image: str
    """The image it starts from."""
    script: str
    """A ``sh`` script, run as root."""
    commit_as: str
    """``repository:tag`` of the committed image."""
    changes: list[str]
    """Dockerfile instructions of the commit (``ENV``, ``USER``, ``LABEL`` …)."""
    env: dict[str, str] = field(default_factory=dict)
    """Exported by the script's shell (never kept in the image)."""
    binds: dict[str, str] = field(default_factory=dict)
    """Host folder → read-only path in the container."""
    working_dir: str = "/"
    archive: Callable[[], IO[bytes]] | None = None
    """A tar stream unpacked at ``/`` before the script starts (the project's manifests)."""


def commit_setup(setup: Setup, progress: Progress, failed: Callable[[int, str], Exception]) -> None:
    """Run ``setup`` and commit the container as ``setup.commit_as``; the container is removed after.

    The container carries sprintflow's labels with its owner and a deadline, so if this process is
    killed the next sweep of leftover containers removes it.

    Raises:
        ExecutorUnavailable: no Docker engine answers, or it failed mid-way.
        Exception: what ``failed(exit_code, log)`` returns, when the script exits non-zero.
    """
    import docker
    from docker.errors import DockerException
    from docker.types import Mount

    env = dict(setup.env)
    # Mounts, not `volumes=`: the SDK would also declare those paths as image volumes, which a commit keeps.
    mounts = [Mount("/tmp", None, type="tmpfs", tmpfs_size=4 << 30)]
    bundle = host_ca_bundle()
    if bundle is not None:
        mounts.append(Mount(CA_IN_CONTAINER, str(bundle), type="bind", read_only=True))
        env.update(ca_environment())
    mounts += [Mount(target, source, type="bind", read_only=True) for source, target in setup.binds.items()]
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in sorted(env.items()))
    repository, _, tag = setup.commit_as.rpartition(":")
    try:
        client = docker.from_env(timeout=120)
        container = client.containers.create(
            setup.image, command=["sh", "-c", exports + setup.script], user="0", working_dir=setup.working_dir,
            network_mode="bridge", mounts=mounts, security_opt=["no-new-privileges"], pids_limit=4096,
            labels={LABEL: "true", "sprintflow.run": f"setup-{tag}", OWNER_LABEL: owner_label(),
                    DEADLINE_LABEL: str(int(time.time() + SETUP_TIMEOUT_S + 60))},
            detach=True)
    except DockerException as exc:
        raise ExecutorUnavailable(f"cannot create the setup container from {setup.image}: {exc}") from None
    try:
        if setup.archive is not None:
            with setup.archive() as archive:
                container.put_archive("/", archive)
        exit_code, log = _run(container, progress)
        if exit_code != 0:
            raise failed(exit_code, log)
        container.commit(repository=repository, tag=tag, changes=setup.changes)
    except DockerException as exc:
        raise ExecutorUnavailable(f"the setup container for {setup.commit_as}: {exc}") from None
    finally:
        try:
            container.remove(force=True)
        except DockerException:
            pass  # the sweep removes it after its deadline


def _run(container, progress: Progress) -> tuple[int, str]:
    """Start the container, echo its ``[setup]`` lines, wait for it under our own deadline."""
    lines: list[str] = []

    def follow() -> None:
        for raw in container.logs(stream=True, follow=True):
            for line in raw.decode(errors="replace").splitlines():
                lines.append(line)
                if line.startswith("[setup]"):
                    progress(line)

    container.start()
    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    exit_code = None
    while exit_code is None and time.monotonic() < deadline:
        try:
            exit_code = container.wait(timeout=10)["StatusCode"]
        except Exception:  # an HTTP read timeout, not the end of the container
            continue
    if exit_code is None:
        container.kill()
        exit_code = -1
        lines.append(f"[sprintflow: the setup step was killed after {SETUP_TIMEOUT_S} s]")
    reader.join(timeout=10)
    return exit_code, "\n".join(lines)

