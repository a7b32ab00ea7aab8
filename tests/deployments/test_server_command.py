"""``sprintflow server``: a local Prefect server whose UI finds its API, with the Docker host limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from sprintflow.server import wait_for_server

from .conftest import free_port

pytestmark = pytest.mark.slow


def test_server_starts_with_its_limit_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home")}
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "sprintflow", "server", "--port", str(port),
                                "--docker-slots", "3"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for_server(api_url, timeout=120, process=process)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui-settings", timeout=5) as response:
            assert json.load(response)["api_url"] == api_url  # not the default port 4200
        limit = None
        for _ in range(100):  # the limit is created right after the health check answers
            request = urllib.request.Request(f"{api_url}/v2/concurrency_limits/filter", data=b"{}",
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=5) as response:
                limits = {item["name"]: item["limit"] for item in json.load(response)}
            if (limit := limits.get("docker-host-local")) is not None:
                break
            time.sleep(0.1)
        assert limit == 3
        assert (tmp_path / "home").is_dir()  # SQLite and the server's files live in PREFECT_HOME
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert "limit docker-host-local = 3" in err
    with pytest.raises(OSError):  # the Prefect server it started is gone too
        urllib.request.urlopen(f"{api_url}/health", timeout=1)


def test_limits_subcommand_sets_the_slots(server_env):
    proc = subprocess.run([sys.executable, "-m", "sprintflow", "server", "limits", "--docker-slots", "5",
                           "--docker-host", "tcp://10.1.2.3:2376"], env=server_env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "docker-host-tcp-10-1-2-3-2376: 5"
