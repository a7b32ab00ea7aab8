"""Every ``SPRINTFLOW_*`` setting, in one model: read from the environment, grouped by area.

Imported by every layer (the judge's home, the history, the server's port), so it imports nothing
of sprintflow's but the errors. ``sprintflow settings`` lists them with their values; nothing else
reads these variables from the environment. The variables sprintflow itself sets for the processes
it starts (``SPRINTFLOW_ROLE``, ``SPRINTFLOW_ITERATION`` … for an engine) are what those processes
are told, not settings.

Example:
    >>> Settings.of({"SPRINTFLOW_ENGINE": "claude", "SPRINTFLOW_SERVER_PORT": "4300"}).server_port
    4300
    >>> Settings.of({"SPRINTFLOW_HISTORY": ""}).history is None   # set to nothing: unset
    True
    >>> [name for name, _ in Settings.groups()]
    ['engines', 'storage', 'server']
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from sprintflow.errors import ConfigError

__all__ = ["DEFAULT_PORT", "ENV_PREFIX", "ROLES", "Settings", "get_settings"]

ENV_PREFIX = "SPRINTFLOW_"
DEFAULT_PORT = 4200
ROLES = ("planner", "generator", "evaluator", "tester", "scorer")
"""The roles an engine can play; each has a ``SPRINTFLOW_<ROLE>_ENGINE`` of its own."""


def _in(group: str) -> Any:
    return {"group": group}


class Settings(BaseSettings):
    """``SPRINTFLOW_<NAME>`` for each field (``server_port`` is ``SPRINTFLOW_SERVER_PORT``)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        # ``of`` hands over the variables of the mapping it was given: the process's environment is not read
        # again behind its back (a mapping other than os.environ is that mapping alone), and a settings object
        # costs a validation, not a scan of the environment and of dotenv and secrets sources (2 ms, asked
        # about a dozen times per sprint iteration).
        return (init_settings,)

    engine: str | None = Field(None, json_schema_extra=_in("engines"), description=(
        "The engine command (or preset: claude, codex, gemini …) of every role without one of its own; "
        "not the tester's, which only its own variable or engines.tester switches on."))
    planner_engine: str | None = Field(None, json_schema_extra=_in("engines"),
                                       description="The planner's engine (sprintflow plan).")
    generator_engine: str | None = Field(None, json_schema_extra=_in("engines"),
                                         description="The generator's engine (sprintflow run).")
    evaluator_engine: str | None = Field(None, json_schema_extra=_in("engines"),
                                         description="The engine that judges manual criteria.")
    tester_engine: str | None = Field(None, json_schema_extra=_in("engines"),
                                      description="The tester's engine: setting it switches the tester on.")
    scorer_engine: str | None = Field(None, json_schema_extra=_in("engines"),
                                      description="The engine sprintflow score scores skills with.")

    history: Path | None = Field(None, json_schema_extra=_in("storage"), description=(
        "Where history rows go (a folder several workspaces can share); default <workspace>/.sprintflow/history."))
    judge_home: Path | None = Field(None, json_schema_extra=_in("storage"), description=(
        "The judge's own store (pinned baselines, judged trees, evaluation layers), outside every workspace "
        "and hidden from every contained command; default ~/.cache/sprintflow/judge."))
    checkouts: Path | None = Field(None, json_schema_extra=_in("storage"), description=(
        "Where the git workspaces deployments name are cloned; default ~/.cache/sprintflow/checkouts."))
    sandbox_cache: Path | None = Field(None, json_schema_extra=_in("storage"), description=(
        "Where downloaded runtimes and the sandbox's bookkeeping live; default ~/.cache/sprintflow/sandbox."))

    server_port: int = Field(DEFAULT_PORT, ge=1, le=65535, json_schema_extra=_in("server"), description=(
        "The port of the background Prefect server sprintflow starts, when it is free."))
    root: Path | None = Field(None, json_schema_extra=_in("server"), description=(
        "The folder a deployment's runs start in (prefect.yaml's {{ $SPRINTFLOW_ROOT }}); "
        "sprintflow serve sets it to the folder it started in."))
    task_runner: Literal["threads", "dask"] | None = Field(None, json_schema_extra=_in("server"), description=(
        "The task runner of a deployment's evaluation fan-out when its form names none; default threads."))

    @field_validator("history", "judge_home", "checkouts", "sandbox_cache", "root", "task_runner", mode="before")
    @classmethod
    def _nothing_is_unset(cls, value: Any) -> Any:
        # A variable set to nothing (``SPRINTFLOW_HISTORY=``, a common way to "unset" one for a command) is
        # not there: read as a path it would be the current folder, and the history would land in it. An
        # engine set to nothing stays "": resolving it says so (:func:`sprintflow.engines.resolve_engine`).
        return None if value == "" else value

    @field_validator("server_port", mode="before")
    @classmethod
    def _default_port(cls, value: Any) -> Any:
        return DEFAULT_PORT if value == "" else value

    @property
    def judge_home_path(self) -> Path:
        return (self.judge_home or Path.home() / ".cache" / "sprintflow" / "judge").resolve()

    def engine_of(self, role: str) -> tuple[str, str | None]:
        """The variable that names ``role``'s engine and its value: the role's own, else ``SPRINTFLOW_ENGINE``."""
        own = getattr(self, f"{role}_engine") if role in ROLES else None
        if own is not None:
            return f"{ENV_PREFIX}{role.upper()}_ENGINE", own
        return f"{ENV_PREFIX}ENGINE", self.engine

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> Settings:
        """The settings ``environ`` gives (that mapping alone, not the process's environment).

        Raises:
            ConfigError: a value is not what its setting takes, naming the variable.
        """
        values = {name: environ[cls.variable(name)] for name in cls.model_fields if cls.variable(name) in environ}
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise _config_error(exc) from None

    @classmethod
    def variable(cls, name: str) -> str:
        return f"{ENV_PREFIX}{name.upper()}"

    @classmethod
    def groups(cls) -> list[tuple[str, list[str]]]:
        """The fields by area, in declaration order."""
        found: dict[str, list[str]] = {}
        for name, field in cls.model_fields.items():
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            found.setdefault(str(extra.get("group", "other")), []).append(name)
        return list(found.items())


def _config_error(exc: ValidationError) -> ConfigError:
    problems = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else "?"
        problems.append(f"{Settings.variable(name)}={error.get('input')!r}: {error['msg']}")
    return ConfigError("; ".join(problems))


def get_settings() -> Settings:
    """The settings of this process's environment.

    Raises:
        ConfigError: a ``SPRINTFLOW_*`` variable's value is not what its setting takes, naming it.
    """
    return Settings.of(os.environ)
