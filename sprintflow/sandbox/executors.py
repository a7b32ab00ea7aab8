"""Where strategy commands run: in a Docker container (default) or on the host.

One interface, two implementations. An executor is a small value (config only,
no client or container inside), so it can cross Prefect task boundaries; the
Docker client is created inside ``run``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypeVar

from sprintflow.errors import ExecutorUnavailable, InputError
from sprintflow.io.containment import Bind, Containment, containment_unavailable
from sprintflow.io.process import CappedBuffer, CommandResult, quiet_since, run_command
from sprintflow.io.secrets import strategy_env
from sprintflow.kinds import ExecutorKind, ExecutorName
from sprintflow.schemas import ExecutorConfig, ExecutorRecord
from sprintflow.settings import get_settings

from .cargo_mutants import HOST_FOLDER as CARGO_MUTANTS_FOLDER
from .cargo_mutants import host_binary as host_cargo_mutants
from .docker_host import DEADLINE_LABEL, LABEL, LEASE_LABEL, OWNER_LABEL, docker_host_slot, owner_label, reconcile_once
from .go_cache import HOST_GO_CACHE, host_std_cache
from .gremlins import HOST_FOLDER as GREMLINS_FOLDER
from .gremlins import built as built_gremlins

if TYPE_CHECKING:
    from sprintflow.judge.tree import JudgedTree
    from sprintflow.sandbox.prepare import PreparedSandbox

__all__ = [
    "SCRIPTS_DIR",
    "CommandSpec",
    "EXECUTORS",
    "DockerExecutor",
    "Executor",
    "LocalExecutor",
    "TreeBinding",
    "docker_available",
    "executor",
    "resolve_executor",
]

logger = logging.getLogger("sprintflow.executors")

SCRIPTS_DIR = Path(__file__).parent / "scripts"
"""Helper scripts (api-check) that run next to the code under test, stdlib only."""

CONTAINER_WORKSPACE = "/workspace"
CONTAINER_SCRIPTS = "/opt/sprintflow/scripts"
KILL_AFTER_S = 5
NODE_SCRATCH = (".cache", ".vite", ".vitest")
"""Folders tools write caches into under node_modules: writable scratch over the read-only dependencies."""


@dataclass(frozen=True)
class CommandSpec:
    """One command to run in the workspace."""

    command: str
    timeout: float
    network: bool = False
    image: str | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TreeBinding:
    """How commands see a judged tree: where it came from, and the dependency folders it gets from there."""

    workspace: str
    """The workspace the tree was judged for: its dependency folders (as pinned) are mounted read-only,
    and the local executor shows the tree at this path (so absolute paths, a virtualenv's, still work)."""
    dependencies: tuple[str, ...] = ()


class Executor(ABC):
    """Runs shell commands in a tree under a deadline with capped output."""

    kind: ClassVar[ExecutorKind]
    """The name configs and ``--executor`` choose it by (set by :func:`executor`)."""
    config: ExecutorConfig
    binding: TreeBinding | None

    if TYPE_CHECKING:  # every executor is a dataclass whose first field is its config
        def __init__(self, config: ExecutorConfig = ...) -> None: ...

    def for_tree(self, tree: JudgedTree) -> Executor:
        """This executor, running commands on ``tree`` (with its dependency folders)."""
        return dataclasses.replace(self, binding=TreeBinding(str(tree.workspace), tree.dependencies))  # type: ignore[type-var]

    @abstractmethod
    def run(self, workspace: Path, spec: CommandSpec) -> CommandResult:
        """Run ``spec`` with ``workspace`` as the working directory."""

    @abstractmethod
    def workspace_path(self, workspace: Path) -> str:
        """The workspace as the command sees it (tools print paths relative to this)."""

    @abstractmethod
    def script(self, name: str) -> str:
        """Path of a script of `sprintflow/sandbox/scripts/` as the command sees it."""

    def describe(self) -> str:
        return self.kind if self.uncontained is None else f"{self.kind}, UNCONTAINED: {self.uncontained}"

    @property
    def uncontained(self) -> str | None:
        """Why this executor's commands run without isolation from the machine; None when they have it."""
        return None

    @property
    def python(self) -> str:
        """The Python that has sprintflow's runners' tools (cosmic-ray), as the command sees it."""
        return "python3"

    @property
    def image(self) -> str | None:
        """The sandbox image commands run in; None on the host."""
        return None

    def record(self, networked: list[str]) -> ExecutorRecord:
        """What the EvalResult says about where ``networked`` (strategies with network) and the rest ran."""
        return ExecutorRecord(kind=self.kind, output_limit=self.config.output_limit, pass_env=self.config.pass_env,
                              uncontained=self.uncontained)


EXECUTORS: dict[ExecutorKind, type[Executor]] = {}
"""Every executor by its name; ``auto`` is a choice between them, not one of them."""

E = TypeVar("E", bound=type[Executor])


def executor(name: ExecutorKind) -> Callable[[E], E]:
    """Register an executor class under ``name``."""
    def register(cls: E) -> E:
        cls.kind = name
        EXECUTORS[name] = cls
        return cls
    return register


@executor(ExecutorName.LOCAL)
@dataclass(frozen=True)
class LocalExecutor(Executor):
    """A contained process on the host (:mod:`~sprintflow.io.containment`): it sees its tree at the
    workspace's path and the rest of the machine read-only, in its own network namespace unless the
    strategy asks for network; deadline, output cap, secrets scrubbed."""

    config: ExecutorConfig = field(default_factory=ExecutorConfig)
    binding: TreeBinding | None = None

    def run(self, workspace: Path, spec: CommandSpec) -> CommandResult:
        shown = self.workspace_path(workspace)
        # The tree where the workspace is, then the workspace's dependency folders (as pinned) into it,
        # writable for the caches tools keep there, but what is written there vanishes with the command.
        binds = [Bind(str(workspace), shown, writable=True)]
        dependencies = self.binding.dependencies if self.binding is not None else ()
        if self.binding is not None:
            binds += [Bind(f"{self.binding.workspace}/{rel}", f"{shown}/{rel}") for rel in dependencies]
        discard = [f"{shown}/{rel}" for rel in dependencies]
        env = strategy_env(spec.env, self.config.pass_env)
        go_cache = _go_std_cache(workspace, env)
        if go_cache is not None:  # read-only below an overlay: what a command writes there is its own, and vanishes
            binds.append(Bind(str(go_cache), HOST_GO_CACHE))
            discard.append(HOST_GO_CACHE)
            env = {"GOCACHE": HOST_GO_CACHE, **env}
        gremlins = built_gremlins() if (workspace / "go.mod").is_file() else None
        if gremlins is not None:  # the judge's mutation tool of Go's tests, read-only (:mod:`.gremlins`)
            binds.append(Bind(str(gremlins), GREMLINS_FOLDER))
        cargo_mutants = host_cargo_mutants()
        if cargo_mutants is not None:  # the judge's mutation tool of Rust's tests, read-only (:mod:`.cargo_mutants`)
            binds.append(Bind(str(cargo_mutants.parent), CARGO_MUTANTS_FOLDER))
        return run_command(spec.command, cwd=shown, timeout=spec.timeout, output_limit=self.config.output_limit,
                           env=env, contain=Containment(binds=tuple(binds), network=spec.network,
                                                        discard=tuple(discard)))

    @property
    def uncontained(self) -> str | None:
        return containment_unavailable()

    def workspace_path(self, workspace: Path) -> str:
        """The workspace's own path when the tree can be shown there (contained), else the tree's."""
        if self.binding is not None and containment_unavailable() is None:
            return self.binding.workspace
        return str(workspace.resolve())

    def script(self, name: str) -> str:
        return str(SCRIPTS_DIR / name)

    @property
    def python(self) -> str:
        return sys.executable  # sprintflow's own, whatever `python3` the project's PATH finds


@executor(ExecutorName.DOCKER)
@dataclass(frozen=True)
class DockerExecutor(Executor):
    """A fresh container per command: workspace bind-mounted, no network, non-root, limited.

    The deadline is enforced twice: ``timeout -k`` inside the container and our
    own wall clock outside (``container.wait(timeout=)`` is only an HTTP read
    timeout, so it cannot be trusted to stop anything).
    """

    config: ExecutorConfig = field(default_factory=ExecutorConfig)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    sandbox: PreparedSandbox | None = None
    binding: TreeBinding | None = None
    """The workspace's own layered image (``sprintflow.sandbox.prepare``); None: ``config.image`` as it is."""

    def describe(self) -> str:
        if self.sandbox is not None:
            return f"docker ({self.sandbox.description})"
        return f"docker ({self.config.image})"

    @property
    def image(self) -> str | None:
        """The image strategies run in unless one names its own."""
        return self.sandbox.image if self.sandbox is not None else self.config.image

    def workspace_path(self, workspace: Path) -> str:
        return CONTAINER_WORKSPACE

    def record(self, networked: list[str]) -> ExecutorRecord:
        return ExecutorRecord(kind=self.kind, image=self.image, image_id=_image_id(self.image or ""),
                              memory=self.config.memory, cpus=self.config.cpus, pids=self.config.pids,
                              network=networked, output_limit=self.config.output_limit,
                              pass_env=self.config.pass_env)

    def script(self, name: str) -> str:
        return f"{CONTAINER_SCRIPTS}/{name}"

    def run(self, workspace: Path, spec: CommandSpec) -> CommandResult:
        import docker  # lazily: importing the SDK costs start-up time for local-only runs
        from docker.errors import DockerException, ImageNotFound

        image = spec.image or self.image or self.config.image
        try:
            client = docker.from_env(timeout=30)
            client.images.get(image)
        except ImageNotFound:
            raise ExecutorUnavailable(
                f"image {image!r} not found: run `sprintflow sandbox build` or set executor.image"
            ) from None
        except DockerException as exc:
            raise ExecutorUnavailable(f"Docker engine unavailable: {exc}") from None
        reconcile_once()
        with docker_host_slot() as lease:
            # The clock starts once a slot is held: waiting for one is not the command's time.
            return self._create_and_run(client, image, workspace, spec, time.monotonic(), lease)

    def _create_and_run(self, client, image: str, workspace: Path, spec: CommandSpec,
                        started: float, lease: str | None) -> CommandResult:
        from docker.errors import DockerException

        volumes = {str(workspace.resolve()): {"bind": CONTAINER_WORKSPACE, "mode": "rw"},
                   str(SCRIPTS_DIR): {"bind": CONTAINER_SCRIPTS, "mode": "ro"}}
        tmpfs = {"/tmp": "rw,exec,size=1g"}
        if self.sandbox is not None and not spec.image:
            _sandbox_dependencies(self.sandbox, volumes, tmpfs)
        elif self.binding is not None:
            for rel in self.binding.dependencies:  # the project chose its image: its own folders, read-only
                volumes[f"{self.binding.workspace}/{rel}"] = {"bind": f"{CONTAINER_WORKSPACE}/{rel}", "mode": "ro"}
        try:
            container = client.containers.create(
                image,
                command=["timeout", "-k", str(KILL_AFTER_S), str(max(1, round(spec.timeout))),
                         "sh", "-c", spec.command],
                working_dir=CONTAINER_WORKSPACE,
                volumes=volumes,
                user=_container_user(workspace),
                environment={"HOME": "/tmp", "CI": "true", **_passed_env(self.config.pass_env), **spec.env},
                network_mode="bridge" if spec.network else "none",
                mem_limit=self.config.memory,
                nano_cpus=int(self.config.cpus * 1e9),
                pids_limit=self.config.pids,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                init=True,  # reaps zombies and forwards signals to the command
                tmpfs=tmpfs,
                labels={LABEL: "true", "sprintflow.run": self.run_id, OWNER_LABEL: owner_label(),
                        DEADLINE_LABEL: str(int(time.time() + spec.timeout + 60)), LEASE_LABEL: lease or ""},
                log_config={"type": "json-file", "config": {"max-size": "20m", "max-file": "1"}},
                detach=True,
            )
        except DockerException as exc:
            raise ExecutorUnavailable(f"cannot create container from {image!r}: {exc}") from None
        try:
            return self._run_container(container, spec, started)
        finally:
            try:
                container.remove(force=True)
            except DockerException:
                pass  # the sweep removes what is left over

    def _run_container(self, container, spec: CommandSpec, started: float) -> CommandResult:
        from docker.errors import DockerException

        limit = self.config.output_limit
        out, err = CappedBuffer(limit), CappedBuffer(limit)
        # Attach before starting: every byte arrives through the attach stream, so
        # neither a fast exit (log file not yet flushed) nor the engine's log
        # rotation on huge outputs can lose any of it.
        frames = container.client.api.attach(container.id, stdout=True, stderr=True, stream=True,
                                             logs=True, demux=True)
        pump = threading.Thread(target=_pump_frames, args=(frames, out, err), daemon=True)
        pump.start()
        try:
            container.start()
        except DockerException as exc:
            raise ExecutorUnavailable(f"cannot start the container: {exc}") from None
        deadline = started + spec.timeout + KILL_AFTER_S + 2
        timed_out, exit_code = False, None
        while exit_code is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                try:
                    container.kill()
                except DockerException:
                    pass
                break
            try:
                exit_code = container.wait(timeout=min(remaining, 5))["StatusCode"]
            except Exception:  # a read timeout of the HTTP call, not of the command
                continue
        pump.join(timeout=10)
        if exit_code == 124 or (exit_code == 137 and time.monotonic() - started >= spec.timeout):
            timed_out = True  # `timeout` reports the deadline as 124 (137 after -k)
        stderr = err.text()
        if exit_code == 137 and not timed_out:
            stderr += _kill_cause(container)
        return CommandResult(exit_code=exit_code, stdout=out.text(), stderr=stderr,
                             timed_out=timed_out, duration_s=time.monotonic() - started,
                             dropped_bytes=out.dropped + err.dropped, quiet_s=quiet_since(out, err))


def _go_std_cache(workspace: Path, env: dict[str, str]) -> Path | None:
    """The judge's build cache of Go's standard library for a command in a Go module's tree (on the host)."""
    if not (workspace / "go.mod").is_file():
        return None
    return host_std_cache(get_settings().judge_home_path / "go-std-cache", env)


def _kill_cause(container) -> str:
    """Who killed a container's command (exit 137, before its deadline): Docker says whether the
    kernel did, for memory; otherwise something outside the sandbox did."""
    try:
        container.reload()
        oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
    except Exception:  # the container is gone: who killed it is unknown
        return f"\n{KILL_NOTE} killed by SIGKILL; Docker could not say why]\n"
    if oom:
        return f"\n{KILL_NOTE} OOMKilled: the container reached its memory limit]\n"
    return f"\n{KILL_NOTE} killed by SIGKILL from outside the sandbox (Docker reports OOMKilled=false)]\n"


KILL_NOTE = "[sprintflow: the command was"
"""How an executor's note on a killed command begins (read by the environment classifier)."""


def _pump_frames(frames, out: CappedBuffer, err: CappedBuffer) -> None:
    try:
        for stdout, stderr in frames:
            if stdout:
                out.write(stdout)
            if stderr:
                err.write(stderr)
    except Exception as exc:  # the container vanished: keep what we have, say so
        err.write(f"\n[sprintflow: output stream ended early: {exc}]\n".encode())


def _sandbox_dependencies(sandbox: PreparedSandbox, volumes: dict, tmpfs: dict) -> None:
    """The sandbox's own node_modules (a read-only volume filled from its dependency layer), with
    writable scratch folders for tool caches. The host's dependency folders are not in the judged
    tree (only empty folders where they go): they were built for the host, not for this image."""
    node_modules = f"{CONTAINER_WORKSPACE}/node_modules"
    if sandbox.node_modules_volume is not None:
        volumes[sandbox.node_modules_volume] = {"bind": node_modules, "mode": "ro"}
        for scratch in NODE_SCRATCH:
            tmpfs[f"{node_modules}/{scratch}"] = "rw,exec,size=256m"


def _container_user(workspace: Path) -> str:
    """Run as the workspace's owner, so files the command writes stay theirs.

    A root-owned workspace runs as uid 0, but with every capability dropped and
    no-new-privileges: without CAP_DAC_OVERRIDE it can write only what root
    already owns in the mounted workspace, and nothing else on the host is mounted.
    """
    stat = workspace.stat()
    return f"{stat.st_uid}:{stat.st_gid}"


def docker_available() -> bool:
    """True when a Docker engine answers a ping within a few seconds."""
    try:
        import docker

        docker.from_env(timeout=5).ping()
        return True
    except Exception:  # any failure means "no engine here"
        return False


def _image_id(image: str) -> str | None:
    """The content digest of ``image``, None when the engine cannot say."""
    import docker
    from docker.errors import DockerException

    try:
        return docker.from_env(timeout=10).images.get(image).id
    except DockerException:
        return None


def _passed_env(names: list[str]) -> dict[str, str]:
    """The host variables a config passes into the container (the image brings its own PATH and locale)."""
    return {name: os.environ[name] for name in names if name in os.environ}


def resolve_executor(kind: str | None, config: ExecutorConfig | None = None) -> Executor:
    """The executor for ``--executor``: ``auto`` means Docker when an engine answers, else local.

    Example:
        >>> resolve_executor("local").kind.value
        'local'
    """
    config = config or ExecutorConfig()
    try:
        name = ExecutorName(kind or config.kind)
    except ValueError:
        raise InputError(f"unknown executor {kind!r}: use " + ", ".join(ExecutorName)) from None
    if name is ExecutorName.AUTO:
        if docker_available():
            return DockerExecutor(config)
        logger.warning("WARNING: no Docker engine answers: running strategies on THIS HOST with "
                       "the LocalExecutor, without container isolation")
        return LocalExecutor(config)
    if name is ExecutorName.DOCKER and not docker_available():
        raise ExecutorUnavailable("--executor docker: no Docker engine answers "
                                  "(start dockerd, or use --executor local)")
    return EXECUTORS[name](config)

