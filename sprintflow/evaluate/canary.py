"""Canaries: a test that must fail and one that must pass, in every test file of every test run.

A runner that code under test patched from inside (a plugin registered through the interpreter, a
conftest, a matcher the module under test redefines, a forged report) passes whatever it runs, and
so it passes the failing canary too. The judge appends a canary pair to each test file of the
runner in the strategy's own layer of the judged tree (never the workspace), in the runner's
language and with a random name nothing could have prepared for, so the canaries run in the same
module, with the same imports, as the tests beside them. After the run they are read from the
report and taken out of it: they never reach the verdict's counts or the feedback.

Which files' canaries run is learnt from the baseline's reference run (:mod:`.outcomes`): a file
the command does not collect, or one its module skips, had no failing canary there, and none is
expected of it later.

Example:
    >>> import tempfile
    >>> tree = Path(tempfile.mkdtemp()); (tree / "tests").mkdir()
    >>> _ = (tree / "tests" / "test_calc.py").write_text("def test_add():\\n    assert True\\n")
    >>> canary = plant(tree, "pytest", nonce="c0ffee")
    >>> canary.paths, "def test_c0ffee_0_must_fail" in (tree / "tests" / "test_calc.py").read_text()
    (('tests/test_calc.py',), True)
    >>> canary.file_of("tests/test_calc.py::test_c0ffee_0_must_fail")
    'tests/test_calc.py'
"""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from sprintflow.judge.areas import excluded_area, is_test

__all__ = ["MAX_FILES", "Canary", "plant", "runner_of"]

MAX_FILES = 200
"""Test files that get a canary pair in one run (the first, in order)."""
_PYTHON = (".py",)
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")


@dataclass(frozen=True)
class Canary:
    """The canaries of one run: their random name and the files they were appended to."""

    nonce: str
    paths: tuple[str, ...]
    """The test files, relative to the tree, in the order their canaries are numbered."""

    def is_canary(self, name: str) -> bool:
        return self.nonce in name

    def file_of(self, name: str) -> str | None:
        """The file whose canary a test name is (None: not a canary)."""
        match = re.search(rf"{self.nonce}[ _](\d+)[ _]must_", name)
        return self.paths[int(match[1])] if match and int(match[1]) < len(self.paths) else None

    def must_fail(self, name: str) -> bool:
        return self.nonce in name and "must_fail" in name

    def must_pass(self, name: str) -> bool:
        return self.nonce in name and "must_pass" in name


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


def plant(root: Path, runner: str, nonce: str | None = None) -> Canary | None:
    """Append a canary pair of ``runner`` to each of its test files in the tree at ``root``; None when
    the tree has none."""
    files = _test_files(root, _PYTHON if runner == "pytest" else _JS)[:MAX_FILES]
    if not files:
        return None
    nonce = nonce or secrets.token_hex(6)
    for index, rel in enumerate(files):
        path = root / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        path.unlink()  # a hard link into the judge's store: the layer gets a file of its own
        path.write_text(text + ("" if text.endswith("\n") or not text else "\n") + _source(runner, nonce, index))
    return Canary(nonce, tuple(files))


def _test_files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if excluded_area("", d, True) is None)
        base = Path(folder).relative_to(root)
        found += [(base / name).as_posix() for name in sorted(files)
                  if name.endswith(suffixes) and is_test((base / name).as_posix())
                  and not name.startswith(("conftest", "__init__")) and _names_a_test(name)]
    return found


def _names_a_test(name: str) -> bool:
    """A file the runner collects by its name (a helper in a tests folder is not one)."""
    return bool(re.match(r"test_.*\.py$|.*_test\.py$|.*\.(test|spec)\.[cm]?[jt]sx?$", name))


def _source(runner: str, nonce: str, index: int) -> str:
    name = f"{nonce}_{index}"
    if runner == "pytest":
        return (f"\n\ndef test_{name}_must_fail():\n    assert \"{nonce}\" == \"the judge\"\n\n\n"
                f"def test_{name}_must_pass():\n    assert \"{nonce}\" == \"{nonce}\"\n")
    if runner == "vitest":  # the same expect the file's tests use, whatever the module under test did to it
        return (f"\nimport {{ test as test_{name}, expect as expect_{name} }} from 'vitest';\n"
                f"test_{name}('{name} must_fail', () => {{ expect_{name}('{nonce}').toBe('the judge'); }});\n"
                f"test_{name}('{name} must_pass', () => {{ expect_{name}('{nonce}').toBe('{nonce}'); }});\n")
    return (f"\ntest('{name} must_fail', () => {{ expect('{nonce}').toBe('the judge'); }});\n"
            f"test('{name} must_pass', () => {{ expect('{nonce}').toBe('{nonce}'); }});\n")
