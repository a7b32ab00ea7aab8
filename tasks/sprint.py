"""Tasks of the sprint flow: one generator call, one tester step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.evaluate.executors import resolve_executor
from sprintflow.schemas import ProjectConfig, SprintContract
from sprintflow.sprint.engines import engine_env, run_engine
from sprintflow.testing.tester import load_test_run, run_tester_step

__all__ = ["RAW_KEPT", "generate_task", "tester_task"]

RAW_KEPT = 20_000
"""Characters of the generator's stdout and stderr kept in the iteration journal."""


@task(cache_policy=NO_CACHE, task_run_name="generate-{contract_id}-{iteration}")
def generate_task(workspace: Path, contract_id: str, iteration: int, engine: str, prompt: str,
                  timeout: float) -> dict[str, Any]:
    """One generator call; its failure is a failed step with the raw output kept, never a crash."""
    env = engine_env({"SPRINTFLOW_CONTRACT_ID": contract_id, "SPRINTFLOW_ITERATION": str(iteration),
                      "SPRINTFLOW_WORKSPACE": str(workspace)})
    reply = run_engine(engine, prompt, cwd=workspace, timeout=timeout, env=env)
    return {"ok": reply.ok, "reason": reply.reason, "exitCode": reply.exit_code,
            "durationMs": round(reply.duration_s * 1000),
            "inputTokens": reply.input_tokens, "outputTokens": reply.output_tokens, "costUsd": reply.cost_usd,
            "raw": reply.raw[-RAW_KEPT:], "stderr": reply.stderr[-RAW_KEPT:]}


@task(cache_policy=NO_CACHE, task_run_name="test-{contract.contract_id}-{iteration}")
def tester_task(workspace: Path, contract: SprintContract, iteration: int, project: ProjectConfig,
                mode: str, engine: str, executor: str, run_id: str, previous_run_id: str | None) -> dict[str, Any]:
    """One sandboxed tester step; returns its journal entry."""
    previous = load_test_run(workspace, previous_run_id) if previous_run_id else None
    step = run_tester_step(workspace, contract, project, mode, engine,
                           resolve_executor(executor, project.executor), run_id=run_id,
                           previous_run=previous)
    return step.journal()
