"""Process-wide settings from the environment, and where a Prefect API is configured.

Imported by every layer (the judge's home, the history), so it imports nothing of sprintflow's:
which server a command uses is :func:`sprintflow.server.ensure_prefect_api`'s to decide.
"""

from __future__ import annotations

import os
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings", "answers", "configured_api_url", "get_settings", "local_api_url",
           "prefect_api_configured", "reachable"]

def local_api_url() -> str:
    """Where a local server would answer: 127.0.0.1 on ``SPRINTFLOW_SERVER_PORT`` (default 4200),
    the port the background server takes when it is free.

    Example:
        >>> local_api_url()
        'http://127.0.0.1:4200/api'
    """
    return f"http://127.0.0.1:{os.environ.get('SPRINTFLOW_SERVER_PORT') or 4200}/api"


class Settings(BaseSettings):
    """``SPRINTFLOW_*`` environment variables read as settings.

    Engine variables (``SPRINTFLOW_ENGINE``, ``SPRINTFLOW_<ROLE>_ENGINE``) are resolved
    per role by ``sprintflow.sprint.engines.resolve_engine``, with the flags and config.
    """

    # A variable set to nothing (``SPRINTFLOW_HISTORY=``, a common way to "unset" one for a command) is
    # not there: read as a path it would be the current directory, and the history would land in it.
    model_config = SettingsConfigDict(env_prefix="SPRINTFLOW_", env_ignore_empty=True)

    history: Path | None = None
    """Where history rows go; default ``<workspace>/.sprintflow/history``."""
    judge_home: Path | None = None
    """The judge's own store (pinned baselines, judged trees, evaluation layers), outside every
    workspace and hidden from every contained command; default ``~/.cache/sprintflow/judge``."""

    @property
    def judge_home_path(self) -> Path:
        return (self.judge_home or Path.home() / ".cache" / "sprintflow" / "judge").resolve()


def get_settings() -> Settings:
    return Settings()


def _health(url: str, timeout: float) -> int | None:
    """The HTTP status of ``url``'s health check; None when nothing answers there."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/health", timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:  # a server that wants a key answers 401: it is there
        return error.code
    except (OSError, ValueError):
        return None


def answers(url: str, timeout: float = 0.5) -> bool:
    return _health(url, timeout) == 200


def reachable(url: str, timeout: float = 5) -> bool:
    return _health(url, timeout) is not None


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
    return configured_api_url() is not None


def configured_api_url() -> str | None:
    """``PREFECT_API_URL`` from the environment, else from the active Prefect profile, else None."""
    if os.environ.get("PREFECT_API_URL"):
        return os.environ["PREFECT_API_URL"]
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")
    profiles = Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml")
    try:
        data = tomllib.loads(profiles.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    active = os.environ.get("PREFECT_PROFILE") or data.get("active") or "ephemeral"
    profile = (data.get("profiles") or {}).get(active) or {}
    url = profile.get("PREFECT_API_URL") if isinstance(profile, dict) else None
    return url if isinstance(url, str) and url else None
