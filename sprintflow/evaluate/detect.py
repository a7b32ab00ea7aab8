"""The checks a project can really run, read from its own files.

``package.json`` and its scripts (run with the package manager its lockfile names),
``pyproject.toml`` and its tools (``[tool.pytest]``, ``[tool.ruff]``, ``[tool.mypy]``),
``requirements*.txt``, ``setup.py``/``setup.cfg``, ``go.mod``, ``Cargo.toml`` and ``pom.xml``.
Each finding says which file decided it, so what was inferred can be shown. A project with
two languages gets both checks of a kind, chained (``npm run build && python3 -m compileall …``).

Nothing here runs anything: it reads manifests. A manifest that cannot be read is a located
:class:`~sprintflow.errors.DocumentError`, never a guess.

Example:
    >>> import tempfile
    >>> app = Path(tempfile.mkdtemp())
    >>> _ = (app / "pyproject.toml").write_text('[project]\\nname = "calc"\\n[tool.ruff]\\nline-length = 100\\n')
    >>> [(c.strategy.value, c.command) for c in detect_checks(app)]
    [('build', "python3 -m compileall -q -x '/[.]|node_modules' ."), ('lint', 'ruff check .')]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from sprintflow.errors import DocumentError, Problem
from sprintflow.io.documents import read_json, read_text, read_toml
from sprintflow.schemas import InferredCommand, StrategyType

__all__ = ["PYTHON_BUILD", "detect_checks", "detect_preset", "merge_checks"]

PYTHON_BUILD = "python3 -m compileall -q -x '/[.]|node_modules' ."
"""A Python project's build: every module byte-compiled (a syntax error fails it); hidden folders
(virtualenvs, caches) and node_modules are left out."""

Preset = Literal["nextjs", "react-vite", "brownfield", "generic"]
_NPM_PLACEHOLDER = 'echo "Error: no test specified"'
# The package managers the project's sandbox installs (sprintflow.sandbox.dependencies); any other
# lockfile's scripts run with npm, which every sandbox has.
_LOCKFILES = (("pnpm-lock.yaml", "pnpm run"), ("yarn.lock", "yarn run"))
# Script names that mean a check, first found wins.
_SCRIPTS = ((StrategyType.build, ("build",)), (StrategyType.typecheck, ("typecheck", "type-check", "tsc", "types")),
            (StrategyType.lint, ("lint",)), (StrategyType.unit_test, ("test", "test:unit", "unit")))


def _node(root: Path) -> list[InferredCommand]:
    path = root / "package.json"
    if not path.is_file():
        return []
    package = _object(read_json(path), path)
    scripts = _table(package, "scripts")
    runner = next((run for lock, run in _LOCKFILES if (root / lock).is_file()), "npm run")
    found = []
    for strategy, names in _SCRIPTS:
        name = next((n for n in names if isinstance(scripts.get(n), str) and scripts[n].strip()
                     and not scripts[n].startswith(_NPM_PLACEHOLDER)), None)
        if name is not None:
            found.append(InferredCommand(strategy=strategy, command=f"{runner} {name}",
                                         source=f"package.json scripts.{name}"))
    kinds = {c.strategy for c in found}
    deps = _dependencies(package)
    if StrategyType.typecheck not in kinds and "typescript" in deps and (root / "tsconfig.json").is_file():
        found.append(InferredCommand(strategy=StrategyType.typecheck, command="npx tsc --noEmit --pretty false",
                                     source="tsconfig.json and typescript in package.json"))
    if "@playwright/test" in deps:
        # Imported here: every command reads a config, few projects have Playwright, and the strategies
        # import half of sprintflow.
        from sprintflow.evaluate.strategies.playwright import PlaywrightStrategy

        found.append(InferredCommand(strategy=StrategyType.playwright, command=str(PlaywrightStrategy.default_command),
                                     source="package.json @playwright/test"))
    return found


def _dependencies(package: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for key in ("dependencies", "devDependencies", "peerDependencies"):
        if isinstance(package.get(key), dict):
            names |= set(package[key])
    return names


def _python(root: Path) -> list[InferredCommand]:
    pyproject = root / "pyproject.toml"
    data = read_toml(pyproject) if pyproject.is_file() else {}
    manifests = [name for name in ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")
                 if (root / name).is_file()]
    manifests += sorted(p.name for p in root.glob("requirements*.txt") if p.name not in manifests)
    if not manifests:
        return []
    tools = _table(data, "tool")
    declared = _python_requirements(root, data)
    found = [InferredCommand(strategy=StrategyType.build, command=PYTHON_BUILD, source=manifests[0])]
    mypy = _first_source(root, tools, "mypy", ("mypy.ini", ".mypy.ini"), declared)
    if mypy:
        files = "files" in _table(tools, "mypy")
        found.append(InferredCommand(strategy=StrategyType.typecheck,
                                     command="python3 -m mypy" if files else "python3 -m mypy .", source=mypy))
    ruff = _first_source(root, tools, "ruff", ("ruff.toml", ".ruff.toml"), declared)
    if ruff:
        found.append(InferredCommand(strategy=StrategyType.lint, command="ruff check .", source=ruff))
    pytest = _first_source(root, tools, "pytest", ("pytest.ini", "conftest.py"), declared) or \
        ("tests/" if (root / "tests").is_dir() else None)
    if pytest:
        found.append(InferredCommand(strategy=StrategyType.unit_test, command="python3 -m pytest -q",
                                     source=pytest))
    return found


def _first_source(root: Path, tools: dict[str, Any], tool: str, files: tuple[str, ...],
                  declared: set[str]) -> str | None:
    """Where the project says it uses ``tool``: its pyproject section, its own config file, a requirement."""
    if tool in tools:
        return f"pyproject.toml [tool.{tool}]"
    present = next((name for name in files if (root / name).is_file()), None)
    if present:
        return present
    return f"{tool} in the project's requirements" if tool in declared else None


def _python_requirements(root: Path, pyproject: dict[str, Any]) -> set[str]:
    """The distribution names the project declares (pyproject's dependencies and extras, requirements files)."""
    lines: list[str] = []
    project = _table(pyproject, "project")
    lines += [d for d in project.get("dependencies") or [] if isinstance(d, str)]
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        lines += [d for group in extras.values() if isinstance(group, list) for d in group if isinstance(d, str)]
    groups = pyproject.get("dependency-groups")
    if isinstance(groups, dict):
        lines += [d for group in groups.values() if isinstance(group, list) for d in group if isinstance(d, str)]
    for path in sorted(root.glob("requirements*.txt")):
        lines += read_text(path).splitlines()
    names = set()
    for line in lines:
        name = line.strip().split(";")[0]
        for stop in "<>=!~[ @":
            name = name.split(stop)[0]
        if name and not name.startswith(("#", "-")):
            names.add(name.lower().replace("_", "-"))
    return names


def _native(root: Path) -> list[InferredCommand]:
    """Go, Rust and Java (Maven): their own build and test commands, and Go's vet."""
    found = []
    if (root / "go.mod").is_file():
        found.append(InferredCommand(strategy=StrategyType.lint, command="go vet ./...", source="go.mod"))
    for manifest, build, test in (("go.mod", "go build ./...", "go test ./..."),
                                  ("Cargo.toml", "cargo build --quiet", "cargo test --quiet"),
                                  ("pom.xml", "mvn -q -B compile", "mvn -q -B test")):
        if (root / manifest).is_file():
            found += [InferredCommand(strategy=StrategyType.build, command=build, source=manifest),
                      InferredCommand(strategy=StrategyType.unit_test, command=test, source=manifest)]
    return found


_DETECTORS: tuple[Callable[[Path], list[InferredCommand]], ...] = (_node, _python, _native)


def detect_checks(root: Path) -> list[InferredCommand]:
    """Every check the project's files say it can run, one per strategy type, in the seed's order.

    Raises:
        DocumentError: a manifest that cannot be read (located: file, line).
    """
    return merge_checks([check for detector in _DETECTORS for check in detector(root)])


def merge_checks(checks: list[InferredCommand]) -> list[InferredCommand]:
    """One check per strategy type: the commands of a kind chained with ``&&``, their sources joined.

    Example:
        >>> a = InferredCommand(strategy=StrategyType.build, command="npm run build", source="package.json")
        >>> b = InferredCommand(strategy=StrategyType.build, command="go build ./...", source="go.mod")
        >>> merge_checks([a, b])[0].command
        'npm run build && go build ./...'
    """
    order = list(StrategyType)
    merged: dict[StrategyType, InferredCommand] = {}
    for check in checks:
        known = merged.get(check.strategy)
        merged[check.strategy] = check if known is None else InferredCommand(
            strategy=check.strategy, command=f"{known.command} && {check.command}",
            source=f"{known.source}; {check.source}")
    return sorted(merged.values(), key=lambda c: order.index(c.strategy))


def detect_preset(root: Path) -> Preset:
    """The seed's preset the project is closest to: ``nextjs``, ``react-vite``, else ``generic``.

    Example:
        >>> detect_preset(Path("examples/python-api"))
        'generic'
    """
    path = root / "package.json"
    deps = _dependencies(_object(read_json(path), path)) if path.is_file() else set()
    if "next" in deps:
        return "nextjs"
    if "vite" in deps and "react" in deps:
        return "react-vite"
    return "generic"


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table (object), else empty: a manifest's odd shapes mean "not declared"."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _object(data: Any, path: Path) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise DocumentError([Problem(str(path), "$", "must be a JSON object")])
    return data
