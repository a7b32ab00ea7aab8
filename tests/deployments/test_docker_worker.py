"""A real Docker work pool: the flow-run image built locally with sprintflow installed, the nightly evaluation
deployed to the pool from deployments/prefect.yaml, and run by `prefect worker start --type docker` in a container.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pytest

from .conftest import ROOT
from .test_process_worker import CONTRACT, prefect

sys.path.insert(0, str(ROOT))
from tests.fixtures.evals import eval_path
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = pytest.mark.slow

TEMPLATE = ROOT / "deployments" / "work-pools" / "docker-job-template.json"


@pytest.fixture
def docker_pool(server_env, use_server, docker_ready):
    """A Docker pool made from sprintflow's job template; its deployments and the pool are deleted afterwards."""
    from prefect.client.orchestration import get_client

    name = f"sprintflow-docker-{uuid.uuid4().hex[:8]}"
    prefect("work-pool", "create", name, "--type", "docker", "--base-job-template", str(TEMPLATE), env=server_env)
    yield name
    with get_client(sync_client=True) as client:
        for deployment in client.read_deployments():
            if deployment.work_pool_name == name:
                client.delete_deployment(deployment.id)
        client.delete_work_pool(name)


def test_a_docker_worker_runs_a_deployed_evaluation_in_the_runner_image(server_env, docker_pool, tmp_path):
    from prefect.client.orchestration import get_client

    from sprintflow.sandbox.runner_image import RUNNER_IMAGE, build_runner_image

    image = build_runner_image(progress=print)  # cached: rebuilt only when sprintflow's sources change
    assert image == RUNNER_IMAGE
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    subprocess.run(["chmod", "-R", "a+rwX", str(tmp_path)], check=True)  # the container runs as uid 1000
    # The flow-run container reaches the server on the host's loopback, and the workspace at the same path.
    env = {**server_env, "SPRINTFLOW_ROOT": "/opt/sprintflow"}
    prefect("--no-prompt", "deploy", "--name", "nightly-evaluate", "--pool", docker_pool,
            "--prefect-file", "deployments/prefect.yaml",
            "--job-variable", json.dumps({"network_mode": "host", "volumes": [f"{workspace}:{workspace}"]}), env=env)
    params = {"params": {"workspace": str(workspace), "contract": CONTRACT, "executor": "local"}}
    out = prefect("deployment", "run", "evaluate-workspace/nightly-evaluate", "--params", json.dumps(params),
                  env=env)
    run_id = next(line.split()[-1] for line in out.splitlines() if "UUID" in line)

    prefect("worker", "start", "--pool", docker_pool, "--type", "docker", "--run-once", env=env, timeout=300,
            cwd=tmp_path)

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        deployment = client.read_deployment(run.deployment_id)
    assert (run.state.type.value, run.state.name) == ("COMPLETED", "Completed"), run.state.message
    assert deployment.work_pool_name == docker_pool
    assert run.state.message.startswith("PASS sprint-spec-tiny-1 (iteration 1): ")
    result = json.loads(eval_path(workspace, "sprint-spec-tiny-1", 1).read_text())
    assert result["overallResult"] == "pass"
    assert run.infrastructure_pid  # the worker recorded the container it started
