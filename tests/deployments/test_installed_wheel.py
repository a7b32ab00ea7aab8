"""A fresh clone, built and installed as a wheel (not editable), serves the deployments it ships.

The entry flows, prefect.yaml and the automations are package data: serving needs
no checkout, and runs resolve relative paths against where serve was started.
"""

from __future__ import annotations

import site
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

from .conftest import ROOT, wait_until

sys.path.insert(0, str(ROOT))
from tests.fixtures.sprint.make_workspace import make_workspace

FINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> str:
    """The ``sprintflow`` script of a venv holding only the wheel built from a fresh clone.

    The venv sees this interpreter's packages (prefect, pandas …) but installs sprintflow
    itself from the wheel, which comes first on its path.
    """
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(work / "clone")], check=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(work / "dist"), str(work / "clone")], check=True)
    venv.create(work / "venv", system_site_packages=True, with_pip=True)
    _see_these_packages(work / "venv")
    [wheel] = (work / "dist").glob("sprintflow-*.whl")
    subprocess.run([str(work / "venv/bin/python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True)
    return str(work / "venv")


def _see_these_packages(new_venv: Path) -> None:
    """Let ``new_venv`` import what this interpreter imports, from a venv too.

    ``system_site_packages`` shares the base interpreter's packages, which in a venv are not this
    one's (prefect would be missing). A path file adds this interpreter's site folders after the new
    venv's own, so the wheel installed there still comes first; the folders' own path files (an
    editable sprintflow) are not read through it.
    """
    if sys.prefix == sys.base_prefix:
        return
    [site_folder] = new_venv.glob("lib/python*/site-packages")
    (site_folder / "outer-venv.pth").write_text("".join(f"{folder}\n" for folder in site.getsitepackages()))


def test_the_wheel_carries_the_deployment_files(installed, tmp_path):
    where = subprocess.run([f"{installed}/bin/python", "-c",
                            "import sprintflow.deployments.serving as s; "
                            "print(s.PREFECT_FILE); print(s.AUTOMATIONS_FILE)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert all(path.startswith(installed) and "site-packages/sprintflow/deployments/" in path for path in where)


def test_an_installed_wheel_serves_and_runs_a_deployment(installed, server_env, use_server, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.deployments import run_deployment
    from prefect.exceptions import ObjectNotFound

    workspace = make_workspace(tmp_path / "ws")
    log = (tmp_path / "serve.log").open("wb")
    serve = subprocess.Popen([f"{installed}/bin/sprintflow", "serve", "--only", "nightly-evaluate"],
                             env={**server_env, "PREFECT_RUNNER_POLL_FREQUENCY": "1",
                                  "PREFECT_LOGGING_LEVEL": "INFO"},  # the verdict line is INFO
                             cwd=tmp_path,
                             stdout=log, stderr=subprocess.STDOUT)

    def served(client):
        assert serve.poll() is None, (tmp_path / "serve.log").read_text()
        try:
            return client.read_deployment_by_name("evaluate-workspace/nightly-evaluate")
        except ObjectNotFound:
            return None

    try:
        with get_client(sync_client=True) as client:
            deployment = wait_until(lambda: served(client), 90, "the served deployment")
            assert deployment.entrypoint == "sprintflow.deployments.flows.evaluate_workspace"
            run = run_deployment(deployment.id, timeout=0, parameters={"params": {
                "workspace": "ws", "contract": ".sprintflow/contracts/sprint-spec-tiny-1.json",
                "executor": "local"}})
            run = wait_until(lambda: (r := client.read_flow_run(run.id)).state.type.value in FINAL and r, 120,
                             "the evaluation to finish")

            def logs() -> str:
                return "\n".join(entry.message for entry in client.read_logs(log_filter=LogFilter(
                    flow_run_id=LogFilterFlowRunId(any_=[run.id]))))

            wait_until(lambda: "Finished in state Failed('ContractFailed (code): " in logs(), 60, "the run's last logs")
            time.sleep(3)  # anything the run's process logs after its state (it would be a traceback)
            text = logs()
        # The tiny workspace has no state.txt yet: its contract fails, and the run says so.
        assert (run.state.type.value, run.state.name) == ("FAILED", "Failed"), \
            (tmp_path / "serve.log").read_text()[-3000:]
        assert "FAIL sprint-spec-tiny-1 (iteration 1): " in text
        assert "Traceback" not in text and "Engine execution exited" not in text  # a verdict, not a crash
        # Relative to where serve started; the EvalResult is written in the workspace.
        assert list((workspace / ".sprintflow" / "evals").glob("eval-sprint-spec-tiny-1-1-*.json"))
    finally:
        serve.terminate()
        serve.wait(timeout=30)
        log.close()
