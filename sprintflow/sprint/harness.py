"""Harness files: the files that decide how code is judged, so the generator may not change them.

Test-runner and linter configurations, ``conftest.py`` at any depth, the
``scripts`` of every ``package.json``, Python's start-up hooks and sprintflow's
own config redefine success without touching a line of the code under test.
They are judge inputs by default: a generator's change to one is undone and
reported, unless the contract's ``estimatedFiles`` names the file (then it is
kept and its diff shown to a reviewer).

Whole files are watched by name; in ``pyproject.toml`` and ``package.json`` only
the sections that configure the judges are, so adding a dependency is no
tamper. A changed section is undone by restoring the whole file.

Example:
    >>> import tempfile
    >>> app = Path(tempfile.mkdtemp())
    >>> _ = (app / "package.json").write_text('{"scripts": {"test": "vitest run"}, "dependencies": {}}')
    >>> (app / "tests").mkdir(); _ = (app / "tests" / "conftest.py").write_text("")
    >>> sorted(harness_files(app))
    ['package.json', 'tests/conftest.py']
    >>> before = harness_files(app)
    >>> _ = (app / "package.json").write_text('{"scripts": {"test": "vitest run"}, "dependencies": {"a": "1"}}')
    >>> harness_files(app) == before  # a new dependency is not a harness change
    True
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sprintflow.io.hashing import IGNORED_DIRS, file_digest

__all__ = ["HARNESS_NAMES", "JUDGE_REACH", "SECTIONS", "TEST_FOLDERS", "TEST_NAMES", "describe_change",
           "harness_files", "reaches_into_judge", "test_files"]

HARNESS_NAMES = (
    "conftest.py", "pytest.ini", "tox.ini", "setup.cfg", "sitecustomize.py", "usercustomize.py", "*.pth",
    "vitest.config.*", "vitest.workspace.*", "vite.config.*", "jest.config.*", "jest.setup.*",
    "playwright.config.*", "eslint.config.*", ".eslintrc*", "tsconfig*.json", ".npmrc", ".mocharc*",
    "babel.config.*", ".babelrc*", "sprintflow.toml", "bober.config.json",
    "pytest.py", "unittest.py", "_pytest", "mypy.py", "ruff.py",
)
"""File names (globs) watched wherever they are, dependency and cache folders excepted. The last
ones shadow the test tools themselves (``python -m pytest`` imports a ``pytest.py`` beside it)."""

TEST_NAMES = ("test_*.py", "*_test.py", "*.test.*", "*.spec.*", "*.snap")
TEST_FOLDERS = frozenset({"tests", "test", "__tests__", "e2e", "spec", "__snapshots__"})
"""Tests, found by name or by folder: existing ones judge the code, so the generator may add tests
but not change or delete those that are there (unless estimatedFiles names them)."""

SECTIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "pyproject.toml": (("tool", "pytest"), ("tool", "ruff"), ("tool", "mypy"), ("tool", "coverage"),
                       ("tool", "sprintflow"), ("tool", "setuptools", "package-dir")),
    "package.json": (("scripts",), ("jest",), ("eslintConfig",), ("vitest",)),
}
"""Files watched section by section: only these keys configure a judge."""


def _walk(workspace: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(workspace):
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS)
        for name in sorted(files):
            yield Path(folder, name)


def _sections(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError:
        return {"unreadable": True}
    return _parse_sections(path.name, data)


def _parse_sections(name: str, raw: bytes) -> dict[str, Any]:
    """The judge-configuring sections of a pyproject.toml or package.json (unreadable: the raw bytes' digest)."""
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text) if name == "pyproject.toml" else json.loads(text)
    except (UnicodeDecodeError, ValueError):
        return {"unreadable": hashlib.sha256(raw).hexdigest()}
    found: dict[str, Any] = {}
    for keys in SECTIONS[name]:
        value: Any = data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            found[".".join(keys)] = value
    return found


def harness_files(workspace: Path) -> dict[str, str]:
    """Relative path -> digest of every harness file (of its judge sections for sectioned files)."""
    found: dict[str, str] = {}
    for path in _walk(workspace):
        rel = path.relative_to(workspace).as_posix()
        if path.name in SECTIONS and not path.is_symlink():
            canonical = json.dumps(_sections(path), sort_keys=True, default=str)
            found[rel] = "sections:" + hashlib.sha256(canonical.encode()).hexdigest()
        elif any(fnmatch.fnmatch(path.name, pattern) for pattern in HARNESS_NAMES) or \
                any(part in HARNESS_NAMES for part in Path(rel).parts[:-1]):
            found[rel] = file_digest(path)
    return found


def test_files(workspace: Path) -> dict[str, str]:
    """Relative path -> digest of every test file (by name, or inside a tests folder).

    Example:
        >>> import tempfile
        >>> app = Path(tempfile.mkdtemp())
        >>> (app / "tests").mkdir(); _ = (app / "tests" / "helpers.py").write_text("")
        >>> _ = (app / "calc_test.py").write_text(""); _ = (app / "calc.py").write_text("")
        >>> sorted(test_files(app))
        ['calc_test.py', 'tests/helpers.py']
    """
    found: dict[str, str] = {}
    for path in _walk(workspace):
        rel = path.relative_to(workspace)
        if TEST_FOLDERS.intersection(rel.parts[:-1]) or any(fnmatch.fnmatch(path.name, n) for n in TEST_NAMES):
            found[rel.as_posix()] = file_digest(path)
    return found


JUDGE_REACH: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("pytest's internals", re.compile(r"\b_pytest\b|\bpytest_runtest_\w+|\bpytest_collection_modifyitems\b")),
    ("the module table (sys.modules)", re.compile(r"\bsys\.modules\s*\[[^\]]+\]\s*=(?!=)|sys\.modules\.update\(")),
    ("builtins", re.compile(r"\bbuiltins\.\w+\s*=(?!=)|__builtins__")),
    ("a hard exit that skips the runner's report", re.compile(r"\bos\._exit\(|\bprocess\.(?:exit|reallyExit)\(")),
    ("the test framework's globals", re.compile(r"globalThis\.(?:expect|it|test|describe|vi)\s*=(?!=)")),
)
"""What code under test (and new tests) have no business doing: reaching into the runner that judges them."""


def reaches_into_judge(rel: str, before: bytes | None, after: Path) -> list[str]:
    """``file:line: reaches into …`` for each line the generator added that tampers with the test runner.

    Example:
        >>> import tempfile
        >>> src = Path(tempfile.mkdtemp()) / "calc.py"
        >>> _ = src.write_text("import _pytest.runner\\ndef add(a, b):\\n    return a + b\\n")
        >>> reaches_into_judge("src/calc.py", b"def add(a, b):\\n    return a - b\\n", src)
        ["src/calc.py:1 reaches into pytest's internals"]
    """
    try:
        new = after.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    old = set((before or b"").decode("utf-8", errors="replace").splitlines())
    found = []
    for number, line in enumerate(new, start=1):
        if line in old:
            continue
        for what, pattern in JUDGE_REACH:
            if pattern.search(line):
                found.append(f"{rel}:{number} reaches into {what}")
    return found


def describe_change(rel: str, before: bytes | None, after: Path) -> str:
    """One phrase for what happened to a harness file: created, deleted, or which sections changed.

    Example:
        >>> import tempfile
        >>> new = Path(tempfile.mkdtemp()) / "package.json"
        >>> _ = new.write_text('{"scripts": {"test": "exit 0"}}')
        >>> describe_change("package.json", b'{"scripts": {"test": "vitest run"}}', new)
        'package.json (scripts changed)'
    """
    if before is None:
        return f"{rel} (created)"
    if not after.exists() and not after.is_symlink():
        return f"{rel} (deleted)"
    if after.name not in SECTIONS:
        return f"{rel} (modified)"
    old = _parse_sections(after.name, before)
    new = _sections(after)
    changed = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
    return f"{rel} ({', '.join(changed) or 'sections'} changed)"

