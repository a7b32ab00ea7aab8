"""Done when: real projects get the same verdict in Docker as on a correctly set-up host.

Each project is evaluated twice by the evaluate flow, on the same workspace:
with the LocalExecutor (the host: its node_modules from ``npm ci``, its
virtualenv first on PATH) and with the DockerExecutor, which prepares the
project's own sandbox first (declared node, dependencies installed inside,
the host's node_modules and virtualenv masked). Layers are built on first use
and shared by the whole session (and by later sessions on the machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult

from .projects import host_tools_bin, project_copy

pytestmark = pytest.mark.docker

_CONFIGS = {
    "ts-native": '''
[[evaluator.strategies]]
type = "typecheck"
command = "node_modules/.bin/tsc --noEmit --pretty false"
timeout = 180
[evaluator.strategies.config]
format = "tsc"

[[evaluator.strategies]]
type = "lint"
command = "npx eslint . --format json --output-file .sprintflow/reports/eslint.json"
timeout = 180
[evaluator.strategies.config]
format = "eslint"
report = ".sprintflow/reports/eslint.json"

[[evaluator.strategies]]
type = "unit-test"
command = "npx vitest run --reporter=json --outputFile=.sprintflow/reports/vitest.json"
timeout = 180
[evaluator.strategies.config]
format = "vitest"
report = ".sprintflow/reports/vitest.json"
''',
    "zod": '''
[[evaluator.strategies]]
type = "unit-test"
command = "npx vitest run src/v4/mini --reporter=json --outputFile=.sprintflow/reports/vitest.json"
timeout = 300
[evaluator.strategies.config]
format = "vitest"
report = ".sprintflow/reports/vitest.json"
''',
    "outcome": '''
[[evaluator.strategies]]
type = "unit-test"
command = "pytest -q -p no:cacheprovider --junitxml=.sprintflow/reports/pytest.xml"
timeout = 180
[evaluator.strategies.config]
format = "junit"
report = ".sprintflow/reports/pytest.xml"
''',
    # A uv project's plain command: the pytest its lock pins, from the environment uv made. Its tests use
    # tmp_path, and this copy lies under our own pytest's /tmp/pytest-of-<user>, which the contained run is
    # shown read-only (the workspace's path names it); a temporary folder of its own, in the private /tmp
    # every executor gives a run, keeps the inner pytest out of ours.
    "iniconfig": '''
[[evaluator.strategies]]
type = "unit-test"
command = "python -m pytest -q -p no:cacheprovider --basetemp=/tmp/iniconfig-tests"
timeout = 180
''',
    # A Poetry project's plain command: the pytest its lock pins, from the environment Poetry made.
    "cleo": '''
[[evaluator.strategies]]
type = "unit-test"
command = "python -m pytest -q -p no:cacheprovider --basetemp=/tmp/cleo-tests"
timeout = 180
''',
    # Plain Go commands, as a Go developer writes them: no format, no report.
    "color": '''
[[evaluator.strategies]]
type = "lint"
command = "go vet ./..."
timeout = 300

[[evaluator.strategies]]
type = "unit-test"
command = "go test ./..."
timeout = 300
''',
    # Plain Rust and Maven commands, as their developers write them.
    "either": '''
[[evaluator.strategies]]
type = "lint"
command = "cargo clippy --quiet"
timeout = 600

[[evaluator.strategies]]
type = "unit-test"
command = "cargo test --quiet"
timeout = 600
''',
    # Plain commands of projects that use pnpm and yarn: each runs the package.json's vitest script.
    "tiny-pnpm": '''
[[evaluator.strategies]]
type = "unit-test"
command = "pnpm test"
timeout = 300
''',
    "tiny-yarn": '''
[[evaluator.strategies]]
type = "unit-test"
command = "yarn test"
timeout = 300
''',
    # Apache RAT fails a tree with a file without a licence header, and sprintflow.toml is one: its developers
    # would exclude it in their RAT configuration; here the command skips RAT.
    "commons-cli": '''
[[evaluator.strategies]]
type = "unit-test"
command = "mvn -B -q test -Drat.skip=true"
timeout = 900
''',
}


def _contract(workspace: Path, methods: list[str]) -> Path:
    criteria = [{"criterionId": f"sc-1-{i}", "description": f"{method} passes", "verificationMethod": method,
                 "required": True} for i, method in enumerate(methods, 1)]
    contract = {
        "contractId": f"sprint-spec-sandbox-{workspace.name}-1", "specId": "spec-sandbox", "sprintNumber": 1,
        "title": f"{workspace.name} is judged where it runs", "description": "Sandbox parity.",
        "status": "in-progress", "createdAt": "2026-11-30T00:00:00Z", "updatedAt": "2026-11-30T00:00:00Z",
        "completedAt": None, "dependsOn": [], "features": ["feat-1"], "successCriteria": criteria,
        "generatorNotes": "", "evaluatorNotes": "", "estimatedFiles": [], "estimatedDuration": "small",
        "iterationHistory": [], "lastEvalId": None,
    }
    path = workspace.parent / f"{workspace.name}-contract.json"
    path.write_text(json.dumps(contract))
    return path


def _verdicts(result: EvalResult) -> dict[str, str]:
    return {s.strategy: s.result.value for s in result.strategy_results}


def _host_path(workspace: Path) -> str:
    """The developer's PATH: their activated virtualenv, and pnpm and yarn where the project uses them."""
    venv = workspace / ".venv" / "bin"
    tools = [str(host_tools_bin())] if workspace.name in ("tiny-pnpm", "tiny-yarn") else []
    return ":".join([*([str(venv)] if venv.is_dir() else []), *tools, os.environ["PATH"]])


@pytest.mark.parametrize("name, methods", [
    ("ts-native", ["typecheck", "lint", "unit-test"]),
    ("zod", ["unit-test"]),
    ("outcome", ["unit-test"]),
    ("iniconfig", ["unit-test"]),
    ("cleo", ["unit-test"]),
    ("color", ["lint", "unit-test"]),
    ("either", ["lint", "unit-test"]),
    ("commons-cli", ["unit-test"]),
    ("tiny-pnpm", ["unit-test"]),
    ("tiny-yarn", ["unit-test"]),
])
def test_same_verdict_in_docker_as_on_the_host(prefect_harness, docker_ready, tmp_path, monkeypatch,
                                               name, methods):
    workspace = project_copy(name, tmp_path)
    (workspace / "sprintflow.toml").write_text(_CONFIGS[name])
    contract = _contract(workspace, methods)

    with monkeypatch.context() as host:
        host.setenv("PATH", _host_path(workspace))  # the developer's activated virtualenv
        local = evaluate_flow(str(workspace), str(contract), executor="local", use_cache=False, iteration=1)
    docker = evaluate_flow(str(workspace), str(contract), executor="docker", use_cache=False, iteration=2)

    assert local.overall_result == "pass", local.summary
    assert _verdicts(docker) == _verdicts(local), docker.summary
    assert docker.overall_result == local.overall_result
    unit = next(s for s in docker.strategy_results if s.strategy == "unit-test")
    assert "passed" in unit.details or unit.result.value == "pass"


def test_a_go_modules_failing_test_is_told_alike_in_docker_and_on_the_host(prefect_harness, docker_ready,
                                                                          tmp_path):
    """The sandbox's Go (the proxy's toolchain, the modules its go.sum pins, no network) fails the same
    test at the same line as the host's go."""
    workspace = project_copy("color", tmp_path)
    (workspace / "sprintflow.toml").write_text(
        '[[evaluator.strategies]]\ntype = "unit-test"\ncommand = "go test ./..."\ntimeout = 300\n')
    test = workspace / "color_test.go"
    source = test.read_text()
    test.unlink()  # a hard link to the shared copy: the fault goes into this one only
    test.write_text(source.replace("\tif stdoutIsTerminal() {\n", "\tif !stdoutIsTerminal() {\n", 1))
    contract = _contract(workspace, ["unit-test"])

    local = run_flow(evaluate_flow, str(workspace), str(contract), executor="local", use_cache=False, iteration=1)
    docker = run_flow(evaluate_flow, str(workspace), str(contract), executor="docker", use_cache=False, iteration=2)

    def failures(result: EvalResult) -> list[tuple]:
        unit = next(s for s in result.strategy_results if s.strategy == "unit-test")
        return [(d.file, d.line, d.test) for d in unit.diagnostics]

    assert local.overall_result == docker.overall_result == "fail"
    assert failures(local) == failures(docker) == [("color_test.go", 261, "TestStdoutIsTerminal_NilStdout")]


def _fault(workspace: Path, rel: str, find: str, replace: str) -> None:
    path = workspace / rel
    source = path.read_text()
    assert source.count(find) == 1, f"{rel}: the fault's text is not there once"
    path.unlink()  # a hard link to the shared copy: the fault goes into this one only
    path.write_text(source.replace(find, replace))


@pytest.mark.parametrize("name, command, rel, find, replace", [
    # Debian trixie's rustc 1.85 (either's rust-version is 1.63), offline with the crates its Cargo.lock pins
    ("either", "cargo test --quiet", "src/lib.rs", "            Left(_) => true,\n            Right(_) => false,",
     "            Left(_) => true,\n            Right(_) => true,"),
    # Debian's OpenJDK 17 and Maven, offline, with what the setup step downloaded
    ("commons-cli", "mvn -B -q test -Drat.skip=true", "src/main/java/org/apache/commons/cli/Option.java",
     "        return longOption != null;", "        return longOption == null;"),
    # Debian's python, with what cleo's poetry.lock pins, installed by Poetry
    ("cleo", "python -m pytest -q -p no:cacheprovider --basetemp=/tmp/cleo-tests", "src/cleo/io/outputs/output.py",
     "        return self._verbosity is Verbosity.QUIET", "        return self._verbosity.quiet"),
    # node 20 from the registry (pnpm-lock.yaml's vite needs ^20.19; the yarn project says >=20), pnpm and
    # yarn at the versions packageManager pins
    ("tiny-pnpm", "pnpm test", "src/even.js", "% 2 === 0", "% 2 === 1"),
    ("tiny-yarn", "yarn test", "src/even.js", "% 2 === 0", "% 2 === 1"),
])
def test_a_failing_test_is_told_alike_in_docker_and_on_the_host(prefect_harness, docker_ready, tmp_path,
                                                                monkeypatch, name, command, rel, find, replace):
    workspace = project_copy(name, tmp_path)
    (workspace / "sprintflow.toml").write_text(
        f'[[evaluator.strategies]]\ntype = "unit-test"\ncommand = "{command}"\ntimeout = 900\n')
    _fault(workspace, rel, find, replace)
    contract = _contract(workspace, ["unit-test"])

    with monkeypatch.context() as host:
        host.setenv("PATH", _host_path(workspace))
        local = run_flow(evaluate_flow, str(workspace), str(contract), executor="local", use_cache=False,
                         iteration=1)
    docker = run_flow(evaluate_flow, str(workspace), str(contract), executor="docker", use_cache=False, iteration=2)

    def failures(result: EvalResult) -> list[tuple]:
        """The failing tests where they failed (the host's newer rustc may warn about more: not a failure)."""
        unit = next(s for s in result.strategy_results if s.strategy == "unit-test")
        return sorted((d.file, d.line, d.test) for d in unit.diagnostics if d.test)

    assert local.overall_result == docker.overall_result == "fail", docker.summary
    assert failures(local) == failures(docker), docker.summary
    assert failures(docker) and all(file and file.startswith("src/") for file, _, _ in failures(docker))


@pytest.mark.slow
def test_a_python_from_another_debian_release(docker_ready, tmp_path):
    """``.python-version 3.13``: the trixie base is debootstrapped once (minutes), then reused."""
    from sprintflow.sandbox.executors import CommandSpec, DockerExecutor
    from sprintflow.sandbox.prepare import with_project_sandbox

    workspace = project_copy("outcome", tmp_path)
    (workspace / ".python-version").write_text("3.13\n")
    executor = with_project_sandbox(DockerExecutor(), workspace, progress=print)
    assert executor.image and executor.image.startswith("sprintflow-deps:")
    result = executor.run(workspace, CommandSpec("python --version && pytest -q -p no:cacheprovider", timeout=120))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Python 3.13.") and "10 passed" in result.stdout


@pytest.mark.slow
def test_a_pin_that_needs_a_newer_python_than_the_declaration_gets_it(docker_ready, tmp_path):
    """``requires-python >= 3.10`` with Django 6.0 pinned (it needs 3.12): bookworm's 3.11 would fail pip
    install in the setup step; the index says trixie's 3.13 installs the pin, so the sandbox has that."""
    from sprintflow.sandbox.executors import CommandSpec, DockerExecutor
    from sprintflow.sandbox.prepare import with_project_sandbox

    workspace = tmp_path / "pinned"
    workspace.mkdir()
    (workspace / "pyproject.toml").write_text('[project]\nname = "pinned"\nversion = "0.1"\n'
                                              'requires-python = ">=3.10"\n[tool.setuptools]\npy-modules = []\n')
    (workspace / "requirements.txt").write_text("django==6.0\n")
    (workspace / "test_django.py").write_text("import django\n\n\ndef test_pinned():\n"
                                              "    assert django.VERSION[:2] == (6, 0)\n")
    progress: list[str] = []
    executor = with_project_sandbox(DockerExecutor(), workspace, progress=progress.append)
    assert "Debian trixie's python" in progress[-1] and "1 pinned requirement checked" in progress[-1]
    result = executor.run(workspace, CommandSpec("python --version && pytest -q -p no:cacheprovider", timeout=120))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Python 3.13.") and "1 passed" in result.stdout


@pytest.mark.parametrize("name, commands", [
    ("either", {"build": "cargo build --quiet", "unit-test": "cargo test --quiet"}),
    ("color", {"lint": "go vet ./...", "build": "go build ./...", "unit-test": "go test ./..."}),
])
def test_init_then_evaluate_in_docker_passes(prefect_api_url, docker_ready, tmp_path, name, commands):
    """A Rust crate and a Go module as a newcomer starts: ``sprintflow init`` writes the ecosystem's own
    commands, and the first contract passes in the project's sandbox (its toolchain, its locked crates or
    modules, no network)."""
    workspace = project_copy(name, tmp_path)

    def sprintflow(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True,
                              env={**os.environ, "PREFECT_API_URL": prefect_api_url}, timeout=1800, check=False)

    assert sprintflow("init", str(workspace)).returncode == 0
    [contract] = (workspace / ".sprintflow" / "contracts").glob("*.json")
    judged = sprintflow("evaluate", str(workspace), "--contract", str(contract), "--executor", "docker", "--json")
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-3000:]
    result = EvalResult.model_validate_json(judged.stdout)
    written = tomllib.loads((workspace / "sprintflow.toml").read_text())["evaluator"]["strategies"]
    assert {s["type"]: s["command"] for s in written} == commands
    assert {s.strategy: s.result.value for s in result.strategy_results} == dict.fromkeys(commands, "pass")
    assert result.overall_result == "pass" and result.inferred == []
