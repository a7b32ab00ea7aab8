"""Skill scoring documents (eval-scorer-story.md): cases, per-case results, reports.

A case is one line of ``evals/<skill>/cases.jsonl``. A ``ScoreReport`` is what
``sprintflow score`` prints: ``total``, ``passed``, ``failed``, ``score`` and
``cases[{id, pass, expected, actual, reason}]`` (a failed case also keeps the
engine's ``raw`` answer). Everything that varies between two runs with the
same engine answers (timestamps, durations) lives under ``timing``, declared
last, so the rest of the report is byte-for-byte reproducible.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer

from ._base import Document

__all__ = [
    "CaseDifference",
    "CaseResult",
    "ComparatorConfig",
    "CompareReport",
    "EvalCase",
    "McNemarResult",
    "PromptScore",
    "ScoreHistoryRow",
    "ScoreReport",
    "ScoreTiming",
    "ScoreUsage",
]

CaseId = int | str


class EvalCase(Document):
    """One held-out case: the input the skill sees and the fields it must answer."""

    id: CaseId
    """Unique within the file; a string or an integer, reported as written."""
    input: Any
    """The PR context given to the skill: a string as is, anything else as JSON."""
    expected: dict[str, Any]
    """The answer fields the comparator checks, e.g. ``{"escalate": true, "risk": "high"}``."""
    line: int = Field(default=0, exclude=True)
    """Line number in the cases file, for error messages; not part of the document."""


class ComparatorConfig(Document):
    """How a skill's answer is compared to ``expected``.

    Read from ``evals/<skill>/comparator.json`` when present, else the built-in
    config of a known skill (triage: ``escalate`` and ``risk``, exact), else
    every field a case's ``expected`` names, exactly.
    """

    fields: list[str] = Field(default_factory=list)
    """Top-level answer fields to compare; empty means every field in ``expected``."""
    case_insensitive: list[str] = Field(default_factory=list)
    """String fields (enums such as ``risk``) compared ignoring case."""
    tolerance: dict[str, float] = Field(default_factory=dict)
    """Numeric fields compared within an absolute tolerance, e.g. ``{"confidence": 0.05}``."""

    def fields_for(self, expected: dict[str, Any]) -> list[str]:
        """The fields compared for one case: the configured ones it names, in config order.

        Example:
            >>> ComparatorConfig(fields=["escalate", "risk"]).fields_for({"risk": "low"})
            ['risk']
        """
        if not self.fields:
            return list(expected)
        return [name for name in self.fields if name in expected]


class CaseResult(Document):
    """The verdict on one case. ``actual`` is None when no answer could be parsed."""

    id: CaseId
    passed: bool = Field(alias="pass")
    expected: dict[str, Any]
    """The compared fields as the case file states them."""
    actual: dict[str, Any] | None = None
    """The same fields from the answer (a missing field is absent)."""
    reason: str | None = None
    """Why the case failed, one line; None when it passed."""
    raw: str | None = None
    """The engine's stdout as printed (capped), kept for failed cases only."""
    duration_s: float = Field(default=0.0, exclude=True)
    input_tokens: int | None = Field(default=None, exclude=True)
    output_tokens: int | None = Field(default=None, exclude=True)
    cost_usd: float | None = Field(default=None, exclude=True)

    @model_serializer(mode="wrap")
    def _drop_empty_raw(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("raw") is None:
            data.pop("raw", None)
        return data


class ScoreUsage(Document):
    """Token and cost totals over the cases whose engine reported them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


class ScoreTiming(Document):
    """Everything that changes between identical runs; kept apart from the verdicts."""

    started_at: str
    finished_at: str
    duration_s: float
    concurrency: int
    mode: Literal["plain", "flow"] = "plain"
    """``flow`` when the cases ran as Prefect tasks."""
    cases: dict[str, float] = Field(default_factory=dict)
    """Seconds per case id, in case order."""


class ScoreReport(Document):
    """One scoring run of a skill prompt over its held-out cases."""

    skill: str
    total: int
    passed: int
    failed: int
    score: float
    """``passed / total``."""
    cases: list[CaseResult]
    """In the order of the cases file, whatever order they finished in."""
    engine: str
    cases_file: str
    cases_sha256: str
    prompt_file: str
    prompt_sha256: str
    comparator: ComparatorConfig
    usage: ScoreUsage | None = None
    """Present when the engine reported tokens or cost."""
    timing: ScoreTiming | None = None
    """Run-to-run varying fields; always last."""

    def to_json(self, *, timings: bool = True) -> str:
        """The report as indented JSON; ``timings=False`` leaves out the ``timing`` section.

        Example:
            >>> report.to_json(timings=False)  # identical for identical engine answers
        """
        exclude = None if timings else {"timing"}
        return self.model_dump_json(by_alias=True, indent=2, exclude=exclude) + "\n"

    @property
    def failed_ids(self) -> list[CaseId]:
        return [case.id for case in self.cases if not case.passed]


class ScoreHistoryRow(Document):
    """One line of ``.sprintflow/history/scores.ndjson``, appended per persisted report.

    The reporting layer reads these rows for score trends per skill, prompt
    version (``promptSha256``), case set (``casesSha256``) and commit (``gitSha``)::

        {"kind": "score", "recordedAt": "2025-01-02T03:04:05Z", "skill": "triage",
         "total": 8, "passed": 7, "failed": 1, "score": 0.875, "failedIds": ["c7"],
         "engine": "claude -p --output-format json", "casesFile": "evals/triage/cases.jsonl",
         "casesSha256": "…", "promptFile": "prompts/triage.md", "promptSha256": "…",
         "gitSha": "…" | null, "mode": "plain", "concurrency": 8, "durationS": 12.3,
         "inputTokens": 1234 | null, "outputTokens": 56 | null, "costUsd": 0.01 | null,
         "report": ".sprintflow/scores/triage/20250102T030405123456Z.json",
         "comparison": null | "20250102T030405123456Z"}
    """

    kind: Literal["score"] = "score"
    recorded_at: str
    skill: str
    total: int
    passed: int
    failed: int
    score: float
    failed_ids: list[CaseId]
    engine: str
    cases_file: str
    cases_sha256: str
    prompt_file: str
    prompt_sha256: str
    git_sha: str | None = None
    mode: Literal["plain", "flow"] = "plain"
    concurrency: int
    duration_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    report: str
    """Path of the persisted report, relative to the workspace root."""
    comparison: str | None = None
    """The stamp shared by the two reports of one ``--compare`` run."""


class PromptScore(Document):
    """One side of a comparison."""

    prompt_file: str
    prompt_sha256: str
    passed: int
    failed: int
    score: float


class CaseDifference(Document):
    """A case the two prompts disagree on."""

    id: CaseId
    a: bool
    """Whether prompt A passed it."""
    b: bool
    expected: dict[str, Any]
    actual_a: dict[str, Any] | None = None
    actual_b: dict[str, Any] | None = None
    reason_a: str | None = None
    reason_b: str | None = None


class McNemarResult(Document):
    """Exact McNemar test on the discordant pairs (a two-sided binomial test, p = 0.5)."""

    only_a_passed: int
    only_b_passed: int
    p_value: float
    alpha: float = 0.05
    verdict: Literal["a-better", "b-better", "no-significant-difference"]


class CompareReport(Document):
    """Two prompt versions scored on the same cases, and whether B is really better."""

    skill: str
    total: int
    a: PromptScore
    b: PromptScore
    both_passed: int
    both_failed: int
    mcnemar: McNemarResult
    differences: list[CaseDifference]
    """Discordant cases, in case order."""
    engine: str
    cases_file: str
    cases_sha256: str
    timing: ScoreTiming | None = None

    def to_json(self, *, timings: bool = True) -> str:
        exclude = None if timings else {"timing"}
        return self.model_dump_json(by_alias=True, indent=2, exclude=exclude) + "\n"
