"""What an operator sees on the run they triggered: its state, its verdict line, a summary linking every
EvalResult, one-line user errors. The entry flows run in this process against the session's real server."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, deployed_flows, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

pytestmark = pytest.mark.slow


def _run(entry, params):
    from prefect.client.orchestration import get_client
    from prefect.logging.handlers import APILogWorker

    state = entry(params, return_state=True)
    APILogWorker.drain_all(timeout=10)
    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        logs = "\n".join(log.message for log in client.read_logs(log_filter=_logs_of(run_id)))
    return run, logs


def _logs_of(run_id):
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    return LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id]))


def _artifact(run_id, key: str):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[run_id]), key=ArtifactFilterKey(any_=[key])))
        return artifact, client


def test_a_triggered_sprint_ends_as_its_verdict_logs_it_and_links_every_eval_result(use_server, tmp_path):
    from prefect.client.orchestration import get_client

    flows = deployed_flows()
    workspace = make_workspace(tmp_path / "ws")
    params = flows.SprintParams(workspace=str(workspace), engine=f"{sys.executable} {ENGINE}", executor="local",
                                max_iterations=1)
    run, logs = _run(flows.sprint_workspace, params)
    assert (run.state.type.value, run.state.name) == ("FAILED", "Failed")
    assert run.state.message == "NeedsRework (code): NEEDS-REWORK sprint-spec-tiny-1; blocked: sprint-spec-tiny-2"
    assert "NEEDS-REWORK sprint-spec-tiny-1; blocked: sprint-spec-tiny-2" in logs
    # Automations key on the state's event: prefect.flow-run.Failed, about this run, with its message.
    events = wait_until(lambda: _state_events(run.id, "Failed"), 60, "the Failed event")
    assert events[0].resource.id == f"prefect.flow-run.{run.id}"
    assert events[0].resource["prefect.state-message"].startswith("NeedsRework (code): ")

    params = params.model_copy(update={"max_iterations": 3, "retry_rework": True})
    run, logs = _run(flows.sprint_workspace, params)
    assert (run.state.type.value, run.state.name) == ("COMPLETED", "Completed")
    assert "COMPLETED sprint-spec-tiny-1, sprint-spec-tiny-2" in logs
    summary, _ = _artifact(run.id, "sprint-workspace-summary")
    assert summary.description.startswith("COMPLETED")
    linked = re.findall(r"\]\((?:http://[^)]*)?/artifacts/artifact/([0-9a-f-]{36})\): (.*)", summary.data)
    assert len(linked) == 2  # this run's evaluations: contract 1 iteration 2, contract 2 iteration 1
    with get_client(sync_client=True) as client:
        artifacts = [client.read_artifacts(artifact_filter=_by_id(artifact_id))[0] for artifact_id, _ in linked]
    assert [a.key for a in artifacts] == ["eval-sprint-spec-tiny-1", "eval-sprint-spec-tiny-2"]
    assert [description for _, description in linked] == [
        "**PASS** · sprint-spec-tiny-1 · iteration 2 · 2/2 required criteria",
        "**PASS** · sprint-spec-tiny-2 · iteration 1 · 2/2 required criteria"]
    table = next(a for a in _all_artifacts() if a.key == "eval-sprint-spec-tiny-2-table")
    assert table.description.startswith("**PASS** · sprint-spec-tiny-2")
    assert "null" not in str(table.data) and re.search(r"\d+ ms|\d+\.\d s", str(table.data))


def _state_events(run_id, state_name: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    with get_client(sync_client=True) as client:
        return client.read_events(EventFilter(
            event=EventNameFilter(name=[f"prefect.flow-run.{state_name}"]),
            resource=EventResourceFilter(id=[f"prefect.flow-run.{run_id}"])), limit=10).events


def _by_id(artifact_id: str):
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterId

    return ArtifactFilter(id=ArtifactFilterId(any_=[artifact_id]))


def _all_artifacts():
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_artifacts()


def test_a_sprint_without_an_engine_ends_invalid_input_in_one_line_without_a_traceback(use_server, tmp_path,
                                                                                       monkeypatch):
    for name in ("SPRINTFLOW_ENGINE", "SPRINTFLOW_GENERATOR_ENGINE"):
        monkeypatch.delenv(name, raising=False)
    flows = deployed_flows()
    run, logs = _run(flows.sprint_workspace, flows.SprintParams(workspace=str(make_workspace(tmp_path / "ws"))))
    assert (run.state.type.value, run.state.name) == ("FAILED", "Failed")
    assert run.state.message.startswith("InvalidInput (input): no engine for the generator: fill in the engine "
                                        "field, set ")
    assert "Traceback" not in logs and "--engine" not in logs
    assert f"error: {run.state.message.removeprefix('InvalidInput (input): ')}" in logs


def test_paths_resolve_as_in_the_cli_the_workspace_from_here_the_contract_in_the_workspace(use_server, tmp_path,
                                                                                           monkeypatch):
    flows = deployed_flows()
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    monkeypatch.chdir(tmp_path)  # where serve or the worker started
    params = flows.EvaluateParams(workspace="ws", contract=".sprintflow/contracts/sprint-spec-tiny-1.json",
                                  executor="local")
    run, logs = _run(flows.evaluate_workspace, params)
    assert (run.state.type.value, run.state.name) == ("COMPLETED", "Completed")
    assert "PASS sprint-spec-tiny-1 (iteration 1): " in logs
    summary, _ = _artifact(run.id, "evaluate-workspace-summary")
    assert "/artifacts/artifact/" in summary.data and "**PASS** · sprint-spec-tiny-1" in summary.data

    missing = params.model_copy(update={"contract": "nowhere.json"})
    run, logs = _run(flows.evaluate_workspace, missing)
    assert (run.state.type.value, run.state.name) == ("FAILED", "Failed")
    assert run.state.message == ("InvalidInput (input): contract nowhere.json not found: neither "
                                 f"{workspace / 'nowhere.json'} (in the workspace) nor "
                                 f"{Path(tmp_path) / 'nowhere.json'} (in the current folder) exists")
    assert "Traceback" not in logs
