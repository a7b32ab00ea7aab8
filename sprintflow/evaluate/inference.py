"""Which report a command produces, inferred from the command line people actually write.

``npm run lint``, ``npx vitest run``, ``pytest``, ``ruff check .`` and ``mypy src``
carry no ``format`` setting, yet each runs a tool whose output we can read.
:func:`infer_report` finds that tool — through ``npm``/``pnpm``/``yarn``/``bun``
scripts of ``package.json`` (following ``npm run`` chains), ``npx`` and other
launchers — and reads the reporter flags already on its command line
(``--reporter=json --outputFile=…``, ``--junitxml=FILE``, ``-f json -o …``,
``--output-format=json`` …) or, for pytest and ruff, in ``pyproject.toml``.
Without such flags the tool's default human-readable format is used, and a
command we do not know falls back to the generic ``path:line[:col]`` reader.

A command that chains several tools (``eslint . && tsc``) reads as a combined
format (``eslint-stylish+tsc``, see :func:`~sprintflow.parsers.parse_report`).
A report path is returned as the command names it, relative to the workspace;
confining it to the workspace is the caller's job.

Example:
    >>> infer_report("pytest -q --junitxml=reports/junit.xml", Path("."))
    ReportSpec(format='junit', report_path='reports/junit.xml', stream='output')
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["GENERIC", "ReportSpec", "given_to_last_tool", "infer_report", "tool_invocations"]

GENERIC = "generic"
MAX_SCRIPT_DEPTH = 8
_TEXT_FORMATS = ("vitest-text", "jest-text", "eslint-stylish", "ruff-text", "mypy", "tsc", "pytest",
                 "playwright-text", "biome", "go-test", "go-build", "gofmt",
                 "cargo", "cargo-nextest", "maven")


@dataclass(frozen=True)
class ReportSpec:
    """How to read what a command reports."""

    format: str
    """A key of :data:`~sprintflow.parsers.PARSERS`, or several joined by ``+``."""
    report_path: str | None = None
    """The report file the command writes, relative to the workspace; ``None``: read its output."""
    stream: Literal["stdout", "output"] = "output"
    """Where the report is when there is no file (ignored when there is): ``stdout`` alone
    (a JSON reporter), or ``output``, stdout and stderr together (human-readable reporters
    print on both)."""


@dataclass(frozen=True)
class Invocation:
    """One tool run found in a command: its name, arguments, environment and directory."""

    tool: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    cwd: str = "."


def infer_report(command: str, workspace: Path) -> ReportSpec:
    """The report format (and report file, if any) of ``command`` run in ``workspace``.

    Args:
        command: the shell command a strategy runs.
        workspace: where it runs; its ``package.json`` and ``pyproject.toml`` are read.

    Returns:
        The spec. A report file the command writes wins over its output; tools
        we cannot read give :data:`GENERIC`.

    Example:
        >>> infer_report("npx eslint . -f json -o out/eslint.json", Path("."))
        ReportSpec(format='eslint', report_path='out/eslint.json', stream='stdout')
        >>> infer_report("ruff check . && mypy src", Path(".")).format
        'ruff-text+mypy'
    """
    specs = [spec for call in tool_invocations(command, workspace)
             if (spec := _spec_for(call, workspace)) is not None]
    with_file = [spec for spec in specs if spec.report_path]
    if with_file:
        return with_file[-1]
    structured = [spec for spec in specs if spec.format not in _TEXT_FORMATS]
    if structured:
        return structured[-1]
    formats = list(dict.fromkeys(spec.format for spec in specs))
    return ReportSpec("+".join(formats)) if formats else ReportSpec(GENERIC)


# --- finding the tools a command runs ------------------------------------------------------

_CONTROL = {"&&", "||", ";", "|", "&", "|&", "\n"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Launchers that run the command after them (after their own options).
_PREFIXES = {"time", "nice", "nohup", "env", "command", "exec", "xvfb-run", "dotenv", "cross-env",
             "stdbuf", "unbuffer", "ionice"}


def tool_invocations(command: str, workspace: Path, depth: int = 0) -> Iterator[Invocation]:
    """Every tool run ``command`` leads to, in order, through package-manager scripts.

    Example:
        >>> [c.tool for c in tool_invocations("CI=1 npx --yes vitest run && python -m pytest", Path("."))]
        ['vitest', 'pytest']
    """
    scripts = _package_scripts(workspace)
    cwd = "."
    for words in _simple_commands(command):
        env, words = _split_env(words)
        if not words:
            continue
        if words[0] == "cd" and len(words) > 1:
            cwd = posixpath.normpath(posixpath.join(cwd, words[1]))
            continue
        call = _unwrap(words)
        if call is None:
            continue
        script = _script_call(call, scripts)
        if script is not None:
            if depth < MAX_SCRIPT_DEPTH:
                yield from _script_invocations(script, scripts, workspace, depth)
            continue
        tool, args = call
        yield Invocation(tool=tool, args=tuple(args), env=tuple(env), cwd=cwd)


def given_to_last_tool(command: str, workspace: Path, args: str) -> tuple[str, Invocation] | None:
    """``command`` with ``args`` added where its last tool gets them, and that tool's invocation: the last
    command of the line run directly, or the last command of the npm script it runs (after ``--``);
    None when they would reach no tool (a pipe's other end, an npm post-script, pnpm or yarn).

    Example:
        >>> line, call = given_to_last_tool("tsc && vitest run --reporter=json", Path("."), "--reporter=default")
        >>> line, call.tool
        ('tsc && vitest run --reporter=json --reporter=default', 'vitest')
    """
    simple = list(_simple_commands(command))
    invocations = list(tool_invocations(command, workspace))
    words = _split_env(simple[-1])[1] if simple else []
    last = _unwrap(words) if words else None
    if last is None or not invocations:
        return None
    if last[0] == invocations[-1].tool:
        return f"{command} {args}", invocations[-1]
    scripts = _package_scripts(workspace)
    script = _script_call(last, scripts)
    if script is None or script.runner != "npm" or f"post{script.name}" in scripts:
        return None
    return f"{command} {args}" if "--" in last[1] else f"{command} -- {args}", invocations[-1]


def _simple_commands(command: str) -> Iterator[list[str]]:
    """Split a shell line on ``&&``, ``||``, ``;`` and pipes into word lists."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = ""
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: read it word by word, as well as we can
        tokens = command.split()
    words: list[str] = []
    for token in tokens:
        if token in _CONTROL:
            if words:
                yield words
            words = []
        else:
            words.append(token)
    if words:
        yield words


def _split_env(words: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    env = []
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words[0].partition("=")
        env.append((name, value))
        words = words[1:]
    return env, words


def _unwrap(words: list[str]) -> tuple[str, list[str]] | None:
    """Strip launchers (``npx``, ``python -m``, ``uv run`` …): the tool and its arguments."""
    while words:
        head = posixpath.basename(words[0])
        rest = words[1:]
        if head in _PREFIXES:
            words = _skip_options(rest)
            while words and _ASSIGNMENT.match(words[0]):
                words = words[1:]  # `env FOO=1 tool`, `cross-env FOO=1 tool`
            if words and words[0] == "--":
                words = words[1:]
        elif head == "timeout":
            words = _skip_options(rest)[1:]  # the duration
        elif head in ("npx", "bunx", "pnpx"):
            words = _skip_npx_options(rest)
        elif head in ("pnpm", "yarn", "bun", "npm") and rest[:1] in (["exec"], ["dlx"], ["x"]):
            words = _skip_npx_options(rest[1:])
        elif re.fullmatch(r"python[\d.]*|py", head) and rest[:1] == ["-m"] and len(rest) > 1:
            words = rest[1:]
        elif head in ("uv", "poetry", "pipenv", "pdm", "rye", "hatch") and rest[:1] == ["run"]:
            words = _skip_options(rest[1:])
        else:
            return head, rest
    return None


def _skip_options(words: list[str]) -> list[str]:
    while words and words[0].startswith("-") and words[0] != "--":
        words = words[1:]
    return words


def _skip_npx_options(words: list[str]) -> list[str]:
    while words and words[0].startswith("-"):
        option = words[0]
        words = words[1:]
        if option in ("-p", "--package", "-c", "--call") and words:
            words = words[1:]
        if option == "--":
            break
    return words


_RUNNERS = {"npm", "pnpm", "yarn", "bun"}
_NPM_BUILTIN = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}
# Subcommands of pnpm/yarn/bun that are not script names.
_NOT_SCRIPTS = {"install", "i", "add", "remove", "ci", "exec", "dlx", "x", "why", "list", "ls", "outdated",
                "update", "up", "link", "publish", "pack", "init", "create", "config", "audit", "info"}


@dataclass(frozen=True)
class _Script:
    name: str
    runner: str
    extra: tuple[str, ...]


def _script_call(call: tuple[str, list[str]], scripts: dict[str, str]) -> _Script | None:
    """``npm run X -- args``, ``npm test``, ``pnpm X``, ``yarn X``: the script it runs, if any."""
    runner, args = call
    if runner not in _RUNNERS:
        return None
    args = _skip_options(args)
    if not args:
        return None
    if args[0] in ("run", "run-script", "rum", "urn"):
        args = _skip_options(args[1:])
        if not args:
            return None
        name = args[0]
    elif runner == "npm":
        if args[0] not in _NPM_BUILTIN:
            return None
        name = _NPM_BUILTIN[args[0]]
    elif args[0] in _NOT_SCRIPTS:
        return None
    else:
        name = args[0]
    if name not in scripts:
        return None
    extra = args[1:]
    if extra[:1] == ["--"]:
        extra = extra[1:]
    return _Script(name=name, runner=runner, extra=tuple(extra))


def _script_invocations(script: _Script, scripts: dict[str, str], workspace: Path,
                        depth: int) -> Iterator[Invocation]:
    # npm runs pre<name> and post<name> around a script; pnpm and yarn 2+ do not by default.
    names = [f"pre{script.name}", script.name, f"post{script.name}"] if script.runner == "npm" else [script.name]
    for name in names:
        body = scripts.get(name)
        if body is None:
            continue
        if name == script.name and script.extra:
            body = f"{body} {shlex.join(script.extra)}"  # arguments after `--` go to the script's last command
        yield from tool_invocations(body, workspace, depth + 1)


def _package_scripts(workspace: Path) -> dict[str, str]:
    try:
        data = json.loads((workspace / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


# --- the report each tool writes -------------------------------------------------------------

def _spec_for(call: Invocation, workspace: Path) -> ReportSpec | None:
    reader = _TOOLS.get(call.tool)
    if reader is None:
        return None
    spec = reader(_Options(call.args), dict(call.env), workspace)
    if spec is not None and spec.report_path and call.cwd != ".":
        spec = ReportSpec(spec.format, posixpath.normpath(posixpath.join(call.cwd, spec.report_path)), spec.stream)
    return spec


class _Options:
    """A tool's argument list, queried for ``--name=value``, ``--name value`` and short flags."""

    def __init__(self, args: tuple[str, ...]) -> None:
        self.args = args

    def values(self, *names: str) -> list[str]:
        found = []
        for i, arg in enumerate(self.args):
            for name in names:
                if arg == name and i + 1 < len(self.args):
                    found.append(self.args[i + 1])
                elif arg.startswith(name + "=") and name.startswith("--"):
                    found.append(arg[len(name) + 1:])
                elif not name.startswith("--") and arg.startswith(name) and len(arg) > len(name) and \
                        name.startswith("-") and not arg.startswith("--"):
                    found.append(arg[len(name):].lstrip("="))  # -fjson, -o=out.json
        return found

    def value(self, *names: str) -> str | None:
        found = self.values(*names)
        return found[-1] if found else None

    def has(self, *flags: str) -> bool:
        return any(arg in flags for arg in self.args)

    @property
    def first(self) -> str | None:
        return self.args[0] if self.args else None


Env = dict[str, str]


def _vitest(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    reporters = [r for value in opts.values("--reporter") for r in value.split(",")]
    outputs = opts.values("--outputFile", "--outputFile.json", "--outputFile.junit")
    named = {arg.split("=", 1)[0].removeprefix("--outputFile."): arg.split("=", 1)[1]
             for arg in opts.args if arg.startswith("--outputFile.") and "=" in arg}
    for reporter, fmt in (("json", "vitest"), ("junit", "junit")):
        if reporter in reporters:
            path = named.get(reporter) or (opts.value("--outputFile") if outputs else None)
            return ReportSpec(fmt, path, "stdout")
    return ReportSpec("vitest-text")


def _jest(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    if opts.has("--json"):
        return ReportSpec("jest", opts.value("--outputFile"), "stdout")
    reporters = opts.values("--reporters")
    if "jest-junit" in reporters:
        path = env.get("JEST_JUNIT_OUTPUT_FILE") or posixpath.join(env.get("JEST_JUNIT_OUTPUT_DIR", "."),
                                                                    env.get("JEST_JUNIT_OUTPUT_NAME", "junit.xml"))
        return ReportSpec("junit", posixpath.normpath(path))
    return ReportSpec("jest-text")


_ESLINT_GENERIC_FORMATS = {"unix", "compact", "visualstudio", "checkstyle", "tap", "codeframe", "table"}


def _eslint(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    fmt = opts.value("-f", "--format") or "stylish"
    output = opts.value("-o", "--output-file")
    if fmt == "json":
        return ReportSpec("eslint", output, "stdout")
    if fmt == "junit" and output:
        return ReportSpec("junit", output)
    if fmt == "stylish":
        return ReportSpec("eslint-stylish", output)
    return ReportSpec(GENERIC, output)


def _next(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    if opts.first == "lint":  # `next lint` prints ESLint's stylish report
        return _eslint(_Options(opts.args[1:]), env, workspace)
    return None


def _tsc(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    return ReportSpec("tsc")  # the parser reads plain and --pretty output alike


def _ruff(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    if opts.first == "format":
        return ReportSpec(GENERIC)
    fmt = opts.value("--output-format", "--format") or _pyproject_tool(workspace, "ruff").get("output-format")
    output = opts.value("-o", "--output-file")
    if fmt == "json":
        return ReportSpec("ruff", output, "stdout")
    if fmt == "junit":
        return ReportSpec("junit", output, "stdout")
    if fmt in (None, "full", "concise", "text", "grouped"):
        return ReportSpec("ruff-text", output)
    return ReportSpec(GENERIC, output)


def _mypy(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    return ReportSpec("mypy")  # plain, --pretty and -O json lines are all read by the one parser


def _pytest(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    path = opts.value("--junitxml", "--junit-xml")
    if path is None:
        path = _junit_in_addopts(workspace, env)
    return ReportSpec("junit", path) if path else ReportSpec("pytest")


def _playwright(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    if opts.first not in ("test", None):
        return None
    reporters = [r for value in opts.values("--reporter") for r in value.split(",")]
    if "json" in reporters:
        path = env.get("PLAYWRIGHT_JSON_OUTPUT_FILE") or env.get("PLAYWRIGHT_JSON_OUTPUT_NAME")
        return ReportSpec("playwright", path, "stdout")
    if "junit" in reporters:
        path = env.get("PLAYWRIGHT_JUNIT_OUTPUT_FILE") or env.get("PLAYWRIGHT_JUNIT_OUTPUT_NAME")
        return ReportSpec("junit", path, "stdout")
    return ReportSpec("playwright-text")


def _biome(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """Biome's default reporter (another ``--reporter`` is read for locations alone)."""
    reporter = opts.value("--reporter")
    return ReportSpec("biome") if reporter in (None, "default") else ReportSpec(GENERIC)


def _go(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """``go test`` prints its failures (``-json``: a stream of events, with the go command's own
    messages on stderr beside it); ``go build``, ``go vet`` and ``go install`` the compiler's and
    vet's findings; ``go tool staticcheck`` (a tool of go.mod) its own."""
    if opts.first == "test":
        return ReportSpec("go-test-json" if opts.has("-json") else "go-test")
    if opts.first in ("build", "vet", "install") and not opts.has("-json"):
        return ReportSpec("go-build")
    if opts.first == "tool" and len(opts.args) > 1:
        tool = posixpath.basename(opts.args[1])
        reader = _TOOLS.get(tool) if tool in ("staticcheck", "golangci-lint", "gofmt") else None
        return reader(_Options(opts.args[2:]), env, workspace) if reader else None
    return None


def _go_linter(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """staticcheck and golangci-lint print ``path.go:line:col: message (check)`` unless told to write
    JSON, SARIF or another format (``-f``, ``--out-format``, ``--output.<format>.path``)."""
    if opts.first in _GOLANGCI_OTHER_COMMANDS:
        return None
    written = opts.value("-f", "--out-format") not in (None, "text", "stylish", "colored-line-number", "line-number")
    if written or any(arg.startswith("--output.") and not arg.startswith("--output.text.") for arg in opts.args):
        return None
    return ReportSpec("go-build")


_GOLANGCI_OTHER_COMMANDS = ("fmt", "formatters", "linters", "version", "help", "config", "cache", "completion",
                            "custom", "migrate")


def _gofmt(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """``gofmt -l`` lists the files it would change, ``gofmt -d`` the diffs; otherwise it prints the
    formatted source (or rewrites the files with ``-w``), which is no report."""
    return ReportSpec("gofmt") if opts.has("-l", "-d") and not opts.has("-w") else None


_CARGO_BUILDS = {"build", "b", "check", "c", "clippy", "test", "t", "bench", "doc", "d", "rustc", "rustdoc"}
# cargo's own options that take a value, before the subcommand (`cargo -C dir test`).
_CARGO_VALUED = {"-C", "-Z", "--config", "--color", "--manifest-path", "--target-dir", "--explain"}


def _cargo(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """``cargo build``, ``check``, ``clippy``, ``test`` print rustc's diagnostics and the tests' results;
    ``--message-format=json`` a JSON message per line (the tests' own output, and cargo's, beside it);
    ``cargo fmt --check`` rustfmt's diffs (plain ``cargo fmt`` rewrites the files: no report);
    ``cargo nextest run`` a line per test."""
    args = list(opts.args)
    while args and (args[0].startswith("+") or args[0].startswith("-")):
        option = args.pop(0)  # a toolchain (`+nightly`) or one of cargo's own options
        if option in _CARGO_VALUED and args:
            args.pop(0)
    if not args:
        return None
    command, rest = args[0], _Options(tuple(args[1:]))
    own = _Options(tuple(args[1:args.index("--")] if "--" in args else args[1:]))  # after `--`: the tool's
    if command == "fmt":
        return ReportSpec("cargo") if rest.has("--check") else None
    if command == "nextest":
        # Its JUnit file (`[profile.<name>.junit]` of .config/nextest.toml) is not on the command line:
        # the human output, which has every test and the panic's place, is read.
        return ReportSpec("cargo-nextest") if rest.first in ("run", "r") else None
    if command not in _CARGO_BUILDS:
        return None
    message_format = (own.value("--message-format") or "human").split(",")
    if any(part.startswith("json") for part in message_format):
        return ReportSpec("cargo-json")
    return ReportSpec(GENERIC) if "short" in message_format else ReportSpec("cargo")


_MAVEN_PHASES = {"validate", "compile", "test-compile", "test", "package", "integration-test", "verify",
                 "install", "deploy"}
_MAVEN_PLUGINS = {"compiler", "surefire", "failsafe", "checkstyle", "spotbugs"}


def _maven(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    """``mvn``/``./mvnw`` running a build phase (``test``, ``verify`` …) or the compiler, Surefire,
    Failsafe, Checkstyle or SpotBugs goal: Maven's own output, which carries the compiler's errors,
    the failing tests and the totals of every module. Surefire's XML reports are not read instead:
    they are one file per test class and per module, and say nothing of a build that failed to compile.
    """
    for arg in opts.args:
        parts = arg.split(":")  # `prefix:goal`, `group:artifact[:version]:goal`
        plugin = "" if len(parts) < 2 else parts[1] if len(parts) > 2 else parts[0]
        # `maven-surefire-plugin`, `spotbugs-maven-plugin`, or the prefix alone (`surefire`)
        if arg in _MAVEN_PHASES or plugin.removesuffix("-plugin").removesuffix("-maven").removeprefix("maven-") \
                in _MAVEN_PLUGINS:
            return ReportSpec("maven")
    return None


def _javac(opts: _Options, env: Env, workspace: Path) -> ReportSpec:
    return ReportSpec("maven")  # the maven parser reads plain javac's `Foo.java:12: error: …` too


def _react_scripts(opts: _Options, env: Env, workspace: Path) -> ReportSpec | None:
    return _jest(_Options(opts.args[1:]), env, workspace) if opts.first == "test" else None


_TOOLS = {
    "vitest": _vitest, "jest": _jest, "eslint": _eslint, "next": _next, "tsc": _tsc, "vue-tsc": _tsc,
    "ruff": _ruff, "mypy": _mypy, "dmypy": _mypy, "pytest": _pytest, "py.test": _pytest,
    "playwright": _playwright, "react-scripts": _react_scripts, "go": _go,
    "cargo": _cargo, "mvn": _maven, "mvnw": _maven, "javac": _javac,
    "staticcheck": _go_linter, "golangci-lint": _go_linter, "gofmt": _gofmt, "biome": _biome,
}


def _pyproject_tool(workspace: Path, tool: str) -> dict:
    try:
        data = tomllib.loads((workspace / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    section = (data.get("tool") or {}).get(tool) or {}
    return section if isinstance(section, dict) else {}


_JUNIT_OPTION = re.compile(r"--junit-?xml[= ](\S+)")


def _junit_in_addopts(workspace: Path, env: Env) -> str | None:
    """``--junitxml`` in ``PYTEST_ADDOPTS`` or in ``addopts`` of ``pyproject.toml``."""
    pytest_section = _pyproject_tool(workspace, "pytest")
    ini_options = pytest_section.get("ini_options")
    ini: dict = ini_options if isinstance(ini_options, dict) else {}
    candidates = [env.get("PYTEST_ADDOPTS", ""), ini.get("addopts", ""), pytest_section.get("addopts", "")]
    for addopts in candidates:
        text = " ".join(addopts) if isinstance(addopts, list) else str(addopts)
        match = _JUNIT_OPTION.search(text)
        if match:
            return match[1]
    return None
