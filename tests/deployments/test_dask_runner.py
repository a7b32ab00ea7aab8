"""The evaluate fan-out on a local Dask cluster (prefect-dask) against a real server."""

from __future__ import annotations

import os
import sys

import pytest

from .conftest import ROOT, deployed_flows

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytest.importorskip("prefect_dask")  # in the dev extra, so CI always runs this

pytestmark = pytest.mark.slow


def test_strategies_run_in_dask_worker_processes(use_server, tmp_path, monkeypatch):
    deployed = deployed_flows()
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    # Each strategy records the process that ran its command: a Dask worker, not this one.
    (workspace / "sprintflow.toml").write_text("".join(
        f'[[evaluator.strategies]]\ntype = "{kind}"\ncommand = "echo $PPID > .{kind}-pid"\ntimeout = 60\n'
        for kind in ("build", "lint")))
    monkeypatch.setenv("SPRINTFLOW_TASK_RUNNER", "dask")  # the switch a deployment's worker would set

    result = deployed.evaluate_workspace(deployed.EvaluateParams(
        workspace=str(workspace), contract=".sprintflow/contracts/sprint-spec-tiny-1.json", executor="local",
        dask_workers=2))

    assert result["overallResult"] == "pass"
    runners = {int((workspace / f".{kind}-pid").read_text()) for kind in ("build", "lint")}
    assert os.getpid() not in runners


def test_the_task_runner_is_chosen_by_parameter_or_environment(monkeypatch):
    deployed = deployed_flows()
    monkeypatch.delenv("SPRINTFLOW_TASK_RUNNER", raising=False)
    assert type(deployed.task_runner_for(None)).__name__ == "ThreadPoolTaskRunner"
    assert type(deployed.task_runner_for("dask")).__name__ == "DaskTaskRunner"
    assert deployed.task_runner_for("dask", address="tcp://10.0.0.9:8786").address == "tcp://10.0.0.9:8786"
    monkeypatch.setenv("SPRINTFLOW_TASK_RUNNER", "dask")
    assert type(deployed.task_runner_for(None)).__name__ == "DaskTaskRunner"
