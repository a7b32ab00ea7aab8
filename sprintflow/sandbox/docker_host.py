"""One Docker host shared by many evaluations: its concurrency slots, and what killed runs leave.

Every container sprintflow starts carries labels: its owner (host name, pid and the pid's start
time, so a reused pid is not mistaken for the owner), its deadline, and the id of the
concurrency lease it holds. A run killed with SIGKILL cannot clean up after itself, so every
Docker executor reconciles once per process, before its first container: a container whose
owner is gone from this machine, or whose deadline has passed, is removed and its lease
released. Leases also expire on their own (:data:`LEASE_S`) when nobody renews them, so even
a run killed on another machine frees its slot within about a minute.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sprintflow.errors import ExecutorUnavailable
from sprintflow.io.owner import owner_gone, owner_label
from sprintflow.orchestration.concurrency import LEASE_S, docker_host_limit_name, held_slot, limit_exists, release_lease

__all__ = ["LABEL", "LEASE_S", "OWNER_LABEL", "docker_host_slot", "owner_label",
           "reconcile_once", "sweep_containers"]

logger = logging.getLogger("sprintflow")

LABEL = "sprintflow.managed"
OWNER_LABEL = "sprintflow.owner"
DEADLINE_LABEL = "sprintflow.deadline"
LEASE_LABEL = "sprintflow.lease"


@contextmanager
def docker_host_slot() -> Iterator[str | None]:
    """Hold one slot of this Docker host's global concurrency limit while a container lives.

    Yields the lease id to label the container with, or None when nothing is counted: only
    when a Prefect API is configured and the limit exists (``sprintflow server limits``
    creates it). A holder killed mid-way stops renewing its lease, and the server takes the
    slot back within :data:`~sprintflow.orchestration.concurrency.LEASE_S`
    (:func:`~sprintflow.orchestration.concurrency.held_slot`).
    """
    from prefect.settings import get_current_settings

    name = docker_host_limit_name()
    if not get_current_settings().api.url or not limit_exists(name):
        yield None
        return
    with held_slot(name) as lease:
        yield lease


def sweep_containers(*, orphans_only: bool = False) -> int:
    """Remove leftover sprintflow containers and release the slots they held.

    Leftovers are containers whose owner process is gone from this machine and, unless
    ``orphans_only``, containers past their deadline (a live executor removes its own
    container before it). Containers of running evaluations are never touched.
    Returns how many were removed.

    Raises:
        ExecutorUnavailable: no Docker engine answers (a sweep that cannot look must not say "removed 0").
    """
    import docker
    from docker.errors import DockerException

    try:
        containers = docker.from_env(timeout=10).containers.list(all=True, filters={"label": f"{LABEL}=true"})
    except DockerException as exc:
        raise ExecutorUnavailable(f"Docker engine unavailable: {exc}") from None
    now, removed = time.time(), 0
    for container in containers:
        labels = container.labels
        orphan = owner_gone(labels.get(OWNER_LABEL, ""))
        expired = not orphans_only and float(labels.get(DEADLINE_LABEL, 0) or 0) <= now
        if not (orphan or expired):
            continue
        try:
            container.remove(force=True)
            removed += 1
        except DockerException:
            continue  # removed meanwhile by its own executor
        if labels.get(LEASE_LABEL):
            release_lease(labels[LEASE_LABEL])
    return removed


_reconciled = threading.Event()


def reconcile_once() -> None:
    """Before this process's first container: take back what killed runs on this machine left."""
    if _reconciled.is_set():
        return
    _reconciled.set()
    try:
        removed = sweep_containers(orphans_only=True)
    except ExecutorUnavailable:
        return  # the container that follows says so, where it is needed
    if removed:
        logger.warning("removed %d container(s) left by a killed sprintflow run, and released their slots",
                       removed)
