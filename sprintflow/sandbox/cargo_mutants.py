"""cargo-mutants, the mutation tool of Rust's tests, built once by the judge: never the workspace's.

cargo-mutants is a crates.io crate (a ``cargo`` subcommand), built from source with the host's
cargo: ``cargo install cargo-mutants --version VERSION --locked`` into a folder of the sandbox
cache (:func:`build`; ``scripts/install.sh`` runs ``python -m sprintflow.sandbox.cargo_mutants``).
Its release profile is lightened for the build (opt-level 1, no LTO): two cores take about 12
minutes for the full one, and the tool's own work (parsing the crate, listing the mutants) is a
small part of a mutation run, whose time is cargo's builds and tests. Its minimum rustc (1.88) is
above Debian trixie's (1.85), so the sandbox image cannot build it; it gets the host's binary:

* on the host (:func:`host_binary`), each contained command sees the binary's folder read-only at
  :data:`HOST_BIN` (the sandbox cache is hidden from commands, as all of sprintflow's state is);
* in Docker it is copied into the Rust runtime layer at :data:`DOCKER_BIN` (:func:`runtime_steps`);
  a binary that does not run on the layer's system (a host's newer glibc) is left out, and the
  mutation check says it is unavailable there.

Where it is not built, the mutation check of ``cargo test`` is ``unavailable``, with the command
that builds it; never a pass.

Example:
    >>> HOST_BIN, DOCKER_BIN
    ('/tmp/.sprintflow-cargo-mutants/cargo-mutants', '/opt/sprintflow/tools/cargo-mutants')
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .downloads import sandbox_cache
from .tool_builds import ToolUnavailable, built_binary, built_once

__all__ = ["BUILD_TIMEOUT_S", "DOCKER_BIN", "HOST_BIN", "HOST_FOLDER", "VERSION", "build", "build_command",
           "host_binary", "runtime_steps", "tool_root"]

logger = logging.getLogger("sprintflow.sandbox.cargo_mutants")

VERSION = "27.1.0"
"""The cargo-mutants the judge builds (its report format, ``mutants.out/outcomes.json``, is this one's)."""
HOST_FOLDER = "/tmp/.sprintflow-cargo-mutants"
"""Where a contained host command sees the binary's folder (in its private /tmp), read-only."""
HOST_BIN = f"{HOST_FOLDER}/cargo-mutants"
DOCKER_BIN = "/opt/sprintflow/tools/cargo-mutants"
"""The binary in a Rust runtime layer."""
BUILD_TIMEOUT_S = 3600
_LIGHT_PROFILE = {"CARGO_PROFILE_RELEASE_OPT_LEVEL": "1", "CARGO_PROFILE_RELEASE_LTO": "false",
                  "CARGO_PROFILE_RELEASE_DEBUG": "false", "CARGO_PROFILE_RELEASE_INCREMENTAL": "false"}


def tool_root() -> Path:
    """The folder ``cargo install --root`` filled: ``bin/cargo-mutants`` in it."""
    return sandbox_cache() / "tools" / f"cargo-mutants-{VERSION}"


def host_binary() -> Path | None:
    """The judge's built cargo-mutants, or None when it has not been built here."""
    return built_binary(tool_root(), "bin/cargo-mutants")


def build_command() -> str:
    """What to run to build it (the reason an unavailable check gives)."""
    return f"{Path(sys.executable).name} -m sprintflow.sandbox.cargo_mutants"


def build(progress=logger.info) -> Path | None:
    """Build cargo-mutants into :func:`tool_root` once (:func:`~.tool_builds.built_once`); the binary, or None
    when there is no cargo here or the build failed (said through ``progress``)."""
    try:
        return built_once(tool_root(), "bin/cargo-mutants", _install, f"cargo-mutants {VERSION}", progress)
    except ToolUnavailable as exc:
        progress(f"{exc} (the mutation check of Rust's tests is unavailable)")
        return None


def _install(fresh: Path) -> str | None:
    """``cargo install`` of the pinned version into ``fresh``; why it failed, or None."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return "no cargo on PATH"
    try:
        done = subprocess.run([cargo, "install", "cargo-mutants", "--version", VERSION, "--locked", "--quiet",
                               "--root", str(fresh)], env={**os.environ, **_LIGHT_PROFILE},
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"`cargo install` took more than {BUILD_TIMEOUT_S} s"
    return None if done.returncode == 0 else f"`cargo install` failed: {done.stderr.strip()[-1500:]}"


def runtime_steps(context_name: str = "cargo-mutants") -> list[str]:
    """The Dockerfile lines of a Rust runtime layer that give it the host's binary (in the build context
    as ``context_name``): kept only where it runs on the layer's system."""
    folder = DOCKER_BIN.rsplit("/", 1)[0]
    return [f"COPY {context_name} {DOCKER_BIN}",
            f"RUN chmod 755 {DOCKER_BIN} && ({DOCKER_BIN} mutants --version || "
            f"(echo 'cargo-mutants does not run on this system: left out' && rm -rf {folder}))"]


def main() -> int:
    """``python -m sprintflow.sandbox.cargo_mutants``: build it unless it is there (0 also when there is no
    cargo: nothing here needs it then)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    binary = build(progress=lambda message: print(message, flush=True))
    if binary is not None:
        print(binary)
    return 0 if binary is not None or shutil.which("cargo") is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
