"""Tell a broken environment apart from broken code, from what a failed command printed.

A check can fail because the sandbox cannot run it: the tool is not installed,
a declared dependency is missing, a native module was built for another
runtime, the runtime is too old for a dependency, the container ran out of
memory or disk. None of these is the code's fault, and a generator iteration
spent on them is wasted. :func:`classify_environment` recognises them and says
what to fix in the environment; anything it does not recognise is left to the
code (``None``), so a real code failure is never excused.

The one judgement that needs the workspace is whether a missing module is a
declared dependency (environment: it was not installed) or not (code: an import
of something the project never declared, or a module of its own that does not
exist). :class:`DeclaredDependencies` reads that from ``package.json``,
``pyproject.toml`` and ``requirements*.txt``.

Example:
    >>> failure = classify_environment("sh: 1: vitest: not found", 127)
    >>> failure.kind.value, failure.subject
    ('command-not-found', 'vitest')
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from sprintflow.parsers._common import strip_ansi

__all__ = ["DeclaredDependencies", "EnvironmentFailure", "EnvironmentKind", "classify_environment",
           "environment_failure"]


class EnvironmentKind(str, Enum):
    """Why the environment, not the code, made a check fail."""

    command_not_found = "command-not-found"
    missing_dependency = "missing-dependency"
    native_module = "native-module"
    runtime_api = "runtime-api"
    out_of_memory = "out-of-memory"
    killed = "killed"
    """Killed by SIGKILL, and nothing says it was for memory: from outside the sandbox."""
    disk_full = "disk-full"
    toolchain = "toolchain"
    """The project declares a newer toolchain than the one where the check ran (``go.mod``'s ``go`` line)."""


@dataclass(frozen=True)
class EnvironmentFailure:
    """An environment failure: what kind, about what, the line that shows it, and what to fix."""

    kind: EnvironmentKind
    evidence: str
    """The output line that gave it away."""
    hint: str
    """What to change in the environment (image, setup step, limits), in one or two sentences."""
    subject: str | None = None
    """The command, module or API concerned, when there is one."""


def _normalise(name: str) -> str:
    """PEP 503 name normalisation; npm names are already lower case."""
    return re.sub(r"[-_.]+", "-", name).lower()


# Import names that differ from the distribution that provides them.
_IMPORT_TO_DISTRIBUTION = {
    "yaml": "pyyaml", "pil": "pillow", "sklearn": "scikit-learn", "cv2": "opencv-python",
    "bs4": "beautifulsoup4", "dateutil": "python-dateutil", "jwt": "pyjwt", "attr": "attrs",
    "dotenv": "python-dotenv", "magic": "python-magic", "serial": "pyserial", "git": "gitpython",
    "jose": "python-jose", "multipart": "python-multipart", "google": "protobuf",
}
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class DeclaredDependencies:
    """What a workspace declares it depends on, and the top-level modules that are its own."""

    node: frozenset[str] = frozenset()
    python: frozenset[str] = frozenset()
    """Normalised distribution names (PEP 503)."""
    own_modules: frozenset[str] = frozenset()
    """Top-level Python packages and modules the workspace itself contains."""
    own_files: frozenset[str] = field(default=frozenset(), repr=False)
    """Workspace-relative ``.py`` paths, to tell a missing own submodule (code) from an uninstalled package."""
    project: str | None = None
    """The project's own distribution name (``[project] name``), normalised."""
    ecosystems: frozenset[str] = frozenset()
    """The package ecosystems whose manifests the workspace has (``node``, ``python``, ``go``, ``rust``,
    ``jvm``): what install advice fits it."""

    @classmethod
    def from_workspace(cls, workspace: Path) -> DeclaredDependencies:
        """Read ``package.json``, ``pyproject.toml`` and ``requirements*.txt`` at the workspace root.

        Unreadable manifests count as declaring nothing: the classifier then
        leaves the failure to the code, which is the safe side.
        """
        node = _package_json_dependencies(workspace / "package.json")
        python = _pyproject_dependencies(workspace / "pyproject.toml")
        for requirements in sorted(workspace.glob("requirements*.txt")):
            python |= _requirements(requirements)
        own_files = _own_python_files(workspace)
        own = {path.split("/")[0].removesuffix(".py") for path in own_files}
        ecosystems = {name for name, manifests in _ECOSYSTEM_MANIFESTS.items()
                      if any((workspace / manifest).is_file() for manifest in manifests)}
        return cls(node=frozenset(node), python=frozenset(python), own_modules=frozenset(own),
                   own_files=frozenset(own_files), project=_pyproject_name(workspace / "pyproject.toml"),
                   ecosystems=frozenset(ecosystems))

    def install_advice(self) -> str:
        """How this project's dependencies are installed, for advice (every ecosystem it has).

        Example:
            >>> DeclaredDependencies(ecosystems=frozenset({"go"})).install_advice()
            'go mod download'
        """
        return _install_advice(self)

    def declares_python(self, module: str) -> bool:
        """Whether the top-level ``module`` comes from a declared Python distribution."""
        top = module.split(".")[0].lower()
        return _normalise(_IMPORT_TO_DISTRIBUTION.get(top, top)) in self.python

    def owns_python(self, module: str) -> bool:
        """Whether ``module`` (dotted) exists as a file or package of the workspace."""
        path = module.replace(".", "/")
        return any(f == f"{path}.py" or f.startswith(f"{path}/") for f in self.own_files)


_ECOSYSTEM_MANIFESTS = {
    "node": ("package.json",), "python": ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"),
    "go": ("go.mod",), "rust": ("Cargo.toml",), "jvm": ("pom.xml", "build.gradle", "build.gradle.kts"),
}
_INSTALL = {"node": "npm ci (or the project's package manager)", "python": "pip install -e '.[dev]'",
            "go": "go mod download", "rust": "cargo fetch", "jvm": "the Maven or Gradle dependency download"}


# What a failure's own text says of its ecosystem, when the manifests do not.
_ECOSYSTEM_TRACES = {
    "node": re.compile(r"Node\.js|node_modules|NODE_MODULE_VERSION|\bnpm\b|\bnpx\b|esbuild|rollup"),
    "python": re.compile(r"Traceback|ImportError|ModuleNotFoundError|site-packages|\bpip\b|python"),
    "go": re.compile(r"^go: |\bgo (?:test|build|vet)\b", re.MULTILINE),
}


def _install_advice(declared: DeclaredDependencies | None, text: str = "") -> str:
    """How the dependencies of the project's ecosystems are installed (never another ecosystem's)."""
    ecosystems = set(declared.ecosystems) if declared is not None else set()
    if not ecosystems:
        ecosystems = {name for name, trace in _ECOSYSTEM_TRACES.items() if trace.search(text)}
    if "node" in ecosystems and "NODE_MODULE_VERSION" in text:
        return "npm ci / npm rebuild"
    known = [_INSTALL[name] for name in _INSTALL if name in ecosystems]
    return ", ".join(known) if known else "the project's dependency install"


def _package_json_dependencies(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        section = data.get(key) if isinstance(data, dict) else None
        if isinstance(section, dict):
            names.update(section)
    return names


def _pyproject_dependencies(path: Path) -> set[str]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    project = data.get("project") or {}
    specs: list[str] = list(project.get("dependencies") or [])
    for extra in (project.get("optional-dependencies") or {}).values():
        specs.extend(extra)
    for group in (data.get("dependency-groups") or {}).values():
        specs.extend(item for item in group if isinstance(item, str))
    poetry = ((data.get("tool") or {}).get("poetry") or {})
    specs.extend(poetry.get("dependencies") or {})
    specs.extend((poetry.get("dev-dependencies") or {}))
    for group in (poetry.get("group") or {}).values():
        specs.extend(group.get("dependencies") or {})
    return {_normalise(m[1]) for spec in specs if (m := _REQUIREMENT_NAME.match(str(spec)))}


def _pyproject_name(path: Path) -> str | None:
    try:
        name = (tomllib.loads(path.read_text(encoding="utf-8")).get("project") or {}).get("name")
    except (OSError, ValueError):
        return None
    return _normalise(name) if isinstance(name, str) else None


def _requirements(path: Path) -> set[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return set()
    return {_normalise(m[1]) for line in lines
            if not line.strip().startswith(("#", "-")) and (m := _REQUIREMENT_NAME.match(line))}


_SKIPPED_DIRS = {"node_modules", ".git", ".venv", "venv", ".tox", ".sprintflow", "__pycache__", "build", "dist"}


def _own_python_files(workspace: Path) -> set[str]:
    """``.py`` files under the workspace root and ``src/``, as importable paths (``pkg/mod.py``)."""
    files: set[str] = set()
    for base in (workspace, workspace / "src"):
        if not base.is_dir():
            continue
        for path in base.rglob("*.py"):
            parts = path.relative_to(base).parts
            if not any(part in _SKIPPED_DIRS for part in parts) and parts[0] != "src":
                files.add("/".join(parts))
    return files


# --- the recognisers, most specific first -------------------------------------------------

_DISK = re.compile(r"ENOSPC|No space left on device|\[Errno 28\]|Disk quota exceeded")
# Memory told by who ran out of it: Node's heap, the allocator, Docker's OOMKilled state.
_OOM_LINE = re.compile(r"JavaScript heap out of memory|Cannot allocate memory|ENOMEM|\bOOMKilled\b(?!=false)")
# The shell's word for a child killed by SIGKILL: `Killed`, or `sh: line 1:  4242 Killed    node x.js`;
# and an executor's note on who killed it (a kill before the deadline that Docker did not call OOM).
_KILLED_LINE = re.compile(r"^Killed$|^(?:\S+: )?(?:line \d+: )?\s*\d+ Killed\s"
                          r"|^\[sprintflow: the command was killed by SIGKILL.*$", re.MULTILINE)
_NATIVE = re.compile(
    r"was compiled against a different Node\.js version using\s+NODE_MODULE_VERSION \d+"
    r"|invalid ELF header|wrong ELF class|Exec format error"
    r"|version [`']GLIBC(?:XX)?_[\d.]+' not found"
    r"|You installed esbuild for another platform"
    r"|Cannot find module '@rollup/rollup-[\w-]+'"
    r"|Cannot find module '@(?:swc|esbuild|oxlint|biomejs)/[\w-]*(?:linux|darwin|win32)[\w-]*'"
    r"|\.so(?:\.\d+)*: cannot open shared object file"
    r"|ImportError: .*\.so: undefined symbol")
# Runtime APIs that Node added in version 17 or later: a runtime older than the project needs
# lacks them, which is the runtime's fault, not the code's. Names a library might also export
# under a changed API (`glob`) are left out: calling those wrongly is the code's mistake.
_NEWER_NODE_FUNCTIONS = (
    "styleText", "groupBy", "withResolvers", "fromAsync", "toSorted", "toReversed", "toSpliced",
    "globSync", "isWellFormed", "toWellFormed", "symmetricDifference", "isSubsetOf", "isSupersetOf",
    "isDisjointFrom", "getBuiltinModule", "parseEnv", "loadEnvFile", "availableParallelism",
)
_NEWER_NODE_GLOBALS = (
    "structuredClone", "fetch", "File", "FormData", "Headers", "Request", "Response", "WebSocket",
    "navigator", "CustomEvent", "Iterator", "CompressionStream", "DecompressionStream", "crypto",
)
_NOT_A_FUNCTION = re.compile(r"TypeError: (?P<expr>[\w$.]*?(?P<name>[\w$]+)) is not a function")
_NOT_DEFINED = re.compile(r"ReferenceError: (?P<name>[\w$]+) is not defined")
_UNKNOWN_BUILTIN = re.compile(r"(?:ERR_UNKNOWN_BUILTIN_MODULE|No such built-in module)[:\s]+(?P<name>[\w:/]+)")
_PY_STDLIB_IMPORT = re.compile(r"ImportError: cannot import name '(?P<name>\w+)' from '(?P<module>[\w.]+)'")
_PY_STDLIB_ATTR = re.compile(r"AttributeError: module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")
_SYNTAX_ERROR = re.compile(r"^\s*(?:SyntaxError|[\w.]*SyntaxError):", re.MULTILINE)
_VENDOR_PATH = re.compile(r"node_modules/|site-packages/|dist-packages/")
_RUNTIME_VERSION = re.compile(r"^Node\.js (v\d+\.\d+\.\d+)$|Python (3\.\d+(?:\.\d+)?)", re.MULTILINE)

_SHELL_NOT_FOUND = re.compile(
    r"^(?:\S*?(?:sh|bash|zsh|dash)(?:: line \d+|: \d+)?: )(?P<cmd>[^\s:]+): (?:command )?not found"
    r"|exec: \"(?P<exec>[^\"]+)\": executable file not found"
    r"|^env: '?(?P<env>[^\s':]+)'?: No such file or directory"
    r"|^\S*python[\d.]*: No module named (?P<pymod>[\w.]+)\s*$"
    r"|(?:ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL|error) Command \"(?P<pm>[^\"]+)\" not found"
    r"|npm (?:ERR!|error) could not determine executable to run", re.MULTILINE)
# npx reaching for the registry for a tool that is not installed, in a sandbox without network.
_NPX_OFFLINE = re.compile(r"npm (?:ERR!|error) code (?:ENOTFOUND|EAI_AGAIN|ENOTCACHED|ECONNREFUSED)")
_NPX_PACKAGE = re.compile(r"request to https?://[^/\s]+/(?P<pkg>(?:@[^/\s]+/)?[^/\s]+) failed")
# The go command refusing an older toolchain, or failing to fetch the one go.mod names.
_GO_TOOLCHAIN = re.compile(r"^go: (?P<file>\S+) requires go >= (?P<want>[\w.\-]+) \(running go (?P<have>[\w.\-]+)"
                           r"|^go: download (?P<fetch>go[\w.\-]+) for \S+: ", re.MULTILINE)
# A module the go command could not download: the proxy unreachable, or the network off (GOPROXY=off,
# GOFLAGS=-mod=mod in a sandbox without network). Not `missing go.sum entry` (the change's own
# go.sum) nor a checksum mismatch (a tampered module), which are no environment's fault.
# Only a module proxy's URL (`/@v/…`, `/@latest`): a test's own request that fails is the code's.
_GO_DOWNLOAD = re.compile(r"(?:(?P<module>[\w.\-~]+(?:/[\w.\-~]+)*@v[\w.\-+]+): )?(?:Get|reading) "
                          r"\"?https?://\S+/@(?:v/|latest)\S*?\"?: (?:dial tcp|net/http|proxyconnect)"
                          r"|module lookup disabled by GOPROXY=off|dial tcp: lookup proxy\.golang\.org")
_PY_NO_METADATA = re.compile(r"PackageNotFoundError: No package metadata was found for (?P<name>[\w.-]+)")
_PY_MISSING = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?(?P<module>[\w.]+)'?")
_NODE_MISSING = re.compile(r"Cannot find (?:module|package) '(?P<module>[^']+)'")


def classify_environment(output: str, exit_code: int | None,
                         declared: DeclaredDependencies | None = None,
                         timed_out: bool = False) -> EnvironmentFailure | None:
    """The environment failure a failed command's output shows, or ``None`` if it is the code's.

    Args:
        output: what the command printed (stdout and stderr together).
        exit_code: its exit code (127: command not found, 137: killed by SIGKILL; for memory only
            when the output says so, as Docker's OOMKilled note does).
        declared: the workspace's declared dependencies; without them a missing
            module is never called an environment failure.
        timed_out: the command hit its deadline (and so was killed by us, not for memory).

    Example:
        >>> failure = classify_environment(
        ...     "TypeError: util.styleText is not a function\\n    at /w/node_modules/eslint/lib/x.js:1:1"
        ...     "\\n\\nNode.js v18.19.0", 2)
        >>> failure.kind.value, failure.subject
        ('runtime-api', 'util.styleText')
        >>> failure.hint.startswith("The sandbox's runtime (Node.js v18.19.0) lacks util.styleText")
        True
    """
    if exit_code == 0:
        return None
    text = strip_ansi(output)
    recognisers: list[Callable[[], EnvironmentFailure | None]] = [
        lambda: _disk_full(text),
        lambda: None if timed_out else _out_of_memory(text),
        lambda: None if timed_out else _killed(text, exit_code),
        lambda: _native_module(text, declared),
        lambda: _runtime_api(text),
        lambda: _go_environment(text),
        lambda: _command_not_found(text, declared),
        lambda: _missing_dependency(text, declared),
    ]
    return next((found for recognise in recognisers if (found := recognise()) is not None), None)


def environment_failure(output: str, exit_code: int | None, workspace: Path,
                        timed_out: bool = False) -> EnvironmentFailure | None:
    """:func:`classify_environment` with the dependencies the workspace declares."""
    return classify_environment(output, exit_code, DeclaredDependencies.from_workspace(workspace), timed_out)


def _line_of(text: str, start: int, following: int = 0) -> str:
    """The line around ``start`` (and the next ``following`` lines, for messages that wrap), one line."""
    begin = text.rfind("\n", 0, start) + 1
    lines = text[begin:].split("\n")[:following + 1]
    return " ".join(line.strip() for line in lines if line.strip())[:300]


def _disk_full(text: str) -> EnvironmentFailure | None:
    match = _DISK.search(text)
    if not match:
        return None
    return EnvironmentFailure(EnvironmentKind.disk_full, _line_of(text, match.start()),
                              "The sandbox ran out of disk space: free space on the Docker host or give "
                              "the container's writable paths more room, then re-run.")


def _out_of_memory(text: str) -> EnvironmentFailure | None:
    match = _OOM_LINE.search(text)
    if not match:
        return None
    return EnvironmentFailure(EnvironmentKind.out_of_memory, _line_of(text, match.start()),
                              "The check ran out of memory: raise the sandbox's memory limit "
                              "(executor.memory) or run fewer workers (e.g. --maxWorkers / -n), then re-run.")


def _killed(text: str, exit_code: int | None) -> EnvironmentFailure | None:
    """Killed by SIGKILL before its deadline, and nothing says for memory: someone outside killed it."""
    match = _KILLED_LINE.search(text)
    if not match and exit_code != 137:
        return None
    evidence = _line_of(text, match.start()) if match else "exit code 137 (killed by SIGKILL)"
    return EnvironmentFailure(EnvironmentKind.killed, evidence.strip("[]"),
                              "The check was killed by SIGKILL from outside, before its deadline and not "
                              "reported as out of memory (a person, a supervisor or the host stopped it): "
                              "nothing says the code is to blame; re-run it.")


def _native_module(text: str, declared: DeclaredDependencies | None) -> EnvironmentFailure | None:
    match = _NATIVE.search(text)
    if not match:
        return None
    # Node wraps its message: "… using\nNODE_MODULE_VERSION 115. This version … requires\nNODE_MODULE_VERSION 108."
    return EnvironmentFailure(EnvironmentKind.native_module, _line_of(text, match.start(), following=2),
                              "A native module was built for another runtime or platform (typically "
                              "dependencies installed on the host and mounted into the sandbox): install "
                              f"the dependencies inside the sandbox ({_install_advice(declared, text)}) for the "
                              "runtime that runs the check.")


def _runtime(text: str) -> str:
    match = _RUNTIME_VERSION.search(text)
    if not match:
        return "The sandbox's runtime"
    return f"The sandbox's runtime (Node.js {match[1]})" if match[1] else f"The sandbox's runtime (Python {match[2]})"


def _runtime_api(text: str) -> EnvironmentFailure | None:
    api, evidence = _missing_runtime_api(text)
    if api is None:
        return None
    return EnvironmentFailure(EnvironmentKind.runtime_api, evidence,
                              f"{_runtime(text)} lacks {api}, which a dependency calls: run this check in an "
                              "image with the runtime the project declares (package.json engines, .nvmrc, "
                              "requires-python).", subject=api)


def _go_environment(text: str) -> EnvironmentFailure | None:
    """The go command's own word that the toolchain is too old or a module could not be downloaded."""
    if toolchain := _GO_TOOLCHAIN.search(text):
        want = f"go{toolchain['want']}" if toolchain["want"] else toolchain["fetch"]
        have = f" and go {toolchain['have']} ran the check" if toolchain["have"] else ""
        return EnvironmentFailure(EnvironmentKind.toolchain, _line_of(text, toolchain.start()),
                                  f"The project asks for {want}{have}: run the check with that toolchain "
                                  f"(GOTOOLCHAIN={want} makes the go command fetch it from the module proxy, "
                                  "in a step with network) or in an image that has it.", subject=want)
    if download := _GO_DOWNLOAD.search(text):
        module = download["module"]
        return EnvironmentFailure(EnvironmentKind.missing_dependency, _line_of(text, download.start()),
                                  f"{f'`{module}`' if module else 'A module'} could not be downloaded where the "
                                  "check ran (no network there): download the modules in the setup step "
                                  "(go mod download), the one step with network, or vendor them.", subject=module)
    return None


def _missing_runtime_api(text: str) -> tuple[str | None, str]:
    for match in _NOT_A_FUNCTION.finditer(text):
        if match["name"] in _NEWER_NODE_FUNCTIONS:
            return match["expr"], _line_of(text, match.start())
    for match in _NOT_DEFINED.finditer(text):
        if match["name"] in _NEWER_NODE_GLOBALS:
            return match["name"], _line_of(text, match.start())
    if builtin := _UNKNOWN_BUILTIN.search(text):
        return f"the built-in module {builtin['name']}", _line_of(text, builtin.start())
    for pattern in (_PY_STDLIB_IMPORT, _PY_STDLIB_ATTR):
        for match in pattern.finditer(text):
            if match["module"].split(".")[0] in sys.stdlib_module_names:
                return f"{match['module']}.{match['name']}", _line_of(text, match.start())
    for match in _SYNTAX_ERROR.finditer(text):
        # Node prints the file first, then the code and the SyntaxError; Python names the file before it.
        context = "\n".join(text[:match.start()].splitlines()[-6:])
        if _VENDOR_PATH.search(context):
            return "syntax a dependency uses", _line_of(text, match.start())
    return None, ""


def _command_not_found(text: str, declared: DeclaredDependencies | None) -> EnvironmentFailure | None:
    match = _SHELL_NOT_FOUND.search(text)
    offline = _NPX_OFFLINE.search(text)
    if not match and not offline:
        return None
    if match:
        command = next((match[g] for g in ("cmd", "exec", "env", "pymod", "pm") if match[g]), None)
        evidence = _line_of(text, match.start())
    else:
        assert offline is not None
        package = _NPX_PACKAGE.search(text)
        command, evidence = (package["pkg"] if package else None), _line_of(text, offline.start())
    what = f"`{command}` is" if command else "The command is"
    return EnvironmentFailure(EnvironmentKind.command_not_found, evidence,
                              f"{what} not installed where the check runs: install the project's "
                              f"dependencies in the sandbox ({_install_advice(declared, text)}) or use an image "
                              "that provides it.", subject=command)


def _missing_dependency(text: str, declared: DeclaredDependencies | None) -> EnvironmentFailure | None:
    if declared is None:
        return None
    for match in _PY_NO_METADATA.finditer(text):
        name = _normalise(match["name"])
        if name in declared.python or name == declared.project:
            return EnvironmentFailure(
                EnvironmentKind.missing_dependency, _line_of(text, match.start()),
                f"`{match['name']}` is not installed as a package in the sandbox, so its metadata "
                "(version, entry points) cannot be read: install the project there (pip install -e .), "
                "not only put its sources on the path.", subject=match["name"])
    for match in _PY_MISSING.finditer(text):
        module = match["module"]
        found = _python_module_failure(module, declared, _line_of(text, match.start()))
        if found:
            return found
    for match in _NODE_MISSING.finditer(text):
        package = _node_package(match["module"])
        if package and package in declared.node:
            return EnvironmentFailure(
                EnvironmentKind.missing_dependency, _line_of(text, match.start()),
                f"`{package}` is declared in package.json but not installed in the sandbox: run "
                "npm ci (or the project's package manager) in the sandbox's setup step.", subject=package)
    return None


def _python_module_failure(module: str, declared: DeclaredDependencies,
                           evidence: str) -> EnvironmentFailure | None:
    top = module.split(".")[0]
    if module == top and declared.declares_python(top):
        return EnvironmentFailure(
            EnvironmentKind.missing_dependency, evidence,
            f"`{top}` is a declared dependency but is not installed in the sandbox: install the project's "
            "dependencies there (pip install -e '.[dev]' or -r requirements.txt).", subject=top)
    if declared.owns_python(module):
        # The module is right there in the workspace: the project is simply not importable.
        return EnvironmentFailure(
            EnvironmentKind.missing_dependency, evidence,
            f"`{module}` is the project's own code, present in the workspace but not importable in the "
            "sandbox: install the project (pip install -e .) or put its source folder on the path "
            "(pytest's pythonpath = [\"src\"]).", subject=module)
    return None


def _node_package(specifier: str) -> str | None:
    """The npm package a bare import specifier names; ``None`` for relative and absolute paths."""
    if specifier.startswith((".", "/", "node:")) or ":" in specifier:
        return None
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]
