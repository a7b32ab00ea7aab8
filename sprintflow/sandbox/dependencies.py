"""What a project installs, decided from its manifests and lockfiles: the setup step's script.

The setup step runs once per dependency layer, as root, with the project's files
copied to ``/workspace`` in the container and network to the package registries.
Its result is kept in the image; the project copy is removed again (at run time
the real workspace is mounted there), except ``node_modules``, which the
executor mounts read-only over the host's.

* node: ``npm ci`` (package-lock.json or npm-shrinkwrap.json), ``pnpm install
  --frozen-lockfile`` (pnpm-lock.yaml) or ``yarn install --frozen-lockfile``
  (yarn.lock, yarn 1), with pnpm and yarn at the version of ``packageManager``;
  a package.json with dependencies and no lockfile gets ``npm install`` (not
  reproducible, and said so).
* python: a virtualenv in ``/opt/sprintflow/venv`` (it sees the image's pytest,
  ruff and mypy), the requirements files, then the project itself installed
  editable with its test extras (``test``, ``tests``, ``testing``, ``dev``) and
  dependency groups of those names; a project with a ``uv.lock`` or a ``poetry.lock`` gets exactly
  what it pins instead (``uv sync --frozen`` or ``poetry install``, with uv or Poetry at a pinned version);
* Go: ``go mod download`` of the root module (go.mod, go.sum; go.work when there is one) into
  :data:`GO_MODULES`, which the sandbox's go reads with no network (``GOPROXY=off``);
* Maven: the plugins and dependencies of the build (``dependency:go-offline``, then the lifecycle
  through ``verify`` selecting no test, for what only a run resolves: Surefire's and Failsafe's
  providers, plugins' own dependencies; compile errors and what the registry does not serve do not stop
  it) into :data:`MAVEN_REPOSITORY`,
  which the sandbox's Maven then reads offline (its global settings say so); and the judge's mutation tool,
  PIT (:data:`PITEST_ARTIFACTS`, ``dependency:get``; on the host :func:`host_maven_tools` fetches the same
  into the host's Maven repository);
* Rust: ``cargo fetch`` (``--locked`` with a Cargo.lock) into :data:`CARGO_HOME`, read offline.

A step's installers may run the project's own code (npm's lifecycle scripts, Maven's plugins bound
to the lifecycle): the setup container has the network and nothing else, and what the judged run
does with what it installed is judged there (canaries included).

The layer key hashes every file that can change the result, so an unchanged
lockfile finds its layer and a changed one builds a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CARGO_HOME", "GO_MODULES", "MAVEN_REPOSITORY", "PITEST_ARTIFACTS", "VENV", "DependencyPlan", "InstallStep",
           "host_maven_repository", "host_maven_tools",
           "plan_dependencies", "python_lockfile", "requirement_files"]

VENV = "/opt/sprintflow/venv"
"""The python virtualenv of a dependency layer (first on PATH in the sandbox)."""

GO_MODULES = "/opt/sprintflow/go/mod"
"""GOMODCACHE in the sandbox: the modules the setup step downloaded, read-only at run time."""

MAVEN_REPOSITORY = "/opt/sprintflow/m2"
"""Maven's local repository in the sandbox: what the setup step downloaded, offline at run time."""

CARGO_HOME = "/opt/sprintflow/cargo"
"""CARGO_HOME in the sandbox: the crates the setup step fetched (CARGO_NET_OFFLINE at run time)."""

UV_VERSION = "0.13.9"
"""The uv the setup step installs a uv project's lock with."""
UV_TOOL = "/opt/sprintflow/uv"
"""uv's own virtualenv in a dependency layer (not the project's: its tests see only what the lock pins)."""

POETRY_VERSION = "2.5.1"
"""The Poetry the setup step installs a Poetry project's lock with."""
POETRY_TOOL = "/opt/sprintflow/poetry"
"""Poetry's own virtualenv in a dependency layer (not the project's: its tests see only what the lock pins)."""

TOOLS = "/opt/sprintflow/tools"
"""Where pnpm or yarn are installed when a lockfile asks for them."""

PLAYWRIGHT_BROWSERS = "/opt/sprintflow/ms-playwright"
"""PLAYWRIGHT_BROWSERS_PATH in the sandbox: Playwright's browser names, pointing at the image's Chromium."""

_TEST_EXTRAS = ("test", "tests", "testing", "dev")
_REQUIREMENTS = re.compile(r"((dev|test|tests|testing)[-_])?requirements([-_](dev|test|tests|testing))?\.txt")


@dataclass(frozen=True)
class InstallStep:
    """One installer run of the setup step."""

    description: str
    """What a person reads in the progress: ``npm ci (package-lock.json)``."""
    inputs: tuple[str, ...]
    """Workspace-relative files whose content decides the result (the layer key)."""
    script: str
    """Shell lines, run as root in ``/workspace``."""


@dataclass(frozen=True)
class DependencyPlan:
    """Every install step of a workspace; empty when it declares nothing to install."""

    steps: tuple[InstallStep, ...]

    @property
    def installs_node_modules(self) -> bool:
        return any(step.description.split()[0] in ("npm", "pnpm", "yarn") for step in self.steps)

    def key(self, workspace: Path, runtime_key: str) -> str:
        """The dependency layer's key: the runtime, the scripts and every input file's content."""
        digest = hashlib.sha256(runtime_key.encode())
        for step in self.steps:
            digest.update(step.script.encode())
            for name in step.inputs:
                digest.update(name.encode() + b"\0")
                path = workspace / name
                digest.update(path.read_bytes() if path.is_file() else b"<missing>")
        return digest.hexdigest()

    def script(self) -> str:
        """The whole setup script: every step, then the project copy removed (node_modules kept)."""
        lines = ["set -eu", "cd /workspace"]
        for step in self.steps:
            lines += [f"echo '[setup] {step.description}'", step.script]
        lines += [
            "find /workspace -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +",
            # Scratch folders tools write into node_modules; the executor mounts tmpfs there.
            "if [ -d /workspace/node_modules ]; then mkdir -p /workspace/node_modules/.cache "
            "/workspace/node_modules/.vite /workspace/node_modules/.vitest; fi",
            "mkdir -p /opt/sprintflow && chmod -R a+rX /opt/sprintflow /workspace",
        ]
        return "\n".join(lines) + "\n"


def _package_json(workspace: Path) -> dict | None:
    path = workspace / "package.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        from sprintflow.errors import ConfigError

        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else None


def _package_manager_version(package: dict, name: str, default: str) -> str:
    """The version ``packageManager`` pins for ``name`` (``pnpm@9.12.0+sha…``), else ``default``."""
    declared = package.get("packageManager")
    if isinstance(declared, str) and declared.startswith(f"{name}@"):
        return declared.split("@", 1)[1].split("+", 1)[0]
    return default


_PLAYWRIGHT_CHROMIUM = f"""\
if [ -f node_modules/playwright-core/browsers.json ] && [ -x /usr/bin/chromium ]; then
  for rev in $(node -e "for (const b of require('./node_modules/playwright-core/browsers.json').browsers) \
if (b.name.startsWith('chromium')) console.log(b.name.replace(/-/g, '_') + '-' + b.revision)"); do
    for exe in chrome-linux/chrome chrome-linux64/chrome chrome-linux/headless_shell \
chrome-headless-shell-linux64/chrome-headless-shell; do
      mkdir -p "{PLAYWRIGHT_BROWSERS}/$rev/$(dirname $exe)"
      ln -sf /usr/bin/chromium "{PLAYWRIGHT_BROWSERS}/$rev/$exe"
    done
    touch "{PLAYWRIGHT_BROWSERS}/$rev/INSTALLATION_COMPLETE" "{PLAYWRIGHT_BROWSERS}/$rev/DEPENDENCIES_VALIDATED"
  done
fi"""
"""Playwright looks for its own Chromium build by revision: point each revision it wants at the image's."""


def _node_step(workspace: Path) -> InstallStep | None:
    package = _package_json(workspace)
    if package is None:
        return None
    npmrc = (".npmrc",) if (workspace / ".npmrc").is_file() else ()
    for lockfile in ("package-lock.json", "npm-shrinkwrap.json"):
        if (workspace / lockfile).is_file():
            return InstallStep(f"npm ci ({lockfile})", ("package.json", lockfile, *npmrc),
                               "npm ci --no-audit --no-fund\n" + _PLAYWRIGHT_CHROMIUM)
    if (workspace / "pnpm-lock.yaml").is_file():
        version = _package_manager_version(package, "pnpm", "9")
        return InstallStep(f"pnpm {version} install --frozen-lockfile (pnpm-lock.yaml)",
                           ("package.json", "pnpm-lock.yaml", *npmrc),
                           f"npm install -g --no-audit --no-fund --prefix {TOOLS} pnpm@{shlex.quote(version)}\n"
                           f"{TOOLS}/bin/pnpm install --frozen-lockfile --package-import-method copy "
                           "--store-dir /tmp/pnpm-store\n" + _PLAYWRIGHT_CHROMIUM)
    if (workspace / "yarn.lock").is_file():
        version = _package_manager_version(package, "yarn", "1")
        if not version.startswith("1"):
            from .runtimes import RuntimeUnavailable

            raise RuntimeUnavailable(f"package.json packageManager 'yarn@{version}': only yarn 1 lockfiles "
                                     "are installed in the sandbox (yarn 2+ Plug'n'Play keeps no node_modules)")
        return InstallStep(f"yarn {version} install --frozen-lockfile (yarn.lock)",
                           ("package.json", "yarn.lock", *npmrc),
                           f"npm install -g --no-audit --no-fund --prefix {TOOLS} yarn@{shlex.quote(version)}\n"
                           f"{TOOLS}/bin/yarn install --frozen-lockfile --non-interactive "
                           "--cache-folder /tmp/yarn-cache\n" + _PLAYWRIGHT_CHROMIUM)
    if package.get("dependencies") or package.get("devDependencies"):
        return InstallStep("npm install (no lockfile: versions are whatever the registry serves today)",
                           ("package.json", *npmrc), "npm install --no-audit --no-fund\n" + _PLAYWRIGHT_CHROMIUM)
    return None


def _pyproject(workspace: Path) -> dict:
    path = workspace / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        from sprintflow.errors import ConfigError

        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def requirement_files(workspace: Path) -> list[str]:
    """The requirements files the setup step installs (``requirements.txt``, ``test-requirements.txt`` …):
    regular files only (a FIFO would block pip and us)."""
    return sorted(p.name for p in workspace.iterdir() if _REQUIREMENTS.fullmatch(p.name) and p.is_file())


def python_lockfile(workspace: Path, pyproject: dict | None = None) -> str | None:
    """The lockfile the Python setup step installs exactly from: ``uv.lock`` for a ``[project]``,
    ``poetry.lock`` for a ``[project]`` or a Poetry project; None when it installs from requirements files
    and the project's own ranges."""
    pyproject = _pyproject(workspace) if pyproject is None else pyproject
    if pyproject.get("project") and (workspace / "uv.lock").is_file():
        return "uv.lock"
    if (pyproject.get("project") or (pyproject.get("tool") or {}).get("poetry")) \
            and (workspace / "poetry.lock").is_file():
        return "poetry.lock"
    return None


def _python_step(workspace: Path) -> InstallStep | None:
    requirements = requirement_files(workspace)
    pyproject = _pyproject(workspace)
    poetry = bool((pyproject.get("tool") or {}).get("poetry"))
    installable = bool(pyproject.get("project")) or poetry or (workspace / "setup.py").is_file() \
        or (workspace / "setup.cfg").is_file()
    if not requirements and not installable:
        return None
    lines = [f"python3 -m venv --system-site-packages {VENV}"]
    declared = (pyproject.get("project") or {}).get("optional-dependencies") or {}
    extras = [e for e in _TEST_EXTRAS if e in declared]
    groups = [g for g in _TEST_EXTRAS if g in (pyproject.get("dependency-groups") or {})]
    lock = python_lockfile(workspace, pyproject)
    if lock == "uv.lock":
        return _uv_step(lines, extras, groups)
    if lock == "poetry.lock":
        return _poetry_step(lines, pyproject)
    lines.append(f"{VENV}/bin/python -m pip install -q --disable-pip-version-check -U 'pip>=25.1'")
    described = []
    for name in requirements:
        lines.append(f"{VENV}/bin/python -m pip install -q -r {shlex.quote(name)}")
        described.append(name)
    inputs = [*requirements]
    if installable:
        target = "." + (f"[{','.join(extras)}]" if extras else "")
        group_flags = "".join(f" --group {g}" for g in groups)
        # Editable: the installed project is the mounted workspace, whatever the generator changes.
        lines.append(_PRETEND_VERSION)
        lines.append(f"{VENV}/bin/python -m pip install -q -e {shlex.quote(target)}{group_flags}")
        described.append(f"-e {target}{group_flags.replace(' --group ', ' group ')}")
        inputs += [name for name in ("pyproject.toml", "setup.py", "setup.cfg") if (workspace / name).is_file()]
    lines.append(_VENV_TOOLS)
    return InstallStep("pip install " + " ".join(described), tuple(inputs), "\n".join(lines))


def _uv_step(lines: list[str], extras: list[str], groups: list[str]) -> InstallStep:
    """A uv project: exactly what uv.lock pins (``uv sync --frozen``, its default groups and the test extras
    and groups), into the sandbox's virtualenv, the project editable; requirements files are not read (the
    lock decides). uv itself is pinned (:data:`UV_VERSION`), in a virtualenv of its own."""
    flags = "".join(f" --extra {e}" for e in extras) + "".join(f" --group {g}" for g in groups)
    lines = [*lines,
             _PRETEND_VERSION,
             *_pinned_tool(UV_TOOL, f"uv=={UV_VERSION}"),
             # The sandbox's virtualenv is the project's environment, kept as it is (it sees the image's tools);
             # no Python is downloaded (the runtime layer's is the one the declaration chose), no cache kept.
             f"UV_PROJECT_ENVIRONMENT={VENV} UV_PYTHON_DOWNLOADS=never UV_NO_CACHE=1 UV_LINK_MODE=copy "
             f"{UV_TOOL}/bin/uv sync --frozen --inexact --no-progress --python {VENV}/bin/python{flags}",
             _VENV_TOOLS]
    described = f"uv sync --frozen (uv.lock){flags.replace(' --extra ', ' extra ').replace(' --group ', ' group ')}"
    return InstallStep(described, ("pyproject.toml", "uv.lock"), "\n".join(lines))


def _poetry_step(lines: list[str], pyproject: dict) -> InstallStep:
    """A Poetry project: exactly what poetry.lock pins (``poetry install``: the project editable, its
    non-optional groups, and the test extras and optional test groups), into the sandbox's virtualenv;
    requirements files are not read (the lock decides). Poetry itself is pinned (:data:`POETRY_VERSION`),
    in a virtualenv of its own; a lock that no longer matches pyproject.toml fails the step, as it fails
    ``poetry install`` on a developer's machine."""
    poetry = (pyproject.get("tool") or {}).get("poetry") or {}
    declared = {**(poetry.get("extras") or {}), **((pyproject.get("project") or {}).get("optional-dependencies") or {})}
    extras = [e for e in _TEST_EXTRAS if e in declared]
    optional = [g for g in _TEST_EXTRAS if ((poetry.get("group") or {}).get(g) or {}).get("optional")]
    flags = "".join(f" --extras {e}" for e in extras) + (f" --with {','.join(optional)}" if optional else "")
    lines = [*lines,
             _PRETEND_VERSION,
             *_pinned_tool(POETRY_TOOL, f"poetry=={POETRY_VERSION}"),
             # Into the sandbox's virtualenv (the active one: Poetry creates none), no cache kept in the image.
             f"VIRTUAL_ENV={VENV} PATH={VENV}/bin:$PATH POETRY_VIRTUALENVS_CREATE=false POETRY_NO_INTERACTION=1 "
             f"POETRY_CACHE_DIR=/tmp/poetry-cache {POETRY_TOOL}/bin/poetry install --no-ansi{flags}",
             _VENV_TOOLS]
    described = f"poetry install (poetry.lock){flags.replace(' --extras ', ' extra ').replace(' --with ', ' with ')}"
    return InstallStep(described, ("pyproject.toml", "poetry.lock"), "\n".join(lines))


def _pinned_tool(venv: str, requirement: str) -> list[str]:
    """Lines that install ``requirement`` into a virtualenv of its own at ``venv`` (the project's sees none of it)."""
    return [f"python3 -m venv {venv}", f"{venv}/bin/python -m pip install -q --disable-pip-version-check "
                                        f"{shlex.quote(requirement)}"]


_PRETEND_VERSION = "if [ ! -f PKG-INFO ]; then export SETUPTOOLS_SCM_PRETEND_VERSION=0+sandbox; fi"
"""A checkout's version for setuptools-scm, which has no .git to read in the sandbox (an sdist has PKG-INFO).
Set only for building the project itself, not the requirements files before it."""

_VENV_TOOLS = f"""for tool in /usr/local/bin/*; do
  name=$(basename "$tool")
  if [ -e "{VENV}/bin/$name" ]; then continue; fi
  if head -n1 "$tool" | grep -q '^#!.*python'; then
    sed '1s|.*|#!{VENV}/bin/python3|' "$tool" > "{VENV}/bin/$name" && chmod 755 "{VENV}/bin/$name"
  else
    ln -s "$tool" "{VENV}/bin/$name"
  fi
done"""
"""The image's python tools as the venv's own commands: `pytest` and `mypy` must see the project,
and `python -m ruff` looks for its binary beside the venv's python."""


def _go_step(workspace: Path) -> InstallStep | None:
    if not (workspace / "go.mod").is_file():
        return None
    from .downloads import go_proxy_url

    inputs = tuple(name for name in ("go.mod", "go.sum", "go.work", "go.work.sum") if (workspace / name).is_file())
    # The setup step alone has network: the module proxy the host uses (the checksum database through it).
    # -modcacherw: the modules stay removable when a layer is pruned.
    script = f"GOPROXY={shlex.quote(go_proxy_url())} GOFLAGS=-modcacherw go mod download"
    return InstallStep(f"go mod download ({', '.join(inputs)})", inputs, script)


def _manifests(workspace: Path, name: str) -> tuple[str, ...]:
    """Every ``name`` of the project (a workspace's or a multi-module build's members), build output aside."""
    found = []
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in ("target", "node_modules", ".git", ".sprintflow"))
        if name in files:
            found.append(Path(folder, name).relative_to(workspace).as_posix())
    return tuple(found)


_MAVEN_SETTINGS = f"""<settings><localRepository>{MAVEN_REPOSITORY}</localRepository><offline>OFFLINE</offline>
<interactiveMode>false</interactiveMode></settings>"""
_TRUST_STORE = """\
import java.io.*; import java.security.KeyStore; import java.security.cert.*;
public class TrustStore { public static void main(String[] args) throws Exception {
  KeyStore store = KeyStore.getInstance("PKCS12"); store.load(null, null); int n = 0;
  try (InputStream in = new FileInputStream(args[0])) {
    for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in))
      store.setCertificateEntry("ca" + n++, c);
  }
  try (OutputStream out = new FileOutputStream(args[1])) { store.store(out, "changeit".toCharArray()); } } }"""
"""The host's CA bundle (PEM) as a trust store Java reads: the JDK reads no PEM bundle itself."""
# Every test class and none of its methods: Surefire skips a run whose selection names no class before
# it resolves its provider (and the JUnit launcher it loads to match the project's JUnit), so the
# selection names them all, and a method none has.
_NO_TEST = "'*#sprintflowSetupSelectsNoTest'"
_RUN_NOTHING = (f"-Dmaven.compiler.failOnError=false -Dtest={_NO_TEST} -Dit.test={_NO_TEST} "
                "-Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false -DfailIfNoTests=false "
                "-Dmaven.javadoc.skip=true -Dgpg.skip=true")
_SKIPPED_CHECKS = ("-Drat.skip=true -Dcheckstyle.skip=true -Dspotbugs.skip=true -Dpmd.skip=true -Denforcer.skip=true "
                   "-Djapicmp.skip=true -Danimal.sniffer.skip=true -Dlicense.skip=true -Dspotless.check.skip=true")


PITEST_ARTIFACTS = ("org.pitest:pitest-maven:1.30.2:maven-plugin", "org.pitest:pitest-junit5-plugin:1.2.3")
"""PIT's Maven plugin and its JUnit 5 plugin: what the mutation check of ``mvn test`` runs (each with its
dependencies), fetched into the Maven repository the judged commands read offline."""
_FETCH_TOOL = "mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get -Dartifact={artifact}"
_HOST_FETCH_TIMEOUT_S = 600


def host_maven_tools(ready_folder: Path) -> str | None:
    """PIT's artifacts (:data:`PITEST_ARTIFACTS`) in the host's Maven repository, the one the local executor's
    offline ``mvn`` reads (``~/.m2/repository``, or the ``localRepository`` its settings name): fetched from
    Maven Central by the judge the first time (once per repository: ``ready_folder`` keeps the mark), in an
    empty folder (no project's POM or extensions take part), contained with network and only that repository
    writable. The host's counterpart of the setup step's fetch. None when they are there; else why not.
    """
    from sprintflow.io.containment import Bind, Containment
    from sprintflow.io.files import file_lock
    from sprintflow.io.process import run_command
    from sprintflow.io.secrets import strategy_env

    repository = host_maven_repository()
    mark = ready_folder / ("pitest-" + hashlib.sha256(f"{repository}\0{PITEST_ARTIFACTS}".encode()).hexdigest()[:24])
    if mark.is_file():
        return None
    ready_folder.mkdir(parents=True, exist_ok=True)
    with file_lock(ready_folder / f"{mark.name}.lock"):
        if mark.is_file():
            return None
        try:
            repository.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"the host's Maven repository {repository} cannot be written: {exc}"
        env = strategy_env(passed=("JAVA_HOME", "MAVEN_OPTS", "MAVEN_HOME", "M2_HOME", "SSL_CERT_FILE"))
        with tempfile.TemporaryDirectory() as empty:
            for artifact in PITEST_ARTIFACTS:
                fetch = f"{_FETCH_TOOL.format(artifact=artifact)} -Dmaven.repo.local={shlex.quote(str(repository))}"
                done = run_command(fetch, cwd=empty, timeout=_HOST_FETCH_TIMEOUT_S, env=env,
                                   contain=Containment(binds=(Bind(str(repository), str(repository), writable=True),),
                                                       network=True))
                if done.exit_code != 0 or done.timed_out:
                    return (f"{artifact} could not be fetched from Maven Central into {repository} "
                            f"(exit {done.exit_code}): {(done.stdout + done.stderr).strip()[-300:]}")
        mark.touch()
    return None


def host_maven_repository() -> Path:
    """The local repository the host's ``mvn`` uses: the user's settings', then the global settings', else
    ``~/.m2/repository``."""
    for settings in (Path.home() / ".m2" / "settings.xml", Path("/etc/maven/settings.xml")):
        try:
            text = re.sub(r"<!--.*?-->", "", settings.read_text(encoding="utf-8", errors="replace"), flags=re.S)
        except OSError:
            continue
        found = re.search(r"<localRepository>\s*([^<\s][^<]*?)\s*</localRepository>", text)
        if found:
            return Path(found.group(1).replace("${user.home}", str(Path.home())))
    return Path.home() / ".m2" / "repository"


def _maven_step(workspace: Path) -> InstallStep | None:
    if not (workspace / "pom.xml").is_file():
        return None
    inputs = (*_manifests(workspace, "pom.xml"),
              *(name for name in (".mvn/maven.config", ".mvn/extensions.xml") if (workspace / name).is_file()))
    settings = "/etc/maven/settings.xml"
    script = "\n".join([
        f"mkdir -p {MAVEN_REPOSITORY}",
        f"echo {shlex.quote(_MAVEN_SETTINGS.replace('OFFLINE', 'false'))} > {settings}",
        'if [ -n "${SSL_CERT_FILE:-}" ]; then',
        f"  printf '%s\\n' {shlex.quote(_TRUST_STORE)} > /tmp/TrustStore.java",
        '  java /tmp/TrustStore.java "$SSL_CERT_FILE" /tmp/sprintflow-trust.p12',
        '  export MAVEN_OPTS="-Djavax.net.ssl.trustStore=/tmp/sprintflow-trust.p12 '
        '-Djavax.net.ssl.trustStorePassword=changeit"',
        "fi",
        # Everything the POM names, as far as the registry serves it: a plugin's dependency given as a range
        # can resolve to a release the registry lists but does not serve (seen: spotbugs 4.10.5), and that
        # is the setup's loss only where a judged run needs it; the build's own passes below say what it needs.
        "mvn -B -q org.apache.maven.plugins:maven-dependency-plugin:3.8.1:go-offline "
        "|| echo '[setup] go-offline could not resolve all the POM names: the build passes below load what it needs'",
        # What only a run resolves: the test providers, what plugins load as they run. A compile error is the
        # judged run's to report, never the setup's: the build goes on past it, and no test is selected.
        # A check that fails stops the build, and what its later plugins load would be missing offline: the
        # first pass skips the usual checks, the second runs them for what they load themselves.
        f"for skip in '{_SKIPPED_CHECKS}' ''; do",
        f"  mvn -B -q verify $skip {_RUN_NOTHING} "
        "|| echo '[setup] the build stopped early: what it did not load is missing offline'",
        "done",
        # The judge's mutation tool for Maven (PIT, :mod:`sprintflow.evaluate.mutation.pitest`), from Maven
        # Central, never from the project: missing, the mutation check says it was unavailable.
        *(f"{_FETCH_TOOL.format(artifact=a)} || echo '[setup] {a} could not be fetched: no mutation check'"
          for a in PITEST_ARTIFACTS),
        f"echo {shlex.quote(_MAVEN_SETTINGS.replace('OFFLINE', 'true'))} > {settings}",
        # Maven records what it resolved beside the artifacts, even offline: each run's own copy (the
        # container's layer) must be writable by the sandbox user.
        f"chmod -R a+rwX {MAVEN_REPOSITORY}",
    ])
    return InstallStep(f"Maven dependencies ({', '.join(inputs[:3])}{' …' if len(inputs) > 3 else ''})",
                       inputs, script)


def _cargo_step(workspace: Path) -> InstallStep | None:
    if not (workspace / "Cargo.toml").is_file():
        return None
    locked = (workspace / "Cargo.lock").is_file()
    inputs = (*_manifests(workspace, "Cargo.toml"), *(("Cargo.lock",) if locked else ()),
              *(name for name in (".cargo/config.toml", ".cargo/config") if (workspace / name).is_file()))
    script = "\n".join([
        "export CARGO_NET_OFFLINE=false",
        'if [ -n "${SSL_CERT_FILE:-}" ]; then export CARGO_HTTP_CAINFO="$SSL_CERT_FILE"; fi',
        f"cargo fetch{' --locked' if locked else ''}",
        f"chmod -R a+rwX {CARGO_HOME}",
    ])
    described = " --locked (Cargo.lock)" if locked else " (no Cargo.lock: versions are whatever crates.io serves today)"
    return InstallStep(f"cargo fetch{described}", inputs, script)


def plan_dependencies(workspace: Path) -> DependencyPlan:
    """The install steps ``workspace`` asks for, from its manifests and lockfiles.

    Example:
        >>> import tempfile
        >>> ws = Path(tempfile.mkdtemp())
        >>> _ = (ws / "package.json").write_text('{"devDependencies": {"vitest": "3.2.4"}}')
        >>> _ = (ws / "package-lock.json").write_text("{}")
        >>> [step.description for step in plan_dependencies(ws).steps]
        ['npm ci (package-lock.json)']
    """
    steps = [step for step in (_node_step(workspace), _python_step(workspace), _go_step(workspace),
                               _maven_step(workspace), _cargo_step(workspace)) if step is not None]
    return DependencyPlan(tuple(steps))
