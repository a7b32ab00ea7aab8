"""What operators see of served runs: every failed verdict in the Prefect UI's own failure views, and
the runs automations trigger, on the right workspace, saying what they did.

Nothing mocked: a real server, ``sprintflow serve`` with its automations, runs of the served
deployments that pass, fail on their code, are blocked by their environment, get bad input and
need rework. The test asks the server exactly what the UI asks it: the state names are read from
the UI's own JavaScript, shipped in the prefect package, so a UI that changes its list is followed.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, FINAL, ROOT, served_ready, serving, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = pytest.mark.slow

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def ui_state_names() -> list[str]:
    """The state names the UI knows, from its bundle: the deployment page lists runs in these but Scheduled."""
    import prefect

    assets = Path(prefect.__file__).parent / "server" / "ui" / "assets"
    for bundle in sorted(assets.glob("index-*.js")):
        found = re.search(r"\[((?:`[A-Za-z]+`,)+`TimedOut`)\]", bundle.read_text(errors="replace"))
        if found and found.group(1).startswith("`Scheduled`"):
            return re.findall(r"`([A-Za-z]+)`", found.group(1))
    pytest.fail(f"no list of state names starting with Scheduled in the UI bundle under {assets}")


def deployment_page_query(names: list[str]) -> dict:
    """The deployment page's Runs tab (its ``Deployment-*.js``): runs in every state name but Scheduled."""
    return {"state": {"name": [name for name in names if name != "Scheduled"]}}


FAILED_FILTER = {"state": {"name": ["Failed"]}}
"""The Runs page with its state filter set to Failed (``/runs?state=Failed``): the name, not the type."""


def read_runs(client, *, deployment_id=None, state_names=None, tags=None, since=None) -> list:
    """``POST /flow_runs/filter`` as the UI sends it (its default sort, the last week)."""
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterStartTime,
        FlowRunFilterStateName,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.filters import FlowRunFilterState as State
    from prefect.client.schemas.sorting import FlowRunSort

    flow_runs = FlowRunFilter(
        state=State(name=FlowRunFilterStateName(any_=state_names)) if state_names else None,
        tags=FlowRunFilterTags(all_=tags) if tags else None,
        start_time=FlowRunFilterStartTime(after_=since) if since else None)
    deployments = DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id])) if deployment_id else None
    return client.read_flow_runs(flow_run_filter=flow_runs, deployment_filter=deployments,
                                 sort=FlowRunSort.START_TIME_DESC, limit=200)


@pytest.fixture(scope="module")
def triggered(prefect_server, tmp_path_factory):
    """Runs of the served deployments, one per outcome, all finished: (runs by outcome, the deployments)."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    folder = tmp_path_factory.mktemp("failure-views")
    passing = make_workspace(folder / "pass")
    (passing / "state.txt").write_text("2")
    blocked = make_workspace(folder / "blocked")
    (blocked / "sprintflow.toml").write_text(
        '[[evaluator.strategies]]\ntype = "build"\ncommand = "tool-not-installed-here"\ntimeout = 30\n')
    evaluate = {
        "completed": {"workspace": str(passing), "contract": CONTRACT, "executor": "local"},
        "contract-failed": {"workspace": str(make_workspace(folder / "fail")), "contract": CONTRACT,
                            "executor": "local"},
        "blocked": {"workspace": str(blocked), "contract": CONTRACT, "executor": "local"},
        "invalid-input": {"workspace": str(passing), "contract": "nowhere.json", "executor": "local"},
    }
    sprint = {"workspace": str(make_workspace(folder / "sprint")), "executor": "local", "max_iterations": 1}
    with temporary_settings(updates={PREFECT_API_URL: prefect_server["PREFECT_API_URL"]}), \
            serving(prefect_server, folder) as (process, log), get_client(sync_client=True) as client:
        wait_until(lambda: served_ready(process, log, client), 90, "the served deployments")
        nightly = client.read_deployment_by_name("evaluate-workspace/nightly-evaluate")
        manual = client.read_deployment_by_name("sprint-workspace/manual-sprint")
        runs = {outcome: run_deployment(nightly.id, timeout=0, parameters={"params": params})
                for outcome, params in evaluate.items()}
        runs["needs-rework"] = run_deployment(manual.id, timeout=0, parameters={"params": sprint})

        def finished():
            now = {outcome: client.read_flow_run(run.id) for outcome, run in runs.items()}
            return now if all(run.state.type.value in FINAL for run in now.values()) else None

        runs = wait_until(finished, 240, f"every run to finish (serve log: {log.read_text()[-3000:]})")
        yield runs, {"nightly": nightly, "manual": manual}, client


EXPECTED = {  # outcome -> the state message's start, the tags the run carries
    "contract-failed": ("ContractFailed (code): FAIL sprint-spec-tiny-1", {"verdict:contract-failed", "failure:code"}),
    "blocked": ("Blocked (environment): sprint-spec-tiny-1 is blocked by its environment",
                {"verdict:blocked", "failure:environment"}),
    "invalid-input": ("InvalidInput (input): contract nowhere.json not found", {"verdict:invalid-input",
                                                                                "failure:input"}),
    "needs-rework": ("NeedsRework (code): NEEDS-REWORK sprint-spec-tiny-1", {"verdict:needs-rework",
                                                                             "failure:code"}),
}


def test_every_failed_verdict_ends_in_the_standard_failed_state_with_its_kind_and_tags(triggered):
    runs, _, _ = triggered
    assert (runs["completed"].state.type.value, runs["completed"].state.name) == ("COMPLETED", "Completed")
    assert not any(tag.startswith(("verdict:", "failure:")) for tag in runs["completed"].tags)
    for outcome, (message, tags) in EXPECTED.items():
        run = runs[outcome]
        assert (run.state.type.value, run.state.name) == ("FAILED", "Failed"), (outcome, run.state)
        assert run.state.message.startswith(message), (outcome, run.state.message)
        assert len(run.state.message.splitlines()) == 1
        assert tags <= set(run.tags), (outcome, run.tags)
        assert {"sprintflow"} <= set(run.tags)  # the deployment's own tags are kept


def test_the_deployment_page_lists_every_run_of_the_deployment_failed_ones_included(triggered):
    runs, deployments, client = triggered
    names = ui_state_names()
    assert "Failed" in names and "ContractFailed" not in names  # what the UI asks for: its standard names
    listed = read_runs(client, deployment_id=deployments["nightly"].id,
                       state_names=deployment_page_query(names)["state"]["name"])
    ours = {runs[outcome].id for outcome in ("completed", "contract-failed", "blocked", "invalid-input")}
    assert ours <= {run.id for run in listed}
    sprint = read_runs(client, deployment_id=deployments["manual"].id,
                       state_names=deployment_page_query(names)["state"]["name"])
    assert runs["needs-rework"].id in {run.id for run in sprint}


def test_the_failed_filter_of_the_runs_page_finds_every_failed_run_and_tags_tell_their_kind(triggered):
    runs, _, client = triggered
    week_ago = datetime.now(UTC) - timedelta(days=7)  # the Runs page's default range: the past week
    failed = read_runs(client, state_names=FAILED_FILTER["state"]["name"], since=week_ago)
    assert {runs[outcome].id for outcome in EXPECTED} <= {run.id for run in failed}
    assert runs["completed"].id not in {run.id for run in failed}
    assert {run.state.type.value for run in failed} == {"FAILED"}
    # The tag filter tells environment failures from code failures at a glance.
    environment = {run.id for run in read_runs(client, tags=["failure:environment"], since=week_ago)}
    code = {run.id for run in read_runs(client, tags=["failure:code"], since=week_ago)}
    assert runs["blocked"].id in environment and runs["blocked"].id not in code
    assert {runs["contract-failed"].id, runs["needs-rework"].id} <= code - environment
    rework = read_runs(client, tags=["verdict:needs-rework"], since=week_ago)
    assert runs["needs-rework"].id in {run.id for run in rework}
    assert all("verdict:needs-rework" in run.tags for run in rework)


NEEDS_REWORK_TRIGGER = {  # the README's automation: a run that needs rework, told by its state message
    "type": "event", "posture": "Reactive", "expect": ["prefect.flow-run.Failed"],
    "match": {"prefect.resource.id": "prefect.flow-run.*", "prefect.state-message": "NeedsRework*"},
    "threshold": 1, "within": 0,
}


def test_an_automation_keyed_on_the_failed_event_and_its_message_picks_exactly_the_run_needing_rework(triggered):
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter
    from prefect.server.events.schemas.automations import EventTrigger
    from prefect.server.events.schemas.events import ReceivedEvent

    runs, _, client = triggered

    def failed_event(run):
        found = client.read_events(EventFilter(
            event=EventNameFilter(name=["prefect.flow-run.Failed"]),
            resource=EventResourceFilter(id=[f"prefect.flow-run.{run.id}"])), limit=5).events
        return ReceivedEvent.model_validate(found[0].model_dump()) if found else None

    trigger = EventTrigger.model_validate(NEEDS_REWORK_TRIGGER)  # Prefect's own matching decides
    events = {outcome: wait_until(lambda run=runs[outcome]: failed_event(run), 60, f"the {outcome} Failed event")
              for outcome in EXPECTED}
    assert {outcome for outcome, event in events.items() if trigger.covers(event)} == {"needs-rework"}


def test_the_needs_rework_automation_reports_on_the_sprints_own_workspace_and_says_so_on_its_run(triggered):
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    runs, _, client = triggered
    weekly = client.read_deployment_by_name("report-workspace/weekly-report")
    workspace = runs["needs-rework"].parameters["params"]["workspace"]

    def report_run():
        ours = [run for run in read_runs(client, deployment_id=weekly.id)
                if run.created_by and run.created_by.type == "AUTOMATION"
                and run.parameters["params"]["workspace"] == workspace]
        return ours[0] if ours and ours[0].state.type.value in FINAL else None

    run = wait_until(report_run, 180, "the report run the needs-rework automation triggered")
    assert (run.state.type.value, run.state.name) == ("COMPLETED", "Completed"), run.state.message
    assert run.state.message.startswith(f"REPORTED {workspace}: 1 evaluations"), run.state.message
    artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(
        any_=[run.id])))
    [summary] = [artifact for artifact in artifacts if artifact.key == "report-workspace-summary"]
    assert summary.data.startswith(f"# {run.state.message}\n\n```\nsprintflow report: ")
    assert summary.description == run.state.message


def test_the_ui_shows_the_failed_runs_on_the_deployment_page_the_run_page_and_the_failed_filter(triggered, tmp_path):
    """Screenshots kept in test-artifacts/ (not committed); what they show is asserted, so a regression fails."""
    from playwright.sync_api import sync_playwright

    runs, deployments, client = triggered
    base = str(client.api_url).rstrip("/").removesuffix("/api")
    failed = {outcome: runs[outcome] for outcome in ("contract-failed", "blocked", "invalid-input")}
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})

            page.goto(f"{base}/deployments/deployment/{deployments['nightly'].id}?tab=Runs")
            for run in [*failed.values(), runs["completed"]]:
                page.get_by_text(run.name, exact=True).first.wait_for(timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "operators-deployment-page.png"), full_page=True)

            page.goto(f"{base}/runs/flow-run/{runs['blocked'].id}")
            page.get_by_text("verdict:blocked", exact=True).first.wait_for(timeout=60_000)
            body = page.inner_text("body")
            page.screenshot(path=str(ARTIFACTS / "operators-failed-run.png"), full_page=True)
            assert "Failed" in body and "failure:environment" in body

            page.goto(f"{base}/runs?state=Failed")
            for run in [*failed.values(), runs["needs-rework"]]:
                page.get_by_text(run.name, exact=True).first.wait_for(timeout=60_000)
            assert page.get_by_text(runs["completed"].name, exact=True).count() == 0
            page.screenshot(path=str(ARTIFACTS / "operators-failed-filter.png"), full_page=True)

            page.goto(f"{base}/deployments/deployment/{deployments['nightly'].id}/run")
            page.get_by_text(".sprintflow/contracts/<contractId>.json", exact=False).first.wait_for(timeout=60_000)
            page.screenshot(path=str(ARTIFACTS / "operators-run-form.png"), full_page=True)
        finally:
            browser.close()
    for name in ("deployment-page", "failed-run", "failed-filter", "run-form"):
        assert (ARTIFACTS / f"operators-{name}.png").stat().st_size > 10_000
