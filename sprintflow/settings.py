"""Process-wide settings from the environment, and where the Prefect API is.

A CLI command that paid Prefect's ephemeral server start-up (~10 s) on every
call would be too slow at a terminal, so: an explicit ``PREFECT_API_URL`` wins;
else a server answering on the default local address is used; else Prefect
starts a temporary one, and we say how to avoid that next time.
"""

from __future__ import annotations

import os
import tomllib
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["LOCAL_API_URL", "Settings", "ensure_prefect_api", "get_settings", "prefect_api_configured"]

LOCAL_API_URL = "http://127.0.0.1:4200/api"


class Settings(BaseSettings):
    """``SPRINTFLOW_*`` environment variables read as settings.

    Engine variables (``SPRINTFLOW_ENGINE``, ``SPRINTFLOW_<ROLE>_ENGINE``) are resolved
    per role by ``sprintflow.sprint.engines.resolve_engine``, with the flags and config.
    """

    model_config = SettingsConfigDict(env_prefix="SPRINTFLOW_")

    history: Path | None = None
    """Where history rows go; default ``<workspace>/.sprintflow/history``."""


def get_settings() -> Settings:
    return Settings()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=0.5) as response:
            return response.status == 200
    except OSError:
        return False


def prefect_api_configured() -> bool:
    """True when a Prefect server is configured: ``PREFECT_API_URL`` in the environment or active profile.

    Read without importing Prefect, which alone takes about a second. Commands
    whose plain path needs no server (plan, score, report) run as flows by
    default only when this is true.

    Example:
        >>> os.environ["PREFECT_API_URL"] = "http://127.0.0.1:4200/api"; prefect_api_configured()
        True
        >>> del os.environ["PREFECT_API_URL"]
    """
    if os.environ.get("PREFECT_API_URL"):
        return True
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")
    profiles = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml")
    try:
        data = tomllib.loads(profiles.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False
    active = os.environ.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    profile = (data.get("profiles") or {}).get(active) or {}
    return bool(profile.get("PREFECT_API_URL"))


def ensure_prefect_api(announce: Callable[[str], object] = print) -> str:
    """Point Prefect at a running server when there is one; returns a description of the choice.

    Must run before Prefect reads its settings (i.e. before flows run).
    """
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    configured = os.environ.get("PREFECT_API_URL")
    if configured:
        return f"Prefect server {configured}"
    if prefect_api_configured():
        return "Prefect server of the active profile"
    if _answers(LOCAL_API_URL):
        os.environ["PREFECT_API_URL"] = LOCAL_API_URL
        return f"Prefect server {LOCAL_API_URL}"
    announce("note: no Prefect server configured or running locally: starting a temporary one "
             "(~10 s). Run `sprintflow server` in another terminal to skip this next time.")
    return "temporary Prefect server"
