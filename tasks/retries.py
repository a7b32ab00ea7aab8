"""The one retry rule of every sprintflow task: retry infrastructure, never a real failure."""

from __future__ import annotations

from sprintflow.errors import InfrastructureError
from sprintflow.runs import failure_kind

__all__ = ["retry_on_infrastructure"]


def retry_on_infrastructure(task, task_run, state) -> bool:
    """Prefect ``retry_condition_fn``: retry only when the machinery failed (Docker API, a
    vanished container, an engine that could not start), never for a test that failed.

    Example:
        >>> from prefect import task
        >>> @task(retries=2, retry_condition_fn=retry_on_infrastructure)
        ... def call_engine() -> None: ...
    """
    if failure_kind(state) is not None:
        return False  # a strategy that failed is a verdict, never retried
    try:
        state.result(raise_on_failure=True)
    except InfrastructureError:
        return True
    except Exception:  # noqa: BLE001 - anything else is a real failure: never retried
        return False
    return False
