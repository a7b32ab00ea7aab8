"""Names sprintflow chooses between, defined once and importable without pydantic or Prefect.

The CLI's options, the documents' fields and the registries' keys all take them from here,
so ``sprintflow evaluate --help`` lists the same names a config accepts, without paying for
importing the schemas.

Example:
    >>> [name.value for name in ExecutorName]
    ['auto', 'docker', 'local']
    >>> ExecutorName("docker") == "docker"
    True
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = ["ExecutorKind", "ExecutorName"]


class ExecutorName(StrEnum):
    """Where a strategy's commands run (``--executor``, a config's ``executor.kind``)."""

    AUTO = "auto"
    """Docker when an engine answers; at a terminal, else the host with a warning (never in a deployment run)."""
    DOCKER = "docker"
    """A fresh container per command."""
    LOCAL = "local"
    """A contained process on the host."""


ExecutorKind = Literal[ExecutorName.DOCKER, ExecutorName.LOCAL]
"""An executor itself: ``auto`` is a choice between them, not one of them."""
