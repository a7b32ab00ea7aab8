"""`sprintflow run` and `status` as a user calls them: exit codes, messages, nothing touched on errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace


def sprintflow(*args, env=None):
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600, check=False)


def test_run_exit_codes_and_status(prefect_api_url, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    env = {"PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "ERROR"}
    run = sprintflow("run", str(workspace), "--engine", f"python3 {ENGINE}", "--executor", "local",
                     "--max-iterations", "1", env=env)
    assert run.returncode == 1, run.stderr
    assert "needs-rework  sprint-spec-tiny-1" in run.stdout and "blocked       sprint-spec-tiny-2" in run.stdout
    status = sprintflow("status", str(workspace), "--json")
    rows = [json.loads(line) for line in status.stdout.splitlines()]
    assert [(r["contractId"], r["status"], r["iterations"]) for r in rows] == [
        ("sprint-spec-tiny-1", "needs-rework", 1), ("sprint-spec-tiny-2", "proposed", 0)]
    assert rows[0]["lastResult"] == "fail" and "FAILED" in rows[0]["summary"]
    done = sprintflow("run", str(workspace), "--engine", f"python3 {ENGINE}", "--executor", "local",
                      "--retry-rework", env=env)
    assert done.returncode == 0, done.stderr


def test_an_engine_that_cannot_start_is_no_verdict_and_spends_no_iteration(prefect_api_url, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    env = {"PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "ERROR"}
    run = sprintflow("run", str(workspace), "--engine", "no-such-engine-xyz", "--executor", "local", env=env)
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert "blocked       sprint-spec-tiny-1" in run.stdout
    assert "error: no verdict: sprint-spec-tiny-1, sprint-spec-tiny-2 blocked by the environment" in run.stderr
    status = sprintflow("status", str(workspace), "--json")
    rows = [json.loads(line) for line in status.stdout.splitlines()]
    assert [(r["contractId"], r["iterations"]) for r in rows] == [("sprint-spec-tiny-1", 0), ("sprint-spec-tiny-2", 0)]
    assert rows[0]["status"] != "needs-rework"
    # --contracts is relative to the workspace (as for run), not to the folder status runs in
    assert sprintflow("status", str(tmp_path), "--contracts", "ws/.sprintflow/contracts").returncode == 0
    assert sprintflow("status", str(workspace), "--contracts", ".sprintflow/contracts").returncode == 0


def test_a_tester_engine_that_cannot_start_is_no_verdict_and_spends_no_iteration(prefect_api_url, tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    env = {"PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "ERROR",
           "SPRINTFLOW_TESTER_ENGINE": "no-such-tester-xyz"}
    run = sprintflow("run", str(workspace), "--engine", f"python3 {ENGINE}", "--executor", "local", env=env)
    assert run.returncode == 3, (run.stdout, run.stderr)
    assert "the tester engine could not start (exit 127)" in run.stderr
    rows = [json.loads(line) for line in sprintflow("status", str(workspace), "--json").stdout.splitlines()]
    assert rows[0]["iterations"] == 0 and rows[0]["status"] != "needs-rework"


def test_run_input_errors_exit_2_and_touch_nothing(tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    before = {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
    env = {key: value for key, value in os.environ.items() if "ENGINE" not in key}
    no_engine = subprocess.run([sys.executable, "-m", "sprintflow", "run", str(workspace)], capture_output=True,
                               text=True, env=env, check=False)
    assert no_engine.returncode == 2 and "no engine for the generator" in no_engine.stderr
    contract = workspace / ".sprintflow/contracts/sprint-spec-tiny-2.json"
    data = json.loads(contract.read_text())
    data["dependsOn"] = ["sprint-spec-tiny-9"]
    contract.write_text(json.dumps(data))
    before[contract] = contract.read_bytes()
    bad_dep = sprintflow("run", str(workspace), "--engine", "true")
    assert bad_dep.returncode == 2 and "unknown contract 'sprint-spec-tiny-9'" in bad_dep.stderr
    assert "Traceback" not in no_engine.stderr + bad_dep.stderr
    assert {p: p.read_bytes() for p in workspace.rglob("*") if p.is_file()} == before
