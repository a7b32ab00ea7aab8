"""The command that runs exactly the failing tests, with the project's own runner and options.

A feedback item's reproduction and the flaky re-run both want the failing tests alone:
the check's command, its positional paths replaced by the tests' ids (pytest node ids,
vitest and jest files and an anchored ``-t`` title pattern, Go's ``-run`` pattern).
A command whose runner cannot be found in it (``make test``, a shell pipeline) gives None:
then the whole command is the reproduction.

Example:
    >>> select_tests("python -m pytest -q tests", "pytest", ["tests/test_a.py::test_b"])
    'python -m pytest -q tests/test_a.py::test_b'
    >>> select_tests("npx vitest run", "vitest", ["test/a.test.ts > api > returns 404"])
    "npx vitest run test/a.test.ts -t '^ ?api returns 404$'"
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["select_tests", "split_js_id", "test_runner"]

_SHELL = frozenset({"&&", "||", ";", "|", "&", ">", "<", ">>", "2>&1"})
_PYTEST_VALUED = frozenset({"-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n", "--tb", "--rootdir", "--maxfail",
                            "--junitxml", "--junit-xml", "--confcutdir", "--basetemp", "--cov", "--cov-report",
                            "--durations", "--import-mode", "--log-level", "--deselect", "--ignore",
                            "--ignore-glob", "--override-ini", "--color", "--capture", "--dist"})
_JS_VALUED = frozenset({"-c", "--config", "--reporter", "--outputFile", "--project", "--root", "--dir", "--mode",
                        "--environment", "--pool", "--shard", "--testTimeout", "--maxWorkers", "-w", "--rootDir",
                        "--testEnvironment", "--coverageProvider", "--json", "--outputFile.json"})
_GO_VALUED = frozenset({"-run", "-timeout", "-count", "-tags", "-p", "-parallel", "-coverprofile", "-covermode",
                        "-bench", "-skip", "-cpu", "-o", "-exec"})
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})


def test_runner(tool: str, command: str) -> str | None:
    """The runner whose tests a diagnostic of ``tool`` names, for a check run by ``command``.

    Example:
        >>> test_runner("junit", "python -m pytest --junitxml=r.xml"), test_runner("tsc", "tsc")
        ('pytest', None)
    """
    if tool in ("pytest", "vitest", "jest", "go"):
        return tool
    if tool == "junit":
        return "pytest" if "pytest" in command else None
    return None


def select_tests(command: str, runner: str, tests: Sequence[str]) -> str | None:
    """``command`` changed to run exactly ``tests`` (the runner's ids), or None when it cannot be."""
    if not tests:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if _SHELL.intersection(words):
        return None
    if runner == "pytest":
        return _pytest(words, tests)
    if runner in ("vitest", "jest"):
        return _javascript(words, runner, tests)
    if runner == "go":
        return _go(words, tests)
    return None


def _pytest(words: list[str], tests: Sequence[str]) -> str | None:
    start = next((i + 1 for i, w in enumerate(words)
                  if w in ("pytest", "py.test") or w.endswith("/pytest")
                  or (w == "pytest" and i and words[i - 1] == "-m")), None)
    if start is None:
        return None
    return shlex.join([*words[:start], *_options(words[start:], _PYTEST_VALUED), *tests])


def _options(words: list[str], valued: frozenset[str]) -> list[str]:
    """The options of a command line without its positional arguments (paths and filters)."""
    return _split_arguments(words, valued)[0]


def _split_arguments(words: list[str], valued: frozenset[str]) -> tuple[list[str], list[str]]:
    """A command line's options (with their values) and its positional arguments."""
    options: list[str] = []
    positional: list[str] = []
    value_next = False
    for word in words:
        if value_next:
            options.append(word)
            value_next = False
        elif word.startswith("-"):
            options.append(word)
            value_next = word in valued
        else:
            positional.append(word)
    return options, positional


def split_js_id(test: str) -> tuple[str | None, list[str]]:
    """A vitest or jest id's file and titles (``test/a.test.ts > api > 404``).

    Example:
        >>> split_js_id("test/a.test.ts > api > returns 404"), split_js_id("api returns 404")
        (('test/a.test.ts', ['api', 'returns 404']), (None, ['api returns 404']))
        >>> split_js_id("src/a.test.ts")
        ('src/a.test.ts', [])
    """
    parts = test.split(" > ")
    if re.search(r"\.[cm]?[jt]sx?$", parts[0]) and (len(parts) > 1 or "/" in parts[0] or " " not in parts[0]):
        return parts[0], parts[1:]  # a test file alone is the file that failed to load
    return None, parts


def _javascript(words: list[str], runner: str, tests: Sequence[str]) -> str | None:
    files, names, whole_files = [], [], False
    for test in tests:
        file, titles = split_js_id(test)
        if file and file not in files:
            files.append(file)
        if titles:
            names.append(_js_escape(" ".join(titles)))
        else:
            whole_files = True
    if whole_files and names:
        return None  # a file that failed to load beside single tests: no one selection is exactly both
    # vitest and jest match -t against the titles joined by spaces (vitest's top-level suite adds a space).
    title = ["-t", "^ ?" + (names[0] if len(names) == 1 else "(" + "|".join(names) + ")") + "$"] if names else []
    at = next((i for i, w in enumerate(words) if w == runner or w.endswith(f"/{runner}")
               or w.endswith(f"/{runner}.mjs") or w.endswith(f"/{runner}.js")), None)
    if at is not None:
        head, rest = words[:at + 1], words[at + 1:]
        sub = [rest[0]] if runner == "vitest" and rest and rest[0] in ("run", "related") else (
            ["run"] if runner == "vitest" and "--watch" not in rest and "--run" not in rest else [])
        return shlex.join([*head, *sub, *_options(rest[len(sub) if sub and rest[:1] == sub else 0:], _JS_VALUED),
                           *files, *title])
    if words and words[0] in _PACKAGE_MANAGERS and len(words) <= 3 and "test" in words[1:]:
        # `npm test`: the script's own arguments stay; the selection goes after `--` (npm needs it).
        extra = ["--"] if words[0] == "npm" and "--" not in words else []
        return shlex.join([*words, *extra, *files, *title])
    return None


def _js_escape(title: str) -> str:
    return re.sub(r"([\\^$.|?*+()\[\]{}/])", r"\\\1", title)


def _go(words: list[str], tests: Sequence[str]) -> str | None:
    """``go test``: ids are ``TestX`` or ``TestX/sub``, optionally after their package (``./pkg TestX``).

    With ``-v``, so that what ran is listed and can be counted (go prints passing tests only then).

    Example:
        >>> select_tests("go test -count=1 ./...", "go", ["./codec TestJSON/nested"])
        "go test -count=1 -v -run '^TestJSON$/^nested$' ./codec"
    """
    if words[:2] != ["go", "test"]:
        return None
    options, packages = _split_arguments(words[2:], _GO_VALUED)
    named = [test.split(" ", 1) if " " in test else ["", test] for test in tests]
    levels = [name.split("/") for _, name in named]
    pattern = "/".join(_go_level(sorted({level[i] for level in levels if len(level) > i}))
                       for i in range(max(len(level) for level in levels)))
    chosen = sorted({package for package, _ in named if package}) or packages
    verbose = [] if {"-v", "-v=true", "-json"}.intersection(options) else ["-v"]
    return shlex.join(["go", "test", *_without_option(options, "-run"), *verbose, "-run", pattern, *chosen])


def _go_level(names: list[str]) -> str:
    escaped = [re.escape(name) for name in names]
    return f"^{escaped[0]}$" if len(escaped) == 1 else "^(" + "|".join(escaped) + ")$"


def _without_option(options: list[str], name: str) -> list[str]:
    kept, skip = [], False
    for word in options:
        if skip:
            skip = False
        elif word == name:
            skip = True
        elif not word.startswith(name + "="):
            kept.append(word)
    return kept
