"""Load a workspace's ProjectConfig: sprintflow.toml, [tool.sprintflow], or bober.config.json.

Looked up in that order in the workspace root; none found means the generic
preset with defaults. Every source is read by :func:`read_config` and checked
against the config JSON Schema, so an error names the file and the JSON path.

agent-bober's ``bober.config.json`` is read as agent-bober ships it: the parts
sprintflow judges by (``evaluator.strategies``, ``evaluator.maxIterations``,
``commands``, the preset or ``project.mode``) are taken, agent-bober's own
settings (planner, generator, pipeline …) are left alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sprintflow.errors import ConfigError, DocumentError, Problem, WorkspaceError
from sprintflow.evaluate.expressions import parse_condition
from sprintflow.io.confine import relative_path_problem
from sprintflow.io.documents import read_json, read_toml
from sprintflow.schemas import ProjectConfig
from sprintflow.schemas.validation import in_document_order, schema_and_model_problems

__all__ = ["BOBER_CONFIG", "CONFIG_FILES", "config_problems", "find_config_file", "load_project_config",
           "read_config", "rule_problems"]

BOBER_CONFIG = "bober.config.json"
CONFIG_FILES = ("sprintflow.toml", "pyproject.toml", BOBER_CONFIG)


def find_config_file(workspace: Path) -> Path | None:
    """The first config source present in ``workspace``, or None."""
    for name in CONFIG_FILES:
        path = workspace / name
        if name == "pyproject.toml":
            tool = read_toml(path).get("tool") if path.is_file() else None
            if isinstance(tool, dict) and "sprintflow" in tool:
                return path
        elif path.is_file():
            return path
    return None


def read_config(path: Path) -> dict[str, Any]:
    """The configuration in ``path`` as sprintflow reads it: a TOML config, a pyproject.toml's
    ``[tool.sprintflow]``, or the parts of a ``bober.config.json`` sprintflow judges by.

    Raises:
        ConfigError: the file cannot be read or parsed, or has no sprintflow configuration.
        DocumentError: a bober.config.json whose parts have the wrong shape (with their JSON paths).

    Example:
        >>> read_config(Path("examples/python-api/sprintflow.toml"))["evaluator"]["maxIterations"]
        3
    """
    if not path.is_file():
        raise ConfigError(f"{path}: no such config file")
    if path.suffix == ".json":
        return _from_bober(read_json(path), str(path))
    data = read_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "sprintflow" not in tool:
            raise ConfigError(f"{path}: no [tool.sprintflow] section")
        section = tool["sprintflow"]
        if not isinstance(section, dict):
            raise DocumentError([Problem(str(path), "tool/sprintflow", "must be a table")])
        return section
    return data


def _from_bober(data: Any, file: str) -> dict[str, Any]:
    """Map agent-bober's config onto ours; fields we do not use are ignored, never rewritten."""
    if not isinstance(data, dict):
        raise DocumentError([Problem(file, "", "the config must be a JSON object")])
    problems = [Problem(file, key, "must be a JSON object") for key in ("evaluator", "commands", "project")
                if key in data and data[key] is not None and not isinstance(data[key], dict)]
    if problems:
        raise DocumentError(problems)
    evaluator, project = data.get("evaluator") or {}, data.get("project") or {}
    commands = data.get("commands") or {}
    mapped: dict[str, Any] = {
        "commands": {k: v for k, v in commands.items() if k in ("build", "typecheck", "lint", "test")},
        "evaluator": {k: evaluator[k] for k in ("strategies", "maxIterations") if k in evaluator},
    }
    preset = data.get("preset") or project.get("preset") or _BOBER_MODES.get(str(project.get("mode")))
    if preset is not None:
        mapped["preset"] = preset
    return mapped


_BOBER_MODES = {"brownfield": "brownfield", "greenfield": "generic"}
"""agent-bober's project modes, as the presets they default to."""


def config_problems(path: Path) -> list[Problem]:
    """Every problem of the config file ``path`` (parse errors, schema violations), located.

    Example:
        >>> config_problems(Path("examples/python-api/sprintflow.toml"))
        []
    """
    try:
        data = read_config(path)
    except DocumentError as exc:
        return exc.problems
    except ConfigError as exc:
        return [Problem(str(path), None, str(exc).removeprefix(f"{path}: "))]
    return _problems(data, str(path))


def _problems(data: dict[str, Any], file: str) -> list[Problem]:
    """All of them at once, in document order: the schema's (else the model's) and the rules'."""
    problems = schema_and_model_problems(data, "config", file)
    problems += [p for p in rule_problems(data, file) if p not in problems]
    return in_document_order(problems, data)


def rule_problems(data: dict[str, Any], file: str) -> list[Problem]:
    """What a schema-valid config can still get wrong: a passCondition that does not parse, a path
    that leaves the workspace. Found when the config is read, before any command runs.

    Example:
        >>> rule_problems({"protectedPaths": ["/etc"]}, "sprintflow.toml")[0].message
        'must be relative to the workspace'
    """
    problems = [Problem(file, where, problem) for where, value in _paths(data)
                if isinstance(value, str) and (problem := relative_path_problem(value))]
    for index, strategy in enumerate(_strategies(data)):
        condition = _table(strategy.get("config")).get("passCondition")
        if isinstance(condition, str):
            try:
                parse_condition(condition)
            except ConfigError as exc:
                problems.append(Problem(file, f"evaluator/strategies/{index}/config/passCondition", str(exc)))
    return problems


def _paths(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Every workspace-relative path a config names, with its JSON path."""
    found = [(f"protectedPaths/{i}", p) for i, p in enumerate(_array(data.get("protectedPaths")))]
    found += [(f"sprint/heldOut/{i}", p) for i, p in enumerate(_array(_table(data.get("sprint")).get("heldOut")))]
    tester = _table(data.get("tester"))
    found += [(f"tester/{key}", tester[key]) for key in ("testsDir", "report") if tester.get(key)]
    for index, strategy in enumerate(_strategies(data)):
        settings = _table(strategy.get("config"))
        found += [(f"evaluator/strategies/{index}/config/{key}", settings[key])
                  for key in ("report", "outputDir") if isinstance(settings.get(key), str)]
    return found


def _table(value: Any) -> dict[str, Any]:
    # The rules run beside the schema, so on configs of any shape: the schema reports a wrong one.
    return value if isinstance(value, dict) else {}


def _array(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strategies(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [s if isinstance(s, dict) else {} for s in _array(_table(data.get("evaluator")).get("strategies"))]


def load_project_config(workspace: Path | str) -> ProjectConfig:
    """Read and validate the workspace's configuration.

    Example:
        >>> load_project_config("examples/python-api").strategies()[0].type
        <StrategyType.build: 'build'>
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    path = find_config_file(workspace)
    if path is None:
        return ProjectConfig()
    data = read_config(path)
    problems = _problems(data, str(path))
    if problems:
        raise DocumentError(problems)
    return ProjectConfig.model_validate(data)
