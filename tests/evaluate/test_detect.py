"""What a project's files say it can run: the recorded layouts of real projects, and manifests that lie."""

from __future__ import annotations

import pytest

from sprintflow.errors import DocumentError
from sprintflow.evaluate.config import load_project_config
from sprintflow.evaluate.detect import PYTHON_BUILD, detect_checks, detect_preset
from tests.fixtures.projects import PROJECTS, lay_out

EXPECTED = {
    "python-package": ("generic", {"build": PYTHON_BUILD, "typecheck": "python3 -m mypy", "lint": "ruff check .",
                                   "unit-test": "python3 -m pytest -q"}),
    "python-with-javascript": ("generic", {"build": PYTHON_BUILD, "lint": "ruff check .",
                                           "unit-test": "python3 -m pytest -q"}),
    "typescript-app": ("nextjs", {"build": "pnpm run build", "typecheck": "npx tsc --noEmit --pretty false",
                                  "lint": "pnpm run lint"}),
    "typescript-library": ("generic", {"build": "npm run build", "typecheck": "npx tsc --noEmit --pretty false",
                                       "unit-test": "npm run test"}),
}


def test_every_recorded_project_is_covered():
    assert sorted(EXPECTED) == PROJECTS


@pytest.mark.parametrize("name", PROJECTS)
def test_the_checks_of_a_recorded_project_are_its_own(name, tmp_path):
    workspace = lay_out(name, tmp_path / name)
    preset, commands = EXPECTED[name]
    checks = detect_checks(workspace)
    assert {c.strategy.value: c.command for c in checks} == commands
    assert all(c.source for c in checks)
    assert detect_preset(workspace) == preset


def test_a_python_project_without_config_builds_with_python_and_says_it_was_inferred(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "calc"\n')
    config = load_project_config(tmp_path)
    assert [(s.type.value, s.required) for s in config.strategies()] == [("build", True)]
    assert config.commands.build == PYTHON_BUILD
    assert [(i.strategy.value, i.source) for i in config.inferred] == [("build", "pyproject.toml")]
    assert "npm" not in config.model_dump_json()


def test_a_preset_given_keeps_its_strategies_and_gets_the_projects_commands(tmp_path):
    (tmp_path / "requirements.txt").write_text("ruff==0.6\npytest>=8\n")
    (tmp_path / "sprintflow.toml").write_text('preset = "brownfield"\n')
    config = load_project_config(tmp_path)
    assert [s.type.value for s in config.strategies()] == ["typecheck", "lint", "unit-test"]
    assert (config.commands.lint, config.commands.test) == ("ruff check .", "python3 -m pytest -q")
    assert config.commands.build == PYTHON_BUILD


def test_a_package_manager_follows_the_lockfile_and_the_placeholder_test_script_is_no_test(tmp_path):
    (tmp_path / "package.json").write_text(
        '{"scripts": {"build": "tsc", "test": "echo \\"Error: no test specified\\" && exit 1"}}')
    (tmp_path / "yarn.lock").write_text("")
    assert [(c.strategy.value, c.command) for c in detect_checks(tmp_path)] == [("build", "yarn run build")]


def test_a_manifest_that_is_not_json_is_a_located_error(tmp_path):
    (tmp_path / "package.json").write_text('{"scripts": {"build": "tsc",}}')
    with pytest.raises(DocumentError) as raised:
        detect_checks(tmp_path)
    assert f"{tmp_path / 'package.json'}: " in str(raised.value) and "line 1" in str(raised.value)


def test_a_configured_command_is_never_replaced(tmp_path):
    (tmp_path / "package.json").write_text('{"scripts": {"build": "vite build"}}')
    (tmp_path / "sprintflow.toml").write_text('[commands]\nbuild = "make"\n')
    config = load_project_config(tmp_path)
    assert config.commands.build == "make" and config.inferred == []


def test_inferred_cannot_be_written_in_a_config(tmp_path):
    (tmp_path / "sprintflow.toml").write_text('inferred = []\n')
    with pytest.raises(DocumentError, match="unknown key 'inferred'"):
        load_project_config(tmp_path)


def test_go_rust_and_maven_projects_get_their_own_build_and_test_and_their_sandbox_brings_the_toolchain(tmp_path):
    from sprintflow.project.init import plan_init

    (tmp_path / "go.mod").write_text("module example.com/app\n\ngo 1.22\n")
    (tmp_path / "package.json").write_text('{"scripts": {"build": "vite build"}}')
    checks = {c.strategy.value: (c.command, c.source) for c in detect_checks(tmp_path)}
    assert checks == {"build": ("npm run build && go build ./...", "package.json scripts.build; go.mod"),
                      "lint": ("go vet ./...", "go.mod"), "unit-test": ("go test ./...", "go.mod")}
    config = plan_init(tmp_path, today="20260513")[0].text
    assert "has no toolchain" not in config  # the project's sandbox brings the Go its go.mod asks for
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "app"\nversion = "0.1.0"\n')
    config = plan_init(tmp_path, today="20260513")[0].text
    assert "cargo test --quiet" in config and "has no toolchain" not in config  # Debian's rustc (runtimes)
