"""What the judge recorded of a generator step: the change it judged, and what it did not."""

from __future__ import annotations

from pydantic import Field

from ._base import Document

__all__ = ["JudgedChange", "SuppressionRecord"]


class SuppressionRecord(Document):
    """A line the change added that silences a checker."""

    file: str
    line: int
    kind: str
    checker: str
    """The strategy type it silences (``lint``, ``typecheck``, ``unit-test``)."""
    text: str


class JudgedChange(Document):
    """The generator's change against the pinned baseline, as the judge took it."""

    admitted: list[str] = Field(default_factory=list)
    """Paths of the change that are judged, each with what happened (``src/calc.py (modified)``)."""
    critical: list[str] = Field(default_factory=list)
    """Changes that are not judged because they reach the judge or configure its tools, each with
    what happened and why (``conftest.py (created): …``); undone in the workspace, and each fails
    the iteration."""
    notes: list[str] = Field(default_factory=list)
    """Changes that are not judged and harm nothing (caches, ``.git/``, documentation)."""
    unexpected: list[str] = Field(default_factory=list)
    """Admitted paths the contract's estimatedFiles does not name."""
    reviewed: dict[str, str] = Field(default_factory=dict)
    """Tests and configuration files the contract lets the generator change: path -> diff, for a reviewer."""
    reaches: list[str] = Field(default_factory=list)
    """Lines the change adds that reach into the test runner (``file:line reaches into …``)."""
    suppressions: list[SuppressionRecord] = Field(default_factory=list)
    """Lines the change adds that silence a checker the contract does not let it silence."""
    restored: list[str] = Field(default_factory=list)
    """Workspace paths put back as the baseline had them (or removed, when the baseline had none)."""
