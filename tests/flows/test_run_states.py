"""The state of a flow run tells its verdict, read back from the (real, local) Prefect server of the session."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from sprintflow.errors import DocumentError
from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.flows.sprint import sprint_flow
from sprintflow.orchestration.runs import run_flow, without_heartbeats
from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def _server_run(state):
    """The flow run as the server has it, with its task runs (their states arrive as events: wait for them)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        deadline = time.monotonic() + 30
        while True:
            tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[run_id])))
            if all(t.state and t.state.is_final() for t in tasks) or time.monotonic() > deadline:
                return run, {t.name: t.state for t in tasks}
            time.sleep(0.5)


def _evaluate(workspace: Path, **kwargs):
    with without_heartbeats():
        return evaluate_flow(str(workspace), str(workspace / CONTRACT), executor="local", return_state=True,
                             **kwargs)


FAILED = ("FAILED", "Failed")  # the standard name, which the UI's failure views select by


def test_a_failed_contract_ends_failed_as_contract_failed_and_its_failing_tasks_fail(prefect_harness, tmp_path):
    workspace = make_workspace(tmp_path / "ws")  # no state.txt: the build and the custom criterion fail
    run, tasks = _server_run(_evaluate(workspace))
    assert (run.state.type.value, run.state.name) == FAILED
    assert run.state.message.startswith("ContractFailed (code): FAIL sprint-spec-tiny-1 (iteration 1): ")
    assert {"verdict:contract-failed", "failure:code"} <= set(run.tags)
    assert (tasks["build"].type.value, tasks["build"].name) == FAILED
    assert tasks["build"].message.startswith("StrategyFailed (code): fail: ")
    assert (tasks["custom-sc-1-2"].type.value, tasks["custom-sc-1-2"].name) == FAILED
    assert tasks["custom-sc-1-2"].message.startswith("CriterionFailed (code): fail: ")
    # The verdict is the run's value, not an error: Python callers get the EvalResult back.
    result = run_flow(evaluate_flow, str(workspace), str(workspace / CONTRACT), executor="local", iteration=2)
    assert result.overall_result == "fail"


def test_a_passed_contract_ends_completed_with_its_verdict_line(prefect_harness, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    run, tasks = _server_run(_evaluate(workspace))
    assert (run.state.type.value, run.state.name) == ("COMPLETED", "Completed")
    assert run.state.message.startswith("PASS sprint-spec-tiny-1 (iteration 1): ")
    assert not [tag for tag in run.tags if tag.startswith(("verdict:", "failure:"))]
    assert {state.name for state in tasks.values()} == {"Completed"}


def test_a_cached_strategy_or_criterion_is_answered_without_a_task_run(prefect_harness, tmp_path):
    """The second evaluation of an unchanged tree reuses every verdict: the server gets the flow run alone,
    and the EvalResult still says which results were reused."""
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    _, first = _server_run(_evaluate(workspace))
    again = _evaluate(workspace, iteration=2)
    run, tasks = _server_run(again)
    assert first and not tasks, tasks
    result = again.result()
    assert result.overall_result == "pass" and all(s.cached for s in result.strategy_results)
    assert [c.criterion_id for c in result.criteria_results if "(cached" in c.evidence] == ["sc-1-2"]  # the custom one
    assert run.state.message.startswith("PASS sprint-spec-tiny-1 (iteration 2): ")


def test_bad_input_ends_invalid_input_in_one_line_and_the_caller_gets_the_error(prefect_harness, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    (workspace / CONTRACT).write_text("{")
    state = _evaluate(workspace)
    run, _ = _server_run(state)
    assert (run.state.type.value, run.state.name) == FAILED
    assert run.state.message.startswith("InvalidInput (input): ")
    assert len(run.state.message.splitlines()) == 1 and "invalid JSON" in run.state.message
    assert {"verdict:invalid-input", "failure:input"} <= set(run.tags)
    with pytest.raises(DocumentError):
        run_flow(evaluate_flow, str(workspace), str(workspace / CONTRACT), executor="local")


def test_a_sprint_out_of_iterations_ends_needs_rework_and_its_failing_iteration_failed(prefect_harness, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    workspace = make_workspace(tmp_path / "ws")
    with without_heartbeats():
        state = sprint_flow(str(workspace), engine=f"{sys.executable} {ENGINE}", executor="local",
                            max_iterations=1, return_state=True)
    run, _ = _server_run(state)
    assert (run.state.type.value, run.state.name) == FAILED
    assert run.state.message == "NeedsRework (code): NEEDS-REWORK sprint-spec-tiny-1; blocked: sprint-spec-tiny-2"
    assert {"verdict:needs-rework", "failure:code"} <= set(run.tags)
    with get_client(sync_client=True) as client:
        children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run.id])))
        # The baseline's reference run, then the one iteration's evaluation.
        names = {child.id: client.read_flow(child.flow_id).name for child in children}
    assert sorted(names.values()) == ["evaluate", "reference"]
    [iteration] = [child for child in children if names[child.id] == "evaluate"]
    assert (iteration.state.type.value, iteration.state.name) == FAILED
    assert "verdict:contract-failed" in iteration.tags  # each run is tagged with its own verdict
    assert run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {ENGINE}", executor="local",
                    max_iterations=2, retry_rework=True) == {"sprint-spec-tiny-1": "completed",
                                                             "sprint-spec-tiny-2": "completed"}


def test_a_contract_its_environment_blocks_ends_blocked_not_failed_by_its_code(prefect_harness, tmp_path):
    from tests.redteam.victims import python_victim

    workspace = python_victim(tmp_path / "ws")
    config = workspace / "sprintflow.toml"
    config.write_text(config.read_text().replace('command = "python3 -m pytest', 'command = "pytest-not-installed'))
    cheater = Path(__file__).resolve().parents[1] / "redteam" / "cheater.py"
    with without_heartbeats():
        state = sprint_flow(str(workspace), engine=f"{sys.executable} {cheater} honest", return_state=True)
    run, _ = _server_run(state)
    assert (run.state.type.value, run.state.name) == FAILED
    assert run.state.message.startswith("Blocked (environment): BLOCKED ")
    assert {"verdict:blocked", "failure:environment"} <= set(run.tags)


def test_flow_runs_started_without_heartbeats_send_none_and_keep_every_other_setting(prefect_harness):
    from prefect import flow
    from prefect.settings import get_current_settings

    @flow
    def settings_seen() -> tuple[int | None, str | None]:
        settings = get_current_settings()
        return settings.flows.heartbeat_frequency, settings.api.url

    outside = get_current_settings()
    with without_heartbeats():
        frequency, api_url = settings_seen()
    assert frequency is None and api_url == outside.api.url
    assert get_current_settings().flows.heartbeat_frequency == outside.flows.heartbeat_frequency


def test_every_flow_takes_plain_json_parameters_so_a_python_caller_needs_no_validation():
    """``run_flow`` calls a flow without Prefect's parameter validation (which casts JSON into annotated types,
    rebuilding a pydantic model on every call): sound only while every parameter of every flow is a plain
    JSON type, which a Python caller passes as is. A flow that takes a model (or a Path) fails here."""
    import types
    import typing

    from sprintflow.flows import evaluate, plan, report, score, sprint

    plain = {str, int, float, bool, type(None), list, dict, typing.Any, typing.Union, types.UnionType}
    from prefect import Flow

    flows = [f for module in (evaluate, plan, report, score, sprint) for f in vars(module).values()
             if isinstance(f, Flow)]
    assert {f.name for f in flows} >= {"evaluate", "reference", "sprint", "plan", "report", "score-skill"}

    def types_in(annotation):
        origin = typing.get_origin(annotation)
        if origin is None:
            return [annotation]
        return [origin, *(t for arg in typing.get_args(annotation) for t in types_in(arg))]

    for found in flows:
        for name, annotation in typing.get_type_hints(found.fn).items():
            if name == "return":
                continue
            odd = [t for t in types_in(annotation) if t not in plain]
            assert not odd, f"{found.name}({name}: {annotation}) is not plain JSON"


def test_every_flow_still_gives_prefects_parameter_schema_when_asked_for_it():
    """sprintflow's flows build their parameter schema on first use, not when declared (``PlainParametersFlow``):
    what a caller reads is still the schema Prefect builds, for the entry flows of the deployments too."""
    import prefect.flows
    from prefect import Flow
    from prefect.utilities.callables import parameter_schema

    from sprintflow.deployments import flows as entry
    from sprintflow.flows import evaluate, plan, report, score, sprint

    flows = [f for module in (evaluate, plan, report, score, sprint, entry) for f in vars(module).values()
             if isinstance(f, Flow)]
    assert {f.name for f in flows} >= {"evaluate", "sprint", "evaluate-workspace", "sprint-workspace"}
    for found in flows:
        schema = found.parameters
        assert schema == parameter_schema(found.fn) and schema.properties, found.name
        assert found.parameters is schema  # built once
    assert "params" in next(f for f in flows if f.name == "sprint-workspace").parameters.properties
    assert prefect.flows.parameter_schema is parameter_schema  # Prefect's own, for every other Flow
