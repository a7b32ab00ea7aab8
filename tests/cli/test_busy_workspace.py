"""Two people at a terminal, one workspace: the second command refuses in one line, exit 2, with no flow run."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

HOLD = "import sys; from sprintflow.io.locks import workspace_lock\n" \
       "with workspace_lock(sys.argv[1]):\n    print('held', flush=True); sys.stdin.readline()\n"
CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def _flow_runs() -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return len(client.read_flow_runs(limit=200))


def test_evaluate_and_run_on_a_held_workspace_refuse_in_one_line_without_a_flow_run(prefect_api_url, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    env = {**os.environ, "PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "ERROR"}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(workspace)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _flow_runs()
        for command in (["evaluate", str(workspace), "--contract", CONTRACT, "--executor", "local"],
                        ["run", str(workspace), "--engine", f"python3 {ENGINE}", "--executor", "local"]):
            done = subprocess.run([sys.executable, "-m", "sprintflow", *command], capture_output=True,
                                  text=True, env=env, timeout=300, check=False)
            assert done.returncode == 2, done.stderr
            assert done.stdout == ""
            assert done.stderr.splitlines() == [
                f"error: {workspace}: sprintflow (pid {holder.pid} on {os.uname().nodename}, since "
                f"{done.stderr.split('since ', 1)[1].split(')', 1)[0]}) is working on this workspace; wait "
                "for it to finish (a sprint or evaluation runs alone per workspace)"]
        assert _flow_runs() == before
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
