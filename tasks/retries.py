"""The one retry rule of every sprintflow task: retry infrastructure, never a real failure."""

from __future__ import annotations

from sprintflow.errors import InfrastructureError

__all__ = ["retry_on_infrastructure"]


def retry_on_infrastructure(task, task_run, state) -> bool:
    """Prefect ``retry_condition_fn``: retry only when the machinery failed (Docker API, a
    vanished container, an engine that could not start), never for a test that failed.

    Example:
        >>> from prefect import task
        >>> @task(retries=2, retry_condition_fn=retry_on_infrastructure)
        ... def call_engine() -> None: ...
    """
    # A verdict (a strategy that failed) is a Failed state whose data is the judged value, an error
    # its exception: only the machinery's is worth another try.
    try:
        return isinstance(state.result(raise_on_failure=False), InfrastructureError)
    except Exception:  # noqa: BLE001 - a result that cannot be read is no reason to run again
        return False
