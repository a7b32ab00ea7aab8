"""The flow-run image of the Docker work pool: the sandbox image with sprintflow installed, built locally.

No image registry is reachable here and ``docker build`` cannot hand pip the
host's CA bundle (this machine's TLS goes through a private CA), so the image is
built the way the sandbox's layers are: pip runs in a setup container
(:mod:`.setup_container`), which is committed. Two layers keep it fast:

* ``sprintflow-runner-deps:<hash>``: sprintflow's dependencies (keyed by the
  dependency list of ``pyproject.toml`` and the Prefect version of this
  machine, which the flow-run container must match); built once, minutes;
* ``sprintflow-sandbox:runner``: sprintflow itself on top (a wheel, no
  dependencies), labelled with the hash of its sources; seconds, and skipped
  when the sources did not change.

Inside that image strategies run with the local executor: the flow-run
container is the sandbox.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sprintflow.errors import ExecutorUnavailable, InfrastructureError, InputError

from .setup_container import Setup, commit_setup

__all__ = ["RUNNER_IMAGE", "build_runner_image", "sources_hash"]

RUNNER_IMAGE = "sprintflow-sandbox:runner"
BASE_IMAGE = "sprintflow-sandbox:latest"
DEPS_REPOSITORY = "sprintflow-runner-deps"
SOURCE_LABEL = "sprintflow.sources"
ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("sprintflow", "flows", "tasks", "schemas", "deployments")


def _dependencies() -> list[str]:
    import tomllib

    import prefect

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    # The flow-run container talks to this machine's server: the same Prefect version.
    return [f"prefect=={prefect.__version__}" if spec.startswith("prefect") else spec
            for spec in project["dependencies"]]


def sources_hash() -> str:
    """A hash of what the wheel holds: every source file and pyproject.toml."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def build_runner_image(tag: str = RUNNER_IMAGE, base: str = BASE_IMAGE,
                       progress: Callable[[str], object] = print) -> str:
    """Build (or reuse) the flow-run image; returns its tag.

    Raises:
        InputError: sprintflow runs from an installed package, not a checkout (no sources to build from).
        ExecutorUnavailable: no Docker engine, or no base image (``sprintflow sandbox build``).
        InfrastructureError: pip failed in the setup container (its output is in the message).
    """
    import docker
    from docker.errors import DockerException, ImageNotFound

    if not (ROOT / "pyproject.toml").is_file():
        raise InputError(f"the runner image is built from a checkout of sprintflow (with its pyproject.toml); "
                         f"{ROOT} is an installed package")
    try:
        client = docker.from_env()
        client.images.get(base)
    except ImageNotFound:
        raise ExecutorUnavailable(f"no image {base}: build it with `sprintflow sandbox build`") from None
    except DockerException as exc:
        raise ExecutorUnavailable(f"no Docker engine answers: {exc}") from None
    sources = sources_hash()
    try:
        if client.images.get(tag).labels.get(SOURCE_LABEL) == sources:
            progress(f"[runner] {tag} is up to date (sources {sources})")
            return tag
    except ImageNotFound:
        pass
    dependencies = _dependencies()
    key = hashlib.sha256("\n".join([base, *dependencies]).encode()).hexdigest()[:16]
    deps = f"{DEPS_REPOSITORY}:{key}"
    try:
        client.images.get(deps)
    except ImageNotFound:
        progress(f"[runner] installing sprintflow's dependencies into {deps} (once; minutes)")
        _commit_setup(base, ["python3", "-m", "pip", "install", "--break-system-packages",
                                     *dependencies], deps, {}, progress)
    with tempfile.TemporaryDirectory() as folder:
        wheel = _wheel(Path(folder))
        progress(f"[runner] installing {wheel.name} into {tag}")
        _commit_setup(deps, ["python3", "-m", "pip", "install", "--break-system-packages", "--no-deps",
                                     f"/run/wheel/{wheel.name}"], tag, {str(wheel.parent): "/run/wheel"},
                      progress, label=f"{SOURCE_LABEL}={sources}")
    return tag


def _wheel(folder: Path) -> Path:
    """sprintflow's wheel, built without its dependencies from a copy of its sources (a build in the
    checkout would leave build/ and egg-info there)."""
    source = folder / "source"
    for name in SOURCE_FOLDERS:
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder),
                            str(source)], capture_output=True, text=True, check=False)
    wheels = list(folder.glob("sprintflow-*.whl"))
    if build.returncode != 0 or not wheels:
        raise InfrastructureError(f"building sprintflow's wheel failed:\n{build.stderr[-3000:]}")
    return wheels[0]


def _commit_setup(image: str, command: list[str], tag: str, binds: dict[str, str],
                  progress: Callable[[str], object], label: str | None = None) -> None:
    """Run ``command`` as root on ``image`` with network and the host's CA; commit it as ``tag``."""
    started = time.monotonic()

    def failed(exit_code: int, log: str) -> Exception:
        return InfrastructureError(f"building {tag} failed (exit {exit_code}):\n{log[-4000:]}")

    commit_setup(Setup(
        image=image, script="mkdir -p /opt/sprintflow && chown 1000:1000 /opt/sprintflow && " + shlex.join(command),
        commit_as=tag, binds=binds,
        env={"PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": "/root"},
        changes=["USER 1000", "WORKDIR /opt/sprintflow", "ENV PREFECT_SERVER_ANALYTICS_ENABLED=false",
                 "ENV SPRINTFLOW_ROOT=/opt/sprintflow", *([f"LABEL {label}"] if label else [])]), progress, failed)
    progress(f"[runner] built {tag} in {time.monotonic() - started:.0f} s")
