"""TestRun: one unit-test run as tester-agent-spec.md writes ``runs/<runId>/result.json``.

Unlike the other documents, the seed writes this one in snake_case
(``next_action``, ``acceptance_coverage``), so the model keeps Python names as
JSON names instead of the camelCase aliases of :class:`~._base.Document`.

Example:
    >>> run = TestRun(run_id="run-1", summary=TestSummary(total=1, passed=1),
    ...               next_action="done", duration_ms=12)
    >>> run.ok, run.to_dict()["summary"]
    (True, {'total': 1, 'passed': 1, 'failed': 0, 'skipped': 0})
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

__all__ = ["NextAction", "TestFailureEntry", "TestRun", "TestSummary"]

NextAction = Literal["retry_coder", "retry_tester", "done"]
"""Who acts next: the coder (tests fail), the tester (the runner crashed), nobody."""


class _SnakeDocument(BaseModel):
    # Unknown fields other tools wrote (loop, attempt, tokens_used…) survive a rewrite. The fields'
    # docstrings are for people (pydantic's use_attribute_docstrings would cost start-up: see Document).
    model_config = ConfigDict(extra="allow")


class TestSummary(_SnakeDocument):
    """How many tests ran and how they ended."""

    __test__: ClassVar[bool] = False  # a document, not a pytest test class

    total: int = Field(default=0, ge=0)
    passed: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    skipped: int = Field(default=0, ge=0)


class TestFailureEntry(_SnakeDocument):
    """One failed test, with the hint the coder reads on its next attempt."""

    __test__: ClassVar[bool] = False

    test: str
    """Full test name (describe blocks and title, or ``classname.name``)."""
    expected: Any = None
    """The expected value when the assertion names one (a number stays a number)."""
    got: Any = None
    """The value actually received."""
    stack: str = ""
    """The error text and stack trace, colour codes removed."""
    hint: str = Field(min_length=1)
    """One or two actionable sentences for the coder; never empty."""
    bug_id: str | None = None
    """The bug in ``bugs.ndjson`` this failure is tracked as, once bridged."""
    file: str | None = None
    """Workspace-relative file of the innermost own stack frame, when known."""
    line: int | None = None


class TestRun(_SnakeDocument):
    """The structured result of one unit-test run (``result.json``)."""

    __test__: ClassVar[bool] = False

    run_id: str
    summary: TestSummary = Field(default_factory=TestSummary)
    failures: list[TestFailureEntry] = Field(default_factory=list)
    crashed: bool = False
    """The runner itself failed: no report, an unreadable one, nothing could load, a timeout."""
    crash_reason: str | None = None
    stdout_tail: str = ""
    """The end of the runner's output (stderr last), to see what a crash printed."""
    next_action: NextAction
    acceptance_coverage: float | None = Field(default=None, ge=0, le=1)
    """Share of the contract's successCriteria named by at least one test (``[sc-1-3]``);
    ``None`` when no criterion is declared."""
    contract_coverage: float | None = Field(default=None, ge=0, le=1)
    """Share of the contract's declared HTTP status codes named in a test title;
    ``None`` when no status code is declared."""
    uncovered_criteria: list[str] = Field(default_factory=list)
    uncovered_status_codes: list[int] = Field(default_factory=list)
    passed_tests: list[str] = Field(default_factory=list)
    """Names of the tests that passed: their open bugs can be closed as fixed."""
    duration_ms: int = Field(default=0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _derive_ok(cls, data: Any) -> Any:
        # ``ok`` is derived; a stored one must not come back as a second, stale "ok" extra.
        if isinstance(data, dict) and "ok" in data:
            data = {k: v for k, v in data.items() if k != "ok"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """The seed's overall verdict: something ran, nothing failed, nothing crashed."""
        return not self.crashed and self.summary.failed == 0 and self.summary.total > 0

    def to_json(self) -> str:
        """The document as ``result.json`` holds it."""
        return self.model_dump_json(indent=2) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The document as plain JSON data."""
        return self.model_dump(mode="json")
