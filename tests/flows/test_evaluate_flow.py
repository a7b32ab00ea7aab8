"""The evaluate flow for real: example projects, both executors, under a Prefect test harness."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import docker
import pytest

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult
from sprintflow.schemas.validation import validate_data
from tests.fixtures.evals import eval_id_pattern

PY_CONTRACT = ".sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
SEED_ORDER = ["build", "typecheck", "lint", "unit-test", "api-check", "playwright", "custom"]


def _contract(workspace):
    return str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))


def _evaluate(workspace, executor, **kwargs) -> EvalResult:
    return run_flow(evaluate_flow, str(workspace), _contract(workspace), executor=executor, **kwargs)


def _assert_written_and_valid(workspace, result: EvalResult):
    path = workspace / ".sprintflow" / "evals" / f"{result.eval_id}.json"
    data = json.loads(path.read_text())
    assert validate_data(data, "eval-result", str(path)) == []
    assert re.fullmatch(eval_id_pattern(result.contract_id, 1), data["evalId"])


def _assert_names_expected_failures(workspace, result: EvalResult, expected_file):
    expected = json.loads(expected_file.read_text())
    entries = expected if isinstance(expected, list) else expected.get("failures", expected)
    located = {(d.file, d.line) for s in result.strategy_results for d in s.diagnostics}
    for entry in entries:
        if entry.get("file") and entry.get("line"):
            assert (entry["file"], entry["line"]) in located, entry


def _strategy_order(result: EvalResult, workspace) -> list[str]:
    return [s.strategy for s in result.strategy_results]


@pytest.fixture(params=["local", "docker"])
def executor(request):
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
    return request.param


def test_good_python_example_passes(prefect_harness, workspace_factory, executor):
    workspace = workspace_factory("python-api")
    result = _evaluate(workspace, executor)
    assert result.overall_result == "pass", result.summary
    assert {s.strategy: s.result.value for s in result.strategy_results}["api-check"] == "pass"
    assert [s for s in result.strategy_results if s.required and s.result.value != "pass"] == []
    _assert_written_and_valid(workspace, result)
    from prefect.artifacts import Artifact

    markdown = Artifact.get("eval-sprint-spec-20260115-todo-api-1")
    assert markdown.type == "markdown" and result.summary in markdown.data
    assert Artifact.get("eval-sprint-spec-20260115-todo-api-1-table").type == "table"


def test_broken_python_example_names_each_failure(prefect_harness, workspace_factory, executor):
    workspace = workspace_factory("python-api", broken=True)
    result = _evaluate(workspace, executor)
    assert result.overall_result == "fail"
    _assert_names_expected_failures(workspace, result, workspace / "broken.expected.json")
    assert result.generator_feedback[0].priority.value == "critical"
    assert result.generator_feedback[0].file and result.generator_feedback[0].line
    assert "FAILED" in result.summary


def test_typescript_example_in_docker(prefect_harness, workspace_factory, docker_ready):
    good = _evaluate(workspace_factory("ts-app"), "docker")
    assert good.overall_result == "pass", good.summary
    results = {s.strategy: s.result.value for s in good.strategy_results}
    assert results["playwright"] == "pass" and results["api-check"] == "pass"
    broken_ws = workspace_factory("ts-app", broken=True)
    broken = _evaluate(broken_ws, "docker")
    assert broken.overall_result == "fail"
    _assert_names_expected_failures(broken_ws, broken, broken_ws / "broken.expected.json")


def test_results_come_in_the_seed_order(prefect_harness, workspace_factory):
    workspace = workspace_factory("python-api")
    order = [s.strategy for s in _evaluate(workspace, "local").strategy_results]
    types = ["custom" if name == "route-coverage" else name for name in order]
    assert types == sorted(types, key=SEED_ORDER.index)


def test_unchanged_workspace_reuses_results_and_no_cache_runs_again(prefect_harness, workspace_factory):
    workspace = workspace_factory("python-api")
    first = _evaluate(workspace, "local")
    again = _evaluate(workspace, "local", iteration=2)
    assert not any(s.cached for s in first.strategy_results)
    assert all(s.cached for s in again.strategy_results)
    assert [s.result for s in again.strategy_results] == [s.result for s in first.strategy_results]
    forced = _evaluate(workspace, "local", iteration=3, use_cache=False)
    assert not any(s.cached for s in forced.strategy_results)
    (workspace / "src" / "todo_api" / "extra.py").write_text("X = 1\n")
    changed = _evaluate(workspace, "local", iteration=4)
    assert not any(s.cached for s in changed.strategy_results)


def test_regressions_against_the_previous_iteration(prefect_harness, workspace_factory):
    workspace = workspace_factory("python-api")
    _evaluate(workspace, "local", iteration=1)
    subprocess.run(["patch", "-s", "-p1", "-d", str(workspace), "-i", str(workspace / "broken.patch")], check=True)
    second = _evaluate(workspace, "local", iteration=2)
    regressed = " ".join(r.description for r in second.regressions)
    assert "typecheck strategy passed in eval-" in regressed
    assert any(item.category.value == "regression" for item in second.generator_feedback)


def _add_strategies(workspace, toml: str):
    """Append strategies to the example's config (TOML arrays of tables extend)."""
    with (workspace / "sprintflow.toml").open("a") as handle:
        handle.write("\n" + toml)


@pytest.mark.parametrize("executor_kind", ["local", "docker"])
def test_a_hanging_command_fails_closed_and_leaves_nothing_running(prefect_harness, workspace_factory,
                                                                    executor_kind, request):
    if executor_kind == "docker":
        request.getfixturevalue("docker_ready")
    workspace = workspace_factory("python-api")
    marker = f"sleep {7000 + os.getpid() % 991}"
    _add_strategies(workspace, f'[[evaluator.strategies]]\ntype = "custom"\nplugin = "hang"\n'
                               f'command = "{marker} & {marker}"\ntimeout = 2\n')
    result = _evaluate(workspace, executor_kind)
    hang = next(s for s in result.strategy_results if s.strategy == "hang")
    assert hang.result.value == "fail" and "did not finish within 2 s" in hang.details
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps
    if executor_kind == "docker":  # its container is gone too, not just its processes
        commands = [" ".join(c.attrs["Config"]["Cmd"] or []) for c in docker.from_env().containers.list(all=True)]
        assert not [c for c in commands if marker in c]


def test_a_command_that_cannot_start_and_a_missing_report_fail_closed(prefect_harness, workspace_factory):
    workspace = workspace_factory("python-api")
    _add_strategies(workspace, '[[evaluator.strategies]]\ntype = "custom"\nplugin = "missing-tool"\n'
                               'command = "/no/such/tool"\n'
                               '[[evaluator.strategies]]\ntype = "custom"\nplugin = "no-report"\ncommand = "true"\n'
                               '[evaluator.strategies.config]\nformat = "junit"\nreport = "out/junit.xml"\n')
    result = _evaluate(workspace, "local")
    by_name = {s.strategy: s for s in result.strategy_results}
    assert by_name["missing-tool"].result.value == "fail" and by_name["missing-tool"].exit_code == 127
    assert by_name["no-report"].result.value == "fail"
    assert "did not write its report out/junit.xml" in by_name["no-report"].details
    assert result.overall_result == "fail"


def test_reports_the_code_under_test_wrote_to_break_us_fail_their_strategy(prefect_harness, workspace_factory):
    # What a test run writes is the code under test's to decide: nested 100k deep, a number with
    # 5000 digits, a link to a host file. Each fails its own strategy; the evaluation goes on.
    workspace = workspace_factory("python-api")
    deep = "[" * 100_000 + "]" * 100_000
    (workspace / "deep.json").write_text('{"testResults": ' + deep + "}")
    (workspace / "huge.json").write_text('{"numTotalTests": ' + "9" * 5000 + ', "testResults": []}')
    _add_strategies(workspace, "".join(
        f'[[evaluator.strategies]]\ntype = "custom"\nplugin = "{name}"\ncommand = "{command}"\n'
        f'[evaluator.strategies.config]\nformat = "vitest"\nreport = "out/{name}.json"\n'
        for name, command in [("deep", "mkdir -p out && cp deep.json out/deep.json"),
                              ("huge", "mkdir -p out && cp huge.json out/huge.json"),
                              ("linked", "mkdir -p out && ln -sf /etc/hostname out/linked.json")]))
    result = _evaluate(workspace, "local", use_cache=False)
    by_name = {s.strategy: s for s in result.strategy_results}
    for name in ("deep", "huge", "linked"):
        assert by_name[name].result.value == "fail", by_name[name]
        assert f"out/{name}.json" in by_name[name].details, by_name[name].details
    assert "nested too deeply" in by_name["deep"].details
    assert result.overall_result == "fail"
    _assert_written_and_valid(workspace, result)


def sprintflow_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def test_cli_exit_codes_and_formats(prefect_harness, workspace_factory, prefect_api_url):
    env = {"PREFECT_API_URL": prefect_api_url}
    good = workspace_factory("python-api")
    run = sprintflow_cli("evaluate", str(good), "--contract", str(good / PY_CONTRACT),
                         "--executor", "local", "--json", env=env)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["overallResult"] == "pass"
    broken = workspace_factory("python-api", broken=True)
    run = sprintflow_cli("evaluate", str(broken), "--contract", str(broken / PY_CONTRACT),
                         "--executor", "local", "--format", "github", env=env)
    assert run.returncode == 1
    assert "::error file=src/" in run.stdout
    run = sprintflow_cli("evaluate", str(broken), "--contract", str(broken / PY_CONTRACT),
                         "--executor", "local", "--format", "junit", "--iteration", "2", env=env)
    assert run.returncode == 1 and run.stdout.startswith("<?xml") and "<failure" in run.stdout


@pytest.mark.parametrize("setup, message", [
    (lambda ws: ws / "missing-dir", "does not exist"),
    (lambda ws: (ws / "sprintflow.toml").write_text('[[evaluator.strategies]]\ntype = "fuzz"\n') and ws,
     "evaluator/strategies/0/type: 'fuzz' is not one of"),
    (lambda ws: _add_strategies(ws, '[[evaluator.strategies]]\ntype = "custom"\nplugin = "x"\n') or ws,
     "x: no command configured"),
])
def test_cli_input_errors_exit_2_without_traceback(workspace_factory, setup, message):
    workspace = workspace_factory("python-api")
    contract = workspace / PY_CONTRACT
    target = setup(workspace)
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    run = sprintflow_cli("evaluate", str(target), "--contract", str(contract), "--executor", "local")
    assert run.returncode == 2
    assert message in run.stderr and "Traceback" not in run.stderr
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before


def test_cli_malformed_contract(workspace_factory, tmp_path):
    workspace = workspace_factory("python-api")
    contract = tmp_path / "c.json"
    contract.write_text('{"contractId": "x",')
    run = sprintflow_cli("evaluate", str(workspace), "--contract", str(contract))
    assert run.returncode == 2 and "invalid JSON at line 1" in run.stderr and "Traceback" not in run.stderr


ENGINE_PASS = ("python3 -c \"import sys, json; prompt = sys.stdin.read(); "
               "print('Checked.\\\\n' + json.dumps({'result': 'pass' if 'sc-1-8' in prompt else 'fail', "
               "'evidence': 'src/todo_api/server.py:1 imports only http.server and json'}))\"")


@pytest.mark.parametrize("engine, outcome, evidence", [
    (ENGINE_PASS, "pass", "Evaluator engine: src/todo_api/server.py:1"),
    ("echo 'looks fine to me'", "fail", "has no result and evidence"),
    ("exit 3", "fail", "evaluator engine failed (engine exited with code 3"),
])
def test_manual_criteria_go_to_the_evaluator_engine(prefect_harness, workspace_factory, monkeypatch,
                                                    engine, outcome, evidence):
    monkeypatch.setenv("SPRINTFLOW_EVALUATOR_ENGINE", engine)
    result = _evaluate(workspace_factory("python-api"), "local")
    manual = next(c for c in result.criteria_results if c.criterion_id == "sc-1-8")
    assert manual.result.value == outcome and evidence in manual.evidence


def test_only_infrastructure_errors_are_retried(prefect_harness):
    from prefect import flow, task

    from sprintflow.errors import ExecutorUnavailable
    from sprintflow.tasks.retries import retry_on_infrastructure

    attempts = {"infra": 0, "real": 0}

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_on_infrastructure)
    def flaky(kind: str) -> str:
        attempts[kind] += 1
        if attempts[kind] == 1:
            raise ExecutorUnavailable("docker API hiccup") if kind == "infra" else AssertionError("real failure")
        return "ok"

    @flow
    def both() -> tuple:
        infra = flaky.submit("infra")
        real = flaky.submit("real")
        return infra.result(), real.result(raise_on_failure=False)

    infra, real = both()
    assert infra == "ok" and attempts["infra"] == 2
    assert isinstance(real, AssertionError) and attempts["real"] == 1
