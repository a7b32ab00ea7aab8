"""The evaluate fan-out on a local Dask cluster (prefect-dask) against a real server."""

from __future__ import annotations

import contextvars
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .conftest import ROOT, deployed_flows

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

pytest.importorskip("prefect_dask")  # in the dev extra, so CI always runs this

pytestmark = pytest.mark.slow


def _launcher(marker: str) -> int | None:
    """The Python process that started the (contained) command whose command line holds ``marker``."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                continue
            while pid != "1":
                pid = re.search(r"PPid:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())[1]
                if b"python" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return int(pid)
        except OSError:
            continue
    return None


def test_strategies_run_in_dask_worker_processes(use_server, tmp_path, monkeypatch):
    deployed = deployed_flows()
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("2")
    # Each strategy's command runs long enough to find the process that started it: a Dask worker, not this one.
    markers = {kind: f"dask-runner-{kind}-{os.getpid()}" for kind in ("build", "lint")}
    (workspace / "sprintflow.toml").write_text("".join(
        f'[[evaluator.strategies]]\ntype = "{kind}"\ncommand = "sleep 3 # {marker}"\ntimeout = 60\n'
        for kind, marker in markers.items()))
    monkeypatch.setenv("SPRINTFLOW_TASK_RUNNER", "dask")  # the switch a deployment's worker would set

    with ThreadPoolExecutor(max_workers=1) as pool:
        # In this test's settings context (use_server's server): a new thread would start without it.
        evaluation = pool.submit(contextvars.copy_context().run, deployed.evaluate_workspace, deployed.EvaluateParams(
            workspace=str(workspace), contract=".sprintflow/contracts/sprint-spec-tiny-1.json", executor="local",
            dask_workers=2))
        launchers: set[int] = set()
        while not evaluation.done():
            launchers |= {pid for marker in markers.values() if (pid := _launcher(marker))}
            time.sleep(0.1)
        result = evaluation.result()

    assert result["overallResult"] == "pass"
    assert launchers and os.getpid() not in launchers


def test_the_task_runner_is_chosen_by_parameter_or_environment(monkeypatch):
    deployed = deployed_flows()
    monkeypatch.delenv("SPRINTFLOW_TASK_RUNNER", raising=False)
    assert type(deployed.task_runner_for(None)).__name__ == "ThreadPoolTaskRunner"
    assert type(deployed.task_runner_for("dask")).__name__ == "DaskTaskRunner"
    assert deployed.task_runner_for("dask", address="tcp://10.0.0.9:8786").address == "tcp://10.0.0.9:8786"
    monkeypatch.setenv("SPRINTFLOW_TASK_RUNNER", "dask")
    assert type(deployed.task_runner_for(None)).__name__ == "DaskTaskRunner"
