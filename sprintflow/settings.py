"""Process-wide settings from the environment, and where the Prefect API is.

A CLI command that paid Prefect's temporary server start-up (10-30 s) on every
call would be too slow at a terminal, so a flow-running command picks its
server in this order: ``PREFECT_API_URL`` (environment or active Prefect
profile); the background server sprintflow started in ``PREFECT_HOME``; a
server answering on ``http://127.0.0.1:4200`` (``SPRINTFLOW_SERVER_PORT``); else it starts the background
server, which later commands reuse (:mod:`sprintflow.server`).
"""

from __future__ import annotations

import os
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pydantic_settings import BaseSettings, SettingsConfigDict

from sprintflow.errors import InfrastructureError

__all__ = ["Settings", "configured_api_url", "ensure_prefect_api", "get_settings",
           "local_api_url", "prefect_api_configured"]

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

    model_config = SettingsConfigDict(env_prefix="SPRINTFLOW_")

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


def _answers(url: str, timeout: float = 0.5) -> bool:
    return _health(url, timeout) == 200


def _reachable(url: str, timeout: float = 5) -> bool:
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


def ensure_prefect_api(announce: Callable[[str], object] = print) -> str:
    """Point Prefect at a server, starting the background one when none is configured or running;
    returns the server's API URL (or where it is configured).

    Call it after the command's input was checked: a bad input should start nothing.

    Raises:
        InfrastructureError: the configured server does not answer.
    """
    from sprintflow.server import background_server, ensure_background_server, use_api

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    configured = configured_api_url()
    if configured:
        if not _reachable(configured):
            where = "PREFECT_API_URL" if os.environ.get("PREFECT_API_URL") else "the active Prefect profile"
            raise InfrastructureError(f"the Prefect server at {configured} ({where}) does not answer: start it, "
                                      "or unset PREFECT_API_URL to let sprintflow start its own")
        return configured
    running = background_server()
    local = local_api_url()
    if running is None and _answers(local):
        use_api(local)
        return local
    return ensure_background_server(announce=announce).api_url
