"""A full disk, for real (small tmpfs mounts): the verdict is still printed and its exit code returned,
what could not be stored is named, and nothing is left half-written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fill
from tests.fixtures.evals import eval_id_pattern, eval_path
from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def evaluate(workspace: Path, prefect_api_url: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sprintflow", "evaluate", str(workspace), "--contract",
                           str(workspace / CONTRACT), "--executor", "local", "--no-cache"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PREFECT_API_URL": prefect_api_url, **env})


@pytest.mark.parametrize(("state", "verdict", "code"), [("2", "PASS Sprint 1 (Step 1) PASSED", 0),
                                                        ("1", "FAIL Sprint 1 (Step 1) FAILED", 1)])
def test_a_full_history_disk_loses_the_rows_not_the_verdict(prefect_api_url, small_disk, tmp_path,
                                                             state, verdict, code):
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text(state)
    history = small_disk("history", kib=64)
    run = evaluate(workspace, prefect_api_url, SPRINTFLOW_HISTORY=str(history / "h"))
    output = run.stdout + run.stderr
    assert run.returncode == code, output
    assert verdict in output and "Traceback" not in output
    assert f"not stored: its history rows in {history / 'h'}: No space left on device" in output
    assert eval_path(workspace, "sprint-spec-tiny-1", 1).is_file()
    assert not [p for p in history.rglob("*") if p.name != ".filler" and p.is_file()]  # no torn file


def test_a_full_workspace_disk_keeps_the_verdict_and_leaves_nothing_half_written(prefect_api_url, small_disk,
                                                                                tmp_path):
    disk = small_disk("disk", kib=1024, free_kib=1024)
    workspace = shutil.copytree(make_workspace(tmp_path / "ws"), disk / "ws")
    (workspace / "state.txt").write_text("2")
    fill(disk)
    run = evaluate(workspace, prefect_api_url)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "PASS Sprint 1 (Step 1) PASSED" in output and "Traceback" not in output
    assert re.search(rf"not stored: the EvalResult {re.escape(str(workspace / '.sprintflow/evals'))}/"
                     rf"{eval_id_pattern('sprint-spec-tiny-1', 1)}\.json: No space left on device", output), output
    assert "not stored: its history rows in" in output
    written = [p for p in (workspace / ".sprintflow").rglob("*") if p.name != "lock" and p.is_file()
               and (p.stat().st_size == 0 or p.name.endswith(".tmp"))]
    assert not written, written  # neither empty nor temporary files
    assert not (workspace / ".sprintflow/evals").exists() or not any((workspace / ".sprintflow/evals").iterdir())


def test_a_sprint_that_cannot_store_its_state_is_no_verdict_in_one_line(prefect_api_url, small_disk, tmp_path):
    disk = small_disk("disk", kib=1024, free_kib=1024)
    workspace = shutil.copytree(make_workspace(tmp_path / "ws"), disk / "ws")
    fill(disk)
    run = subprocess.run([sys.executable, "-m", "sprintflow", "run", str(workspace), "--engine",
                          f"{sys.executable} {ENGINE}", "--executor", "local"],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PREFECT_API_URL": prefect_api_url})
    assert run.returncode == 3, run.stdout + run.stderr  # the environment failed: no verdict
    assert "Traceback" not in run.stdout + run.stderr
    assert f"error: cannot write {workspace / '.sprintflow/pin.json'}: No space left on device" in run.stderr
