"""The judge's warm tool caches in real evaluations: a warm run judges exactly as a cold one does."""

from __future__ import annotations

import logging
import subprocess

import pytest

from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.orchestration.runs import run_flow
from sprintflow.schemas import EvalResult

CONTRACT = ".sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"


def _evaluate(workspace, executor) -> EvalResult:
    return run_flow(evaluate_flow, str(workspace), str(workspace / CONTRACT), executor=executor)


def _verdicts(result: EvalResult) -> list[tuple]:
    """Everything an EvalResult says about the tree, durations (and the run's own ids) aside."""
    strategies = [(s.strategy, s.result.value, s.exit_code, s.error_count, s.flaky,
                   [d.model_dump() for d in s.diagnostics],
                   s.details if s.strategy in ("typecheck", "lint") else None) for s in result.strategy_results]
    criteria = [(c.criterion_id, c.result.value) for c in result.criteria_results]
    feedback = [(f.priority.value, f.file, f.line, f.description) for f in result.generator_feedback]
    return [result.overall_result, strategies, criteria, feedback]


@pytest.fixture(params=["local", "docker"])
def executor(request):
    if request.param == "docker":
        request.getfixturevalue("docker_ready")
    return request.param


def test_a_warm_cache_judges_a_broken_tree_as_a_cold_run_does(prefect_harness, workspace_factory, executor,
                                                              caplog):
    caplog.set_level(logging.INFO, logger="sprintflow.judge.caches")
    warm = workspace_factory("python-api")
    assert _evaluate(warm, executor).overall_result == "pass"  # the judged run that keeps mypy's cache
    subprocess.run(["patch", "-p1", "-i", "broken.patch"], cwd=warm, check=True, capture_output=True)
    caplog.clear()
    warm_result = _evaluate(warm, executor)
    assert "the run starts warm" in caplog.text  # the typecheck ran on the kept cache
    cold_result = _evaluate(workspace_factory("python-api", broken=True), executor)
    assert warm_result.overall_result == "fail"
    typecheck = next(s for s in warm_result.strategy_results if s.strategy == "typecheck")
    assert typecheck.result.value == "fail" and typecheck.diagnostics
    assert _verdicts(warm_result) == _verdicts(cold_result)
