"""Prepare a workspace's sandbox before any strategy runs: its runtime, its dependencies, cached.

An evaluation calls :func:`with_project_sandbox` once; ``sprintflow sandbox
build WORKSPACE`` calls :func:`prepare_sandbox` ahead of time. The first time a
runtime or a lockfile is seen its layer is built (minutes); afterwards the
layers are found by key and preparing costs a few Docker API calls.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sprintflow.errors import InputError
from sprintflow.io.files import file_lock
from sprintflow.schemas import DEFAULT_IMAGE

from .dependencies import plan_dependencies
from .downloads import node_versions, npm_for_node, pins_fit, sandbox_cache
from .layers import base_node_version, dependency_layer, node_modules_volume, runtime_layer, touch_used
from .runtimes import (
    DEBIAN_RUST,
    DEFAULT_GO,
    RuntimeUnavailable,
    declared_runtimes,
    pick_go_version,
    pick_jdk,
    pick_node_version,
    pick_suite,
)

if TYPE_CHECKING:
    from sprintflow.sandbox.executors import Executor

__all__ = ["PreparedSandbox", "prepare_sandbox", "suite_base_image", "with_project_sandbox"]

Progress = Callable[[str], object]

_log = logging.getLogger("sprintflow.sandbox").info
"""Where progress goes unless the caller says: a log, never stdout (it may carry a --json document)."""


@dataclass(frozen=True)
class PreparedSandbox:
    """The image a workspace's strategies run in, and what the executor mounts over the host's files."""

    image: str
    """``sprintflow-deps:<key>`` (or a runtime layer when nothing is installed)."""
    node_modules_volume: str | None
    """Read-only volume mounted at ``/workspace/node_modules`` (None: the project installs none)."""
    description: str
    """One line for people: the runtimes, their sources and the installers."""


def suite_base_image(suite: str, default_base: str, progress: Progress) -> str:
    """The base image for a Debian suite: the default for bookworm, else ``sprintflow-base:<suite>``, built once."""
    if suite == "bookworm":
        return default_base
    tag = f"sprintflow-base:{suite}"
    from .layers import _docker, _image_exists

    if _image_exists(_docker(), tag):
        return tag
    from .image import build_sandbox_image

    progress(f"[base] {tag} is missing: debootstrapping Debian {suite} for its runtimes (a few minutes)")
    try:
        build_sandbox_image(tag, suite=suite, progress=progress)
    except InputError as exc:
        raise RuntimeUnavailable(f"the project needs Debian {suite} (its python, JDK or rustc), but {tag} "
                                 f"cannot be built here: {exc}") from None
    return tag


def prepare_sandbox(workspace: Path, *, base_image: str = DEFAULT_IMAGE,
                    progress: Progress = _log) -> PreparedSandbox | None:
    """Build (or find) the layers ``workspace`` needs; None when the base image serves it as it is.

    Raises:
        RuntimeUnavailable: the project declares a node, python, Go, Java or Rust we cannot provide.
        SandboxSetupFailed: installing its dependencies failed (the message has the log).
        ExecutorUnavailable: Docker failed.
    """
    workspace = workspace.resolve()
    cache = sandbox_cache()
    runtimes = declared_runtimes(workspace)
    suite = pick_suite(runtimes, pins_fit=pins_fit(runtimes.python_pins, cache) if runtimes.python_pins else None)
    plan = plan_dependencies(workspace)
    node_version = None
    if runtimes.node is not None or runtimes.node_locked:
        base = suite_base_image(suite, base_image, progress)
        node_version = pick_node_version(runtimes.node, node_versions(cache), base_node_version(base, cache),
                                         runtimes.node_locked)
    go_version = None
    if (workspace / "go.mod").is_file():  # the base image has no Go: a go.mod always gets one
        go_version = pick_go_version(runtimes.go) if runtimes.go else DEFAULT_GO
    jdk = pick_jdk(runtimes.java, suite) if runtimes.maven else None
    if not plan.steps and node_version is None and suite == "bookworm":
        return None
    lock = cache / "locks" / f"prepare-{hashlib.sha256(str(workspace).encode()).hexdigest()[:16]}.lock"
    with file_lock(lock):
        base = suite_base_image(suite, base_image, progress)
        node = (node_version, npm_for_node(node_version, cache)) if node_version else None
        runtime = runtime_layer(base, node, progress, go=go_version, jdk=jdk, rust=runtimes.cargo)
        image, volume = runtime, None
        if plan.steps:
            key = plan.key(workspace, runtime)
            with file_lock(cache / "locks" / f"deps-{key[:16]}.lock"):  # other workspaces, same lockfile
                image = dependency_layer(runtime, workspace, plan, key, progress)
                if plan.installs_node_modules:
                    volume = node_modules_volume(image)
    touch_used(cache, image)
    touch_used(cache, runtime)
    return PreparedSandbox(image=image, node_modules_volume=volume,
                           description=_describe(runtimes, suite, node_version, go_version, jdk, plan, image))


def _describe(runtimes, suite: str, node_version: str | None, go_version: str | None, jdk: int | None, plan,
              image: str) -> str:
    parts = [image]
    if go_version:
        parts.append(f"go {go_version} ({runtimes.go or 'go.mod without a go line'})")
    if jdk:
        parts.append(f"Debian {suite}'s OpenJDK {jdk} and Maven ({runtimes.java or 'pom.xml naming no release'})")
    if runtimes.cargo:
        parts.append(f"Debian {suite}'s rustc {'.'.join(map(str, DEBIAN_RUST[suite]))} "
                     f"({runtimes.rust or 'Cargo.toml naming no rust-version'})")
    if node_version:
        parts.append(f"node {node_version} ({runtimes.node or 'no declaration'}"
                     + (f"; and {len(runtimes.node_locked)} engines.node ranges package-lock.json records)"
                        if runtimes.node_locked else ")"))
    elif runtimes.node:
        parts.append(f"the base's node ({runtimes.node})")
    count = len(runtimes.python_pins)
    pins = f"{count} pinned requirement{'s' if count != 1 else ''} checked against the package index" if count else ""
    if runtimes.python or pins:
        parts.append(f"Debian {suite}'s python ({'; and '.join(filter(None, [str(runtimes.python or ''), pins]))})")
    parts += [step.description for step in plan.steps]
    return "; ".join(parts)


def with_project_sandbox(executor: Executor, workspace: Path, progress: Progress = _log) -> Executor:
    """``executor`` set up to run in ``workspace``'s own sandbox (Docker only; before any strategy runs).

    A local executor, or a Docker one configured with an image of the project's
    choosing (``executor.image``), is returned as it is: the project chose its environment.
    """
    from sprintflow.sandbox.executors import DockerExecutor

    if not isinstance(executor, DockerExecutor) or executor.sandbox is not None or not workspace.is_dir():
        return executor  # (a missing workspace is reported by the evaluation's own input checks)
    if executor.config.image != DEFAULT_IMAGE:
        return executor
    started = time.monotonic()
    sandbox = prepare_sandbox(workspace, base_image=executor.config.image, progress=progress)
    if sandbox is None:
        return executor
    progress(f"sandbox ready in {time.monotonic() - started:.2f} s: {sandbox.description}")
    return dataclasses.replace(executor, sandbox=sandbox)
