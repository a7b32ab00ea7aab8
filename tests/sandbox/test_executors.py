"""Both executors for real: isolation, limits, deadlines, output caps, leftovers."""

from __future__ import annotations

import os
import time

import docker
import pytest

from sprintflow.sandbox.docker_host import sweep_containers
from sprintflow.sandbox.executors import CommandSpec, DockerExecutor, LocalExecutor
from sprintflow.schemas import ExecutorConfig


def _managed_containers(run_id: str | None = None) -> int:
    """Our containers; with ``run_id`` only that executor's (other test runs may share the engine)."""
    label = f"sprintflow.run={run_id}" if run_id else "sprintflow.managed=true"
    return len(docker.from_env().containers.list(all=True, filters={"label": label}))


@pytest.fixture
def docker_executor(docker_ready):
    return DockerExecutor(ExecutorConfig(output_limit=20_000))


@pytest.fixture(params=["local", "docker"])
def executor(request):
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
        return DockerExecutor(ExecutorConfig(output_limit=20_000))
    return LocalExecutor(ExecutorConfig(output_limit=20_000))


def test_runs_in_the_workspace_with_shell_semantics(executor, tmp_path):
    (tmp_path / "marker.txt").write_text("here")
    result = executor.run(tmp_path, CommandSpec("cat marker.txt && echo out > made.txt && exit 4", timeout=30))
    assert result.exit_code == 4 and result.stdout == "here"
    assert (tmp_path / "made.txt").read_text() == "out\n"


def test_deadline_kills_everything(executor, tmp_path):
    started = time.monotonic()
    result = executor.run(tmp_path, CommandSpec("sleep 300 & sleep 300", timeout=2))
    assert result.timed_out and time.monotonic() - started < 30
    if executor.kind == "docker":
        assert _managed_containers(executor.run_id) == 0


def test_output_is_capped(executor, tmp_path):
    result = executor.run(tmp_path, CommandSpec("head -c 50000000 /dev/zero | tr '\\0' y; echo END", timeout=60))
    assert result.exit_code == 0 and result.dropped_bytes > 49_000_000
    assert result.stdout.endswith("END\n") and len(result.stdout) < 21_000


def test_secrets_do_not_reach_commands(executor, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "s3cret")
    result = executor.run(tmp_path, CommandSpec("env", timeout=30))
    assert "s3cret" not in result.stdout


def test_container_is_isolated_and_limited(docker_executor, tmp_path):
    os.chown(tmp_path, 1000, 1000)
    script = ("id -u; cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; "
              "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\" "
              "2>&1 | tail -1")
    result = docker_executor.run(tmp_path, CommandSpec(script, timeout=30))
    uid, pids, network = result.stdout.strip().splitlines()
    assert uid == "1000"
    assert pids == "1024"
    assert "unreachable" in network.lower() or "error" in network.lower()


def test_leftover_containers_are_swept(docker_ready):
    client = docker.from_env()
    leftover = client.containers.create("sprintflow-sandbox:latest", command=["true"],
                                        labels={"sprintflow.managed": "true", "sprintflow.deadline": "0",
                                                "sprintflow.run": "leftover-test"})
    in_use = client.containers.create("sprintflow-sandbox:latest", command=["true"],
                                      labels={"sprintflow.managed": "true", "sprintflow.run": "in-use-test",
                                              "sprintflow.deadline": str(int(time.time()) + 600)})
    assert sweep_containers() >= 1
    assert _managed_containers("leftover-test") == 0
    assert _managed_containers("in-use-test") == 1  # created, not yet started: another run's
    in_use.remove(force=True)
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(leftover.id)


def _kill_our_container_soon(run_id: str) -> None:
    """``docker kill`` this executor's container from outside, once it runs."""
    client = docker.from_env()
    for _ in range(300):
        running = client.containers.list(filters={"label": f"sprintflow.run={run_id}"})
        if running:
            running[0].kill()
            return
        time.sleep(0.1)


def test_a_container_killed_from_outside_is_told_apart_from_out_of_memory(docker_executor, tmp_path):
    import threading

    from sprintflow.evaluate.environment import EnvironmentKind, classify_environment

    killer = threading.Thread(target=_kill_our_container_soon, args=(docker_executor.run_id,))
    killer.start()
    result = docker_executor.run(tmp_path, CommandSpec("echo started; sleep 120", timeout=300))
    killer.join()
    assert result.exit_code == 137 and not result.timed_out
    failure = classify_environment(result.stdout + result.stderr, result.exit_code)
    assert failure is not None and failure.kind is EnvironmentKind.killed, result.stderr
    assert "OOMKilled=false" in failure.evidence


def test_a_container_over_its_memory_limit_is_out_of_memory(docker_ready, tmp_path):
    from sprintflow.evaluate.environment import EnvironmentKind, classify_environment

    executor = DockerExecutor(ExecutorConfig(output_limit=20_000, memory="64m"))
    result = executor.run(tmp_path, CommandSpec("python3 -c 'x = bytearray(512 << 20); print(len(x))'", timeout=120))
    assert result.exit_code == 137, result.stderr
    failure = classify_environment(result.stdout + result.stderr, result.exit_code)
    assert failure is not None and failure.kind is EnvironmentKind.out_of_memory, result.stderr


def test_a_timeout_says_whether_output_was_still_coming(executor, tmp_path):
    from sprintflow.evaluate.strategies.base import timeout_cause

    busy = executor.run(tmp_path, CommandSpec("while true; do echo working; sleep 0.2; done", timeout=3))
    silent = executor.run(tmp_path, CommandSpec("echo once; sleep 300", timeout=3))
    assert busy.timed_out and silent.timed_out
    assert timeout_cause(busy, 3).startswith("It was still printing output")
    assert "look for a hang" in timeout_cause(silent, 3) and silent.quiet_s is not None and silent.quiet_s >= 2
    assert "Traceback" not in silent.stderr + busy.stderr  # the kill is ours: nothing of it in the command's output


def test_every_executor_name_but_auto_names_one_registered_executor_and_the_documents_accept_the_same_names():
    from click.testing import CliRunner

    from sprintflow.cli import cli
    from sprintflow.errors import InputError
    from sprintflow.kinds import ExecutorName
    from sprintflow.sandbox.executors import EXECUTORS, resolve_executor
    from sprintflow.schemas import ExecutorRecord

    assert set(EXECUTORS) == set(ExecutorName) - {ExecutorName.AUTO}
    assert all(cls.kind == name for name, cls in EXECUTORS.items())
    assert resolve_executor("local").kind == "local"
    assert ExecutorConfig.model_validate({"kind": "docker"}).kind is ExecutorName.DOCKER
    record = ExecutorRecord.model_validate({"kind": "local", "outputLimit": 1024})
    assert record.model_dump(mode="json")["kind"] == "local"
    with pytest.raises(ValueError):  # a record names where it ran, never a choice
        ExecutorRecord.model_validate({"kind": "auto", "outputLimit": 1024})
    with pytest.raises(InputError, match="use auto, docker, local"):
        resolve_executor("podman")
    for command in ("evaluate", "run"):
        shown = " ".join(CliRunner().invoke(cli, [command, "--help"]).output.split())
        assert "--executor [" + "|".join(ExecutorName) + "]" in shown


# The launchers people write in a contract's commands, each with the exit code it must give on a tiny project
# with one passing test: the same in both executors (a bober-style `python -m ...` was "command not found",
# exit 127, in a sandbox that had only python3, while it passed on the host).
_LAUNCHERS = {
    "python -m compileall -q .": 0,
    "python -m pytest -q test_ok.py": 0,
    "python -m pytest -q test_broken.py": 1,
    "python3 -m pytest -q test_ok.py": 0,
    "pip --version": 0,
    "npx --version": 0,
}


@pytest.fixture(scope="module")
def launcher_verdicts(docker_ready, tmp_path_factory):
    """Every launcher's exit code in each executor, on one project (each container run once)."""
    project = tmp_path_factory.mktemp("launchers")
    (project / "test_ok.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    (project / "test_broken.py").write_text("def test_broken():\n    assert 1 + 1 == 3\n")
    verdicts = {}
    config = ExecutorConfig(output_limit=20_000)
    for executor in (LocalExecutor(config), DockerExecutor(config)):
        for command in _LAUNCHERS:
            outcome = executor.run(project, CommandSpec(command, timeout=120))
            verdicts[executor.kind, command] = (outcome.exit_code, (outcome.stdout + outcome.stderr)[-300:])
    return verdicts


@pytest.mark.parametrize("command", sorted(_LAUNCHERS))
def test_the_commands_people_write_give_the_same_verdict_in_both_executors(launcher_verdicts, command):
    local, docker_run = launcher_verdicts["local", command], launcher_verdicts["docker", command]
    assert local[0] == docker_run[0] == _LAUNCHERS[command], (local, docker_run)
