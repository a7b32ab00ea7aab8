"""Task of the plan flow: one planner engine call."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.engines import EngineReply
from sprintflow.planning.planner import call_planner

__all__ = ["ask_planner"]


@task(name="ask-planner", cache_policy=NO_CACHE, persist_result=False)
def ask_planner(engine: str, prompt: str, workspace: Path, timeout: float) -> EngineReply:
    """One planner call; a failed call is a reply with ``ok=False``, never an exception."""
    return call_planner(engine, prompt, workspace, timeout)
