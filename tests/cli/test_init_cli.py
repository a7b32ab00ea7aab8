"""``sprintflow init`` and ``sprintflow contract new`` through the real CLI, on real project layouts and on the
bundled examples, whose first contract is then evaluated by ``sprintflow evaluate``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sprintflow.io.layout import STATE_GITIGNORE
from tests.conftest import copy_example
from tests.fixtures.projects import PROJECTS, lay_out


def sprintflow(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=900, check=False)


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def contract_of(workspace: Path) -> Path:
    [path] = (workspace / ".sprintflow" / "contracts").glob("*.json")
    return path


@pytest.mark.parametrize("name", PROJECTS)
def test_init_on_a_real_layout_writes_valid_files_once(name, tmp_path):
    workspace = lay_out(name, tmp_path / name)
    before = snapshot(workspace)
    dry = sprintflow("init", str(workspace), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert snapshot(workspace) == before  # a dry run writes nothing
    assert "would write" in dry.stdout and "[[evaluator.strategies]]" in dry.stdout

    done = sprintflow("init", str(workspace))
    assert done.returncode == 0, done.stderr
    assert (workspace / "sprintflow.toml").read_text().strip() in dry.stdout  # what it said it would write
    assert (workspace / ".sprintflow" / ".gitignore").read_text() == STATE_GITIGNORE
    checked = sprintflow("validate", str(workspace / "sprintflow.toml"), str(contract_of(workspace)))
    assert checked.returncode == 0, checked.stderr

    after = snapshot(workspace)
    again = sprintflow("init", str(workspace))
    assert again.returncode == 0, again.stderr
    assert snapshot(workspace) == after  # a second run changes nothing
    assert "wrote" not in again.stdout and again.stdout.count("kept") == 3


def test_a_python_projects_first_contract_builds_with_python(tmp_path):
    workspace = lay_out("python-package", tmp_path / "p")
    assert sprintflow("init", str(workspace)).returncode == 0
    contract = json.loads(contract_of(workspace).read_text())
    methods = [c["verificationMethod"] for c in contract["successCriteria"]]
    assert methods == ["build", "typecheck", "lint", "unit-test"]
    assert [c["criterionId"] for c in contract["successCriteria"]] == ["sc-1-1", "sc-1-2", "sc-1-3", "sc-1-4"]
    assert "compileall" in contract["successCriteria"][0]["description"]
    assert "npm" not in (workspace / "sprintflow.toml").read_text()


def test_contract_new_takes_the_next_free_id_and_refuses_a_bad_title(tmp_path):
    workspace = lay_out("typescript-library", tmp_path / "ts")
    assert sprintflow("init", str(workspace)).returncode == 0
    first = json.loads(contract_of(workspace).read_text())
    made = sprintflow("contract", "new", "Retry on 503", "--workspace", str(workspace))
    assert made.returncode == 0, made.stderr
    second = workspace / ".sprintflow" / "contracts" / f"sprint-{first['specId']}-2.json"
    assert f"wrote {second}" in made.stdout
    data = json.loads(second.read_text())
    assert (data["title"], data["sprintNumber"], data["status"]) == ("Retry on 503", 2, "proposed")
    assert {c["criterionId"] for c in data["successCriteria"]} == {"sc-2-1", "sc-2-2", "sc-2-3"}

    before = snapshot(workspace)
    # Not UTF-8 (a lone surrogate once decoded), an escape character, nothing: argv cannot carry a NUL.
    for title in (os.fsdecode(b"bad\xed\xa0\x80title"), "colour\x1b[31m", "   "):
        refused = sprintflow("contract", "new", title, "--workspace", str(workspace))
        assert refused.returncode == 2, (title, refused.stderr)
        assert refused.stderr.startswith("error: title:") and "Traceback" not in refused.stderr
    for spec in ("../x", "a" * 199):
        refused = sprintflow("contract", "new", "Retry", "--workspace", str(workspace), "--spec", spec)
        assert refused.returncode == 2 and "cannot be a file name" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr
    assert snapshot(workspace) == before


def test_contract_new_in_an_empty_project_starts_a_plan(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "calc"\n')
    made = sprintflow("contract", "new", "Add subtraction", "--workspace", str(tmp_path), "--dry-run")
    assert made.returncode == 0, made.stderr
    assert '"contractId": "sprint-spec-' in made.stdout and '-add-subtraction-1"' in made.stdout
    assert not (tmp_path / ".sprintflow").exists()


def test_init_refuses_what_it_cannot_read_and_writes_nothing(tmp_path):
    assert sprintflow("init", str(tmp_path / "missing")).returncode == 2
    empty = sprintflow("init", str(tmp_path))
    assert empty.returncode == 2 and "nothing says how to check this project" in empty.stderr
    (tmp_path / "package.json").write_text('{"scripts": ')
    broken = sprintflow("init", str(tmp_path))
    assert broken.returncode == 2 and f"{tmp_path / 'package.json'}:" in broken.stderr
    assert "Traceback" not in broken.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["package.json"]


def test_state_folder_gets_its_gitignore_from_any_command_and_git_keeps_only_contracts(tmp_path):
    workspace = lay_out("python-package", tmp_path / "p")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    assert sprintflow("init", str(workspace)).returncode == 0
    state = workspace / ".sprintflow"
    for leftover in ("lock", "cache/strategies/k.json", "evals/e.json", "history/scores.ndjson", "runs/r/x.txt",
                     "specs/rejected/x.json"):
        (state / leftover).parent.mkdir(parents=True, exist_ok=True)
        (state / leftover).write_text("{}")
    listed = subprocess.run(["git", "-C", str(workspace), "ls-files", "--others", "--exclude-standard",
                             ".sprintflow"], capture_output=True, text=True, check=True).stdout.split()
    assert sorted(listed) == [".sprintflow/.gitignore", contract_of(workspace).relative_to(workspace).as_posix()]

    other = tmp_path / "other"
    other.mkdir()
    bugs = sprintflow("bugs", "list", "--workspace", str(other))  # a command that only reads creates nothing
    assert not (other / ".sprintflow").exists(), bugs.stderr


@pytest.fixture
def server_env(prefect_api_url):
    return {"PREFECT_API_URL": prefect_api_url}


@pytest.mark.parametrize("example", ["python-api", "ts-app"])
def test_init_on_a_bundled_example_then_evaluate_passes(example, tmp_path, server_env):
    workspace = copy_example(example, tmp_path)
    (workspace / "sprintflow.toml").unlink()
    shutil.rmtree(workspace / ".sprintflow")
    assert sprintflow("init", str(workspace)).returncode == 0
    judged = sprintflow("evaluate", str(workspace), "--contract", str(contract_of(workspace)),
                        "--executor", "local", "--json", env=server_env)
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-3000:]
    result = json.loads(judged.stdout)
    assert result["overallResult"] == "pass"
    assert result["inferred"] == []  # init wrote every strategy down: nothing was left to infer


def test_a_python_project_without_config_is_evaluated_with_python_and_says_what_was_inferred(tmp_path, server_env):
    workspace = copy_example("python-api", tmp_path)
    (workspace / "sprintflow.toml").unlink()
    shutil.rmtree(workspace / ".sprintflow")
    assert sprintflow("contract", "new", "Baseline", "--workspace", str(workspace)).returncode == 0
    judged = sprintflow("evaluate", str(workspace), "--contract", str(contract_of(workspace)),
                        "--executor", "local", "--json", env=server_env)
    assert judged.returncode == 0, judged.stdout[-3000:] + judged.stderr[-3000:]
    result = json.loads(judged.stdout)
    build = next(s for s in result["strategyResults"] if s["strategy"] == "build")
    assert "compileall" in json.dumps(build) and "npm" not in json.dumps(result["strategyResults"])
    assert {(i["strategy"], i["source"]) for i in result["inferred"]} >= {("build", "pyproject.toml")}
    shown = sprintflow("evaluate", str(workspace), "--contract", str(contract_of(workspace)),
                       "--executor", "local", env={**server_env, "COLUMNS": "200"})
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "inferred from the project: build: `python3 -m compileall" in shown.stdout


def test_init_beside_bobers_config_keeps_it_and_the_contract_follows_its_strategies(tmp_path):
    (tmp_path / "package.json").write_text('{"scripts": {"build": "tsc", "lint": "eslint ."}}')
    (tmp_path / "bober.config.json").write_text(json.dumps({
        "projectName": "app", "commands": {"test": "npx vitest run"},
        "evaluator": {"strategies": [{"type": "build", "required": True}, {"type": "unit-test", "required": True}]}}))
    done = sprintflow("init", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"kept {tmp_path / 'bober.config.json'}" in done.stdout
    assert not (tmp_path / "sprintflow.toml").exists()
    criteria = json.loads(contract_of(tmp_path).read_text())["successCriteria"]
    assert [(c["verificationMethod"], c["description"]) for c in criteria] == [
        ("build", "The build (`npm run build`) exits 0."),
        ("unit-test", "Every test that `npx vitest run` runs passes.")]
