import json
from pathlib import Path

import pytest

from sprintflow.errors import DocumentError, WorkspaceError
from sprintflow.evaluate.config import load_project_config


def test_no_config_means_generic_preset(tmp_path):
    config = load_project_config(tmp_path)
    assert [(s.type.value, s.required) for s in config.strategies()] == [("build", True), ("lint", False)]


def test_bober_config_is_read_unchanged(tmp_path):
    bober = {
        "project": {"name": "app", "mode": "brownfield", "preset": "brownfield"},
        "commands": {"build": "npm run build", "test": "npx vitest run"},
        "planner": {"model": "opus"},
        "evaluator": {"maxIterations": 5, "strategies": [
            {"type": "typecheck", "required": True},
            {"type": "custom", "required": False, "plugin": "bundle-size",
             "config": {"command": "node size.js", "parseOutput": "json", "passCondition": "output.ok === true"}},
        ]},
    }
    path = tmp_path / "bober.config.json"
    path.write_text(json.dumps(bober))
    before = path.read_bytes()
    config = load_project_config(tmp_path)
    assert config.preset == "brownfield" and config.evaluator.max_iterations == 5
    assert config.commands.test == "npx vitest run"
    assert [s.name for s in config.strategies()] == ["typecheck", "bundle-size"]
    assert path.read_bytes() == before


@pytest.mark.parametrize("preset, expected", [
    ("nextjs", ["typecheck", "lint", "build", "playwright"]),
    ("react-vite", ["typecheck", "lint", "build", "playwright"]),
    ("brownfield", ["typecheck", "lint", "unit-test"]),
    ("generic", ["build", "lint"]),
])
def test_presets_give_the_seed_strategy_sets(tmp_path, preset, expected):
    (tmp_path / "bober.config.json").write_text(json.dumps({"preset": preset}))
    assert [s.type.value for s in load_project_config(tmp_path).strategies()] == expected


def test_toml_and_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname="x"\n[tool.sprintflow.evaluator]\nmaxIterations = 2\n'
        '[[tool.sprintflow.evaluator.strategies]]\ntype = "lint"\ncommand = "ruff check ."\n'
        'timeout = 30\nnetwork = false\nimage = "python:3.12"\n')
    config = load_project_config(tmp_path)
    lint = config.strategies()[0]
    assert (lint.command, lint.timeout, lint.image, lint.network) == ("ruff check .", 30, "python:3.12", False)


def test_bad_config_names_file_and_path(tmp_path):
    (tmp_path / "sprintflow.toml").write_text('[[evaluator.strategies]]\ntype = "fuzz"\n')
    with pytest.raises(DocumentError, match=r"sprintflow.toml: evaluator/strategies/0/type: 'fuzz' is not one of"):
        load_project_config(tmp_path)
    (tmp_path / "sprintflow.toml").write_text("[evaluator\n")
    with pytest.raises(DocumentError, match="sprintflow.toml: invalid TOML at line 1"):
        load_project_config(tmp_path)


def test_missing_workspace(tmp_path):
    with pytest.raises(WorkspaceError, match="does not exist"):
        load_project_config(tmp_path / "nope")


def test_agent_bobers_own_config_is_read_as_agent_bober_ships_it(tmp_path):
    import shutil

    from sprintflow.evaluate.strategies import StrategyRun, strategy_for
    from sprintflow.sandbox.executors import LocalExecutor

    fixture = Path(__file__).parents[1] / "fixtures" / "configs" / "bober.config.json"
    shutil.copy(fixture, tmp_path / "bober.config.json")
    project = load_project_config(tmp_path)
    assert [s.type.value for s in project.strategies()] == ["typecheck", "lint", "unit-test", "build", "api-check"]
    assert project.preset == "generic" and project.commands.build is None  # mode greenfield; no build command
    api_check = project.strategies()[-1]
    plugin = strategy_for(api_check, project)
    plugin.check()  # no endpoints is no error
    judged = plugin.judge(StrategyRun(tmp_path, api_check, project, LocalExecutor()))
    assert judged.result.result.value == "skipped" and "lists no endpoints" in judged.result.details


def test_validate_reads_toml_pyproject_and_bober_configs(tmp_path):
    from click.testing import CliRunner

    from sprintflow.cli import cli

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.sprintflow]\npreset = "brownfield"\n')
    (tmp_path / "sprintflow.toml").write_text('[executor]\ncpus = "many"\n')
    fixture = Path(__file__).parents[1] / "fixtures" / "configs" / "bober.config.json"
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "pyproject.toml"), str(fixture),
                                      str(tmp_path / "sprintflow.toml")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'pyproject.toml'}: valid config" in result.output
    assert f"{fixture}: valid config" in result.output
    assert f"{tmp_path / 'sprintflow.toml'}: executor/cpus: 'many' is not of type 'number'" in result.output


def test_a_broken_manifest_is_the_projects_to_fail_on_not_a_refused_config(tmp_path):
    # The generator may break package.json; the evaluation must still read its config and give a verdict.
    (tmp_path / "sprintflow.toml").write_text('preset = "generic"\n')
    (tmp_path / "package.json").write_text('{"scripts": {"build": ')
    config = load_project_config(tmp_path)
    assert config.inferred == []
    assert [s.type.value for s in config.strategies()][:1] == ["build"]


def test_a_report_format_no_parser_reads_is_a_config_error_naming_it_and_the_known_ones(tmp_path):
    from sprintflow.parsers import PARSERS
    from sprintflow.schemas.strategies import REPORT_FORMATS

    assert sorted(PARSERS) == sorted(REPORT_FORMATS)  # one name, one parser, defined once
    (tmp_path / "sprintflow.toml").write_text('[[evaluator.strategies]]\ntype = "lint"\ncommand = "eslint ."\n'
                                              '[evaluator.strategies.config]\nformat = "eslint-stylish+tcs"\n')
    with pytest.raises(DocumentError, match=r"evaluator/strategies/0/config/format: .*'tcs' is not a report format: "
                                            r"one of tsc, eslint"):
        load_project_config(tmp_path)
    (tmp_path / "sprintflow.toml").write_text('[[evaluator.strategies]]\ntype = "lint"\ncommand = "eslint ."\n'
                                              '[evaluator.strategies.config]\nformat = "eslint-stylish+tsc"\n')
    assert load_project_config(tmp_path).evaluator.strategies[0].config.format == "eslint-stylish+tsc"
