"""Load a workspace's ProjectConfig: sprintflow.toml, [tool.sprintflow], or bober.config.json.

Looked up in that order in the workspace root; none found means the generic
preset with defaults. Every source is validated against the config JSON
Schema first, so an error names the file and the JSON path.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from sprintflow.errors import ConfigError, DocumentError, WorkspaceError
from sprintflow.schemas import ProjectConfig
from sprintflow.schemas.validation import schema_problems

__all__ = ["CONFIG_FILES", "find_config_file", "load_project_config"]

CONFIG_FILES = ("sprintflow.toml", "pyproject.toml", "bober.config.json")


def find_config_file(workspace: Path) -> Path | None:
    """The first config source present in ``workspace``, or None."""
    for name in CONFIG_FILES:
        path = workspace / name
        if name == "pyproject.toml":
            if path.is_file() and "sprintflow" in _read_toml(path).get("tool", {}):
                return path
        elif path.is_file():
            return path
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _from_bober(data: dict[str, Any]) -> dict[str, Any]:
    """Map agent-bober's config onto ours; fields we do not use are ignored, never rewritten."""
    evaluator = data.get("evaluator") or {}
    mapped: dict[str, Any] = {
        "commands": data.get("commands") or {},
        "evaluator": {k: evaluator[k] for k in ("strategies", "maxIterations") if k in evaluator},
    }
    preset = data.get("preset") or (data.get("project") or {}).get("preset")
    if preset is not None:
        mapped["preset"] = preset
    return mapped


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
    if path.suffix == ".json":
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: invalid JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: the config must be a JSON object")
        data = _from_bober(raw)
    elif path.name == "pyproject.toml":
        data = _read_toml(path)["tool"]["sprintflow"]
    else:
        data = _read_toml(path)
    problems = schema_problems(data, "config", str(path))
    if problems:
        raise DocumentError(problems)
    return ProjectConfig.model_validate(data)


