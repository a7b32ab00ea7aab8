"""Runs on one workspace queue: a real `sprintflow serve`, two evaluations triggered on one workspace. The
second waits for the first in Prefect's own concurrency (its state says so), then both end with their verdicts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import ROOT, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.evals import eval_path
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = pytest.mark.slow

FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


@pytest.fixture
def served_evaluate(server_env, tmp_path):
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "sprintflow", "serve", "--only", "nightly-evaluate"],
                               env={**server_env, "PREFECT_RUNNER_POLL_FREQUENCY": "1"}, stdout=log,
                               stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        log.close()


def _deployment(process, client):
    from prefect.exceptions import ObjectNotFound

    assert process.poll() is None, "sprintflow serve exited"
    try:
        return client.read_deployment_by_name("evaluate-workspace/nightly-evaluate")
    except ObjectNotFound:
        return None


def test_a_second_run_on_a_workspace_waits_for_the_first_and_both_end_with_their_verdicts(
        use_server, served_evaluate, tmp_path):
    from prefect.client.orchestration import get_client

    from sprintflow.deployments.queue import workspace_limit_name

    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")  # contract 1 passes; contract 2 (feature.txt) fails
    # A build that takes a while, so the first run is still at work when the second's process is up.
    (workspace / "sprintflow.toml").write_text(
        '[[evaluator.strategies]]\ntype = "build"\ncommand = "sleep 40 && test -f state.txt"\ntimeout = 120\n')
    limit_name = workspace_limit_name(workspace)

    def params(number: int) -> dict:
        contract = f".sprintflow/contracts/sprint-spec-tiny-{number}.json"
        return {"params": {"workspace": str(workspace), "contract": contract, "executor": "local",
                           "use_cache": False}}

    with get_client(sync_client=True) as client:
        deployment = wait_until(lambda: _deployment(served_evaluate, client), 90, "the served deployment")
        first = client.create_flow_run_from_deployment(deployment.id, parameters=params(1))
        wait_until(lambda: _holding(client, limit_name), 120, "the first run to hold the workspace")
        second = client.create_flow_run_from_deployment(deployment.id, parameters=params(2))
        waiting = wait_until(lambda: _named(client, second.id, "AwaitingConcurrencySlot"), 120, "the second to wait")
        assert waiting.type.value == "RUNNING" and str(workspace) in waiting.message
        assert client.read_flow_run(first.id).state.type.value not in FINAL  # it waits on a run at work

        runs = wait_until(lambda: _final(client, [first.id, second.id]), 240, "both runs to end")
        history = [state.name for state in client.read_flow_run_states(second.id)]
        limit = client.read_global_concurrency_limit_by_name(limit_name)

    first_run, second_run = runs
    assert first_run.state.type.value == "COMPLETED", first_run.state.message
    assert second_run.state.type.value == "FAILED" and second_run.state.name != "InvalidInput"
    assert "sprint-spec-tiny-2" in second_run.state.message, second_run.state.message
    # It waited, then went on: its turn came only after the first let go of the workspace.
    after = history[history.index("AwaitingConcurrencySlot") + 1:]
    assert after[0] == "Running" and after[-1] == second_run.state.name
    assert (limit.limit, limit.active_slots) == (1, 0)
    results = {n: json.loads(eval_path(workspace, f"sprint-spec-tiny-{n}", 1).read_text()) for n in (1, 2)}
    assert (results[1]["overallResult"], results[2]["overallResult"]) == ("pass", "fail")


def _holding(client, limit_name: str) -> bool:
    from prefect.exceptions import ObjectNotFound

    try:
        return client.read_global_concurrency_limit_by_name(limit_name).active_slots == 1
    except ObjectNotFound:
        return False


def _named(client, run_id, name: str):
    state = client.read_flow_run(run_id).state
    return state if state.name == name else None


def _final(client, run_ids):
    runs = [client.read_flow_run(run_id) for run_id in run_ids]
    return runs if all(run.state.type.value in FINAL for run in runs) else None
