"""The report flow: files, and table / markdown artifacts whose stable keys keep versions over time."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
from synthetic_history import demo_workspace

from sprintflow.errors import InputError
from sprintflow.flows.report import ARTIFACT_ROWS, report_flow


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return demo_workspace(tmp_path_factory.mktemp("demo"), evaluations=300)


def artifacts(key: str) -> list:
    with get_client(sync_client=True) as client:
        return client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))


def test_each_run_adds_a_version_of_every_table_artifact(prefect_harness, workspace, tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    first = report_flow(str(workspace), str(tmp_path / "a"), key_prefix="report-flow-test")
    second = report_flow(str(workspace), str(tmp_path / "b"), since="2026-05-01", key_prefix="report-flow-test")
    assert Path(first["files"]["html"]).is_file() and Path(second["files"]["csv"]).is_dir()
    assert first["artifacts"][0] == "report-flow-test-summary"
    assert "report-flow-test-flaky-strategies" in first["artifacts"] and len(first["artifacts"]) == 29
    assert {"report-flow-test-flaky-tests", "report-flow-test-engine-comparison", "report-flow-test-engine-pairs",
            "report-flow-test-score-epochs", "report-flow-test-cost-over-time",
            "report-flow-test-criterion-time-to-green"} <= set(first["artifacts"])
    assert first["summary"][0].startswith("sprintflow report: ")

    flaky = artifacts("report-flow-test-flaky-strategies")
    assert len(flaky) == 2 and flaky[0].type == "table"
    rows = [json.loads(a.data) if isinstance(a.data, str) else a.data for a in flaky]
    assert all(r[0]["strategy"] == "playwright" for r in rows)
    full_run = [a for a in artifacts("report-flow-test-criteria-coverage") if "first" in a.description]
    data = json.loads(full_run[0].data) if isinstance(full_run[0].data, str) else full_run[0].data
    assert len(data) == ARTIFACT_ROWS and f"first {ARTIFACT_ROWS} of" in full_run[0].description
    summary = artifacts("report-flow-test-summary")
    assert len(summary) == 2 and {a.type for a in summary} == {"markdown"}
    assert any("since 2026-05-01" in a.data for a in summary) and "first-pass yield" in summary[0].data


def test_a_bad_date_fails_before_any_work(prefect_harness, workspace, tmp_path):
    with pytest.raises(InputError, match="expected a date"):
        report_flow(str(workspace), str(tmp_path), since="soon")
    assert not any(tmp_path.iterdir())


def test_the_cli_runs_the_flow_when_a_server_is_configured(prefect_api_url, workspace, tmp_path):
    env = {**os.environ, "PREFECT_API_URL": prefect_api_url, "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("SPRINTFLOW_HISTORY", None)
    run = subprocess.run([sys.executable, "-m", "sprintflow", "report", str(workspace), "--out", str(tmp_path),
                          "--key-prefix", "report-cli-test"], capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("sprintflow report: ") and (tmp_path / "report.html").is_file()
    assert len(artifacts("report-cli-test-pass-rate-by-strategy")) == 1
