"""PlanSpec and SprintContract (sprint-contract-schema.md), with the status machine."""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import Field

from sprintflow.errors import TransitionError

from ._base import MAX_ITERATIONS, Document, SafeId, Text, Timestamp, utc_now

__all__ = [
    "ContractStatus",
    "Feature",
    "IterationRecord",
    "PlanSpec",
    "SprintContract",
    "SuccessCriterion",
    "VerificationMethod",
]


class VerificationMethod(str, Enum):
    manual = "manual"
    typecheck = "typecheck"
    lint = "lint"
    unit_test = "unit-test"
    playwright = "playwright"
    api_check = "api-check"
    build = "build"
    custom = "custom"


class ContractStatus(str, Enum):
    proposed = "proposed"
    in_progress = "in-progress"
    completed = "completed"
    needs_rework = "needs-rework"


# proposed -> in-progress -> completed | needs-rework -> in-progress ...
_TRANSITIONS: dict[ContractStatus, frozenset[ContractStatus]] = {
    ContractStatus.proposed: frozenset({ContractStatus.in_progress}),
    ContractStatus.in_progress: frozenset({ContractStatus.completed, ContractStatus.needs_rework}),
    ContractStatus.needs_rework: frozenset({ContractStatus.in_progress}),
    ContractStatus.completed: frozenset(),
}


class SuccessCriterion(Document):
    criterion_id: str
    """Unique within the contract: ``sc-<sprintNumber>-<n>``."""
    description: Text
    """A specific, testable statement of observable behaviour."""
    verification_method: VerificationMethod
    """How the evaluator verifies this criterion."""
    required: bool
    """True: the sprint cannot pass unless this criterion passes."""
    custom_command: str | None = None
    """Only for ``custom``: the shell command to run; exit 0 means pass."""


class IterationRecord(Document):
    iteration: int = Field(ge=1, le=MAX_ITERATIONS)
    eval_id: SafeId
    result: Literal["pass", "fail"]
    timestamp: Timestamp
    pin_id: str | None = None
    """The sprint run (its pin) that judged it: a later sprint run judges again, whatever this says."""


SuppressionKind = Literal["noqa", "pylint-disable", "eslint-disable", "biome-ignore", "nolint", "allow-lint",
                          "suppress-warnings", "type-ignore", "ts-ignore", "no-cover", "skip", "tests-off"]
"""The kinds of line that silence a checker (``sprintflow.judge.suppressions`` says what each looks like)."""


class SprintContract(Document):
    contract_id: SafeId
    """``sprint-<specId>-<sprintNumber>``; never changes."""
    spec_id: SafeId
    sprint_number: int = Field(ge=1, le=MAX_ITERATIONS)
    """1-indexed position in the sprint sequence."""
    title: Text
    description: Text
    status: ContractStatus
    created_at: Timestamp
    updated_at: Timestamp
    completed_at: Timestamp | None = None
    depends_on: list[SafeId] = Field(default_factory=list)
    features: list[str] = Field(default_factory=list)
    success_criteria: list[SuccessCriterion] = Field(min_length=1)
    """At least one: a contract with nothing to check could only pass vacuously."""
    generator_notes: str
    evaluator_notes: str
    estimated_files: list[str] = Field(default_factory=list)
    allowed_suppressions: list[SuppressionKind] = Field(default_factory=list)
    """Kinds of suppression the change may add (``noqa``, ``type-ignore``, ``skip`` …); any other line that
    silences a checker fails that checker's criterion."""
    estimated_duration: Literal["small", "medium", "large"]
    iteration_history: list[IterationRecord] = Field(default_factory=list)
    last_eval_id: SafeId | None = None

    def revision(self) -> str:
        """A digest of what the contract asks (criteria, files, description): a verdict on another revision
        of it is not a verdict on this one.

        Example:
            >>> from sprintflow.schemas import load_document
            >>> path = "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
            >>> contract = load_document(path, SprintContract)
            >>> contract.revision() == contract.model_copy(update={"status": ContractStatus.completed}).revision()
            True
        """
        import hashlib
        import json

        asked = self.model_dump(mode="json", by_alias=True, include={
            "description", "success_criteria", "estimated_files", "allowed_suppressions", "depends_on"})
        return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]

    def transition(self, to: ContractStatus) -> None:
        """Move to ``to`` or raise ``TransitionError``; stamps the timestamps.

        Example:
            >>> from sprintflow.schemas import load_document
            >>> path = "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
            >>> contract = load_document(path, SprintContract)
            >>> contract.transition(ContractStatus.in_progress); contract.status
            <ContractStatus.in_progress: 'in-progress'>
            >>> contract.transition(ContractStatus.proposed)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            sprintflow.errors.TransitionError: ...
        """
        to = ContractStatus(to)
        if to not in _TRANSITIONS[self.status]:
            raise TransitionError(
                f"{self.contract_id}: cannot go from {self.status.value} to {to.value}"
            )
        self.status = to
        self.updated_at = utc_now()
        if to is ContractStatus.completed:
            self.completed_at = self.updated_at


class Feature(Document):
    feature_id: str
    title: Text
    description: Text = ""


class PlanSpec(Document):
    """The planner's answer to a feature request; its contracts carry the sprints."""

    spec_id: SafeId
    """``spec-<yyyymmdd>-<slug>``; the prefix of every contract id of the plan."""
    title: Text
    description: Text
    request: str = ""
    """The feature request the plan answers, verbatim."""
    features: list[Feature] = Field(default_factory=list)
    contracts: list[SafeId] = Field(default_factory=list)
    """Contract ids in sprint order."""
    created_at: Timestamp = Field(default_factory=utc_now)
