"""The local Prefect server sprintflow starts: in the foreground, or reusable in the background.

The server is Prefect's own (``prefect server start``); sprintflow only sets
what a team would otherwise forget: analytics off (no internet needed), the
database (SQLite under ``PREFECT_HOME`` for one machine, Postgres for a shared
server), and the global concurrency limit that caps containers per Docker host.

**The background server.** A command that runs a flow with no server configured
would otherwise pay Prefect's temporary server (10-30 s) every time. Instead the
first one starts a server in the background and later ones reuse it
(:func:`ensure_background_server`). It is safe on a machine many people share:

* its record (pid, port, URL) and log live in ``PREFECT_HOME``
  (``sprintflow-server.json``, ``sprintflow-server.log``), so each home has its own;
* the record names the process by pid *and* start time: a record whose process
  is gone, or whose pid now belongs to another process, is stale and replaced;
* one command starts it at a time (a lock beside the record), the others wait
  and reuse it;
* it listens on 127.0.0.1, on port 4200 (``SPRINTFLOW_SERVER_PORT``) when free, else on a free port;
* ``sprintflow server stop`` ends it, and only it (by the recorded pid), with
  every process it started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from sprintflow.errors import InfrastructureError
from sprintflow.io.files import atomic_write_text, file_lock
from sprintflow.io.process import Child, spawn, stop_group, stop_process
from sprintflow.orchestration.api import answers, configured_api_url, local_api_url, reachable
from sprintflow.orchestration.concurrency import ensure_docker_host_limit
from sprintflow.settings import DEFAULT_PORT, get_settings

__all__ = [
    "DEFAULT_PORT",
    "READY_TIMEOUT_S",
    "BackgroundServer",
    "ensure_prefect_api",
    "background_server",
    "check_port",
    "ensure_background_server",
    "prefect_home",
    "start_server",
    "stop_background_server",
    "stop_server",
    "use_api",
    "wait_for_server",
]

READY_TIMEOUT_S = 120
RECORD_FILE = "sprintflow-server.json"
LOG_FILE = "sprintflow-server.log"
LOCK_FILE = "sprintflow-server.lock"


def prefect_home() -> Path:
    """``PREFECT_HOME``, or Prefect's default ``~/.prefect``."""
    return Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()


def check_port(host: str, port: int) -> None:
    """Raise unless ``port`` on ``host`` is free to listen on (the check Prefect's own start makes).

    Raises:
        InfrastructureError: something already listens there.
    """
    if not _port_free(host, port):
        raise InfrastructureError(f"port {port} on {host} is in use by another process: choose another with --port")


def _port_free(host: str, port: int) -> bool:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError:
        return False
    return True


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def start_server(host: str = "127.0.0.1", port: int = DEFAULT_PORT, env: dict[str, str] | None = None,
                 stdout: IO[bytes] | int | None = None,
                 stderr: IO[bytes] | int | None = None) -> tuple[Child, str]:
    """Start ``prefect server start`` in its own process group; returns it and its API URL (not yet ready).

    Raises:
        InfrastructureError: the port is taken (checked first, so nothing starts).
    """
    check_port(host, port)
    # The UI asks the API at the address these say: without them it would call port 4200.
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_API_HOST": host,
           "PREFECT_SERVER_API_PORT": str(port), **(env or {})}
    env.pop("PREFECT_API_URL", None)  # the server must not try to reach another one
    api_url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/api"
    process = spawn([sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)],
                    env=env, stdout=stdout, stderr=stderr, detach=True)
    return process, api_url


def stop_server(process: Child, timeout: float = 20) -> None:
    """Stop a server this process started, with every process it started: SIGINT (a clean
    database shutdown), then SIGKILL."""
    stop_process(process, timeout)


def wait_for_server(api_url: str, timeout: float = READY_TIMEOUT_S,
                    process: Child | None = None) -> None:
    """Block until ``api_url``'s health endpoint answers; raise if ``process`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise InfrastructureError(f"the Prefect server exited with code {process.returncode}")
        if _answers(api_url):
            if process is not None and process.poll() is not None:  # another server answered
                raise InfrastructureError(f"the Prefect server exited with code {process.returncode}")
            return
        time.sleep(0.25)
    raise InfrastructureError(f"no Prefect server answered at {api_url} within {timeout:.0f} s")


def _answers(api_url: str, timeout: float = 1) -> bool:
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@dataclass(frozen=True)
class BackgroundServer:
    """The record of a background server, kept in ``PREFECT_HOME/sprintflow-server.json``."""

    pid: int
    started: int
    """The process's start time (clock ticks since boot, /proc): tells it from a later process with its pid."""
    port: int
    api_url: str
    log: str

    @property
    def ui_url(self) -> str:
        return self.api_url.removesuffix("/api")


def _start_time(pid: int) -> int | None:
    """A process's start time in clock ticks since boot, or None when no such process runs."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[19]) if fields[0] != b"Z" else None  # a zombie has exited


def background_server(home: Path | None = None) -> BackgroundServer | None:
    """The background server recorded in ``home`` while its process runs; a stale record is removed."""
    record = (home or prefect_home()) / RECORD_FILE
    try:
        server = BackgroundServer(**json.loads(record.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError):
        server = None  # unreadable: treated as stale
    if server is not None and _start_time(server.pid) == server.started:
        return server
    record.unlink(missing_ok=True)
    return None


def ensure_background_server(home: Path | None = None,
                             announce: Callable[[str], object] = print) -> BackgroundServer:
    """The running background server of ``home``, started first when there is none; this process
    is pointed at it (``PREFECT_API_URL``).

    Raises:
        InfrastructureError: it did not start, or it runs but does not answer.
    """
    home = home or prefect_home()
    home.mkdir(parents=True, exist_ok=True)
    with file_lock(home / LOCK_FILE):  # a second command waits here, then reuses what the first started
        server = background_server(home)
        started = server is None
        if server is None:
            server = _start_background(home)
        elif not _answers(server.api_url):
            _wait_or_explain(server)
        use_api(server.api_url)
        if started:
            ensure_docker_host_limit()
            announce(f"sprintflow: started a Prefect server in the background: {server.ui_url} "
                     f"(log {server.log}; stop it with `sprintflow server stop`)")
    return server


def use_api(api_url: str) -> None:
    """Point this process, and what it starts, at ``api_url`` (also when Prefect was imported already)."""
    os.environ["PREFECT_API_URL"] = api_url
    if "prefect.context" in sys.modules:  # Prefect read the environment when it was imported
        from prefect.context import refresh_global_settings_context

        refresh_global_settings_context()


def _start_background(home: Path) -> BackgroundServer:
    host = "127.0.0.1"
    wanted = get_settings().server_port
    port = wanted if _port_free(host, wanted) else _free_port(host)
    log_path = home / LOG_FILE
    with log_path.open("ab") as log:
        process, api_url = start_server(host, port, {"PREFECT_HOME": str(home)}, stdout=log, stderr=log)
    started = _start_time(process.pid)
    server = BackgroundServer(pid=process.pid, started=started or 0, port=port, api_url=api_url,
                              log=str(log_path))
    atomic_write_text(home / RECORD_FILE, json.dumps(asdict(server), indent=2))
    try:
        wait_for_server(api_url, process=process)
    except InfrastructureError as error:
        stop_process(process, timeout=5)
        (home / RECORD_FILE).unlink(missing_ok=True)
        raise InfrastructureError(f"{error}; its log: {log_path}") from None
    return server


def _wait_or_explain(server: BackgroundServer, timeout: float = 30) -> None:
    try:
        wait_for_server(server.api_url, timeout=timeout)
    except InfrastructureError:
        raise InfrastructureError(f"the background Prefect server (pid {server.pid}) does not answer at "
                                  f"{server.api_url}: see {server.log}, or stop it with `sprintflow server stop`"
                                  ) from None


def stop_background_server(home: Path | None = None, timeout: float = 20) -> BackgroundServer | None:
    """Stop the background server recorded in ``home`` (only that process and what it started).

    Returns the server stopped, or None when none was running.
    """
    home = home or prefect_home()
    with file_lock(home / LOCK_FILE):
        server = background_server(home)
        if server is None:
            return None
        stop_group(server.pid, signal.SIGINT, timeout)  # it leads its own process group
        (home / RECORD_FILE).unlink(missing_ok=True)
    return server


def found_server(configured: str | None, local: str) -> str:
    """How a server sprintflow did not start was found, for the line that names it.

    Example:
        >>> found_server(None, "http://127.0.0.1:4200/api").split(" answers")[0]
        'http://127.0.0.1:4200/api: a Prefect server not started by sprintflow'
    """
    if configured:
        where = "PREFECT_API_URL" if os.environ.get("PREFECT_API_URL") else "the active Prefect profile"
        return f"{configured}: configured by {where}"
    return (f"{local}: a Prefect server not started by sprintflow answers on SPRINTFLOW_SERVER_PORT (default 4200); "
            "set PREFECT_API_URL to choose one")


def ensure_prefect_api(announce: Callable[[str], object] = print) -> str:
    """Point Prefect at a server, starting the background one when none is configured or running;
    returns the server's API URL (or where it is configured).

    Call it after the command's input was checked: a bad input should start nothing. A server it
    did not start is named first, with how it was found (:func:`found_server`), so a command never
    uses another's server silently.

    Raises:
        InfrastructureError: the configured server does not answer.
    """
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    configured = configured_api_url()
    if configured:
        if not reachable(configured):
            where = "PREFECT_API_URL" if os.environ.get("PREFECT_API_URL") else "the active Prefect profile"
            raise InfrastructureError(f"the Prefect server at {configured} ({where}) does not answer: start it, "
                                      "or unset PREFECT_API_URL to let sprintflow start its own")
        announce(f"sprintflow: using the Prefect server at {found_server(configured, '')}")
        return configured
    running = background_server()
    local = local_api_url()
    if running is None and answers(local):
        announce(f"sprintflow: using the Prefect server at {found_server(None, local)}")
        use_api(local)
        return local
    return ensure_background_server(announce=announce).api_url
