"""Where a Prefect API is: the one configured (environment or active profile), or the local one.

Read without importing Prefect, which alone takes about a second: commands whose plain path needs
no server (plan, score, report) ask :func:`prefect_api_configured` before they choose.
"""

from __future__ import annotations

import os
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

from sprintflow.settings import get_settings

__all__ = ["answers", "configured_api_url", "local_api_url", "prefect_api_configured", "reachable"]


def local_api_url() -> str:
    """Where a local server would answer: 127.0.0.1 on ``SPRINTFLOW_SERVER_PORT`` (default 4200),
    the port the background server takes when it is free.

    Example:
        >>> local_api_url()
        'http://127.0.0.1:4200/api'
    """
    return f"http://127.0.0.1:{get_settings().server_port}/api"


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
