"""What kind of path a path is: the project's layout as the judge reads it.

The judged tree holds the project's own files. What tools regenerate or the judge provides
itself is never part of it, whatever the workspace holds there:

* ``state``: sprintflow's own ``.sprintflow/``;
* ``vcs``: ``.git/`` and its kin;
* ``dependencies``: ``node_modules/`` and virtualenvs (any folder with a ``pyvenv.cfg``), which
  the judge provides (the Docker sandbox's dependency layer, or the pinned ones, read-only);
* ``caches``: byte code, test and type-checker caches (the judge's own caches serve the tools);
* ``outputs``: build and report folders (``dist/``, ``build/``, ``target/`` …), which the judged
  build writes again.

A generator's change there is not judged and is reported as a note. Everywhere else the
admission rules of :mod:`.change` decide, and they ask this module: is it a test, is it a file
a tool reads as configuration by convention, is it a lockfile, is it documentation.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from pathlib import PurePosixPath

__all__ = ["AREAS", "CONFIG_NAMES", "LOCKFILES", "MANIFESTS", "TEST_FOLDERS", "TEST_NAMES", "excluded_area",
           "is_config", "is_documentation", "is_lockfile", "is_test", "top_level"]

STATE_NAMES = frozenset({".sprintflow"})
VCS_NAMES = frozenset({".git", ".hg", ".svn", ".jj"})
DEPENDENCY_NAMES = frozenset({"node_modules", "bower_components", ".venv", "venv", ".pnpm-store"})
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".cache", ".turbo",
                        ".parcel-cache", ".hypothesis", ".tox", ".nox", ".vite", ".vitest", ".gradle",
                        ".pyre", ".pytype", ".jest-cache"})
CACHE_FILES = ("*.pyc", "*.pyo", "*.tsbuildinfo", ".eslintcache", ".coverage", ".coverage.*", ".DS_Store",
               "npm-debug.log*", "yarn-error.log*", ".dmypy.json", ".stylelintcache")
OUTPUT_DIRS = frozenset({"dist", "build", "coverage", "htmlcov", "test-results", "playwright-report", ".next",
                         ".nuxt", ".svelte-kit", ".output", "target", ".nyc_output", "storybook-static"})

AREAS = ("state", "vcs", "dependencies", "caches", "outputs")
"""The areas that are never part of a judged tree, in the order they are told."""

TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "e2e", "spec", "specs", "__snapshots__",
                          "integration_tests", "testdata"})
TEST_NAMES = ("test_*.py", "*_test.py", "*.test.*", "*.spec.*", "*.snap", "*_test.go", "*Test.java",
              "*Tests.java", "*Test.kt", "*_spec.rb", "*_test.rs")

CONFIG_NAMES = (
    # Python
    "pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "pytest.ini", "pytest.toml", "conftest.py", "noxfile.py",
    "sitecustomize.py", "usercustomize.py", "*.pth", "mypy.ini", "ruff.toml", "pyrightconfig.json", "MANIFEST.in",
    "requirements*.in", "Pipfile",
    # JavaScript and TypeScript
    "package.json", "tsconfig*.json", "jsconfig*.json", "*.config.js", "*.config.cjs", "*.config.mjs",
    "*.config.ts", "*.config.cts", "*.config.mts", "*.config.json", "*.config.yaml", "*.config.toml",
    "babel.config.*", "pnpm-workspace.yaml", "lerna.json", "nx.json", "turbo.json", "deno.json", "deno.jsonc",
    "bunfig.toml", "biome.json", "biome.jsonc", "vitest.workspace.*",
    # Go, Rust, the JVM, C
    "go.mod", "go.work", "Cargo.toml", "build.rs", "rust-toolchain", "rust-toolchain.toml", "clippy.toml",
    "rustfmt.toml", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
    "gradle.properties", "gradlew", "mvnw", "CMakeLists.txt", "meson.build", "Makefile", "makefile",
    "GNUmakefile", "justfile",
    # sprintflow and agent-bober
    "sprintflow.toml", "bober.config.json",
    # Containers
    "Dockerfile", "*.dockerfile", "docker-compose*.yml", "docker-compose*.yaml", "compose.yaml", "compose.yml",
)
"""Files tools read as configuration wherever they are, by name. Dotfiles (``.eslintrc``,
``.pytest.toml``, ``.npmrc`` …) are configuration by convention too, without a list. This list
names what the judge reports precisely; it is not what makes a missed name harmless: a file at
the top level is never judged unless the contract names it, and the canary tests prove the
runner can still fail whatever a missed file does to it."""

LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "bun.lock",
             "uv.lock", "poetry.lock", "Pipfile.lock", "pdm.lock", "requirements*.txt", "constraints*.txt",
             "go.sum", "Cargo.lock", "gradle.lockfile")
MANIFESTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "package.json": (("dependencies",), ("devDependencies",), ("peerDependencies",), ("optionalDependencies",),
                     ("bundledDependencies",), ("bundleDependencies",), ("peerDependenciesMeta",)),
    "pyproject.toml": (("project", "dependencies"), ("project", "optional-dependencies"), ("dependency-groups",),
                       ("tool", "poetry", "dependencies"), ("tool", "poetry", "group"),
                       ("tool", "poetry", "dev-dependencies"), ("tool", "uv", "dev-dependencies")),
    "Cargo.toml": (("dependencies",), ("dev-dependencies",), ("build-dependencies",)),
}
"""Manifests whose dependency sections the change may edit (the rest of each file is configuration)."""

DOCUMENTATION = ("*.md", "*.rst", "*.adoc", "*.txt", "LICENSE*", "COPYING*", "NOTICE*", "AUTHORS*", "CHANGELOG*",
                 "*.png", "*.jpg", "*.jpeg", "*.gif", "*.svg")


@functools.cache
def _pattern(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``name`` matches one of the globs (one compiled pattern: this runs for every file scanned)."""
    return _pattern(patterns).match(name) is not None


def excluded_area(rel: str, name: str, is_dir: bool, venv: bool = False) -> str | None:
    """The area a path belongs to when it is never judged, or None.

    ``venv`` says the folder holds a ``pyvenv.cfg`` (a virtualenv by any name).

    Example:
        >>> excluded_area("src/calc/__pycache__", "__pycache__", True), excluded_area("src/calc.py", "calc.py", False)
        ('caches', None)
    """
    if is_dir:
        if name in STATE_NAMES and "/" not in rel:
            return "state"
        if name in VCS_NAMES:
            return "vcs"
        if name in DEPENDENCY_NAMES or venv:
            return "dependencies"
        if name in CACHE_DIRS:
            return "caches"
        if name in OUTPUT_DIRS:
            return "outputs"
        return None
    return "caches" if _matches(name, CACHE_FILES) else None


def top_level(rel: str) -> bool:
    """A path at the project's top level, where tools look for their configuration first.

    Example:
        >>> top_level("conftest.py"), top_level("tests/conftest.py")
        (True, False)
    """
    return "/" not in rel


def is_test(rel: str) -> bool:
    """A test file: by its name, or inside a tests folder.

    Example:
        >>> is_test("tests/helpers.py"), is_test("src/calc_test.go"), is_test("src/calc.py")
        (True, True, False)
    """
    parts = PurePosixPath(rel).parts
    return bool(TEST_FOLDERS.intersection(parts[:-1])) or _matches(parts[-1], TEST_NAMES)


def is_config(rel: str) -> bool:
    """A file tools read as configuration by convention: a dotfile, or a configuration name.

    Example:
        >>> is_config(".pytest.toml"), is_config("tests/pytest.ini"), is_config("src/vite.config.ts")
        (True, True, True)
        >>> is_config("src/calc/__init__.py")
        False
    """
    parts = PurePosixPath(rel).parts
    if any(part.startswith(".") for part in parts):
        return True
    return _matches(parts[-1], CONFIG_NAMES)


def is_lockfile(rel: str) -> bool:
    """A lockfile or requirements file: what the judge's sandbox installs dependencies from.

    Example:
        >>> is_lockfile("package-lock.json"), is_lockfile("requirements-dev.txt"), is_lockfile("setup.py")
        (True, True, False)
    """
    return _matches(PurePosixPath(rel).name, LOCKFILES)


def is_documentation(rel: str) -> bool:
    """Documentation and images: no tool reads them as code or configuration.

    Example:
        >>> is_documentation("README.md"), is_documentation("CMakeLists.txt")
        (True, False)
    """
    name = PurePosixPath(rel).name
    return _matches(name, DOCUMENTATION) and not _matches(name, CONFIG_NAMES) and not is_lockfile(rel)
