"""Real projects the sandbox tests judge, fetched from the registries into a cache the tests reuse.

Nothing here is committed but our own fixture (``tests/fixtures/sandbox/ts-native``):

* ``ts-native``: our TypeScript project that declares node >= 20.19 and uses the
  native module better-sqlite3 12.4.6 with ESLint 10, TypeScript and vitest, all
  pinned by its committed package-lock.json;
* ``zod``: the zod 4.1.12 npm tarball, which ships its vitest suites in ``src/``;
  its test runner lives in zod's monorepo root, so vitest 3.2.4 is added as its
  one devDependency and the lockfile resolved as of ``RESOLVED_BEFORE``; its tests
  need node >= 20, which the package does not declare, so each copy gets an ``.nvmrc``;
* ``outcome``: the outcome 1.3.0.post0 sdist from PyPI, a src-layout library that
  depends on attrs and ships ``tests/`` and ``test-requirements.txt``;
* ``color``: the Go module github.com/fatih/color v1.19.0 from the Go module proxy
  (``go mod download``), a library with three module dependencies, pinned by its go.sum;
* ``either``: the either 1.15.0 crate from crates.io, a library that declares ``rust-version = 1.63``
  and whose Cargo.lock pins serde_json for its tests;
* ``tiny-pnpm``, ``tiny-yarn``: our small vitest libraries (``tests/fixtures/sandbox``), installed on the host
  with pnpm 9.15.9 and yarn 1.22.22 as their ``packageManager`` pins (from the npm registry, into the
  machine's ``/tmp``), as a developer who uses them has them;
* ``iniconfig``: the iniconfig 2.3.1 sdist from PyPI, a src-layout uv project whose uv.lock pins its
  ``dev`` group (pytest, pytest-xdist); set up on the host with ``uv sync --frozen`` (uv
  :data:`UV_VERSION`, into the machine's ``/tmp``), as its developers have it;
* ``cleo``: the cleo 2.1.0 sdist from PyPI, a Poetry project (``[tool.poetry]``, groups dev and doc), with
  the poetry.lock Poetry :data:`POETRY_VERSION` wrote for it (``tests/fixtures/sandbox/cleo-2.1.0.poetry.lock``:
  the sdist ships none, and a lock made anew each run would pin whatever was newest that day); each copy
  gets ``poetry install`` on the host (into its own ``.venv``), as its developers have it;
* ``commons-cli``: Apache Commons CLI 1.9.0 from Maven Central, a Maven build with the commons-parent
  72 parent (JUnit 5, RAT, japicmp …), put together as its repository has it from the artifacts Central
  serves: the POM, the ``-sources`` and ``-test-sources`` jars as ``src/main/java`` and ``src/test/java``,
  and the test resource its tests read, from the ``-tests`` jar; built once on the host, as its developers
  have, so that ``~/.m2`` holds what the build needs.

Each is downloaded once per machine under ``$SPRINTFLOW_TEST_PROJECTS`` (default
``~/.cache/sprintflow/test-projects``), node projects with ``npm ci`` run, and
every test works on a copy set up as a correctly set-up host has it (node_modules
hard-linked; for outcome a virtualenv with the project installed editable).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from sprintflow.io.files import file_lock
from sprintflow.sandbox.dependencies import POETRY_VERSION, UV_VERSION

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sandbox"
RESOLVED_BEFORE = "2026-10-01"
ZOD = "zod@4.1.12"
VITEST = "3.2.4"
OUTCOME = "outcome==1.3.0.post0"
INICONFIG = "iniconfig==2.3.1"
CLEO = "cleo==2.1.0"
COLOR = "github.com/fatih/color@v1.19.0"
EITHER = "https://static.crates.io/crates/either/either-1.15.0.crate"
COMMONS_CLI = "https://repo.maven.apache.org/maven2/commons-cli/commons-cli/1.9.0/commons-cli-1.9.0"


def cache_root() -> Path:
    configured = os.environ.get("SPRINTFLOW_TEST_PROJECTS")
    return Path(configured) if configured else Path.home() / ".cache" / "sprintflow" / "test-projects"


def _run(argv: list[str], cwd: Path) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def _npm(*args: str) -> list[str]:
    return ["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"]


def _prepare_ts_native(target: Path) -> None:
    shutil.copytree(FIXTURES / "ts-native", target)
    _run(_npm("ci"), target)


def _prepare_zod(target: Path) -> None:
    download = target.with_name(target.name + ".download")
    download.mkdir(parents=True, exist_ok=True)
    _run(["npm", "pack", ZOD, "--silent"], download)
    with tarfile.open(next(download.glob("zod-*.tgz"))) as archive:
        archive.extractall(download, filter="data")
    shutil.move(download / "package", target)
    shutil.rmtree(download)
    manifest = json.loads((target / "package.json").read_text())
    manifest["devDependencies"] = {"vitest": VITEST}
    manifest["scripts"] = {"test": "vitest run"}
    (target / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    _run(_npm("install", f"--before={RESOLVED_BEFORE}"), target)


def _sdist(requirement: str, target: Path) -> None:
    """A project's sdist from PyPI, unpacked as ``target``."""
    download = target.with_name(target.name + ".download")
    download.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(download),
          requirement], download)
    with tarfile.open(next(download.glob("*.tar.gz"))) as archive:
        archive.extractall(download, filter="data")
    shutil.move(next(p for p in download.iterdir() if p.is_dir()), target)
    shutil.rmtree(download)


def _prepare_color(target: Path) -> None:
    proc = subprocess.run(["go", "mod", "download", "-json", COLOR], capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"go mod download {COLOR} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    shutil.copytree(json.loads(proc.stdout)["Dir"], target)  # the module cache's copy is read-only
    _run(["chmod", "-R", "u+w", str(target)], target)
    _run(["go", "mod", "download"], target)  # its dependencies, on the host as a developer has them


def _download(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def _prepare_either(target: Path) -> None:
    download = target.with_name(target.name + ".download")
    download.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(_download(EITHER))) as archive:
        archive.extractall(download, filter="data")
    shutil.move(next(p for p in download.iterdir() if p.is_dir()), target)
    shutil.rmtree(download)
    _run(["cargo", "fetch", "--locked"], target)  # its crates, on the host as a developer has them


def _prepare_commons_cli(target: Path) -> None:
    (target / "src" / "test" / "resources").mkdir(parents=True)
    (target / "pom.xml").write_bytes(_download(f"{COMMONS_CLI}.pom"))
    for suffix, folder, wanted in (("-sources.jar", "main/java", ".java"), ("-test-sources.jar", "test/java", ".java"),
                                   ("-tests.jar", "test/resources", ".file")):
        with zipfile.ZipFile(io.BytesIO(_download(f"{COMMONS_CLI}{suffix}"))) as archive:
            for name in archive.namelist():
                if name.startswith("org/") and name.endswith(wanted):
                    path = target / "src" / folder / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(archive.read(name))
    _warm_maven_repository(target)


def _warm_maven_repository(project: Path) -> None:
    """What a Maven developer's ~/.m2 holds once they have built the project: its parent POM, plugins and
    dependencies, downloaded by one build on the host (the judged host runs have no network). The build
    runs in a throwaway copy: the copies tests make are hard links to the pristine one."""
    scratch = project.with_name(project.name + ".warm")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(project, scratch)
    try:
        _run(["mvn", "-B", "-q", "test", "-Drat.skip=true"], scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


PACKAGE_MANAGERS = ("pnpm@9.15.9", "yarn@1.22.22")


def host_tools_bin() -> Path:
    """pnpm and yarn as a developer who uses them has them on PATH (installed once per machine), under /tmp:
    a contained command sees what its PATH names there, while sprintflow's caches under HOME are hidden."""
    root = Path(tempfile.gettempdir()) / "sprintflow-test-tools"
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(root / ".lock"):
        if not all((root / "bin" / spec.split("@")[0]).exists() for spec in PACKAGE_MANAGERS):
            _run(_npm("install", "-g", "--prefix", str(root), *PACKAGE_MANAGERS), root)
    return root / "bin"


def _prepare_installed_with(manager: str) -> Callable[[Path], None]:
    def prepare(target: Path) -> None:
        shutil.copytree(FIXTURES / f"tiny-{manager}", target)
        _run([str(host_tools_bin() / manager), "install", "--frozen-lockfile"], target)
    return prepare


def host_python_tool(name: str, version: str) -> Path:
    """A Python tool (uv, Poetry) as a developer who uses it has it: pinned, in a virtualenv of its own,
    installed once per machine under /tmp like pnpm and yarn."""
    root = Path(tempfile.gettempdir()) / "sprintflow-test-tools" / name
    root.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(root.parent / f".{name}.lock"):
        if not (root / "bin" / name).exists():
            _run([sys.executable, "-m", "venv", str(root)], root.parent)
            _run([str(root / "bin" / "pip"), "install", "-q", f"{name}=={version}"], root.parent)
    return root / "bin" / name


def _uv_sync(project: Path) -> None:
    """What a uv project's developer does: ``uv sync``, the lock as it is, into the project's ``.venv``."""
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_PYTHON": sys.executable,
           "UV_CACHE_DIR": str(Path(tempfile.gettempdir()) / "sprintflow-test-tools" / "uv-cache")}
    proc = subprocess.run([str(host_python_tool("uv", UV_VERSION)), "sync", "--frozen", "--quiet"], cwd=project,
                          env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"uv sync failed in {project}:\n{proc.stderr[-2000:]}")


def _prepare_cleo(target: Path) -> None:
    _sdist(CLEO, target)
    shutil.copyfile(FIXTURES / "cleo-2.1.0.poetry.lock", target / "poetry.lock")


def _poetry_install(project: Path) -> None:
    """What a Poetry project's developer does: ``poetry install``, the lock as it is, into the project's ``.venv``."""
    env = {**os.environ, "POETRY_VIRTUALENVS_IN_PROJECT": "true", "POETRY_NO_INTERACTION": "1",
           "POETRY_CACHE_DIR": str(Path(tempfile.gettempdir()) / "sprintflow-test-tools" / "poetry-cache")}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run([str(host_python_tool("poetry", POETRY_VERSION)), "install", "--no-ansi", "--quiet"],
                          cwd=project, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"poetry install failed in {project}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")


def _set_up_python_host(project: Path) -> None:
    """What a developer does on the host: a virtualenv in the project, the project installed editable."""
    _run([sys.executable, "-m", "venv", ".venv"], project)
    _run([str(project / ".venv/bin/pip"), "install", "-q", "-e", ".", "-r", "test-requirements.txt"], project)


_PREPARE = {"ts-native": _prepare_ts_native, "zod": _prepare_zod, "outcome": lambda target: _sdist(OUTCOME, target),
            "iniconfig": lambda target: _sdist(INICONFIG, target), "cleo": _prepare_cleo, "color": _prepare_color,
            "either": _prepare_either, "commons-cli": _prepare_commons_cli,
            "tiny-pnpm": _prepare_installed_with("pnpm"), "tiny-yarn": _prepare_installed_with("yarn")}


def pristine(name: str) -> Path:
    """The project set up as on a correctly set-up host, prepared once per machine."""
    root = cache_root()
    target = root / name
    with file_lock(root / f".{name}.lock"):
        if not (target / ".sprintflow-ready").is_file():
            shutil.rmtree(target, ignore_errors=True)
            shutil.rmtree(target.with_name(target.name + ".download"), ignore_errors=True)
            _PREPARE[name](target)
            (target / ".sprintflow-ready").touch()
    return target


def project_copy(name: str, dest: Path) -> Path:
    """A private copy of a prepared project, set up as on the host (node_modules hard-linked, its own venv)."""
    source = pristine(name)
    target = dest / name
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    (target / ".sprintflow-ready").unlink()
    if name == "outcome":
        _set_up_python_host(target)  # a virtualenv holds absolute paths: each copy needs its own
    if name == "iniconfig":
        _uv_sync(target)
    if name == "cleo":
        _poetry_install(target)
    if name == "zod":
        # zod's package.json declares no node, but its tests use the `File` global of node >= 20
        # (on node 18: "ReferenceError: File is not defined"): say what its developers run.
        (target / ".nvmrc").write_text("20\n")
    return target
