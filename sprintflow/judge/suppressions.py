"""Suppressions: lines a change adds that silence a checker instead of fixing what it found.

``# noqa`` makes ruff pass, ``# type: ignore`` mypy, ``/* eslint-disable */`` eslint, a skip
marker the test it sits on. Each such line the generator adds (to code or tests the change
admits) fails the criterion of the checker it silences, at its file and line, unless the
contract's ``allowedSuppressions`` names its kind.

The kinds (``noqa``, ``type-ignore``, ``eslint-disable`` …) and the strategy each silences:

====================  =============  ============================================================
kind                  silences       the usual forms
====================  =============  ============================================================
noqa                  lint           ``# noqa``, ``# ruff: noqa``, ``# flake8: noqa``
pylint-disable        lint           ``# pylint: disable=…``
eslint-disable        lint           ``/* eslint-disable */``, ``// eslint-disable-next-line``
biome-ignore          lint           ``// biome-ignore …``
nolint                lint           ``//nolint`` (golangci-lint), ``//lint:ignore``, ``//lint:file-ignore``
                                     (staticcheck)
allow-lint            lint           ``#[allow(…)]``, ``#![allow(…)]`` (clippy)
suppress-warnings     lint           ``@SuppressWarnings(…)``
type-ignore           typecheck      ``# type: ignore``, ``# mypy: ignore-errors``, ``# pyright: ignore``
ts-ignore             typecheck      ``// @ts-ignore``, ``// @ts-nocheck``, ``// @ts-expect-error``
no-cover              unit-test      ``# pragma: no cover``, ``/* istanbul ignore */``, ``/* c8 ignore */``
skip                  unit-test      ``pytest.skip(…)``, ``@pytest.mark.skip``, ``xfail``, ``SkipTest``,
                                     ``it.skip``, ``describe.only``, ``xit(…)``, ``t.Skip()``, ``#[ignore]``
tests-off             unit-test      a manifest that builds or runs no tests, or ignores their failures:
                                     Cargo.toml's ``test = false``, ``harness = false``, ``doctest = false``;
                                     a POM's ``<skipTests>``, ``<maven.test.skip>``, ``<testFailureIgnore>``
====================  =============  ============================================================

Example:
    >>> found = suppressions_added("src/calc.py", b"def f(x):\\n    return x\\n",
    ...                            b"import os  # noqa\\ndef f(x):\\n    return x  # type: ignore\\n")
    >>> [(s.line, s.kind, s.checker) for s in found]
    [(1, 'noqa', 'lint'), (3, 'type-ignore', 'typecheck')]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

__all__ = ["KINDS", "Suppression", "suppressions_added"]

KINDS: dict[str, tuple[str, re.Pattern[str]]] = {
    "noqa": ("lint", re.compile(r"#\s*noqa\b|#\s*(?:ruff|flake8)\s*:\s*noqa", re.IGNORECASE)),
    "pylint-disable": ("lint", re.compile(r"#\s*pylint\s*:\s*disable")),
    "eslint-disable": ("lint", re.compile(r"\beslint-disable")),
    "biome-ignore": ("lint", re.compile(r"\bbiome-ignore\b")),
    "nolint": ("lint", re.compile(r"//\s*(?:nolint\b|lint:(?:file-)?ignore\b)")),
    "allow-lint": ("lint", re.compile(r"#!?\[allow\(")),
    "suppress-warnings": ("lint", re.compile(r"@SuppressWarnings\b")),
    "type-ignore": ("typecheck", re.compile(r"#\s*type\s*:\s*ignore|#\s*(?:mypy|pyright)\s*:\s*(?:ignore|basic)"
                                           r"|#\s*pyre-(?:ignore|fixme)")),
    "ts-ignore": ("typecheck", re.compile(r"@ts-(?:ignore|nocheck|expect-error)\b")),
    "no-cover": ("unit-test", re.compile(r"pragma:\s*no\s*cover|\b(?:istanbul|c8|v8)\s+ignore\b")),
    "skip": ("unit-test", re.compile(
        r"\bpytest\.(?:skip|xfail|importorskip)\s*\(|@pytest\.mark\.(?:skip|skipif|xfail)\b"
        r"|\bunittest\.skip|\bSkipTest\b|(?<![\w.])(?:it|test|describe|context)\.(?:skip|todo|only)\b"
        r"|\bx(?:it|describe|test)\s*\(|\bt\.Skip(?:Now|f)?\(|#\[ignore\]|@(?:Disabled|Ignore)\b")),
    "tests-off": ("unit-test", re.compile(
        r"^\s*(?:test|harness|doctest)\s*=\s*false\s*(?:#.*)?$"
        r"|<(?:skipTests|skipITs|maven\.test\.skip|testFailureIgnore|maven\.test\.failure\.ignore)>\s*true\b")),
}
"""Kind -> (the strategy type it silences, the pattern of the line that says it)."""


class Suppression(NamedTuple):
    """One added line that silences a checker."""

    file: str
    line: int
    kind: str
    checker: str
    """The strategy type it silences: ``lint``, ``typecheck`` or ``unit-test``."""
    text: str

    def describe(self) -> str:
        """``src/calc.py:3: `# type: ignore` silences typecheck (type-ignore)``."""
        return f"{self.file}:{self.line}: `{self.text.strip()[:80]}` silences {self.checker} ({self.kind})"


def suppressions_added(rel: str, before: bytes | None, after: bytes, allowed: Iterable[str] = ()) -> list[Suppression]:
    """The lines ``after`` adds to ``before`` that silence a checker, in order (kinds ``allowed`` aside)."""
    permitted = set(allowed)
    old = set((before or b"").decode("utf-8", "replace").splitlines())
    found = []
    for number, line in enumerate(after.decode("utf-8", "replace").splitlines(), start=1):
        if line in old:
            continue
        found += [Suppression(rel, number, kind, checker, line) for kind, (checker, pattern) in KINDS.items()
                  if kind not in permitted and pattern.search(line)]
    return found
