"""Which Prefect server a command uses, said first: one sprintflow did not start is named with how it was found."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from click.testing import CliRunner

from sprintflow.cli import cli
from sprintflow.orchestration.server import ensure_prefect_api


class _Health(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200 if self.path == "/api/health" else 404)
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def nothing_configured(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "home"))  # no background server recorded there
    monkeypatch.setenv("PREFECT_PROFILES_PATH", str(tmp_path / "profiles.toml"))
    monkeypatch.setenv("PREFECT_API_URL", "")


@pytest.fixture
def foreign_server(nothing_configured, monkeypatch) -> Iterator[str]:
    """A server on SPRINTFLOW_SERVER_PORT that answers Prefect's health check, started by someone else."""
    server = HTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("SPRINTFLOW_SERVER_PORT", str(server.server_port))
    yield f"http://127.0.0.1:{server.server_port}/api"
    server.shutdown()
    monkeypatch.undo()  # the environment as it was, and Prefect's settings read from it again
    if "prefect.context" in sys.modules:
        from prefect.context import refresh_global_settings_context

        refresh_global_settings_context()


def test_a_server_on_the_port_that_sprintflow_did_not_start_is_named_first(foreign_server, monkeypatch):
    said: list[str] = []
    assert ensure_prefect_api(announce=said.append) == foreign_server
    assert said == [f"sprintflow: using the Prefect server at {foreign_server}: a Prefect server not started by "
                    "sprintflow answers on SPRINTFLOW_SERVER_PORT (default 4200); set PREFECT_API_URL to choose one"]
    monkeypatch.setenv("PREFECT_API_URL", "")  # as a new command finds it (the call pointed this process there)
    status = CliRunner().invoke(cli, ["server", "status"])
    assert status.exit_code == 1  # no background server of its own
    assert status.output.splitlines()[0].startswith(f"commands use {foreign_server}: a Prefect server not started")


def test_a_configured_server_is_named_with_where_it_is_configured(nothing_configured, monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    status = CliRunner().invoke(cli, ["server", "status"])
    assert status.output.splitlines()[0] == "commands use http://127.0.0.1:9/api: configured by PREFECT_API_URL"
    assert "SPRINTFLOW_SERVER_PORT" in CliRunner().invoke(cli, ["server", "status", "--help"]).output
