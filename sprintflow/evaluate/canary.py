"""Canaries: a test that must fail and one that must pass, in every test run of the judged tree.

A runner that code under test patched from inside its own process (a plugin, a conftest, a
redefined matcher, a forged report) passes whatever it runs, and so it passes the failing
canary too. Each canary is planted in the strategy's own layer of the judged tree (never in the
workspace), in the runner's language, beside the project's tests so the command collects it,
with a random name nothing could have prepared for. After the run the canaries are read from
the report and taken out of it: they never reach the verdict's counts or the feedback.

Whether a command collects tests where the canary is planted is learnt from the baseline's
reference run (:mod:`.outcomes`): a canary the baseline did not collect is not expected later.

Example:
    >>> import tempfile
    >>> tree = Path(tempfile.mkdtemp()); (tree / "tests").mkdir()
    >>> _ = (tree / "tests" / "test_calc.py").write_text("def test_add():\\n    assert True\\n")
    >>> canary = plant(tree, "pytest", "python -m pytest -q tests", nonce="c0ffee")
    >>> canary.path, sorted(p.name for p in (tree / "tests").iterdir())
    ('tests/test_c0ffee_canary.py', ['test_c0ffee_canary.py', 'test_calc.py'])
"""

from __future__ import annotations

import os
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sprintflow.judge.areas import TEST_FOLDERS, excluded_area, is_test

__all__ = ["Canary", "plant", "runner_of"]

_PYTHON = (".py",)
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


@dataclass(frozen=True)
class Canary:
    """Where a canary was planted and how its two tests are named in the runner's report."""

    nonce: str
    path: str
    """The canary file, relative to the tree."""

    def is_canary(self, name: str) -> bool:
        return self.nonce in name

    def must_fail(self, name: str) -> bool:
        return self.nonce in name and "must_fail" in name.replace(" ", "_")

    def must_pass(self, name: str) -> bool:
        return self.nonce in name and "must_pass" in name.replace(" ", "_")


def runner_of(fmt: str | None, command: str) -> str | None:
    """The test runner behind a report format and command: ``pytest``, ``vitest``, ``jest`` or None.

    Example:
        >>> runner_of("junit", "python3 -m pytest --junitxml=r.xml"), runner_of("vitest", "npm test")
        ('pytest', 'vitest')
    """
    if fmt in ("vitest", "vitest-text"):
        return "vitest"
    if fmt in ("jest", "jest-text"):
        return "jest"
    if fmt == "pytest" or (fmt == "junit" and "pytest" in command):
        return "pytest"
    return None


def plant(root: Path, runner: str, command: str, nonce: str | None = None) -> Canary | None:
    """Write the canary file of ``runner`` into the tree at ``root``, beside the tests ``command``
    runs; None when the tree has no test of that runner to stand beside."""
    suffixes = _PYTHON if runner == "pytest" else _JS
    tests = _test_files(root, suffixes)
    folder, example = _where(root, command, tests)
    if example is None:
        return None
    nonce = nonce or secrets.token_hex(6)
    name = _name(runner, example, nonce)
    rel = f"{folder}/{name}" if folder else name
    (root / rel).write_text(_source(runner, nonce))
    return Canary(nonce, rel)


def _test_files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if excluded_area("", d, True) is None)
        base = Path(folder).relative_to(root)
        found += [(base / name).as_posix() for name in sorted(files)
                  if name.endswith(suffixes) and is_test((base / name).as_posix())
                  and not name.startswith(("conftest", "__init__"))]
    return found


def _where(root: Path, command: str, tests: list[str]) -> tuple[str, str | None]:
    """The folder for the canary: the first folder the command names that holds tests, else the first tests'."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        named = word.rstrip("/")
        beside = [t for t in tests if t.startswith(f"{named}/")]
        if named and not named.startswith("-") and beside:
            return str(PurePosixPath(beside[0]).parent), beside[0]
    if not tests:
        return "", None
    first = min(tests, key=lambda t: (t.split("/")[0] not in TEST_FOLDERS, t.count("/"), t))
    parent = str(PurePosixPath(first).parent)
    return ("" if parent == "." else parent), first


def _name(runner: str, example: str, nonce: str) -> str:
    """A file name the runner collects, shaped like the project's own tests."""
    name = PurePosixPath(example).name
    if runner == "pytest":
        return f"{nonce}_canary_test.py" if name.endswith("_test.py") else f"test_{nonce}_canary.py"
    marker = ".spec." if ".spec." in name else ".test."
    return f"canary-{nonce}{marker}{name.rsplit('.', 1)[-1]}"


def _source(runner: str, nonce: str) -> str:
    if runner == "pytest":
        return (f"def test_{nonce}_must_fail():\n    assert \"{nonce}\" == \"the judge\"\n\n\n"
                f"def test_{nonce}_must_pass():\n    assert \"{nonce}\" == \"{nonce}\"\n")
    header = "import { test, expect } from 'vitest';\n" if runner == "vitest" else ""
    return (f"{header}test('{nonce} must_fail', () => {{ expect('{nonce}').toBe('the judge'); }});\n"
            f"test('{nonce} must_pass', () => {{ expect('{nonce}').toBe('{nonce}'); }});\n")
