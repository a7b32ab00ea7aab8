"""The DockerExecutor holds a slot of its host's global concurrency limit while a container lives."""

from __future__ import annotations

import sys

import pytest

from sprintflow.evaluate.executors import docker_host_limit_name
from sprintflow.server import ensure_docker_host_limit

from .conftest import ROOT

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# Each strategy records when its container's command started and ended, in the mounted workspace;
# 3 s is long enough that two containers allowed at once do overlap, even on a loaded machine.
STAMPED = 'date +%s.%N > .{name}-start; sleep 3; date +%s.%N > .{name}-end'


def test_limit_names_follow_docker_host():
    assert docker_host_limit_name("") == "docker-host-local"
    assert docker_host_limit_name("unix:///var/run/docker.sock") == "docker-host-local"
    assert docker_host_limit_name("ssh://ci@build-7") == "docker-host-ssh-ci-build-7"


def _evaluate_two_strategies(tmp_path, name: str) -> list[tuple[float, float]]:
    from sprintflow.flows.evaluate import evaluate_flow

    workspace = make_workspace(tmp_path / name)
    (workspace / "state.txt").write_text("2")
    (workspace / "sprintflow.toml").write_text("".join(
        f'[[evaluator.strategies]]\ntype = "{kind}"\ncommand = "{STAMPED.format(name=kind)}"\ntimeout = 60\n'
        for kind in ("build", "lint")))
    evaluate_flow(str(workspace), str(workspace / ".sprintflow/contracts/sprint-spec-tiny-1.json"),
                  executor="docker", use_cache=False)
    return sorted((float((workspace / f".{kind}-start").read_text()), float((workspace / f".{kind}-end").read_text()))
                  for kind in ("build", "lint"))


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
