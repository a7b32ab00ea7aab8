"""A checker's command as it reports without fixing: what it would change is a finding, not an edit.

A linter that fixes what it finds (ruff's ``fix = true`` or ``--fix``, ``eslint --fix``,
``biome check --write``, ``prettier --write``, ``ruff format``) changes the code it checks, so
its judged copy differs from what the generator wrote and the fixed findings are never
reported. The command that runs is the same tool told not to fix: each finding then stays at
its file and line with its rule. Commands this module does not recognise run as they are
(what they change in their layer still fails them, as a modified source).

Example:
    >>> without_autofix("ruff check . && mypy src")
    'ruff check --no-fix . && mypy src'
    >>> without_autofix("npx eslint --fix src")
    'npx eslint src'
    >>> without_autofix("npx vitest run")
    'npx vitest run'
"""

from __future__ import annotations

import re
import shlex

__all__ = ["without_autofix"]

# Shell separators between commands: each command is rewritten on its own, the separators kept.
_SEPARATOR = re.compile(r"(\s*(?:&&|\|\||;|\|)\s*)")
_FIX_FLAGS = {
    "eslint": {"--fix"},
    "biome": {"--write", "--apply", "--apply-unsafe", "--fix", "--unsafe"},
    "prettier": {"--write", "-w"},
}
_FIX_VALUED = {"eslint": {"--fix-type"}}


def without_autofix(command: str) -> str:
    """``command`` with every fixing checker in it told to report instead."""
    parts = _SEPARATOR.split(command)
    return "".join(part if index % 2 else _one(part) for index, part in enumerate(parts))


def _one(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    tool_at = next((i for i, w in enumerate(words) if _tool(w) in ("ruff", *_FIX_FLAGS)), None)
    if tool_at is None:
        return command
    tool, head, rest = _tool(words[tool_at]), words[:tool_at + 1], words[tool_at + 1:]
    if tool == "ruff":
        changed = _ruff(rest)
    elif tool == "prettier" and any(w in _FIX_FLAGS["prettier"] for w in rest):
        changed = ["--check", *_dropped(rest, _FIX_FLAGS["prettier"], set())]
    else:
        changed = _dropped(rest, _FIX_FLAGS[tool], _FIX_VALUED.get(tool, set()))
    if changed == rest:
        return command
    leading = command[:len(command) - len(command.lstrip())]
    return leading + shlex.join([*head, *changed])


def _tool(word: str) -> str:
    name = word.rsplit("/", 1)[-1]
    return "biome" if name.startswith("@biomejs/biome") else name


def _ruff(rest: list[str]) -> list[str]:
    """``ruff check`` never fixes (whatever its config says); ``ruff format`` only checks."""
    sub = rest[0] if rest and not rest[0].startswith("-") else None
    if sub == "format":
        return rest if "--check" in rest or "--diff" in rest else ["format", "--check", *rest[1:]]
    if sub not in (None, "check"):
        return rest
    options = [w for w in rest if w not in ("--fix", "--no-fix", "--fix-only")]
    at = 1 if sub == "check" else 0
    return [*options[:at], "--no-fix", *options[at:]]


def _dropped(words: list[str], flags: set[str], valued: set[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in valued:
            skip = True
        elif word not in flags and word.split("=", 1)[0] not in valued:
            kept.append(word)
    return kept
