"""Slots of Prefect's global concurrency limits, held under a lease: a Docker host's containers, a
workspace's deployment runs.

A slot is taken with a lease that the server expires on its own when nobody renews it
(:data:`LEASE_S`), so a holder killed with SIGKILL frees it within about a minute; a thread renews
it while the ``with`` block runs, and it is released after the block. Limits live on the server:
one a person sizes (``sprintflow server limits``), or one made on first use (:func:`ensure_limit`).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

__all__ = ["LEASE_S", "docker_host_limit_name", "ensure_docker_host_limit", "ensure_limit", "held_slot",
           "limit_exists", "release_lease"]

logger = logging.getLogger("sprintflow")

LEASE_S = 60
"""Lease of a slot, renewed while its holder lives (the server's minimum)."""

def limit_exists(name: str) -> bool:
    """Whether the server has the global concurrency limit ``name``."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    try:
        with get_client(sync_client=True) as client:
            client.read_global_concurrency_limit_by_name(name)
    except ObjectNotFound:
        return False
    return True


def ensure_limit(name: str, slots: int) -> int:
    """Create the global concurrency limit ``name`` with ``slots`` slots unless it exists; returns its slots.

    Two runs creating it at once are fine: the one the server refuses reads the other's.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            return int(client.read_global_concurrency_limit_by_name(name).limit)
        except ObjectNotFound:
            pass
        try:
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=slots))
        except ObjectAlreadyExists:
            return int(client.read_global_concurrency_limit_by_name(name).limit)
    return slots


def docker_host_limit_name(docker_host: str | None = None) -> str:
    """The global concurrency limit that caps containers on one Docker host.

    Named after ``DOCKER_HOST`` (``local`` for the default socket), so workers on
    many machines that share one remote engine also share its limit.

    Example:
        >>> docker_host_limit_name("tcp://10.0.0.5:2376")
        'docker-host-tcp-10-0-0-5-2376'
    """
    host = docker_host if docker_host is not None else os.environ.get("DOCKER_HOST", "")
    if not host or host.startswith("unix://"):
        return "docker-host-local"
    return "docker-host-" + re.sub(r"[^a-z0-9]+", "-", host.lower()).strip("-")


def ensure_docker_host_limit(slots: int | None = None, docker_host: str | None = None) -> tuple[str, int]:
    """Create this Docker host's global concurrency limit; returns its name and slot count.

    An existing limit keeps its slots unless ``slots`` is given. The default is
    the host's CPU count: each container gets ``executor.cpus`` (default 2), so
    more would mostly queue on the CPU anyway.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    name = docker_host_limit_name(docker_host)
    existing = ensure_limit(name, slots or os.cpu_count() or 1)
    if slots is not None and slots != existing:
        with get_client(sync_client=True) as client:
            client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=slots))
        return name, slots
    return name, existing


@contextmanager
def held_slot(name: str, *, holder: Any = None, on_wait: Callable[[], object] | None = None) -> Iterator[str]:
    """Hold one slot of the limit ``name`` (which must exist) for the ``with`` block; yields the lease id.

    When every slot is taken, ``on_wait()`` is called once (to say so where people look) and the
    block waits for one. ``holder`` (Prefect's ``ConcurrencyLeaseHolder``) says on the server
    which run holds the lease.
    """
    from prefect.concurrency._leases import maintain_concurrency_lease

    lease = _acquire(name, holder, on_wait)
    try:
        with maintain_concurrency_lease(lease, LEASE_S):
            yield str(lease)
    finally:
        release_lease(str(lease))


def _acquire(name: str, holder: Any, on_wait: Callable[[], object] | None) -> UUID:
    from prefect.concurrency._sync import acquire_concurrency_slots_with_lease

    # Whether to say "waiting" is read from the limit, not learnt from a refused try: Prefect logs
    # every refusal as an ERROR, which would alarm whoever reads the run's output.
    if on_wait is not None and _all_taken(name):
        on_wait()
    # The server says when to ask again; no deadline: the holder's run has its own.
    return acquire_concurrency_slots_with_lease([name], 1, lease_duration=LEASE_S, strict=True,
                                                holder=holder).lease_id


def _all_taken(name: str) -> bool:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(name)
    return limit.active_slots >= limit.limit


def release_lease(lease: str) -> None:
    """Give the lease's slot back; one that expired or was released already is free either way."""
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            client.release_concurrency_slots_with_lease(UUID(lease))
    except Exception as exc:  # already expired or released: the slot is free either way
        logger.debug("lease %s not released: %s", lease, exc)
