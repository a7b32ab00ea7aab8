"""Task of the deployments: bring a git workspace into the checkout cache."""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from sprintflow.io.checkouts import update_checkout

__all__ = ["checkout"]


@task(cache_policy=NO_CACHE, task_run_name="checkout-{branch}")
def checkout(url: str, branch: str) -> str:
    """Clone ``url`` at ``branch`` into the checkout cache, or update the clone; returns its folder."""
    return str(update_checkout(url, branch))
