"""The DockerExecutor holds a slot of its host's global concurrency limit while a container lives."""

from __future__ import annotations

import sys

import pytest

from sprintflow.orchestration.concurrency import docker_host_limit_name, ensure_docker_host_limit

from .conftest import ROOT

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Each strategy prints when its container's command started and ended (strategies write into the
# evaluation's view, not the workspace); 3 s is long enough that two containers allowed at once do
# overlap, even on a loaded machine.
STAMPED = 'date +%s.%N; sleep 3; date +%s.%N'


def test_limit_names_follow_docker_host():
    assert docker_host_limit_name("") == "docker-host-local"
    assert docker_host_limit_name("unix:///var/run/docker.sock") == "docker-host-local"
    assert docker_host_limit_name("ssh://ci@build-7") == "docker-host-ssh-ci-build-7"


def _evaluate_two_strategies(tmp_path, name: str) -> list[tuple[float, float]]:
    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.orchestration.runs import run_flow

    workspace = make_workspace(tmp_path / name)
    (workspace / "state.txt").write_text("2")
    (workspace / "sprintflow.toml").write_text("".join(
        f'[[evaluator.strategies]]\ntype = "{kind}"\ncommand = "{STAMPED.format(name=kind)}"\ntimeout = 60\n'
        for kind in ("build", "lint")))
    result = run_flow(evaluate_flow, str(workspace), str(workspace / ".sprintflow/contracts/sprint-spec-tiny-1.json"),
                      executor="docker", use_cache=False)
    stamps = [s.output.split() for s in result.strategy_results if s.strategy in ("build", "lint")]
    return sorted((float(start), float(end)) for start, end in stamps)


def test_one_slot_per_host_serialises_containers(docker_ready, use_server, tmp_path):
    try:
        assert ensure_docker_host_limit(1) == ("docker-host-local", 1)
        (_, first_end), (second_start, _) = _evaluate_two_strategies(tmp_path, "one-slot")
        assert second_start >= first_end, "two containers ran at once under a limit of 1"

        ensure_docker_host_limit(2)  # the control: the same two strategies do overlap with two slots
        (_, first_end), (second_start, _) = _evaluate_two_strategies(tmp_path, "two-slots")
        assert second_start < first_end
    finally:
        ensure_docker_host_limit(4)


def _slots_in_use() -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name("docker-host-local").active_slots


def _containers_of(label: str) -> list:
    import docker

    from sprintflow.sandbox.docker_host import OWNER_LABEL

    return [c for c in docker.from_env().containers.list(all=True, filters={"label": "sprintflow.managed=true"})
            if c.labels.get(OWNER_LABEL) == label]


def test_a_sigkilled_runs_container_and_slot_are_taken_back_at_the_next_start(docker_ready, use_server,
                                                                               server_env, tmp_path):
    """Killed mid-command, a run leaves its container and its slot; the next executor to start takes both back
    before it needs the slot (not after the lease expires, not by a manual sweep)."""
    import signal
    import subprocess

    from sprintflow.sandbox import docker_host
    from sprintflow.sandbox.docker_host import owner_label
    from sprintflow.sandbox.executors import CommandSpec, DockerExecutor

    from .conftest import wait_until

    ensure_docker_host_limit(1)
    owner = subprocess.Popen([sys.executable, "-c", (
        "from pathlib import Path; from sprintflow.sandbox.executors import CommandSpec, DockerExecutor; "
        f"DockerExecutor().run(Path({str(tmp_path)!r}), CommandSpec('sleep 300', timeout=300))")],
        env=server_env)
    label = owner_label(owner.pid)
    try:
        wait_until(lambda: _containers_of(label) and _slots_in_use() == 1, 120, "the container and its slot")
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    left = _containers_of(label)
    assert len(left) == 1 and left[0].labels["sprintflow.lease"] and _slots_in_use() == 1

    docker_host._reconciled.clear()  # this test process plays the next sprintflow run to start
    result = DockerExecutor().run(tmp_path, CommandSpec("echo next", timeout=60))
    assert result.exit_code == 0 and result.stdout == "next\n"
    assert _containers_of(label) == [] and _slots_in_use() == 0
