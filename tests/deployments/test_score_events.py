"""The nightly score emits sprintflow.score.* events, and the declared automation reacts to a drop."""

from __future__ import annotations

import shutil

import pytest

from sprintflow.deployments.serving import apply_automations, load_prefect_yaml, runner_deployments

from .conftest import ROOT, deployed_flows, wait_until

pytestmark = pytest.mark.slow

ENGINE = "python3 stub_engine.py"


def _events(client, prefix: str) -> list:
    from prefect.events.filters import EventFilter, EventNameFilter

    return client.read_events(EventFilter(event=EventNameFilter(prefix=[prefix])), limit=50).events


def _runs_of(client, deployment_id) -> list:
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId

    return client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])))


def test_a_score_drop_is_an_event_and_the_automation_rescores(use_server, tmp_path, monkeypatch):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    deployed = deployed_flows()
    root = tmp_path / "scoring"
    shutil.copytree(ROOT / "examples" / "scoring", root, ignore=shutil.ignore_patterns(".sprintflow"))
    monkeypatch.chdir(ROOT)  # entrypoints are relative to the repository, as `sprintflow serve` has it
    for deployment in runner_deployments(load_prefect_yaml(ROOT / "deployments" / "prefect.yaml")):
        deployment.apply()
    assert "sprintflow-score-dropped" in apply_automations(ROOT / "deployments" / "automations.yaml")

    first = deployed.score_skill_scheduled(deployed.ScoreParams(workspace=str(root), skill="triage",
                                                                engine=ENGINE))
    state = deployed.score_skill_scheduled(deployed.ScoreParams(
        workspace=str(root), skill="triage", engine=ENGINE, prompt="prompts/triage-old.md"), return_state=True)
    second = state.result()
    assert (first["score"], first["previousScore"]) == (1.0, None)
    assert second["previousScore"] == 1.0 and second["score"] < 1.0
    # The run says what it did, on itself: its message and its own summary artifact.
    assert state.message.startswith(f"SCORED triage {second['score']:.3f} ({second['passed']}/{second['total']} "
                                    "cases); dropped 1.000 before"), state.message
    with get_client(sync_client=True) as client:
        [summary] = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]),
            key=ArtifactFilterKey(any_=["score-skill-scheduled-summary"])))
    assert summary.data.startswith(f"# {state.message}\n\nFailed cases: `")

    from prefect.events.worker import EventsWorker

    EventsWorker.drain_all(timeout=10)
    with get_client(sync_client=True) as client:
        dropped = wait_until(lambda: _events(client, "sprintflow.score.dropped"), 30, "the drop event")
        assert [e.payload["score"] for e in dropped] == [second["score"]]
        assert dropped[0].resource.id == "sprintflow.skill.triage"
        assert len(wait_until(lambda: len(_events(client, "sprintflow.score.reported")) >= 2 and
                              _events(client, "sprintflow.score.reported"), 30, "two score events")) == 2
        nightly = client.read_deployment_by_name("score-skill-scheduled/nightly-score")
        # The automation asked for a re-score: a run of the nightly-score deployment, due now.
        rescore = wait_until(lambda: [r for r in _runs_of(client, nightly.id) if r.state.type.value == "SCHEDULED"
                                      and r.created_by and r.created_by.type == "AUTOMATION"],
                             45, "the automation's re-score run")
        for run in rescore:
            client.delete_flow_run(run.id)  # nobody serves it here; keep it from a later test's runner
