"""End to end, nothing mocked: a real server, `sprintflow serve`, a sprint triggered through the API,
and the EvalResult summary checked in the Prefect UI with headless Chromium.
"""

from __future__ import annotations

import shutil
import sys
import time

import pytest

from .conftest import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, FINAL, ROOT, served_ready, serving, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = pytest.mark.slow


@pytest.fixture
def served(server_env, tmp_path):
    """``sprintflow serve`` (every deployment) in a subprocess, polling for runs every second."""
    with serving(server_env, tmp_path) as process_and_log:
        yield process_and_log


def _children(client, parent_id, flow_name: str | None = None) -> list:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
        parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent_id])))
    if flow_name:
        flows = {f.id: f.name for f in client.read_flows()}
        runs = [r for r in runs if flows.get(r.flow_id) == flow_name]
    return sorted(runs, key=lambda r: r.expected_start_time)


def test_a_served_sprint_runs_and_its_eval_result_shows_in_the_ui(use_server, served, tmp_path):
    from playwright.sync_api import sync_playwright
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment

    process, serve_log = served
    workspace = make_workspace(tmp_path / "ws")
    with get_client(sync_client=True) as client:
        deployment = wait_until(lambda: served_ready(process, serve_log, client), 90, "the served deployments")
        names = {a.name for a in client.read_automations()}
        assert {"sprintflow-contract-needs-rework", "sprintflow-score-dropped"} <= names
        assert client.read_global_concurrency_limit_by_name("docker-host-local").limit >= 1

        triggered = time.monotonic()
        run = run_deployment(deployment.id, timeout=0, parameters={
            "params": {"workspace": str(workspace), "executor": "local", "max_iterations": 3}})
        run = wait_until(lambda: (r := client.read_flow_run(run.id)).state.type.value in FINAL and r,
                         120, f"the sprint run to finish (serve log: {serve_log.read_text()[-3000:]})")
        assert run.state.type.value == "COMPLETED", serve_log.read_text()[-3000:]
        assert f"on {use_server} (UI {use_server.removesuffix('/api')})" in serve_log.read_text()  # where it serves
        print(f"trigger to completed: {time.monotonic() - triggered:.1f} s")

        [sprint] = _children(client, run.id, "sprint")
        evaluations = _children(client, sprint.id, "evaluate")
        assert len(evaluations) == 3  # contract 1 twice (fail, pass), contract 2 once
        last = evaluations[-1]

    base = use_server.removesuffix("/api")
    shots = [ARTIFACTS / "deployments-eval-run.png", tmp_path / "eval-run.png"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/runs/flow-run/{last.id}")
            page.get_by_text("Artifacts", exact=True).first.click(timeout=30_000)
            card = page.get_by_text("eval-sprint-spec-tiny-2", exact=True).first
            card.wait_for(timeout=30_000)
            # The card's description leads with the verdict and the contract.
            page.get_by_text("sprint-spec-tiny-2 · iteration 1", exact=False).first.wait_for(timeout=30_000)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(shots[0]), full_page=True)
            # The artifact itself: the EvalResult summary rendered from its markdown.
            card.click()
            page.get_by_text("sc-2-2", exact=False).first.wait_for(timeout=30_000)
            body = page.inner_text("body")
            page.screenshot(path=str(ARTIFACTS / "deployments-eval-artifact.png"), full_page=True)
        finally:
            browser.close()
    shutil.copy(shots[0], shots[1])
    assert "PASSED" in body and "sc-2-1" in body
    assert shots[0].stat().st_size > 10_000
