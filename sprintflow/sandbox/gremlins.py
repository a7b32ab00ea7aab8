"""gremlins, the mutation tool of Go's tests, built once by the judge: never the workspace's.

gremlins (github.com/go-gremlins/gremlins) is a Go module: ``go install`` of its command, pinned at
:data:`VERSION`, checked against the checksum database by the go command, with the Go toolchain the
judge downloads for the sandbox (:func:`~.downloads.go_toolchain`, :data:`~.runtimes.DEFAULT_GO`),
statically (``CGO_ENABLED=0``), into a folder of the sandbox cache (:func:`build`). One binary
serves both executors; it calls the ``go`` that the command's ``PATH`` finds, so it judges a
module with the module's own toolchain:

* on the host, each contained command in a Go module sees its folder read-only at
  :data:`HOST_FOLDER` (the sandbox cache is hidden from commands, as all of sprintflow's state is);
* in Docker it is copied into the Go runtime layer at :data:`DOCKER_BIN` (:func:`runtime_steps`),
  owned by root: the container's user cannot write it. It is built on the host, not in the layer's
  ``docker build``: a container need not trust the TLS the host's go command reaches the module
  proxy through.

Where it cannot be built (no network to the proxy the first time), the mutation check of ``go
test`` is ``unavailable``, with the reason; never a pass.

Example:
    >>> HOST_BIN, DOCKER_BIN
    ('/tmp/.sprintflow-gremlins/gremlins', '/opt/sprintflow/tools/gremlins')
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

from sprintflow.io.process import run_command

from .downloads import go_toolchain, sandbox_cache
from .runtimes import DEFAULT_GO
from .tool_builds import ToolUnavailable, built_binary, built_once

__all__ = ["BUILD_TIMEOUT_S", "DOCKER_BIN", "HOST_BIN", "HOST_FOLDER", "MODULE", "VERSION", "GremlinsUnavailable",
           "build", "built", "runtime_steps"]

logger = logging.getLogger("sprintflow.sandbox.gremlins")

VERSION = "v0.6.0"
"""The gremlins the judge builds (its JSON report and its log lines are this one's)."""
MODULE = "github.com/go-gremlins/gremlins/cmd/gremlins"
HOST_FOLDER = "/tmp/.sprintflow-gremlins"
"""Where a contained host command sees the binary's folder (in its private /tmp), read-only."""
HOST_BIN = f"{HOST_FOLDER}/gremlins"
DOCKER_BIN = "/opt/sprintflow/tools/gremlins"
"""The binary in a Go runtime layer."""
BUILD_TIMEOUT_S = 900
_PASSED = ("GOPROXY", "GONOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOINSECURE", "SSL_CERT_FILE",
           "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy")
"""What of the judge's environment reaches the build: how it reaches the module proxy, nothing else."""


GremlinsUnavailable = ToolUnavailable
"""gremlins could not be built here: the message says why."""


def folder() -> Path:
    """The folder of the judge's binary: one per gremlins version, toolchain and machine."""
    return sandbox_cache() / "tools" / f"gremlins-{VERSION}-go{DEFAULT_GO}-{os.uname().machine}"


def built() -> Path | None:
    """The folder of the judge's built gremlins (``gremlins`` in it), or None when it is not built here."""
    return folder() if built_binary(folder(), "gremlins") else None


def build(progress=logger.info) -> Path:
    """Build gremlins into :func:`folder` once (:func:`~.tool_builds.built_once`): the folder, or
    :class:`GremlinsUnavailable` with the reason."""
    built_once(folder(), "gremlins", _install, f"gremlins {VERSION} with Go {DEFAULT_GO}", progress)
    return folder()


def _install(fresh: Path) -> str | None:
    """``go install`` of the pinned command into ``fresh``, in a scratch GOPATH; why it failed, or None."""
    try:
        go = go_toolchain(DEFAULT_GO) / "bin" / "go"
    except Exception as exc:  # the download's own errors: no proxy, no checksum
        return f"Go {DEFAULT_GO} could not be had: {exc}"
    with tempfile.TemporaryDirectory(prefix="sprintflow-gremlins-build-") as scratch:
        env = {**{name: os.environ[name] for name in _PASSED if os.environ.get(name)},
               "PATH": f"{go.parent}:/usr/bin:/bin", "HOME": scratch, "GOPATH": f"{scratch}/gopath",
               "GOMODCACHE": f"{scratch}/mod", "GOCACHE": f"{scratch}/cache", "GOBIN": str(fresh),
               "GOFLAGS": "-modcacherw -trimpath -buildvcs=false", "CGO_ENABLED": "0", "GOTOOLCHAIN": "local",
               "GOTELEMETRY": "off", "GOENV": "off"}
        done = run_command([str(go), "install", f"{MODULE}@{VERSION}"], cwd=scratch, timeout=BUILD_TIMEOUT_S,
                           env=env, shell=False)
    if done.timed_out:
        return f"it took more than {BUILD_TIMEOUT_S} s"
    if done.exit_code != 0:
        return f"`go install {MODULE}@{VERSION}` failed: {(done.stderr or done.stdout).strip()[-400:]}"
    return None


def runtime_steps(context_name: str = "gremlins") -> list[str]:
    """The Dockerfile lines of a Go runtime layer that give it the judge's binary (in the build context as
    ``context_name``, its folder)."""
    return [f"COPY {context_name}/gremlins {DOCKER_BIN}", f"RUN chmod 755 {DOCKER_BIN} && {DOCKER_BIN} --version"]
