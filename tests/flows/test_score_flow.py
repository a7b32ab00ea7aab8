"""The scoring flow for real: Prefect test harness, the bundled example, stub engines as subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from sprintflow.errors import DocumentError, InfrastructureError
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas.scoring import EvalCase
from sprintflow.scoring.prepare import prepare_run
from sprintflow.scoring.runs import score_skill

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scoring"
ENGINE = f"exec {sys.executable} stub_engine.py"


@pytest.fixture()
def example(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "scoring", ignore=shutil.ignore_patterns(".sprintflow")))


def task_run_count(state) -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_task_run(state.state_details.task_run_id).run_count


def test_the_flow_gives_the_same_report_as_the_plain_path(prefect_harness, example):
    from sprintflow.flows.score import score_flow

    report = score_flow("triage", root=str(example), prompt="prompts/triage-old.md", engine=ENGINE,
                        concurrency=3)
    plain = score_skill(prepare_run("triage", root=example, prompt="prompts/triage-old.md", engine=ENGINE),
                        persist=False)
    assert report.to_json(timings=False) == plain.to_json(timings=False)
    assert (report.passed, report.failed_ids) == (7, ["pr-107"])
    assert report.timing.mode == "flow" and report.timing.concurrency == 3
    rows = [json.loads(line) for line in WorkspaceLayout(example).scores_file.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["mode"] == "flow" and rows[0]["failedIds"] == ["pr-107"]
    saved = example / rows[0]["report"]
    assert json.loads(saved.read_text())["cases"] == json.loads(report.to_json())["cases"]


def test_the_flow_runs_epochs_like_the_plain_path(prefect_harness, example):
    from sprintflow.flows.score import score_flow

    report = score_flow("triage", root=str(example), prompt="prompts/triage-old.md", engine=ENGINE,
                        concurrency=2, epochs=3, persist=False)
    plain = score_skill(prepare_run("triage", root=example, prompt="prompts/triage-old.md", engine=ENGINE),
                        persist=False, epochs=3)
    assert report.to_json(timings=False) == plain.to_json(timings=False)
    assert (report.epochs, report.pass_at_1, report.failed_ids) == (3, 7 / 8, ["pr-107"])
    assert all(len(case.epochs) == 3 for case in report.cases)


def test_the_report_is_published_as_a_table_artifact(prefect_harness, example):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from sprintflow.flows.score import score_flow

    score_flow("triage", root=str(example), engine=ENGINE, persist=False)
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["score-triage"])))
    latest = max(artifacts, key=lambda a: a.created)
    assert latest.type == "table" and "8/8 passed" in latest.description
    table = json.loads(latest.data) if isinstance(latest.data, str) else latest.data
    assert [row["id"] for row in table] == [f"pr-{n}" for n in range(101, 109)]
    assert not (example / ".sprintflow").exists()


def test_only_infrastructure_errors_are_retried(prefect_harness, example):
    from prefect import flow, task

    from sprintflow.flows.score import score_batch
    from sprintflow.tasks.retries import retry_on_infrastructure

    run = prepare_run("triage", root=example, engine=ENGINE)
    vanished = replace(run, root=example / "vanished")
    case = EvalCase(id="x", input="Files changed:\n- README.md (+1 -1)\n", expected={"escalate": False})

    @task(retries=2, retry_delay_seconds=0, retry_condition_fn=retry_on_infrastructure)
    def verdict_failure() -> None:
        raise ValueError("a real failure is never retried")

    @flow
    def attempts():
        infra = score_batch.with_options(retry_delay_seconds=0)(vanished, [case], return_state=True)
        real = verdict_failure(return_state=True)
        fine = score_batch(run, [case], return_state=True)
        return infra, real, fine

    infra, real, fine = attempts()
    assert infra.is_failed() and task_run_count(infra) == 3
    with pytest.raises(InfrastructureError, match="could not start"):
        infra.result()
    assert real.is_failed() and task_run_count(real) == 1
    assert fine.is_completed() and task_run_count(fine) == 1 and fine.result()[0].passed


def test_bad_input_fails_the_flow_before_any_engine_call(prefect_harness, example):
    from sprintflow.flows.score import score_flow

    (example / "evals" / "triage" / "cases.jsonl").write_text('{"id": 1, "input": "x"}\n')
    with pytest.raises(DocumentError, match=r"cases.jsonl:1: expected: missing"):
        score_flow("triage", root=str(example), engine=ENGINE)


def test_compare_flow_runs_both_prompts_on_the_same_cases(prefect_harness, example):
    from sprintflow.flows.score import compare_flow

    comparison = compare_flow("triage", "prompts/triage-old.md", "prompts/triage.md", root=str(example),
                              engine=ENGINE, concurrency=4)
    assert (comparison.a.passed, comparison.b.passed) == (7, 8)
    assert [d.id for d in comparison.differences] == ["pr-107"]
    assert comparison.mcnemar.verdict == "no-significant-difference" and comparison.mcnemar.p_value == 1.0
    assert comparison.timing.mode == "flow"
    rows = [json.loads(line) for line in WorkspaceLayout(example).scores_file.read_text().splitlines()]
    assert [r["promptFile"] for r in rows] == ["prompts/triage-old.md", "prompts/triage.md"]


def test_the_cli_uses_the_flow_when_a_server_is_configured(prefect_harness, prefect_api_url, example):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SPRINTFLOW_")}
    env["PREFECT_API_URL"] = prefect_api_url
    run = subprocess.run([sys.executable, "-m", "sprintflow", "score", "triage", "--engine", ENGINE,
                          "--json", "--timings"], cwd=example, capture_output=True, text=True, env=env,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)  # stdout is the JSON object and nothing else
    assert report["timing"]["mode"] == "flow" and report["score"] == 1.0
    assert "Traceback" not in run.stderr
