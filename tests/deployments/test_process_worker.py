"""A real process work pool: `prefect deploy --all` from deployments/prefect.yaml, a run triggered from the
CLI, picked up and completed by `prefect worker start --run-once`, on a workspace cloned from git.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

sys.path.insert(0, str(ROOT))
from tests.fixtures.evals import eval_path
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = pytest.mark.slow

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def prefect(*args: str, env: dict, timeout: float = 120, cwd: Path = ROOT) -> str:
    proc = subprocess.run([sys.executable, "-m", "prefect", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, f"prefect {' '.join(args)}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def git_workspace(tmp_path: Path) -> Path:
    """The tiny workspace, passing (state.txt says 2), committed to a repository on branch ``nightly``."""
    repo = make_workspace(tmp_path / "repo")
    (repo / "state.txt").write_text("2")
    for args in (["init", "-q", "-b", "nightly"], ["add", "."],
                 ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "workspace"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


@pytest.fixture
def process_pool(server_env, use_server):
    """The sprintflow-process pool; its deployments and the pool are deleted afterwards."""
    from prefect.client.orchestration import get_client

    prefect("work-pool", "create", "sprintflow-process", "--type", "process", "--overwrite", env=server_env)
    yield "sprintflow-process"
    with get_client(sync_client=True) as client:
        for deployment in client.read_deployments():
            if deployment.work_pool_name == "sprintflow-process":
                client.delete_deployment(deployment.id)
        client.delete_work_pool("sprintflow-process")


def test_a_process_worker_runs_the_nightly_evaluation_of_a_git_branch(server_env, process_pool, tmp_path):
    from prefect.client.orchestration import get_client

    repo = git_workspace(tmp_path)
    env = {**server_env, "SPRINTFLOW_ROOT": str(ROOT), "SPRINTFLOW_CHECKOUTS": str(tmp_path / "checkouts")}
    prefect("--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml", env=env)
    params = {"params": {"git_url": f"file://{repo}", "git_branch": "nightly", "workspace": ".",
                         "contract": CONTRACT, "executor": "local"}}
    out = prefect("deployment", "run", "evaluate-workspace/nightly-evaluate", "--params", json.dumps(params),
                  env=env)
    run_id = next(line.split()[-1] for line in out.splitlines() if "UUID" in line)

    prefect("worker", "start", "--pool", process_pool, "--run-once", env=env, timeout=180, cwd=tmp_path)

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        deployment = client.read_deployment(run.deployment_id)
        names = {f"{client.read_flow(d.flow_id).name}/{d.name}" for d in client.read_deployments()
                 if d.work_pool_name == process_pool}
    assert run.state.type.value == "COMPLETED", run.state.message
    assert deployment.work_pool_name == process_pool
    assert {"evaluate-workspace/nightly-evaluate", "sprint-workspace/manual-sprint",  # all were accepted
            "score-skill-scheduled/nightly-score", "report-workspace/weekly-report"} <= names
    # SPRINTFLOW_ROOT was set where `prefect deploy` ran, so the deployment took its value.
    assert deployment.pull_steps == [{"prefect.deployments.steps.set_working_directory":
                                      {"directory": str(ROOT)}}]
    [checkout] = [p for p in (tmp_path / "checkouts").iterdir() if not p.name.endswith(".mirror.git")]
    result = json.loads(eval_path(checkout, "sprint-spec-tiny-1", 1).read_text())
    assert result["overallResult"] == "pass"

    # `sprintflow serve` does not quietly take over what the workers run.
    served = subprocess.run([sys.executable, "-m", "sprintflow", "serve", "--only", "nightly-evaluate"], env=env,
                            capture_output=True, text=True, timeout=120, check=False)
    assert served.returncode == 2, served.stderr[-2000:]
    assert "evaluate-workspace/nightly-evaluate (work pool sprintflow-process)" in served.stderr
