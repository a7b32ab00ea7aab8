"""Canaries: a test that must fail and one that must pass, in every test file of every test run.

A runner that code under test patched from inside (a plugin registered through the interpreter, a
conftest, a matcher the module under test redefines, a forged report) passes whatever it runs, and
so it passes the failing canary too. The judge appends a canary pair to each test file of the
runner in the strategy's own layer of the judged tree (never the workspace), in the runner's
language, so the canaries run in the same module, with the same imports, as the tests beside them.
Each canary's name is a token derived from a secret of the run: nothing could have prepared for
it, and nothing in a name or a body tells the failing canary from the passing one (both compare
two random strings; which comes first is random too). After the run they are read from the
report and taken out of it: they never reach the verdict's counts or the feedback.

``go test`` gets ``Test_<token>`` functions (and ``-v``, so passing tests are named); ``cargo test`` a
test module in the root of every target it builds tests of (library, binaries, integration tests), so
that each test binary proves itself: code under test that prints libtest's summary for its binary's
tests and ends it successfully forges that binary alone, and its failing canary is then missing. Cargo
stops at the first test binary that fails, so the judged run is told ``--no-fail-fast``
(:meth:`Canary.judged_command`). Maven methods in each JUnit or TestNG class of every module of the
build (the aggregator's ``<modules>``, followed down); Maven stops the build at the first module whose
tests fail, so the judged run is told ``-Dmaven.test.failure.ignore=true`` and every module's tests run
(a test that fails still fails the check: its report says so, whatever Maven's exit code).

Which files' canaries run is learnt from the baseline's reference run (:mod:`.outcomes`): a file
the command does not collect, or one its module skips, had no failing canary there, and none is
expected of it later. The test files are those named like tests and, after the baseline, those
its run collected tests from whatever their names (the project's own settings decide them).

Example:
    >>> import tempfile
    >>> tree = Path(tempfile.mkdtemp()); (tree / "tests").mkdir()
    >>> _ = (tree / "tests" / "test_calc.py").write_text("def test_add():\\n    assert True\\n")
    >>> canary = plant(tree, "pytest", nonce="c0ffee")
    >>> failing = canary.name(0, "fail")
    >>> canary.paths, f"def test_{failing}()" in (tree / "tests" / "test_calc.py").read_text()
    (('tests/test_calc.py',), True)
    >>> canary.file_of(f"tests/test_calc.py::test_{failing}"), canary.must_fail(f"test_{failing}")
    ('tests/test_calc.py', True)
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Literal

from sprintflow.judge.areas import excluded_area, is_test

from .inference import given_to_last_tool

__all__ = ["MAX_FILES", "Canary", "maven_modules", "plant", "runner_of"]

MAX_FILES = 200
"""Test files that get a canary pair in one run (the first, in order)."""
_PYTHON = (".py",)
_JS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
_GO = ("_test.go",)
_RUST = (".rs",)
_SUFFIXES = {"pytest": _PYTHON, "go": _GO, "cargo": _RUST}
_CARGO_FORMATS = ("cargo", "cargo-json", "cargo-nextest")
_MAVEN_TESTS = frozenset({"test", "verify", "install", "package", "deploy", "integration-test", "surefire:test"})
"""The Maven phases and goals that run Surefire."""
# Surefire's default includes, by the class a test file declares.
_SUREFIRE_CLASS = re.compile(r"(?:Test\w*|\w+Tests?|\w+TestCase)\.java$")
# Each test framework's annotation and assertion, by a name no import of the file can shadow.
_JVM_CANARY = {"jupiter": ("@org.junit.jupiter.api.Test", "org.junit.jupiter.api.Assertions.assertEquals"),
               "junit4": ("@org.junit.Test", "org.junit.Assert.assertEquals"),
               "testng": ("@org.testng.annotations.Test", "org.testng.Assert.assertEquals")}
# A Go test file that imports the testing package by its own name: the canaries' *testing.T needs it
# (Go allows no import after the first declaration, so a file without it gets no canary).
_GO_TESTING = re.compile(r'^(?:import\s+|\s+)"testing"\s*$', re.MULTILINE)


# cargo's test subcommand (or nextest's run), with what may come between: one command of a shell line.
_CARGO_TEST = re.compile(r"(\b(?:cargo|/cargo)\b[^;&|\n]*?\s(?:test|t|nextest\s+(?:run|r)))(?=\s|$)")
# Maven (or its wrapper) at the start of one command of a shell line.
_MAVEN = re.compile(r"((?:^|[;&|(]\s*|\s)(?:\S*/)?(?:mvn|mvnw)(?:\.cmd)?)(?=\s|$)")
_TOKEN = re.compile(r"(?<![0-9a-f])[0-9a-f]{12}(?![0-9a-f])")
Kind = Literal["fail", "pass"]


@dataclass(frozen=True)
class Canary:
    """The canaries of one run: the run's secret and the files they were appended to."""

    nonce: str
    """The secret the canaries' names are derived from (it is in no file)."""
    paths: tuple[str, ...]
    """The test files, relative to the tree, in the order their canaries are numbered."""
    env: tuple[tuple[str, str], ...] = ()
    """What the run needs in its environment for the runner to name every test, the passing canary
    too: ``go test`` lists passing tests only with ``-v`` (given through ``GOFLAGS``, which every go
    command reads, whatever the command line)."""
    failed_exit: int = 1
    """The runner's exit code when a test failed, the failing canary alone among them: cargo's is 101;
    Maven's 0 (the judged run tells it to ignore test failures, :meth:`judged_command`)."""
    stops_at_failure: bool = False
    """The runner may stop before every canary ran: ``cargo test`` at the first test binary that fails
    (where ``--no-fail-fast`` could not be given), Maven at a module that does not build (an exit code
    other than :attr:`failed_exit`). A failing canary it never reached says nothing when the run failed
    on its own."""
    no_fail_fast: bool = False
    """The judged run tells the runner to run every test whatever fails (:meth:`judged_command`)."""
    prints: bool = False
    """The judged run has vitest print its results beside a JSON report it would write alone (its default
    reporter added): the console is the report file's second witness (:mod:`.outcomes`)."""

    def judged_command(self, command: str, root: Path | None = None) -> str:
        """The command as the judged run runs it (in the tree at ``root``): cargo told to run every test binary
        (``--no-fail-fast``), Maven every module (``-Dmaven.test.failure.ignore=true``), so that each one's
        canaries run whichever fails (the verdict is the same: a failing test fails either way, by its
        report); vitest writing only its JSON report told to print its results too (:attr:`prints`).

        Example:
            >>> canary = Canary("n", ("src/lib.rs",), no_fail_fast=True)
            >>> canary.judged_command("cd core && cargo test --quiet -- --test-threads 1")
            'cd core && cargo test --no-fail-fast --quiet -- --test-threads 1'
            >>> canary.judged_command("cargo +stable nextest run --workspace")
            'cargo +stable nextest run --no-fail-fast --workspace'
            >>> canary.judged_command("./mvnw -B -q verify")
            './mvnw -Dmaven.test.failure.ignore=true -B -q verify'
        """
        if self.prints and root is not None:
            return _printing(command, root)
        if not self.no_fail_fast:
            return command
        if _CARGO_TEST.search(command):
            return command if "--no-fail-fast" in command.split() else \
                _CARGO_TEST.sub(r"\1 --no-fail-fast", command, count=1)
        return _MAVEN.sub(r"\1 -Dmaven.test.failure.ignore=true", command, count=1)

    def name(self, index: int, kind: Kind) -> str:
        """The token that names the canary of ``kind`` in the file numbered ``index``."""
        return hmac.new(self.nonce.encode(), f"{index}:{kind}".encode(), hashlib.sha256).hexdigest()[:12]

    @cached_property
    def _tokens(self) -> dict[str, tuple[int, Kind]]:
        kinds: tuple[Kind, ...] = ("fail", "pass")
        return {self.name(index, kind): (index, kind) for index in range(len(self.paths)) for kind in kinds}

    def _find(self, name: str) -> tuple[int, Kind] | None:
        return next((self._tokens[t] for t in _TOKEN.findall(name) if t in self._tokens), None)

    def is_canary(self, name: str) -> bool:
        return self._find(name) is not None

    def file_of(self, name: str) -> str | None:
        """The file whose canary a test name is (None: not a canary)."""
        found = self._find(name)
        return self.paths[found[0]] if found else None

    def must_fail(self, name: str) -> bool:
        return (found := self._find(name)) is not None and found[1] == "fail"

    def must_pass(self, name: str) -> bool:
        return (found := self._find(name)) is not None and found[1] == "pass"


_CONSOLE_REPORTERS = frozenset({"default", "verbose", "basic", "dot", "tap", "tap-flat", "tree"})
"""vitest's reporters that print the results."""


def _printing(command: str, root: Path) -> str:
    """``command`` with vitest's default reporter added when its last tool is vitest given reporters that
    print nothing (``--reporter=json`` alone); as it is otherwise.

    Example:
        >>> _printing("npx vitest run --reporter=json --outputFile=r.json", Path("."))
        'npx vitest run --reporter=json --outputFile=r.json --reporter=default'
        >>> _printing("vitest run --reporter json --reporter verbose", Path("."))
        'vitest run --reporter json --reporter verbose'
    """
    found = given_to_last_tool(command, root, "--reporter=default")
    if found is None or found[1].tool != "vitest":
        return command
    args = found[1].args
    reporters = {arg.split("=", 1)[1] for arg in args if arg.startswith("--reporter=")}
    reporters |= {value for flag, value in zip(args, args[1:], strict=False) if flag == "--reporter"}
    return found[0] if reporters and not reporters & _CONSOLE_REPORTERS else command


def runner_of(fmt: str | None, command: str) -> str | None:
    """The test runner behind a report format and command: ``pytest``, ``vitest``, ``jest``, ``go``,
    ``cargo`` (``cargo test`` or ``cargo nextest run``, not ``cargo build``), ``maven`` (a phase that
    runs Surefire) or None.

    Example:
        >>> runner_of("junit", "python3 -m pytest --junitxml=r.xml"), runner_of("vitest", "npm test")
        ('pytest', 'vitest')
        >>> runner_of("cargo", "cargo test -q --workspace"), runner_of("cargo", "cargo clippy -- -D warnings")
        ('cargo', None)
    """
    if fmt in ("vitest", "vitest-text"):
        return "vitest"
    if fmt in ("jest", "jest-text"):
        return "jest"
    if fmt == "pytest" or (fmt == "junit" and "pytest" in command):
        return "pytest"
    if fmt in ("go-test", "go-test-json"):
        return "go"
    if fmt in _CARGO_FORMATS and _runs_cargo_tests(command):
        return "cargo"
    if fmt == "maven" and _MAVEN_TESTS.intersection(command.split()):
        return "maven"
    return None


def _runs_cargo_tests(command: str) -> bool:
    words = command.split()
    at = next((i for i, word in enumerate(words) if word == "cargo" or word.endswith("/cargo")), None)
    return at is not None and any(word in ("test", "t", "nextest") for word in words[at + 1:])


def plant(root: Path, runner: str, nonce: str | None = None, collected: Iterable[str] = ()) -> Canary | None:
    """Append a canary pair of ``runner`` to each of its test files in the tree at ``root``; None when
    the tree has none. ``collected``: the files the baseline's run collected tests from, tests too
    whatever their names (a project's own ``python_files`` or ``include``).

    Example:
        >>> import tempfile
        >>> tree = Path(tempfile.mkdtemp()); (tree / "checks").mkdir()
        >>> _ = (tree / "checks" / "calc_checks.py").write_text("def test_add():\\n    assert True\\n")
        >>> plant(tree, "pytest") is None, plant(tree, "pytest", collected=["checks/calc_checks.py"]).paths
        (True, ('checks/calc_checks.py',))
    """
    if runner == "maven":
        return _plant_maven(root, nonce)
    suffixes = _SUFFIXES.get(runner, _JS)
    named = _rust_test_roots(root) if runner == "cargo" else _test_files(root, suffixes)
    files = sorted({*named, *(rel for rel in collected if _plain_file(root, rel, suffixes))})
    if runner == "go":  # the go command builds no testdata/ or vendor/ folder: their files are data
        files = [rel for rel in files if not {"testdata", "vendor"} & set(PurePosixPath(rel).parts[:-1])
                 and _GO_TESTING.search((root / rel).read_text(encoding="utf-8", errors="replace"))]
    files = files[:MAX_FILES]
    if not files:
        return None
    # go test names passing tests only with -v: GOFLAGS gives it to every go command, the user's flags kept.
    env = (("GOFLAGS", " ".join([*os.environ.get("GOFLAGS", "").split(), "-v"])),) if runner == "go" else ()
    cargo = runner == "cargo"
    canary = Canary(nonce or secrets.token_hex(16), tuple(files), env, 101 if cargo else 1, stops_at_failure=cargo,
                    no_fail_fast=cargo, prints=runner == "vitest")
    for index, rel in enumerate(files):
        path = root / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        path.unlink()  # a hard link into the judge's store: the layer gets a file of its own
        source = _cargo_source(canary, index) if cargo else _source(runner, canary, index)
        path.write_text(text + ("" if text.endswith("\n") or not text else "\n") + source)
    return canary


def _plant_maven(root: Path, nonce: str | None) -> Canary | None:
    """A canary pair of methods in each JUnit 4, JUnit 5 or TestNG test class of every module of the build."""
    chosen: list[tuple[str, str]] = []
    for module in maven_modules(root):
        for path in sorted((root / module / "src" / "test" / "java").rglob("*.java")):
            rel = path.relative_to(root).as_posix()
            if len(chosen) >= MAX_FILES or not _SUREFIRE_CLASS.search(path.name) \
                    or not _plain_file(root, rel, (".java",)):
                continue
            framework = _jvm_framework(path.read_text(encoding="utf-8", errors="replace"))
            if framework:
                chosen.append((rel, framework))
    if not chosen:
        return None
    canary = Canary(nonce or secrets.token_hex(16), tuple(rel for rel, _ in chosen), failed_exit=0,
                    stops_at_failure=True, no_fail_fast=True)
    for index, (rel, framework) in enumerate(chosen):
        path = root / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        end = text.rstrip().rfind("}")  # the end of the file's last class: the test class, by Java's layout
        if end < 0:
            continue
        path.unlink()  # a hard link into the judge's store: the layer gets a file of its own
        path.write_text(text[:end] + _jvm_source(canary, index, framework) + text[end:])
    return canary


_MAVEN_MODULES = 200
"""Modules followed in one build (a reactor larger than this is cut, in order)."""


def maven_modules(root: Path) -> list[str]:
    """The folders of the build's modules, the root first, each aggregator's ``<modules>`` followed down as
    Maven does (a module's ``<module>`` names a folder, or a POM file in one); none outside the tree, none
    twice.

    Example:
        >>> import tempfile
        >>> tree = Path(tempfile.mkdtemp()); (tree / "core").mkdir(); (tree / "cli").mkdir()
        >>> _ = (tree / "pom.xml").write_text("<project><modules><module>core</module>"
        ...                                   "<!-- <module>old</module> --><module>cli/pom.xml</module>"
        ...                                   "<module>../elsewhere</module></modules></project>")
        >>> _ = (tree / "core" / "pom.xml").write_text("<project/>")
        >>> _ = (tree / "cli" / "pom.xml").write_text("<project><modules><module>../core</module></modules></project>")
        >>> maven_modules(tree)
        ['.', 'core', 'cli']
    """
    found: list[str] = []
    pending = ["."]
    while pending and len(found) < _MAVEN_MODULES:
        module = pending.pop(0)
        if module in found:
            continue
        try:
            pom = (root / module / "pom.xml").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found.append(module)
        listed = re.search(r"<modules>(.*?)</modules>", re.sub(r"<!--.*?-->", "", pom, flags=re.DOTALL), re.DOTALL)
        for name in re.findall(r"<module>\s*([^<]+?)\s*</module>", listed[1] if listed else ""):
            name = name.removesuffix("pom.xml").rstrip("/") if name.endswith("pom.xml") else name
            folder = os.path.normpath(os.path.join(module, name or "."))
            if folder != ".." and not folder.startswith("../") and not os.path.isabs(folder) \
                    and (root / folder).is_dir() and not (root / folder).is_symlink():
                pending.append(Path(folder).as_posix())
    return found


def _pair(canary: Canary, index: int) -> list[tuple[str, str, str]]:
    """The file's two canaries as (name, left, right), in a random order; each compares two random strings
    (equal for the passing one), so only the judge knows which must fail."""
    same = secrets.token_hex(6)
    pair = [(canary.name(index, "fail"), same, secrets.token_hex(6)), (canary.name(index, "pass"), same, same)]
    secrets.SystemRandom().shuffle(pair)
    return pair


def _jvm_framework(source: str) -> str | None:
    if "org.junit.jupiter" in source:
        return "jupiter"
    if "org.testng" in source:
        return "testng"
    return "junit4" if re.search(r"\borg\.junit\.(?:Test|Assert)\b", source) else None


def _jvm_source(canary: Canary, index: int, framework: str) -> str:
    annotation, assertion = _JVM_CANARY[framework]
    pair = _pair(canary, index)
    return "".join(f"\n    {annotation}\n    public void t_{name}() {{\n"
                   f'        {assertion}("{left}", "{right}");\n    }}\n' for name, left, right in pair)


def _rust_test_roots(root: Path) -> list[str]:
    """The root file of each target of each crate in the tree that ``cargo test`` builds a test binary of:
    the library (``[lib] path``, else ``src/lib.rs``), the binaries (``[[bin]]`` paths, ``src/main.rs``,
    ``src/bin/``) and the integration tests (``[[test]]`` paths, ``tests/*.rs``, ``tests/*/main.rs``).
    A target cargo does not build tests of (``test = false``, ``autotests = false``) runs no canary, on
    the baseline either, so none is expected of it."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "target" and excluded_area("", d, True) is None)
        if "Cargo.toml" not in files:
            continue
        crate = Path(folder)
        try:
            manifest = tomllib.loads((crate / "Cargo.toml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            manifest = {"package": {}}  # cargo says what is wrong with it; the canaries go where it would look
        if not isinstance(manifest.get("package"), dict):
            continue  # a virtual manifest: the workspace's crates have their own
        lib = manifest.get("lib")
        declared = [lib.get("path") if isinstance(lib, dict) else None]
        for key in ("bin", "test"):
            targets = manifest.get(key)
            declared += [t.get("path") for t in targets if isinstance(t, dict)] if isinstance(targets, list) else []
        usual = ["src/lib.rs", "src/main.rs", *(f"src/bin/{p.name}" for p in sorted((crate / "src/bin").glob("*.rs"))),
                 *(f"src/bin/{p.parent.name}/main.rs" for p in sorted((crate / "src/bin").glob("*/main.rs"))),
                 *(f"tests/{p.name}" for p in sorted((crate / "tests").glob("*.rs"))),
                 *(f"tests/{p.parent.name}/main.rs" for p in sorted((crate / "tests").glob("*/main.rs")))]
        for rel in dict.fromkeys([*(d for d in declared if isinstance(d, str)), *usual]):
            if _plain_file(crate, rel, _RUST):
                found.append((crate.relative_to(root) / rel).as_posix())
    return found


def _cargo_source(canary: Canary, index: int) -> str:
    """Rust's canaries: a test module of two tests, compiled into the target's test binary alone."""
    pair = _pair(canary, index)
    tests = "".join(f'    #[test]\n    fn t_{name}() {{\n        assert_eq!("{left}", "{right}");\n    }}\n'
                    for name, left, right in pair)
    return f"\n#[cfg(test)]\nmod t_{secrets.token_hex(4)} {{\n{tests}}}\n"


def _test_files(root: Path, suffixes: tuple[str, ...]) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if excluded_area("", d, True) is None)
        base = Path(folder).relative_to(root)
        found += [(base / name).as_posix() for name in sorted(files)
                  if name.endswith(suffixes) and is_test((base / name).as_posix())
                  and not name.startswith(("conftest", "__init__")) and _names_a_test(name)]
    return found


def _plain_file(root: Path, rel: str, suffixes: tuple[str, ...]) -> bool:
    """A regular file of the runner's language inside the tree, by a plain relative path (a report's
    word is not trusted to name anything else)."""
    parts = PurePosixPath(rel).parts
    if not rel.endswith(suffixes) or not parts or rel.startswith("/") or ".." in parts:
        return False
    path = root / rel
    return not any((root.joinpath(*parts[:i])).is_symlink() for i in range(1, len(parts) + 1)) and path.is_file()


def _names_a_test(name: str) -> bool:
    """A file the runner collects by its name (a helper in a tests folder is not one)."""
    return bool(re.match(r"test_.*\.py$|.*_test\.py$|.*\.(test|spec)\.[cm]?[jt]sx?$|.*_test\.go$", name))


def _source(runner: str, canary: Canary, index: int) -> str:
    """The file's canary pair, in a random order; each compares two random strings (equal for the
    passing one), so only the judge knows which must fail."""
    pair = _pair(canary, index)
    if runner == "pytest":
        return "".join(f'\n\ndef test_{name}():\n    assert "{left}" == "{right}"\n' for name, left, right in pair)
    if runner == "go":  # `Test_`: a name after Test may not begin with a lowercase letter, a token may
        return "".join(f'\nfunc Test_{name}(t *testing.T) {{\n\tif "{left}" != "{right}" {{\n'
                       f'\t\tt.Fatal("{left} != {right}")\n\t}}\n}}\n' for name, left, right in pair)
    if runner == "vitest":  # the same expect the file's tests use, whatever the module under test did to it
        alias = secrets.token_hex(6)
        return (f"\nimport {{ test as t_{alias}, expect as e_{alias} }} from 'vitest';\n"
                + "".join(f"t_{alias}('{name}', () => {{ e_{alias}('{left}').toBe('{right}'); }});\n"
                          for name, left, right in pair))
    return "\n" + "".join(f"test('{name}', () => {{ expect('{left}').toBe('{right}'); }});\n"
                           for name, left, right in pair)
