"""The sandbox's layered images: base → runtime layer → dependency layer, built locally and cached.

::

    sprintflow-sandbox:latest        the base (debootstrap bookworm; `sprintflow sandbox build`)
    sprintflow-base:<suite>          another Debian release's base, for its python (e.g. trixie: 3.13)
      └─ sprintflow-runtime:<key>    + node from the npm registry (or the base's) + make/g++ for native modules
                                       (+ Go from the Go module proxy, for a go.mod;
                                        + Debian's OpenJDK and Maven, for a pom.xml;
                                        + Debian's rustc, cargo, clippy, rustfmt, for a Cargo.toml)
           └─ sprintflow-deps:<key>  + the project's dependencies, installed by the setup step
                                       (+ volume sprintflow-deps-<key>: its node_modules, mounted read-only)

Keys are content hashes (base image id, node version; lockfiles for the
dependency layer), so an unchanged lockfile finds its layer and nothing runs.
Every image and volume carries the label ``sprintflow.sandbox`` with its kind;
using a layer touches a stamp file, which is what ``prune`` orders by.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from sprintflow.errors import ExecutorUnavailable, InfrastructureError
from sprintflow.io.files import atomic_write_text
from sprintflow.io.hashing import IGNORED_DIRS

from .cargo_mutants import VERSION as CARGO_MUTANTS_VERSION
from .cargo_mutants import build as build_cargo_mutants
from .cargo_mutants import runtime_steps as cargo_mutants_steps
from .dependencies import CARGO_HOME, GO_MODULES, PLAYWRIGHT_BROWSERS, TOOLS, VENV, DependencyPlan
from .downloads import go_toolchain, node_package_name, unpacked_package
from .go_cache import std_cache_steps
from .gremlins import VERSION as GREMLINS_VERSION
from .gremlins import GremlinsUnavailable
from .gremlins import build as build_gremlins
from .gremlins import runtime_steps as gremlins_steps
from .setup_container import Setup, commit_setup

__all__ = [
    "KIND_LABEL",
    "NODE_HOME",
    "SandboxSetupFailed",
    "base_node_version",
    "dependency_layer",
    "node_modules_volume",
    "runtime_layer",
    "touch_used",
]

KIND_LABEL = "sprintflow.sandbox"
"""Label on every image and volume of the layered sandbox: ``runtime`` or ``deps``."""

NODE_HOME = "/opt/node"
"""Where a runtime layer puts the registry's node (with npm), first on PATH."""

GO_HOME = "/opt/go"
"""Where a runtime layer puts Go (GOROOT)."""

_SANDBOX_PATH = f"{VENV}/bin:{NODE_HOME}/bin:{GO_HOME}/bin:{TOOLS}/bin:/usr/local/bin:/usr/bin:/bin"

# Go in the sandbox: this toolchain and no other (GOTOOLCHAIN=local: no download behind our back), the
# modules the setup step downloaded and no network for more (GOPROXY=off); go.mod and go.sum stay as
# the change left them (-mod=readonly, the go command's default). The build cache starts with the
# standard library compiled when the layer was built (:mod:`.go_cache`); what a command adds to it
# stays in its container.
_GO_ENV = f"ENV GOROOT={GO_HOME} GOTOOLCHAIN=local GOMODCACHE={GO_MODULES} GOPROXY=off GOTELEMETRY=off"

# Rust in the sandbox: the crates the setup step fetched into CARGO_HOME and no network for more
# (CARGO_NET_OFFLINE); the build goes to the workspace's own target/, as on the host.
_CARGO_ENV = f"ENV CARGO_HOME={CARGO_HOME} CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never"
_RUST_PACKAGES = ("rustc", "cargo", "rust-clippy", "rustfmt")


def _jvm_packages(jdk: int | None) -> tuple[str, ...]:
    """Debian's JDK and Maven; ``ca-certificates-java`` gives the JDK its trust store."""
    return (f"openjdk-{jdk}-jdk-headless", "maven", "ca-certificates-java") if jdk else ()


Progress = Callable[[str], object]

_REGISTRY_SETTINGS = ("npm_config_registry", "NPM_CONFIG_REGISTRY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")


class SandboxSetupFailed(InfrastructureError):
    """The setup step (dependency install) failed: no verdict; the message ends with its log."""


def _docker():
    """A Docker client, created where it is used (never kept in a value that crosses a task)."""
    import docker
    from docker.errors import DockerException

    try:
        return docker.from_env(timeout=120)
    except DockerException as exc:
        raise ExecutorUnavailable(f"Docker engine unavailable: {exc}") from None


def _short(key: str) -> str:
    return key[:16]


def _gremlins(progress: Progress) -> Path | None:
    """The judge's gremlins for a Go runtime layer (:mod:`.gremlins`), or None where it cannot be built:
    the layer is then built without it (its key says so), and the mutation check of ``go test`` is unavailable."""
    try:
        return build_gremlins(progress)
    except GremlinsUnavailable as exc:
        progress(f"[runtime] {exc}: the Go runtime layer goes without it")
        return None


def touch_used(cache: Path, tag: str) -> None:
    """Remember that ``tag`` was used now (``prune`` keeps the most recently used)."""
    stamp = cache / "used" / tag.replace(":", "_").replace("/", "_")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def _image_exists(client, tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(tag)
        return True
    except ImageNotFound:
        return False


def base_node_version(base_image: str, cache: Path) -> str | None:
    """The node version the base image has (None: no node), probed once per image id."""
    client = _docker()
    image_id = client.images.get(base_image).id
    record = cache / "bases" / f"{image_id.replace(':', '_')}.json"
    if record.is_file():
        return json.loads(record.read_text())["node"]
    output = client.containers.run(base_image, ["sh", "-c", "node --version 2>/dev/null || true"],
                                   remove=True, network_mode="none", user="0")
    version = output.decode().strip().lstrip("v") or None
    atomic_write_text(record, json.dumps({"node": version}))
    return version


def _tar_add_dir(archive: tarfile.TarFile, source: Path, arcname: str) -> None:
    archive.add(str(source), arcname=arcname, filter=lambda info: _owned_by_root(info))


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def runtime_layer(base_image: str, node: tuple[str, str] | None, progress: Progress, go: str | None = None,
                  jdk: int | None = None, rust: bool = False) -> str:
    """The runtime image on ``base_image``: node and npm at ``node`` = (version, npm version), a compiler,
    Go ``go`` when the project has a go.mod, OpenJDK ``jdk`` with Maven for a pom.xml, and rustc, cargo,
    clippy and rustfmt for a Cargo.toml.

    Built with ``docker build`` from a local FROM (no registry); node and npm are
    the registry's tarballs, Go the module proxy's toolchain, downloaded (and verified)
    only when the layer is missing; the JDK, Maven and Rust are the base's Debian release's packages.
    """
    client = _docker()
    if not _image_exists(client, base_image):  # built here, never pulled: no registry is reachable
        raise ExecutorUnavailable(f"no image {base_image}: build it with `sprintflow sandbox build` "
                                  "(or run with --executor local)")
    base_id = client.images.get(base_image).id
    packages = ["make", "g++", *_jvm_packages(jdk), *(_RUST_PACKAGES if rust else ())]
    gremlins = _gremlins(progress) if go else None
    go_key = f"|go={go}+std-cache{f'+gremlins-{GREMLINS_VERSION}' if gremlins else ''}" if go else ""
    # The judge's cargo-mutants (:mod:`.cargo_mutants`), built on the host: Debian's rustc is too old for it.
    cargo_mutants = build_cargo_mutants(progress) if rust else None
    key = hashlib.sha256(f"{base_id}|node={'+npm'.join(node) if node else 'base'}|make,g++|v1"
                         f"{go_key}{f'|jdk={jdk}' if jdk else ''}{'|rust' if rust else ''}"
                         f"{f'+cargo-mutants-{CARGO_MUTANTS_VERSION}' if cargo_mutants else ''}".encode()).hexdigest()
    tag = f"sprintflow-runtime:{_short(key)}"
    if _image_exists(client, tag):
        return tag
    what = (f"node {node[0]} + npm {node[1]}" if node else "the base's node") + (f" + go {go}" if go else "") \
        + (f" + OpenJDK {jdk} and Maven" if jdk else "") + (" + rustc, cargo, clippy, rustfmt" if rust else "")
    progress(f"[runtime] building {tag}: {base_image} + {what} + make, g++ (native modules)")
    lines = [f"FROM {base_image}", "USER 0",
             "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
             f"--no-install-recommends {' '.join(packages)} >/dev/null && rm -rf /var/lib/apt/lists/*"]
    if jdk:
        lines += [f"ENV JAVA_HOME=/usr/lib/jvm/java-{jdk}-openjdk-amd64", "RUN java -version && mvn --version"]
    if rust:
        lines += [_CARGO_ENV, "RUN cargo --version && cargo clippy --version"]
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as archive:
        if node:
            progress(f"[runtime] downloading {node_package_name()}@{node[0]} and npm@{node[1]} from the npm registry")
            _tar_add_dir(archive, unpacked_package(node_package_name(), node[0]), "node")
            _tar_add_dir(archive, unpacked_package("npm", node[1]), "npm")
            lines += [f"COPY node {NODE_HOME}", f"COPY npm {NODE_HOME}/lib/node_modules/npm",
                      f"RUN rm -f {NODE_HOME}/package.json {NODE_HOME}/.sprintflow-integrity "
                      f"&& ln -s ../lib/node_modules/npm/bin/npm-cli.js {NODE_HOME}/bin/npm "
                      f"&& ln -s ../lib/node_modules/npm/bin/npx-cli.js {NODE_HOME}/bin/npx "
                      f"&& chmod 755 {NODE_HOME}/bin/node && {NODE_HOME}/bin/node --version",
                      f"ENV npm_config_nodedir={NODE_HOME}"]
        if go:
            progress(f"[runtime] downloading go {go} from the Go module proxy")
            _tar_add_dir(archive, go_toolchain(go), "go")
            lines += [f"COPY go {GO_HOME}", f"RUN {GO_HOME}/bin/go version", _GO_ENV,
                      *std_cache_steps(f"{GO_HOME}/bin/go")]
            if gremlins:
                _tar_add_dir(archive, gremlins, "gremlins")
                lines += gremlins_steps()
        if cargo_mutants:
            archive.add(str(cargo_mutants), arcname="cargo-mutants", filter=_owned_by_root)
            lines += cargo_mutants_steps()
        labels = f"{KIND_LABEL}=runtime sprintflow.base={base_image}"
        if node:
            labels += f" sprintflow.node={node[0]} sprintflow.npm={node[1]}"
        if go:
            labels += f" sprintflow.go={go}"
        if jdk:
            labels += f" sprintflow.jdk={jdk}"
        if rust:
            labels += " sprintflow.rust=debian"
        lines += [f"ENV PATH={_SANDBOX_PATH}", f"LABEL {labels}", "USER 1000"]
        dockerfile = ("\n".join(lines) + "\n").encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
    context.seek(0)
    started = time.monotonic()
    from docker.errors import BuildError, DockerException

    try:
        client.images.build(fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True,
                            network_mode="bridge")
    except BuildError as exc:
        tail = "".join(str(chunk.get("stream", chunk.get("error", ""))) for chunk in exc.build_log)[-3000:]
        raise SandboxSetupFailed(f"building the runtime layer {tag} failed: {exc.msg}\n{tail}") from None
    except DockerException as exc:
        raise ExecutorUnavailable(f"building the runtime layer {tag}: {exc}") from None
    progress(f"[runtime] built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def _project_archive(workspace: Path) -> IO[bytes]:
    """The workspace as a tar rooted at ``workspace/`` (tool outputs, caches and the host's deps left out).

    Spooled to a temporary file: a workspace can hold more than we want in memory.
    """
    spool = tempfile.TemporaryFile()
    skipped = IGNORED_DIRS | {".tox", ".nox", ".eggs"}
    with tarfile.open(fileobj=spool, mode="w") as archive:
        for folder, dirs, files in os.walk(workspace):
            dirs[:] = sorted(d for d in dirs if d not in skipped and not (Path(folder, d) / "pyvenv.cfg").exists())
            relative = Path(folder).relative_to(workspace)
            for name in sorted(files) + [d for d in dirs if Path(folder, d).is_symlink()]:
                path = Path(folder, name)
                archive.add(str(path), arcname=str(Path("workspace") / relative / name), recursive=False,
                            filter=_owned_by_root)
    spool.seek(0)
    return spool


def dependency_layer(runtime_tag: str, workspace: Path, plan: DependencyPlan, key: str, progress: Progress) -> str:
    """The dependency image: ``plan``'s setup step run on ``runtime_tag``, committed as ``sprintflow-deps:<key>``.

    The step runs in a setup container (:mod:`.setup_container`): network, the host's CA, a
    tmpfs ``/tmp`` for package caches, the project's manifests unpacked in ``/workspace``.
    """
    client = _docker()
    tag = f"sprintflow-deps:{_short(key)}"
    if _image_exists(client, tag):
        return tag
    progress(f"[deps] building {tag}: " + "; ".join(step.description for step in plan.steps))
    env = {"HOME": "/root", "CI": "true", "npm_config_update_notifier": "false",
           "npm_config_cache": "/tmp/npm-cache", "PIP_NO_CACHE_DIR": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
    # A registry mirror the host is configured for serves the setup step too (not a host-only file:// index).
    env.update({name: os.environ[name] for name in _REGISTRY_SETTINGS
                if os.environ.get(name, "").startswith(("http://", "https://"))})
    started = time.monotonic()

    def failed(exit_code: int, log: str) -> Exception:
        return SandboxSetupFailed(f"the setup step for {workspace} failed (exit {exit_code}) after "
                                  f"{time.monotonic() - started:.0f} s:\n{log[-4000:]}")

    commit_setup(Setup(
        image=runtime_tag, script=plan.script(), commit_as=tag, env=env, working_dir="/workspace",
        archive=lambda: _project_archive(workspace),
        changes=[f"ENV PATH={_SANDBOX_PATH}", f"ENV VIRTUAL_ENV={VENV}",
                 f"ENV PLAYWRIGHT_BROWSERS_PATH={PLAYWRIGHT_BROWSERS}", "ENV CHROMIUM_PATH=/usr/bin/chromium",
                 f"LABEL {KIND_LABEL}=deps sprintflow.runtime={runtime_tag}", "USER 1000", "WORKDIR /workspace",
                 'CMD ["sh"]']), progress, failed)
    progress(f"[deps] built {tag} in {time.monotonic() - started:.0f} s")
    return tag


def node_modules_volume(deps_tag: str) -> str:
    """The read-only volume with the layer's ``node_modules``: Docker fills a new volume from the image.

    Filled here, once, by a throwaway container, so strategies never race to
    create it and none of them pays for the copy.
    """
    client = _docker()
    name = "sprintflow-deps-" + deps_tag.split(":", 1)[1]
    from docker.errors import DockerException, NotFound

    try:
        client.volumes.get(name)
        return name
    except NotFound:
        pass
    try:
        client.volumes.create(name, labels={KIND_LABEL: "deps", "sprintflow.image": deps_tag})
        client.containers.run(deps_tag, ["true"], remove=True, network_mode="none",
                              volumes={name: {"bind": "/workspace/node_modules", "mode": "rw"}})
    except DockerException as exc:
        try:
            client.volumes.get(name).remove(force=True)  # half-filled: never reuse it
        except DockerException:
            pass
        raise ExecutorUnavailable(f"cannot fill the volume {name} from {deps_tag}: {exc}") from None
    return name
