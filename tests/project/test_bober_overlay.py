"""agent-bober's file stays first-class: sprintflow.toml beside bober.config.json adds to it, never replaces it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sprintflow.errors import DocumentError
from sprintflow.evaluate.config import config_problems, load_project_config

BOBER = {
    "projectName": "todo",
    "planner": {"model": "opus"},
    "commands": {"build": "npm run build", "test": "npx vitest run"},
    "evaluator": {"maxIterations": 5, "strategies": [{"type": "build", "required": True},
                                                      {"type": "unit-test", "required": True}]},
}


def sprintflow(*args):
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True)


@pytest.fixture
def bober(tmp_path):
    (tmp_path / "bober.config.json").write_text(json.dumps(BOBER))
    return tmp_path


def test_sprintflow_toml_adds_executor_timeouts_and_held_out_paths_to_bobers_config(bober):
    (bober / "sprintflow.toml").write_text(
        '[executor]\nkind = "local"\ndefaultTimeout = 90\n[engines]\ntimeout = 300\n'
        '[sprint]\nheldOut = ["evals", "golden"]\n')
    config = load_project_config(bober)
    assert [s.type.value for s in config.strategies()] == ["build", "unit-test"]  # bober's
    assert (config.evaluator.max_iterations, config.commands.test) == (5, "npx vitest run")  # bober's
    assert (config.executor.kind, config.executor.default_timeout) == ("local", 90)  # sprintflow's
    assert (config.engines.timeout, config.sprint.held_out) == (300, ["evals", "golden"])


def test_a_setting_bober_decides_is_refused_in_sprintflow_toml_naming_both(bober):
    toml = bober / "sprintflow.toml"
    toml.write_text('[evaluator]\nmaxIterations = 9\n[commands]\nlint = "ruff check ."\n')
    before = toml.read_text()
    with pytest.raises(DocumentError) as raised:
        load_project_config(bober)
    lines = str(raised.value).splitlines()
    assert f"{toml}: commands: bober.config.json beside it decides commands" in lines[0]
    assert f"{toml}: evaluator/maxIterations: bober.config.json beside it decides" in lines[1]
    validated = sprintflow("validate", str(toml))
    assert validated.returncode == 2 and "evaluator/maxIterations" in validated.stderr
    assert "Traceback" not in validated.stderr and toml.read_text() == before


def test_an_unknown_key_in_the_overlay_is_refused_with_its_path(bober):
    (bober / "sprintflow.toml").write_text('[executor]\ndefaultTimout = 90\n')
    problems = config_problems(bober / "sprintflow.toml")
    assert [p.path for p in problems] == ["executor/defaultTimout"]
    assert "did you mean 'defaultTimeout'?" in problems[0].message


def test_bobers_file_alone_is_read_as_before(bober):
    config = load_project_config(bober)
    assert config.evaluator.max_iterations == 5 and config.executor.kind == "auto"
