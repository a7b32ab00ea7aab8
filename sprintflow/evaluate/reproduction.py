"""The command that runs exactly the failing tests, with the project's own runner and options.

A feedback item's reproduction and the flaky re-run both want the failing tests alone:
the check's command, its positional paths replaced by the tests' ids (pytest node ids,
vitest and jest files and an anchored ``-t`` title pattern, Go's ``-run`` pattern, libtest's
``--exact`` names for ``cargo test``, a nextest filterset, Surefire's ``-Dtest=Class#method``).
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
_CARGO_VALUED = frozenset({"-p", "--package", "-F", "--features", "--target", "--manifest-path", "--test", "--bin",
                           "--example", "--bench", "-j", "--jobs", "--profile", "--target-dir", "--color",
                           "--message-format", "-Z", "--config", "--exclude", "-E", "--filterset",
                           "--test-threads", "--skip", "--format", "-P", "--cargo-profile", "--retries"})
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_UNLOADED_TARGET = re.compile(r"\((?!line \d+\))[^()]*\)$")
"""A cargo test target that did not compile (``app (lib test)``): no filter selects it, unlike a doctest
(``src/lib.rs - add (line 7)``)."""
_MAVEN = re.compile(r"^(?:.*/)?mvnw?(?:\.cmd)?$")


def test_runner(tool: str, command: str) -> str | None:
    """The runner whose tests a diagnostic of ``tool`` names, for a check run by ``command``.

    Example:
        >>> test_runner("junit", "python -m pytest --junitxml=r.xml"), test_runner("tsc", "tsc")
        ('pytest', None)
    """
    if tool in ("pytest", "vitest", "jest", "go", "cargo"):
        return tool
    if tool == "surefire":
        return "maven"
    if tool == "junit":
        return "pytest" if "pytest" in command else "maven" if re.search(r"(^|[/\s])mvnw? ", command) else None
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
    if runner == "cargo":
        return _cargo(words, tests)
    if runner == "maven":
        return _maven(words, tests)
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


def _cargo(words: list[str], tests: Sequence[str]) -> str | None:
    """``cargo test``: libtest's ``--exact`` names after ``--`` (every test target applies them, doctests
    included), the command's test-name filter dropped; ``cargo nextest run``: a filterset of each test
    in its binary (nextest's ids are ``binary test``). A target that did not compile selects nothing.

    Example:
        >>> select_tests("cargo test -q --workspace", "cargo", ["tests::adds", "tests::subtracts"])
        'cargo test -q --workspace -- --exact tests::adds tests::subtracts'
        >>> select_tests("cargo nextest run", "cargo", ["strsim tests::hamming"])
        "cargo nextest run -E 'binary_id(=strsim) & test(=tests::hamming)'"
    """
    if words[:1] != ["cargo"] or any(_UNLOADED_TARGET.search(test) for test in tests):
        return None
    at = next((i for i, word in enumerate(words) if word in ("test", "t", "nextest")), None)
    if at is None:
        return None
    nextest = words[at] == "nextest"
    if nextest and words[at + 1:at + 2] not in (["run"], ["r"]):
        return None
    head = words[:at + 1 + nextest]
    before, after = _split_at_dashes(words[at + 1 + nextest:])
    cargo_options = _options(before, _CARGO_VALUED)
    libtest_options = [word for word in _options(after, _CARGO_VALUED) if word != "--exact"]
    if nextest:
        if any(" " not in test for test in tests):
            return None
        chosen = [test.split(" ", 1) for test in tests]
        expression = " | ".join(f"binary_id(={binary}) & test(={name})" if len(chosen) == 1 else
                                f"(binary_id(={binary}) & test(={name}))" for binary, name in chosen)
        options = _without_option(_without_option(cargo_options, "-E"), "--filterset")
        return shlex.join([*head, *options, "-E", expression, *(["--", *libtest_options] if libtest_options else [])])
    return shlex.join([*head, *cargo_options, "--", *libtest_options, "--exact", *tests])


def _split_at_dashes(words: list[str]) -> tuple[list[str], list[str]]:
    """A cargo command's own arguments and the test binaries' (after ``--``)."""
    if "--" not in words:
        return words, []
    at = words.index("--")
    return words[:at], words[at + 1:]


def _maven(words: list[str], tests: Sequence[str]) -> str | None:
    """``mvn``: Surefire's ``-Dtest`` of each test's class and method (ids are ``pkg.Class.method``;
    a parameterized test's ``method(int)[1]`` is its method, every invocation), the command's goals
    kept; a module without those tests is not a failure (``-Dsurefire.failIfNoSpecifiedTests=false``).

    Example:
        >>> select_tests("mvn -q test", "maven", ["org.acme.AppTest.adds", "org.acme.AppTest.subtracts"])
        "mvn -q test '-Dtest=org.acme.AppTest#adds+subtracts' -Dsurefire.failIfNoSpecifiedTests=false"
    """
    if not words or not _MAVEN.match(words[0]):
        return None
    methods: dict[str, list[str]] = {}
    for test in tests:
        cls, _, method = test.partition("(")[0].partition("[")[0].rpartition(".")
        if not cls or not method:
            return None
        methods.setdefault(cls, [])
        if method not in methods[cls]:
            methods[cls].append(method)
    kept = [w for w in words if not w.startswith(("-Dtest=", "-Dsurefire.failIfNoSpecifiedTests=", "-DfailIfNoTests="))]
    selection = ",".join(f"{cls}#{'+'.join(names)}" for cls, names in methods.items())
    return shlex.join([*kept, f"-Dtest={selection}", "-Dsurefire.failIfNoSpecifiedTests=false"])
