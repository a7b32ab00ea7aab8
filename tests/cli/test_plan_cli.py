"""``sprintflow plan`` and ``validate`` end to end: real CLI processes, the bundled scripted planner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PLANNER = Path(__file__).resolve().parents[2] / "examples" / "planner" / "scripted_planner.py"
SCRIPTED = f"{sys.executable} {PLANNER}"
SPEC = "spec-20260115-add-a-todo-api"
IDS = [f"sprint-{SPEC}-1", f"sprint-{SPEC}-2"]


def sprintflow(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # No Prefect server and no engine from the developer's environment leak in.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SPRINTFLOW_", "SCRIPTED_PLANNER_", "PREFECT_API_URL", "PREFECT_PROFILE"))}
    base.update(PREFECT_HOME=str(cwd / ".prefect-home"), SCRIPTED_PLANNER_DATE="20260115")
    run = subprocess.run([sys.executable, "-m", "sprintflow", *args], cwd=cwd, capture_output=True, text=True,
                         check=False, env={**base, **(env or {})}, timeout=60)
    assert "Traceback" not in run.stderr
    return run


def test_plan_writes_the_spec_and_contracts_and_they_validate(tmp_path):
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", SCRIPTED)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"planned {SPEC}: 2 sprint(s) in 1 attempt(s)"
    assert f"sprint 2   {IDS[1]}: Expose the logic through the API, 2 criteria (after {IDS[0]})" in run.stdout
    contracts = [tmp_path / ".sprintflow" / "contracts" / f"{cid}.json" for cid in IDS]
    spec = json.loads((tmp_path / ".sprintflow" / "specs" / f"{SPEC}.json").read_text())
    assert spec["contracts"] == IDS and spec["request"] == "Add a todo API"
    checked = sprintflow(tmp_path, "validate", *map(str, contracts))
    assert checked.returncode == 0 and checked.stdout.count("valid contract") == 2


def test_json_prints_what_was_written_and_the_workspace_argument_is_honoured(tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    run = sprintflow(tmp_path, "plan", "Add a todo API", "project", "--engine", SCRIPTED, "--json")
    assert run.returncode == 0, run.stderr
    written = json.loads(run.stdout)
    assert [c["contractId"] for c in written["contracts"]] == IDS
    on_disk = json.loads((workspace / ".sprintflow" / "specs" / f"{SPEC}.json").read_text())
    assert written["spec"] == on_disk


def test_invalid_twice_then_valid_succeeds_on_the_third_attempt(tmp_path):
    env = {"SCRIPTED_PLANNER_BAD_ATTEMPTS": "2", "SCRIPTED_PLANNER_STATE_DIR": str(tmp_path),
           "SCRIPTED_PLANNER_ENVELOPE": "1"}
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", SCRIPTED, env=env)
    assert run.returncode == 0, run.stderr
    assert "in 3 attempt(s)" in run.stdout and "cost       $0.0375" in run.stdout
    assert len(list((tmp_path / ".sprintflow" / "specs" / "rejected").iterdir())) == 2


def test_no_valid_plan_exits_2_with_every_problem_and_the_saved_answers(tmp_path):
    env = {"SCRIPTED_PLANNER_BAD_ATTEMPTS": "9", "SCRIPTED_PLANNER_STATE_DIR": str(tmp_path)}
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", SCRIPTED, "--max-attempts", "2", env=env)
    assert run.returncode == 2
    assert "error: the planner gave no valid plan in 2 attempt(s):" in run.stderr
    assert ("planner answer (attempt 1): contracts/0/successCriteria/0/description: vague criterion "
            "('looks good')") in run.stderr
    assert f"planner answer (attempt 2): contracts/0/dependsOn: dependency cycle: {IDS[0]} -> {IDS[1]}" in run.stderr
    rejected = sorted((tmp_path / ".sprintflow" / "specs" / "rejected").iterdir())
    assert len(rejected) == 2 and all(str(p) in run.stderr for p in rejected)
    assert "```json" in rejected[0].read_text()  # the answer as the engine printed it
    assert not (tmp_path / ".sprintflow" / "contracts").exists() and run.stdout == ""


def test_engine_precedence_flag_then_planner_env_then_global_env(tmp_path):
    env = {"SPRINTFLOW_ENGINE": "echo nope", "SPRINTFLOW_PLANNER_ENGINE": SCRIPTED}
    assert sprintflow(tmp_path, "plan", "Add a todo API", env=env).returncode == 0
    run = sprintflow(tmp_path, "plan", "Add tags", "--engine", "echo flag", "--max-attempts", "1", env=env)
    assert run.returncode == 2 and "no JSON object in the answer (5 characters)" in run.stderr
    run = sprintflow(tmp_path, "plan", "Add tags", "--max-attempts", "1", env={"SPRINTFLOW_ENGINE": "echo global"})
    assert run.returncode == 2 and "no JSON object in the answer (7 characters)" in run.stderr
    run = sprintflow(tmp_path, "plan", "Add tags")
    assert run.returncode == 2 and "error: no engine for the planner" in run.stderr


def test_existing_contracts_are_never_overwritten_without_force(tmp_path):
    assert sprintflow(tmp_path, "plan", "Add a todo API", "--engine", SCRIPTED).returncode == 0
    blind = f"sed 's/^- sprint-.*//' | {SCRIPTED}"  # answers the same ids whatever the prompt says
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", blind, "--max-attempts", "1")
    assert run.returncode == 2 and f"'{IDS[0]}' already exists in .sprintflow/contracts/" in run.stderr
    assert sprintflow(tmp_path, "plan", "Add a todo API", "--engine", blind, "--force").returncode == 0


def test_a_slow_engine_times_out_per_call(tmp_path):
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", "sleep 5", "--timeout", "0.3",
                     "--max-attempts", "1")
    assert run.returncode == 2 and "planner answer (attempt 1): $: engine timed out after 0.3s" in run.stderr


def test_help_says_when_the_flow_runs_and_what_it_costs(tmp_path):
    run = sprintflow(tmp_path, "plan", "--help")
    assert "--flow / --no-flow" in run.stdout and "~10 s" in run.stdout and "PREFECT_API_URL" in run.stdout


def test_validate_reports_a_dependency_cycle_across_hand_written_contracts(tmp_path):
    assert sprintflow(tmp_path, "plan", "Add a todo API", "--engine", SCRIPTED).returncode == 0
    paths = [tmp_path / ".sprintflow" / "contracts" / f"{cid}.json" for cid in IDS]
    first = json.loads(paths[0].read_text())
    first["dependsOn"] = [IDS[1]]
    paths[0].write_text(json.dumps(first))
    run = sprintflow(tmp_path, "validate", *map(str, paths))
    assert run.returncode == 2
    assert f"{paths[0]}: dependsOn: dependency cycle: {IDS[0]} -> {IDS[1]} -> {IDS[0]}" in run.stderr
    assert f"{paths[0]}: valid contract" not in run.stdout
    # One file alone cannot show the cycle; its unknown dependency is not checked without its siblings.
    assert sprintflow(tmp_path, "validate", str(paths[0])).returncode == 0


def test_an_engine_that_cannot_start_is_no_verdict_at_once_and_writes_nothing(tmp_path):
    run = sprintflow(tmp_path, "plan", "Add a todo API", "--engine", "no-such-planner-xyz")
    assert run.returncode == 3, run.stderr
    assert "error: planner: engine could not start (exit 127)" in run.stderr
    assert not (tmp_path / ".sprintflow" / "contracts").exists()
