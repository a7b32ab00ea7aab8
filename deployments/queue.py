"""One deployment run per workspace at a time: the others queue, in Prefect's own concurrency.

Every deployment run holds its workspace's global concurrency limit (``workspace-<name>-<hash>``,
one slot, created on first use) for as long as it works there, so a second run on the same
workspace — two schedules, a schedule and a click, an automation — waits for the first to end
instead of colliding with it. While it waits its state says so (``AwaitingConcurrencySlot``, a
Running state whose message names the workspace: one of the state names the Prefect UI lists, so
the deployment page shows the waiting run), and it goes on as ``Running`` when its turn comes.
The limits show on the server's Concurrency page; a lease whose holder died expires
within a minute (:mod:`sprintflow.orchestration.concurrency`).

A sprintflow command at a terminal holds the workspace's file lock instead
(:func:`sprintflow.io.locks.workspace_lock`), and refuses, in one line, to run beside anything;
a deployment run that meets such a lock waits for it too.
"""

from __future__ import annotations

import hashlib
import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from prefect.runtime import flow_run

from sprintflow.io.locks import workspace_lock
from sprintflow.orchestration.concurrency import ensure_limit, held_slot

__all__ = ["AWAITING_WORKSPACE", "held_lock", "workspace_limit_name", "workspace_turn"]

AWAITING_WORKSPACE = "AwaitingConcurrencySlot"


def workspace_limit_name(folder: Path, host: str | None = None) -> str:
    """The global concurrency limit of the workspace ``folder`` on this machine (``host``).

    Readable (the folder's name) and unique (a hash of the host and the whole path): two
    machines' folders of the same path are two workspaces.

    Example:
        >>> workspace_limit_name(Path("/srv/apps/todo api"), host="ci-1")
        'workspace-todo-api-b4a5c2d9a266'
    """
    where = f"{host or socket.gethostname()}:{folder}"
    name = re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-")[:40] or "root"
    return f"workspace-{name}-{hashlib.sha256(where.encode()).hexdigest()[:12]}"


@contextmanager
def workspace_turn(folder: Path) -> Iterator[None]:
    """Wait for this run's turn on the workspace ``folder`` (an absolute path), and hold it for the block.

    The turn is the workspace's concurrency slot; its file lock is taken after (:func:`held_lock`),
    once the workspace is there: a git workspace is checked out during the turn.
    """
    name = workspace_limit_name(folder)
    ensure_limit(name, 1)
    holder = None
    if flow_run.id:
        from prefect.client.schemas.objects import ConcurrencyLeaseHolder

        holder = ConcurrencyLeaseHolder(type="flow_run", id=flow_run.id)
    waited: list[bool] = []

    def wait() -> None:
        waited.append(True)
        _say(AWAITING_WORKSPACE, f"Waiting for {folder}: another run of a deployment is working on it "
                                 f"(concurrency limit {name})")

    with held_slot(name, holder=holder, on_wait=wait):
        if waited:
            _say("Running", f"Its turn on {folder} came")
        yield


@contextmanager
def held_lock(workspace: Path) -> Iterator[None]:
    """Hold the workspace's file lock for the block, waiting (and saying so) while a terminal's run holds it."""
    waited: list[bool] = []

    def wait(holder: str) -> None:
        waited.append(True)
        _say(AWAITING_WORKSPACE, f"Waiting for {workspace}: {holder} is working on it")

    with workspace_lock(workspace, on_busy=wait):
        if waited:
            _say("Running", f"Its turn on {workspace} came")
        yield


def _say(name: str, message: str) -> None:
    """Set this flow run's Running state to ``name`` with ``message`` (the UI's badge and its line), and log it."""
    from prefect.logging import get_run_logger

    get_run_logger().info(message)
    if not flow_run.id:
        return
    from prefect.client.orchestration import get_client
    from prefect.states import Running

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run.id, Running(name=name, message=message))
