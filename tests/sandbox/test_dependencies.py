"""The setup step a workspace's manifests and lockfiles ask for, and the key of its layer."""

from __future__ import annotations

import json
import os

import pytest

from sprintflow.sandbox.dependencies import plan_dependencies
from sprintflow.sandbox.runtimes import RuntimeUnavailable


def _descriptions(ws):
    return [step.description for step in plan_dependencies(ws).steps]


def test_lockfiles_choose_the_installer(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"packageManager": "pnpm@9.12.0+sha512.abc"}))
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    assert _descriptions(tmp_path) == ["pnpm 9.12.0 install --frozen-lockfile (pnpm-lock.yaml)"]
    (tmp_path / "package-lock.json").write_text("{}")  # npm's own lockfile wins
    assert _descriptions(tmp_path) == ["npm ci (package-lock.json)"]


def test_yarn_1_is_installed_and_plug_n_play_refused(tmp_path):
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "yarn.lock").write_text("# yarn lockfile v1\n")
    assert _descriptions(tmp_path) == ["yarn 1 install --frozen-lockfile (yarn.lock)"]
    (tmp_path / "package.json").write_text(json.dumps({"packageManager": "yarn@4.5.0"}))
    with pytest.raises(RuntimeUnavailable, match="yarn@4.5.0"):
        plan_dependencies(tmp_path)


def test_python_requirements_and_the_project_with_its_test_extras_and_groups(tmp_path):
    (tmp_path / "requirements.txt").write_text("attrs\n")
    (tmp_path / "test-requirements.txt").write_text("pytest\n")
    (tmp_path / "docs-requirements.txt").write_text("sphinx\n")  # not what tests need
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "lib"\n[project.optional-dependencies]\ntest = ["hypothesis"]\ndocs = ["sphinx"]\n'
        '[dependency-groups]\ndev = ["ruff"]\n')
    step = plan_dependencies(tmp_path).steps[0]
    assert step.description == "pip install requirements.txt test-requirements.txt -e .[test] group dev"
    assert step.inputs == ("requirements.txt", "test-requirements.txt", "pyproject.toml")
    assert "pip install -q -e '.[test]' --group dev" in step.script


def test_a_uv_project_gets_what_its_lock_pins(tmp_path):
    (tmp_path / "requirements.txt").write_text("attrs\n")  # the lock decides, not this
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "lib"\n[project.optional-dependencies]\ntests = ["hypothesis"]\n'
        '[dependency-groups]\ndev = ["pytest"]\ndocs = ["sphinx"]\n')
    (tmp_path / "uv.lock").write_text("version = 1\n")
    step = plan_dependencies(tmp_path).steps[0]
    assert step.description == "uv sync --frozen (uv.lock) extra tests group dev"
    assert step.inputs == ("pyproject.toml", "uv.lock")
    assert "uv sync --frozen --inexact --no-progress --python /opt/sprintflow/venv/bin/python --extra tests " \
           "--group dev" in step.script
    assert "-r requirements.txt" not in step.script
    (tmp_path / "uv.lock").unlink()
    (tmp_path / "uv.lock").mkdir()  # not a lockfile: pip, as before
    assert plan_dependencies(tmp_path).steps[0].description.startswith("pip install requirements.txt")


def test_a_poetry_project_gets_what_its_lock_pins(tmp_path):
    (tmp_path / "requirements.txt").write_text("attrs\n")  # the lock decides, not this
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "lib"\n[tool.poetry.extras]\ntesting = ["hypothesis"]\n'
        '[tool.poetry.group.test]\noptional = true\n[tool.poetry.group.docs]\noptional = true\n'
        '[tool.poetry.group.dev.dependencies]\npytest = "^8"\n')
    (tmp_path / "poetry.lock").write_text("# a lock\n")
    step = plan_dependencies(tmp_path).steps[0]
    assert step.description == "poetry install (poetry.lock) extra testing with test"
    assert step.inputs == ("pyproject.toml", "poetry.lock")
    assert "poetry install --no-ansi --extras testing --with test" in step.script
    assert "-r requirements.txt" not in step.script and "install -q --disable-pip-version-check poetry==" in step.script
    (tmp_path / "poetry.lock").unlink()
    os.mkfifo(tmp_path / "poetry.lock")  # not a lockfile: pip, as before, and nothing blocks
    assert plan_dependencies(tmp_path).steps[0].description.startswith("pip install requirements.txt -e .")


def test_nothing_to_install(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"name": "no-deps"}))
    (tmp_path / "README.md").write_text("hi")
    assert plan_dependencies(tmp_path).steps == ()


def test_the_key_follows_the_lockfile_and_nothing_else(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"devDependencies": {"vitest": "3.2.4"}}))
    (tmp_path / "package-lock.json").write_text('{"v": 1}')
    (tmp_path / "src.js").write_text("export const a = 1;\n")
    plan = plan_dependencies(tmp_path)
    key = plan.key(tmp_path, "sprintflow-runtime:a")
    (tmp_path / "src.js").write_text("export const a = 2;\n")  # the code changes every iteration
    assert plan_dependencies(tmp_path).key(tmp_path, "sprintflow-runtime:a") == key
    assert plan.key(tmp_path, "sprintflow-runtime:b") != key  # another runtime
    (tmp_path / "package-lock.json").write_text('{"v": 2}')
    assert plan_dependencies(tmp_path).key(tmp_path, "sprintflow-runtime:a") != key


def test_the_script_keeps_only_node_modules_of_the_project_copy(tmp_path):
    (tmp_path / "package.json").write_text("{}")
    (tmp_path / "package-lock.json").write_text("{}")
    script = plan_dependencies(tmp_path).script()
    assert script.startswith("set -eu\n")
    assert "! -name node_modules -exec rm -rf {} +" in script


def test_a_go_module_downloads_what_its_go_sum_pins_and_the_key_follows_it(tmp_path):
    (tmp_path / "go.mod").write_text("module m\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n")
    (tmp_path / "go.sum").write_text("github.com/google/uuid v1.6.0 h1:x=\n")
    plan = plan_dependencies(tmp_path)
    [step] = plan.steps
    assert step.description == "go mod download (go.mod, go.sum)" and step.inputs == ("go.mod", "go.sum")
    assert "go mod download" in step.script and "GOPROXY=" in step.script
    key = plan.key(tmp_path, "runtime")
    (tmp_path / "go.sum").write_text("github.com/google/uuid v1.6.0 h1:y=\n")
    assert plan_dependencies(tmp_path).key(tmp_path, "runtime") != key
    assert not plan.installs_node_modules


def test_a_maven_build_downloads_every_modules_plugins_then_runs_offline(tmp_path):
    (tmp_path / "pom.xml").write_text("<project/>")
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "pom.xml").write_text("<project/>")
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "pom.xml").write_text("<project/>")  # build output: not an input
    [step] = plan_dependencies(tmp_path).steps
    assert step.inputs == ("pom.xml", "core/pom.xml")
    # online to download, then offline for the judged runs; a compile error does not stop the download
    assert step.script.index("<offline>false</offline>") < step.script.index("go-offline") \
        < step.script.index("-Dmaven.compiler.failOnError=false") < step.script.index("<offline>true</offline>")
    plan = plan_dependencies(tmp_path)
    before = plan.key(tmp_path, "runtime")
    (tmp_path / "core" / "pom.xml").write_text("<project><dependencies/></project>")
    assert plan_dependencies(tmp_path).key(tmp_path, "runtime") != before


def test_a_cargo_workspace_fetches_what_its_lockfile_pins(tmp_path):
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["app"]\n')
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "Cargo.toml").write_text('[package]\nname = "app"\n')
    [step] = plan_dependencies(tmp_path).steps
    assert "cargo fetch" in step.script and "--locked" not in step.script and "no Cargo.lock" in step.description
    (tmp_path / "Cargo.lock").write_text("version = 4\n")
    [step] = plan_dependencies(tmp_path).steps
    assert "cargo fetch --locked" in step.script and step.inputs == ("Cargo.toml", "app/Cargo.toml", "Cargo.lock")
