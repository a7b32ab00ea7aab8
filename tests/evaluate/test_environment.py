"""Environment failures told apart from code failures, on outputs recorded in the sandbox image.

The environment fixtures were recorded with the shared sandbox image (node 18.20.4,
Python 3.11.2); see tests/fixtures/reports/README.md.
"""

import json
from pathlib import Path

import pytest

from sprintflow.evaluate.environment import DeclaredDependencies, EnvironmentKind, classify_environment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ENVIRONMENT = FIXTURES / "reports" / "environment"


def recorded(name: str) -> str:
    return (ENVIRONMENT / name).read_text(encoding="utf-8")


def python_project(tmp_path: Path, name: str = "humanize", dependencies: str = "") -> DeclaredDependencies:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\ndependencies = [{dependencies}]\n'
        '[project.optional-dependencies]\ntests = ["freezegun", "pytest>=9"]\n')
    (tmp_path / "src" / name).mkdir(parents=True)
    (tmp_path / "src" / name / "__init__.py").write_text("")
    (tmp_path / "src" / name / "number.py").write_text("")
    return DeclaredDependencies.from_workspace(tmp_path)


@pytest.mark.parametrize("name, exit_code, kind, subject", [
    ("eslint10-node18.txt", 2, EnvironmentKind.runtime_api, "util.styleText"),
    ("better-sqlite3-node-module-version.txt", 1, EnvironmentKind.native_module, None),
    ("sh-vitest-not-found.txt", 127, EnvironmentKind.command_not_found, "vitest"),
    ("npx-vitest-offline.txt", 1, EnvironmentKind.command_not_found, "vitest"),
    ("node-oom-killed.txt", 137, EnvironmentKind.killed, None),
    ("python-disk-full.txt", 1, EnvironmentKind.disk_full, None),
])
def test_recorded_environment_failures(name, exit_code, kind, subject):
    failure = classify_environment(recorded(name), exit_code)
    assert failure is not None
    assert (failure.kind, failure.subject) == (kind, subject)
    assert failure.evidence and failure.hint


def test_the_package_under_test_not_installed_is_the_environment(tmp_path):
    declared = python_project(tmp_path)
    failure = classify_environment(recorded("pytest-package-not-installed.txt"), 2, declared)
    assert (failure.kind, failure.subject) == (EnvironmentKind.missing_dependency, "humanize")
    assert "pip install -e ." in failure.hint
    metadata = classify_environment(recorded("pytest-click-metadata-missing.txt"), 2,
                                    python_project(tmp_path / "click", "click"))
    assert (metadata.kind, metadata.subject) == (EnvironmentKind.missing_dependency, "click")


def test_a_declared_dependency_missing_is_the_environment_an_undeclared_one_the_code(tmp_path):
    declared = python_project(tmp_path, dependencies='"PyYAML>=6", "requests[socks]"')
    for module in ("yaml", "requests", "freezegun"):
        text = f"E   ModuleNotFoundError: No module named '{module}'"
        assert classify_environment(text, 2, declared).kind is EnvironmentKind.missing_dependency, module
    assert classify_environment("E   ModuleNotFoundError: No module named 'numpy'", 2, declared) is None
    # A module of the project's own package that does not exist is the code's mistake.
    assert classify_environment(recorded_pytest("9.0.3-collection-error.txt"), 2, declared) is None


def recorded_pytest(name: str) -> str:
    return (FIXTURES / "reports" / "pytest" / name).read_text(encoding="utf-8")


def test_node_missing_packages(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"express": "^4"},
                                                       "devDependencies": {"@scope/tool": "1"}}))
    declared = DeclaredDependencies.from_workspace(tmp_path)
    for text in ("Error: Cannot find module 'express'", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package "
                 "'@scope/tool/sub' imported from /w/src/a.js"):
        assert classify_environment(text, 1, declared).kind is EnvironmentKind.missing_dependency
    assert classify_environment("Error: Cannot find module './routes'", 1, declared) is None
    assert classify_environment("Error: Cannot find module 'lodash'", 1, declared) is None


def test_requirements_and_poetry_declare_dependencies_too(tmp_path):
    (tmp_path / "requirements-dev.txt").write_text("# tools\n-r base.txt\nDjango==5.0\n")
    (tmp_path / "pyproject.toml").write_text('[tool.poetry.dependencies]\npython = "^3.11"\nhttpx = "*"\n')
    declared = DeclaredDependencies.from_workspace(tmp_path)
    assert declared.declares_python("django.db") and declared.declares_python("httpx")
    assert not declared.declares_python("flask")


@pytest.mark.parametrize("text", [
    "ReferenceError: structuredClone is not defined",
    "TypeError: Object.groupBy is not a function",
    "Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite",
    "ImportError: cannot import name 'override' from 'typing' (/usr/lib/python3.11/typing.py)",
    "/w/node_modules/pkg/index.js:12\n  x ??= 1;\n    ^^^\n\nSyntaxError: Unexpected token '??='",
])
def test_runtime_apis_missing_from_an_older_runtime(text):
    assert classify_environment(text, 1).kind is EnvironmentKind.runtime_api


@pytest.mark.parametrize("text, exit_code", [
    ("TypeError: user.getName is not a function\n    at /w/src/a.js:3:9", 1),       # the code's own call
    ("src/a.js:3\n  x = ;\n      ^\n\nSyntaxError: Unexpected token ';'", 1),    # the code's own syntax
    ("ImportError: cannot import name 'helper' from 'app.utils' (/w/app/utils.py)", 1),
    ("AssertionError: expected 500 to be 404", 1),
    ("Killed", 0),
    ("TypeError: items.at is not a function", 1),                                 # node 18 has .at
    ("Killed 3 stale workers before the run\nAssertionError: boom", 1),
])
def test_code_failures_are_never_excused(text, exit_code):
    assert classify_environment(text, exit_code) is None


def test_a_kill_is_out_of_memory_only_when_docker_or_the_runtime_says_so():
    for text in ("Killed", "sh: line 1:  4242 Killed                  node build.js",
                 "[sprintflow: the command was killed by SIGKILL from outside the sandbox "
                 "(Docker reports OOMKilled=false)]"):
        assert classify_environment(text, 137).kind is EnvironmentKind.killed, text
    for text in ("[sprintflow: the command was OOMKilled: the container reached its memory limit]",
                 "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"):
        assert classify_environment(text, 137).kind is EnvironmentKind.out_of_memory, text
    assert "from outside" in classify_environment("", 137).hint


def test_a_command_we_killed_for_its_deadline_is_not_out_of_memory():
    assert classify_environment("", 137, timed_out=True) is None
    assert classify_environment("", 137).kind is EnvironmentKind.killed
