"""Load a workspace's ProjectConfig: sprintflow.toml, [tool.sprintflow], and bober.config.json.

sprintflow's own file is the first of ``sprintflow.toml`` and ``pyproject.toml``'s
``[tool.sprintflow]``. Every source is read by :func:`read_config` and checked
against the config JSON Schema, so an error names the file and the JSON path.

agent-bober's ``bober.config.json`` is read as agent-bober ships it: the parts
sprintflow judges by (``evaluator.strategies``, ``evaluator.maxIterations``,
``commands``, the preset or ``project.mode``) are taken, agent-bober's own
settings (planner, generator, pipeline …) are left alone. Beside it, sprintflow's
own file adds what agent-bober has no word for (the executor, timeouts, engines,
held-out paths …); a setting both files make is refused, naming both, because
agent-bober's file stays the one that decides its own settings.

What neither file decides follows the project (:mod:`sprintflow.evaluate.detect`):
commands the config leaves open are the project's own (``npm run build`` only
where package.json has that script; ``python3 -m compileall`` for a Python
project), and without a preset or strategies the checks the project can run are
the strategies. ``ProjectConfig.inferred`` records each, and every EvalResult says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sprintflow.errors import ConfigError, DocumentError, Problem, WorkspaceError
from sprintflow.evaluate.detect import detect_checks, detect_preset
from sprintflow.evaluate.expressions import parse_condition
from sprintflow.io.confine import relative_path_problem
from sprintflow.io.documents import read_json, read_toml
from sprintflow.schemas import InferredCommand, ProjectConfig, StrategyType, parse_strategy
from sprintflow.schemas.validation import in_document_order, schema_and_model_problems

__all__ = ["BOBER_CONFIG", "BOBER_SETTINGS", "CONFIG_FILES", "config_problems", "config_sources", "find_config_file",
           "load_project_config", "read_config", "rule_problems"]

BOBER_CONFIG = "bober.config.json"
CONFIG_FILES = ("sprintflow.toml", "pyproject.toml", BOBER_CONFIG)
BOBER_SETTINGS = ("preset", "commands", "evaluator/strategies", "evaluator/maxIterations")
"""What agent-bober's file decides: sprintflow's own file beside it may not set these."""


def find_config_file(workspace: Path) -> Path | None:
    """The config source that names the workspace's configuration: sprintflow's own, else bober's, else None."""
    sources = config_sources(workspace)
    return sources[-1] if sources else None


def config_sources(workspace: Path) -> list[Path]:
    """The config files read, in the order they apply: ``bober.config.json``, then sprintflow's own file.

    Example:
        >>> [p.name for p in config_sources(Path("examples/python-api"))]
        ['sprintflow.toml']
    """
    own = _own_config(workspace)
    bober = workspace / BOBER_CONFIG
    return [path for path in (bober if bober.is_file() else None, own) if path is not None]


def _own_config(workspace: Path) -> Path | None:
    if (workspace / "sprintflow.toml").is_file():
        return workspace / "sprintflow.toml"
    path = workspace / "pyproject.toml"
    tool = read_toml(path).get("tool") if path.is_file() else None
    return path if isinstance(tool, dict) and "sprintflow" in tool else None


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
    """Every problem of the config file ``path`` (parse errors, schema violations), located; sprintflow's own
    file beside a ``bober.config.json`` also must not set what agent-bober's file decides.

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
    problems = _problems(data, str(path))
    bober = path.parent / BOBER_CONFIG
    if path.name != BOBER_CONFIG and bober.is_file() and path == _own_config(path.parent):
        problems += _overlay_problems(data, path)
    return problems


def _overlay_problems(own: dict[str, Any], path: Path) -> list[Problem]:
    """The settings of sprintflow's own file that agent-bober's file beside it decides."""
    problems = []
    for setting in BOBER_SETTINGS:
        section, _, key = setting.partition("/")
        value = own.get(section)
        if (isinstance(value, dict) and key in value) if key else value is not None:
            problems.append(Problem(str(path), setting, f"{BOBER_CONFIG} beside it decides {setting}: set it "
                                                        f"there (this file adds to it, never replaces it)"))
    return problems


def _merged(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """``overlay`` over ``base``, table by table (the overlay never sets the same leaf: checked first)."""
    merged = dict(base)
    for key, value in overlay.items():
        merged[key] = _merged(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    return merged


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
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    for path in config_sources(workspace):
        problems += config_problems(path)
        if not problems:
            data = _merged(data, read_config(path))
    if problems:
        raise DocumentError(problems)
    return _follow_project(ProjectConfig.model_validate(data), data, workspace)


def _follow_project(config: ProjectConfig, data: dict[str, Any], workspace: Path) -> ProjectConfig:
    """Fill what the config leaves open from the project's files, and record each inference.

    Example:
        >>> config = load_project_config("examples/ts-app")
        >>> [(i.strategy.value, i.command) for i in config.inferred][:2]
        [('build', 'npm run build'), ('typecheck', 'npm run typecheck')]
    """
    try:
        checks = detect_checks(workspace)
    except DocumentError:
        # The manifests are the project's, and the generator may change them: a broken package.json is
        # for the build to fail on (a verdict), not a reason to refuse the workspace. ``init`` reads
        # them strictly instead.
        return config
    inferred: list[InferredCommand] = []
    commands = config.commands.model_copy()
    for check in checks:
        key = _COMMAND_KEYS.get(check.strategy)
        if key and getattr(commands, key) is None:
            setattr(commands, key, check.command)
            inferred.append(check)
    update: dict[str, Any] = {"commands": commands}
    strategies = (data.get("evaluator") or {}).get("strategies")
    if "preset" not in data and strategies is None and checks:
        update["preset"] = detect_preset(workspace)
        # Without commands of their own: each runs ``commands.<key>`` (filled above), playwright its default.
        chosen = [parse_strategy({"type": c.strategy.value, "required": c.strategy is not StrategyType.playwright})
                  for c in checks]
        update["evaluator"] = config.evaluator.model_copy(update={"strategies": chosen})
        inferred += [c for c in checks if c.strategy not in _COMMAND_KEYS]
    update["inferred"] = sorted(inferred, key=lambda c: list(StrategyType).index(c.strategy))
    return config.model_copy(update=update)


_COMMAND_KEYS = {StrategyType.build: "build", StrategyType.typecheck: "typecheck", StrategyType.lint: "lint",
                 StrategyType.unit_test: "test"}
"""The strategies whose command ``commands.<key>`` sets."""
