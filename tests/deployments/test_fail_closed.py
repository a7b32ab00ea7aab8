"""A deployment run never downgrades its isolation: no Docker engine, no verdict; and serve says so at start.

Real server, real entry flows; the Docker engine is made unreachable the way a stopped one
is (DOCKER_HOST points at a socket nobody listens on).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT, serving, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

pytestmark = pytest.mark.slow

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"
NO_ENGINE = "unix:///nonexistent/docker.sock"


def _finished(entry, params):
    from prefect.client.orchestration import get_client

    state = entry(params, return_state=True)
    with get_client(sync_client=True) as client:
        return client.read_flow_run(state.state_details.flow_run_id)


@pytest.mark.parametrize("executor", [None, "auto", "docker"])
def test_an_evaluation_run_without_docker_ends_without_a_verdict_never_on_the_host(use_server, tmp_path,
                                                                                   monkeypatch, executor):
    from sprintflow.deployments import flows

    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")  # on the host it would pass
    run = _finished(flows.evaluate_workspace, flows.EvaluateParams(workspace=str(workspace), contract=CONTRACT,
                                                                   executor=executor))
    assert (run.state.type.value, run.state.name) == ("FAILED", "Failed")
    assert run.state.message.startswith(f"NoVerdict (environment): executor {executor or 'auto'}: "
                                        "no Docker engine answers"), run.state.message
    assert {"verdict:no-verdict", "failure:environment"} <= set(run.tags)
    assert not (workspace / ".sprintflow" / "evals").exists()  # nothing was judged


def test_a_sprint_run_without_docker_ends_without_a_verdict_and_local_by_name_still_runs(use_server, tmp_path,
                                                                                          monkeypatch):
    from sprintflow.deployments import flows

    monkeypatch.setenv("DOCKER_HOST", NO_ENGINE)
    workspace = make_workspace(tmp_path / "ws")
    params = flows.SprintParams(workspace=str(workspace), engine=f"{sys.executable} {ENGINE}", max_iterations=1)
    run = _finished(flows.sprint_workspace, params)
    assert run.state.message.startswith("NoVerdict (environment): executor auto: no Docker engine answers")
    run = _finished(flows.sprint_workspace, params.model_copy(update={"executor": "local"}))
    assert (run.state.type.value, run.state.name) == ("FAILED", "Failed")  # judged on the host: its one iteration fails
    assert run.state.message.startswith("NeedsRework (code): "), run.state.message


def test_serve_warns_at_start_when_no_docker_engine_answers(server_env, tmp_path):
    with serving({**server_env, "DOCKER_HOST": NO_ENGINE}, tmp_path, "--only", "nightly-evaluate") as (process, log):
        line = wait_until(lambda: next((text for text in log.read_text().splitlines() if "warning:" in text), None),
                          90, f"serve's warning (log: {log.read_text()[-2000:] if log.exists() else ''})")
        assert process.poll() is None
    assert line == ("sprintflow: warning: no Docker engine answers: runs with executor auto or docker will end "
                    "Failed (NoVerdict) until one does; executor local runs them on this host, unsandboxed")


def test_serve_does_not_warn_when_docker_answers(server_env, tmp_path, docker_ready):
    with serving(server_env, tmp_path, "--only", "nightly-evaluate") as (process, log):
        wait_until(lambda: "sprintflow: serving" in log.read_text(), 90, "serve to start")
        assert process.poll() is None
    assert "warning: no Docker engine" not in log.read_text()
    assert subprocess.run(["docker", "info"], capture_output=True).returncode == 0
