"""What the judge recorded of a generator step: the change it judged, and what it did not."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ._base import Document
from .evaluation import MutationResult

__all__ = ["EngineCall", "IterationJournal", "JudgedChange", "SuppressionRecord", "TesterFailure", "TesterJournal"]


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


class EngineCall(Document):
    """What one engine call did and cost."""

    ok: bool
    reason: str | None = None
    """Why it failed (None: it answered)."""
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int | None = None


class TesterFailure(Document):
    __test__ = False  # a record, not a pytest test class

    test: str
    hint: str | None = None


class TesterJournal(Document):
    """The tester's step of an iteration: ``started`` first, so a step cut off is resumed; then
    ``finished`` with what its tests said."""

    __test__ = False  # a record, not a pytest test class

    status: Literal["started", "finished"]
    mode: str
    """``test``, ``retry`` or ``resume``."""
    run_id: str
    result_ref: str | None = None
    ok: bool | None = None
    crashed: bool = False
    crash_reason: str | None = None
    summary: dict[str, Any] | None = None
    failures: list[TesterFailure] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list)
    """Files the tester wrote outside its sandbox, put back."""
    self_check: list[str] = Field(default_factory=list)
    bugs_opened: list[str] = Field(default_factory=list)
    bugs_transitioned: list[dict[str, str]] = Field(default_factory=list)
    mutation: MutationResult | None = None
    """How well its passing tests kill mutants of the change."""
    engine: EngineCall | None = None

    @property
    def engine_finished(self) -> bool:
        return self.status == "finished" and self.engine is not None and self.engine.ok


class IterationJournal(Document):
    """An iteration's generator step as the sprint recorded it: present means the step finished (the
    tester's step is recorded in it too)."""

    ok: bool
    reason: str | None = None
    exit_code: int | None = None
    could_not_start: bool = False
    """The engine never ran (not found, its script missing): not journaled, no iteration spent."""
    duration_ms: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    raw: str = ""
    """The engine's stdout, its end kept."""
    stderr: str = ""
    hidden_writes: list[str] = Field(default_factory=list)
    """Writes into files hidden from the generator, thrown away."""
    uncontained: str | None = None
    """Why the generator ran uncontained, when it did."""
    prompt: str | None = None
    change: JudgedChange = Field(default_factory=JudgedChange)
    pin_id: str | None = None
    """The judge pin of the sprint that ran the step: a step of another sprint is not trusted."""
    contract_revision: str | None = None
    """The contract's revision the step worked on: a changed contract asks for a new step."""
    commit: str | None = None
    tester: TesterJournal | None = None
