"""``sprintflow server``: a local Prefect server whose UI finds its API, with the Docker host limit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from sprintflow.orchestration.server import wait_for_server

from .conftest import ROOT, free_port

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace  # noqa: E402

pytestmark = pytest.mark.slow


def test_server_starts_with_its_limit_and_stops_on_ctrl_c(tmp_path):
    port = free_port()
    api_url = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home")}
    env.pop("PREFECT_API_URL", None)
    # Its output goes to files, not pipes: a pipe stays open while anything that inherited it lives, and the
    # test is of the command's exit (what it started is checked below, by the API going away).
    out, errors = (tmp_path / "out.txt").open("w"), (tmp_path / "err.txt").open("w")
    process = subprocess.Popen([sys.executable, "-m", "sprintflow", "server", "--port", str(port),
                                "--docker-slots", "3"], env=env, stdout=out, stderr=errors, text=True)
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
        # A hang guard, not a speed check: the server is given 20 s to close its database before SIGKILL,
        # and on a loaded machine that grace and the command's own exit took more than 30 s.
        process.wait(timeout=90)
        out.close()
        errors.close()
    err = (tmp_path / "err.txt").read_text()
    assert "limit docker-host-local = 3" in err
    with pytest.raises(OSError):  # the Prefect server it started is gone too
        urllib.request.urlopen(f"{api_url}/health", timeout=1)


def test_limits_subcommand_sets_the_slots(server_env):
    proc = subprocess.run([sys.executable, "-m", "sprintflow", "server", "limits", "--docker-slots", "5",
                           "--docker-host", "tcp://10.1.2.3:2376"], env=server_env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "docker-host-tcp-10-1-2-3-2376: 5"


def _sprintflow(*args: str, env: dict, timeout: float = 180, python: tuple[str, ...] = ()
                ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *python, "-m", "sprintflow", *args], env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_busy_port_is_a_clear_error_before_any_success_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home")}
        run = _sprintflow("server", "--port", str(port), env=env, timeout=60)
    assert run.returncode == 3, run.stderr
    assert run.stderr == f"error: port {port} on 127.0.0.1 is in use by another process: choose another with --port\n"
    assert not (tmp_path / "home").exists()  # nothing started


def test_sigterm_during_an_import_still_exits_130(tmp_path):
    """SIGTERM can land while an import creates classes from ``exec()`` of a string (as the
    server command imports Prefect); CPython must not turn the exit into a death by SIGINT."""
    (tmp_path / "terminated_in_exec.py").write_text(
        "import os, signal, sys\n"
        "from sprintflow.cli.server import Terminated, _terminate\n"
        "signal.signal(signal.SIGTERM, _terminate)\n"
        "try:\n"
        "    exec('os.kill(os.getpid(), signal.SIGTERM)\\nfor _ in range(10**6): pass')\n"
        "except Terminated:\n"
        "    sys.exit(130)\n")
    run = subprocess.run([sys.executable, "-m", "terminated_in_exec"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 130, run.stderr


def test_sigterm_swallowed_by_library_code_still_stops_the_server(tmp_path):
    """Prefect's client, busy setting the Docker host limit, once caught the Terminated a SIGTERM raised and
    went on; the command then waited on a server nobody would stop. Here code standing in for that client
    swallows the signal's exception, as it did: the command must still stop its server and exit 130."""
    (tmp_path / "swallowing_client.py").write_text(
        "import os, signal\n"
        "import sprintflow.cli.server as command\n"
        "real = command.ensure_docker_host_limit\n"
        "def swallowing(*args, **kwargs):\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGTERM)\n"
        "        for _ in range(10**6): pass\n"
        "    except BaseException:\n"
        "        pass\n"
        "    return real(*args, **kwargs)\n"
        "command.ensure_docker_host_limit = swallowing\n"
        "from sprintflow.cli import main\n"
        "main()\n")
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home"), "PYTHONPATH": f"{tmp_path}:{ROOT}"}
    env.pop("PREFECT_API_URL", None)
    run = subprocess.run([sys.executable, "-m", "swallowing_client", "server", "--port", str(port)], env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 130, run.stderr
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1)


def test_sigterm_stops_the_whole_server(tmp_path):
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home")}
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "sprintflow", "server", "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_server(f"http://127.0.0.1:{port}/api", timeout=120, process=process)
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        assert children  # the Prefect server runs in a child process
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 130
    finally:
        if process.poll() is None:
            process.kill()
    assert not any(_alive(int(pid)) for pid in children)
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=1)


@pytest.fixture
def background_home(tmp_path):
    """A PREFECT_HOME of its own and a free port: the background server started there is stopped afterwards."""
    from sprintflow.orchestration.server import stop_background_server

    home = tmp_path / "home"
    env = {**os.environ, "PREFECT_HOME": str(home), "SPRINTFLOW_SERVER_PORT": str(free_port()),
           "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    try:
        yield home, env
    finally:
        stop_background_server(home)


def test_the_first_command_starts_a_background_server_later_ones_reuse_it_and_stop_ends_it(
        background_home, tmp_path):
    home, env = background_home
    port = env["SPRINTFLOW_SERVER_PORT"]
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    contract = ".sprintflow/contracts/sprint-spec-tiny-1.json"  # relative to the workspace

    first = _sprintflow("evaluate", str(workspace), "--contract", contract, "--executor", "local", env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"started a Prefect server in the background: http://127.0.0.1:{port} (log {home}/" in first.stderr
    record = json.loads((home / "sprintflow-server.json").read_text())
    assert record["api_url"] == f"http://127.0.0.1:{port}/api" and _alive(record["pid"])
    assert (home / "sprintflow-server.log").is_file()

    again = _sprintflow("evaluate", str(workspace), "--contract", contract, "--executor", "local", env=env,
                        python=("-X", "importtime"))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "started a Prefect server" not in again.stderr  # reused
    assert f"sprintflow: flow run http://127.0.0.1:{port}/runs/flow-run/" in again.stderr
    # A cached local evaluation imports neither pandas nor FastAPI (half a second of every command;
    # benchmarks/cli.py), nor pydantic.v1 (a flow's parameter schema, built only when asked for), nor
    # what only Docker sandboxes or tests that ran need.
    imported = {line.rsplit("|", 1)[-1].strip() for line in again.stderr.splitlines()
                if line.startswith("import time:")}
    assert "prefect.flow_engine" in imported
    assert not {"pandas", "fastapi", "pydantic.v1", "nodesemver", "sprintflow.testruns.bugs"} & imported
    assert json.loads((home / "sprintflow-server.json").read_text())["pid"] == record["pid"]

    status = _sprintflow("server", "status", env=env)
    assert status.returncode == 0 and f"pid {record['pid']}" in status.stdout
    stop = _sprintflow("server", "stop", env=env)
    assert stop.returncode == 0 and f"stopped the background server http://127.0.0.1:{port}" in stop.stderr
    assert not _alive(record["pid"]) and not (home / "sprintflow-server.json").exists()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{record['api_url']}/health", timeout=1)


def test_a_stale_record_is_replaced_and_stop_never_touches_a_process_it_did_not_start(background_home):
    home, env = background_home
    home.mkdir()
    stranger = subprocess.Popen(["sleep", "60"])  # alive, with a pid a stale record could name
    try:
        record = {"pid": stranger.pid, "started": 1, "port": 1, "api_url": "http://127.0.0.1:1/api",
                  "log": str(home / "sprintflow-server.log")}
        (home / "sprintflow-server.json").write_text(json.dumps(record))
        stop = _sprintflow("server", "stop", env=env)
        assert stop.returncode == 0 and "no background server runs" in stop.stderr
        assert stranger.poll() is None  # another process's pid: left alone
        assert not (home / "sprintflow-server.json").exists()
        (home / "sprintflow-server.json").write_text("{not json")
        assert _sprintflow("server", "status", env=env).returncode == 1
    finally:
        stranger.kill()
        stranger.wait()
