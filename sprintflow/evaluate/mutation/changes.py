"""The lines a change touched: the judged tree's files of a language against the sprint's baseline.

Every changed file of the language counts, whatever its name (the areas the judge never judges
aside): a file is left out as a test only when the mutation run's own test runner collected tests
from it (a canary appended to a file proves nothing: it runs too when a test imports that module).
A name such as ``src/calc/test_util.py``, ``tests/helpers.py`` or ``conftest.py`` proves nothing
either: code there that the package imports is code under test. Lines are those of the judged
file, as inclusive ranges; a deletion leaves nothing to mutate.

Example:
    >>> changed_ranges("a\\nb\\nc\\n", "a\\nB\\nc\\nd\\n")
    ((2, 2), (4, 4))
    >>> changed_ranges("", "x = 1\\ny = 2\\n\\nz = 3\\n")
    ((1, 2), (4, 4))
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from sprintflow.judge.areas import excluded_area

__all__ = ["MAX_CHANGED_FILES", "ChangedFile", "changed_files", "changed_ranges"]

MAX_CHANGED_FILES = 50
"""Changed source files considered (the first, in order): the mutant cap is spread over them."""
_MAX_SOURCE_BYTES = 1 << 20


@dataclass(frozen=True)
class ChangedFile:
    """One file of the language the change touched, and where."""

    path: str
    """Relative to the tree, POSIX."""
    lines: tuple[tuple[int, int], ...]
    """Inclusive 1-based line ranges of the judged file."""

    @property
    def line_count(self) -> int:
        return sum(end - start + 1 for start, end in self.lines)


def changed_ranges(before: str, after: str) -> tuple[tuple[int, int], ...]:
    """The line ranges of ``after`` that are not in ``before``, split at blank lines (nothing to mutate
    there, and a spread of lines under the mutant cap must not land on them)."""
    lines = after.splitlines()
    matcher = difflib.SequenceMatcher(None, before.splitlines(), lines, autojunk=False)
    found: list[tuple[int, int]] = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert"):
            continue
        start = None
        for index in range(j1, j2 + 1):
            if index < j2 and lines[index].strip():
                start = index if start is None else start
            elif start is not None:
                found.append((start + 1, index))
                start = None
    return tuple(found)


def changed_files(tree: Path, baseline_text: Callable[[str], str | None], suffixes: Iterable[str]
                  ) -> list[ChangedFile]:
    """The source files of ``tree`` (by suffix) that differ from the baseline, with their new lines.

    ``baseline_text(rel)`` is the file's text at the baseline, None when it was not there.
    """
    suffixes = tuple(suffixes)
    found: list[ChangedFile] = []
    for rel in _sources(tree, suffixes):
        after = _text(tree / rel)
        if after is None:
            continue
        before = baseline_text(rel)
        if before == after:
            continue
        lines = changed_ranges(before or "", after)
        if lines:
            found.append(ChangedFile(rel, lines))
        if len(found) == MAX_CHANGED_FILES:
            break
    return found


def _sources(tree: Path, suffixes: tuple[str, ...]) -> Iterable[str]:
    for folder, dirs, files in os.walk(tree):
        base = Path(folder).relative_to(tree)
        dirs[:] = sorted(d for d in dirs if excluded_area((base / d).as_posix(), d, True) is None)
        for name in sorted(files):
            rel = (base / name).as_posix()
            if name.endswith(suffixes) and excluded_area(rel, name, False) is None:
                yield rel


def _text(path: Path) -> str | None:
    """A source file's text; None when it is not one (too large, a link, not UTF-8)."""
    try:
        if path.is_symlink() or path.stat().st_size > _MAX_SOURCE_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
