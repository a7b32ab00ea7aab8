"""Machine-readable output stays machine-readable with Docker in the loop: stdout carries the document alone.

Real Docker, a real project sandbox (the workspace declares requirements, so the evaluation
prepares its dependency layer and reports that on its way), a real Prefect server.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from tests.fixtures.sprint.make_workspace import ENGINE, make_workspace

pytestmark = pytest.mark.slow

CONTRACT = ".sprintflow/contracts/sprint-spec-tiny-1.json"


def sprintflow(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=900, check=False)


@pytest.fixture
def sandboxed(tmp_path, docker_ready, prefect_api_url):
    """A tiny workspace with its own sandbox (a requirements file), and the environment of the server."""
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "requirements.txt").write_text("# nothing to install: the sandbox gets its own venv\n")
    return workspace, {"PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "INFO"}


def test_evaluate_in_docker_prints_only_the_document_for_json_junit_and_github(sandboxed):
    workspace, env = sandboxed
    (workspace / "state.txt").write_text("2")
    evaluate = ("evaluate", str(workspace), "--contract", str(workspace / CONTRACT), "--executor", "docker")
    as_json = sprintflow(*evaluate, "--json", "--no-cache", env=env)
    assert as_json.returncode == 0, as_json.stderr[-3000:]
    assert json.loads(as_json.stdout)["overallResult"] == "pass"
    assert "sandbox ready" in as_json.stderr  # the progress is shown, on stderr

    junit = sprintflow(*evaluate, "--format", "junit", "--no-cache", env=env)
    assert junit.returncode == 0, junit.stderr[-3000:]
    assert ElementTree.fromstring(junit.stdout).tag in {"testsuites", "testsuite"}

    (workspace / "state.txt").unlink()  # now it fails: the annotations say where
    github = sprintflow(*evaluate, "--format", "github", "--no-cache", env=env)
    assert github.returncode == 1, github.stderr[-3000:]
    lines = github.stdout.splitlines()
    assert lines and all(line.startswith("::") for line in lines), github.stdout


def test_run_in_docker_prints_only_its_outcome_lines(sandboxed):
    workspace, env = sandboxed
    run = sprintflow("run", str(workspace), "--engine", f"{sys.executable} {ENGINE}", "--executor", "docker",
                     "--max-iterations", "1", env=env)
    assert run.returncode == 1, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["needs-rework  sprint-spec-tiny-1", "blocked       sprint-spec-tiny-2"]
    assert re.search(r"sandbox ready in \d", run.stderr)
