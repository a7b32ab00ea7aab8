"""The seed's self-checks of the tests the tester wrote: coverage, negative cases, mocks, network, hints."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from sprintflow.io.hashing import IGNORED_DIRS
from sprintflow.schemas import SprintContract
from sprintflow.schemas.testrun import TestRun
from sprintflow.testruns.testrun import declared_status_codes

__all__ = ["self_check"]

TEST_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
"""Files of the tests folder the self-checks read."""


def self_check(test_run: TestRun, contract: SprintContract, workspace: Path,
               tests_dir: str) -> list[str]:
    """The seed's self-checks of one tester step; one sentence per problem, none when all pass.

    A test per criterion and per declared status code (5xx excepted), a negative
    case asserting every declared 4xx, no whole-module mock of the code under
    test, no network beyond localhost, an informative hint on every failure.
    """
    sources = list(_test_sources(workspace, tests_dir))
    return [*_coverage_problems(test_run),
            *_negative_case_problems(contract, sources),
            *(p for rel, text in sources for p in _mock_problems(workspace, tests_dir, rel, text)),
            *(p for rel, text in sources for p in _network_problems(rel, text)),
            *_hint_problems(test_run)]


def _test_sources(workspace: Path, tests_dir: str) -> Iterator[tuple[str, str]]:
    root = workspace / tests_dir
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        rel = path.relative_to(workspace)
        if (path.suffix in TEST_SOURCE_SUFFIXES and path.is_file()
                and not IGNORED_DIRS.intersection(rel.parts)):
            yield rel.as_posix(), path.read_text(encoding="utf-8", errors="replace")


def _coverage_problems(run: TestRun) -> list[str]:
    if run.crashed:
        return [f"Coverage could not be checked: the test run crashed ({run.crash_reason})."]
    return [*(f"{c} has no test: name it in a test title as [{c}]." for c in run.uncovered_criteria),
            *(f"Status code {code} has no test: name the code in a test title."
              for code in run.uncovered_status_codes if code < 500)]


def _negative_case_problems(contract: SprintContract, sources: list[tuple[str, str]]) -> list[str]:
    problems = []
    for code in declared_status_codes(contract.to_dict()):
        asserted = re.compile(rf"(?:^\s*assert\b|\bassert\w*\(|\bexpect\(|\.to\w*\()[^\n]*"
                              rf"(?<![\d.]){code}(?!\d)", re.MULTILINE)
        if 400 <= code < 500 and not any(asserted.search(text) for _, text in sources):
            problems.append(f"Status {code} has no negative case: send the input that must be "
                            f"refused and assert the {code}.")
    return problems


_JS_MOCK = re.compile(r"\b(?:vi|jest)\.(?:mock|doMock)\(\s*(['\"`])([^'\"`]+)\1")
_PY_PATCH = re.compile(r"\bpatch\(\s*(['\"])([\w.]+)\1\s*[,)]")
_SYS_MODULES = re.compile(r"(?:patch\.dict|setitem)\(\s*sys\.modules\b|sys\.modules\[[^\]]+\]\s*=(?!=)")


def _mock_problems(workspace: Path, tests_dir: str, rel: str, text: str) -> Iterator[str]:
    """Mocks that replace the code under test as a whole (external packages may be mocked)."""
    for match in _JS_MOCK.finditer(text):
        if _own_js_module(workspace, tests_dir, rel, match[2]):
            yield (f"{rel}:{_line(text, match)}: mocks the module under test {match[2]!r} as a "
                   f"whole; mock only external APIs, time or randomness.")
    for match in _PY_PATCH.finditer(text):
        if _own_py_module(workspace, match[2]):
            yield (f"{rel}:{_line(text, match)}: patches the whole module {match[2]!r}; patch "
                   f"what it calls outside, not the code under test.")
    for match in _SYS_MODULES.finditer(text):
        yield (f"{rel}:{_line(text, match)}: replaces modules in sys.modules, which can swap out "
               f"the code under test as a whole.")


def _own_js_module(workspace: Path, tests_dir: str, rel: str, target: str) -> bool:
    """A relative path that leaves the tests folder, or a ``@/``/``~/`` alias, is the project's code."""
    if target.startswith(("@/", "~/")):
        return True
    if not target.startswith("."):
        return False  # a package: an external API, which may be mocked
    resolved = (workspace / rel).parent.joinpath(target).resolve()
    return not resolved.is_relative_to((workspace / tests_dir).resolve())


def _own_py_module(workspace: Path, dotted: str) -> bool:
    """Whether a dotted name is a module (not an attribute) of the workspace's own code."""
    relative = Path(*dotted.split("."))
    return any((root / relative).with_suffix(".py").is_file() or (root / relative / "__init__.py").is_file()
               for root in (workspace, workspace / "src"))


_NETWORK_CLIENT = re.compile(
    r"\bfetch\(|\baxios\b|\bimport\s+requests\b|\bfrom\s+requests\b|\brequests\.\w+\(|\bhttp\.client\b"
    r"|\burllib\.request\b|\burlopen\(|\bhttpx\b|\baiohttp\b|\bhttps?\.(?:get|request)\(|\bsocket\b")
_NETWORK_STUB = re.compile(
    r"stubGlobal\(\s*['\"]fetch|spyOn\(\s*(?:global|globalThis|window)\s*,\s*['\"]fetch|\bnock\(|from\s+['\"]msw"
    r"|requests_mock|@responses\.activate|\brespx\b|httpretty"
    r"|(?:vi|jest)\.mock\(\s*['\"](?:axios|node-fetch)|patch\(\s*['\"](?:requests|urllib|http\.client|socket|httpx)")
_URL_HOST = re.compile(r"\b(?:https?|wss?)://(\[[^\]]*\]|[^/\s'\"`:?#]+)")
_CONNECT_HOST = re.compile(r"socket\.create_connection\(\s*\(\s*(['\"])([^'\"]+)\1")
_LOOPBACK = re.compile(r"localhost|.*\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?", re.IGNORECASE)


def _network_problems(rel: str, text: str) -> Iterator[str]:
    """A file that uses a network client and names a host beyond loopback, without stubbing it."""
    if not _NETWORK_CLIENT.search(text) or _NETWORK_STUB.search(text):
        return
    hosts = [(m, m[1]) for m in _URL_HOST.finditer(text)] + [(m, m[2]) for m in _CONNECT_HOST.finditer(text)]
    for match, host in hosts:
        if not _LOOPBACK.fullmatch(host):
            yield (f"{rel}:{_line(text, match)}: reaches {host} over the network; tests may reach "
                   f"only localhost: stub the call instead.")
            return


_UNINFORMATIVE = re.compile(r"(?:fix (?:the|this) bug|expected \S+,? (?:but )?(?:got|received) \S+)\.?",
                            re.IGNORECASE)


def _hint_problems(run: TestRun) -> list[str]:
    return [f"The failure of {f.test!r} has no usable hint ({f.hint!r}): say what went wrong and "
            f"what to change." for f in run.failures
            if not f.hint.strip() or _UNINFORMATIVE.fullmatch(f.hint.strip())]


def _line(text: str, match: re.Match[str]) -> int:
    return text.count("\n", 0, match.start()) + 1
