"""Skill scoring documents (eval-scorer-story.md): cases, per-case results, reports.

A case is one line of ``evals/<skill>/cases.jsonl``. A ``ScoreReport`` is what
``sprintflow score`` prints: ``total``, ``passed``, ``failed``, ``score`` and
``cases[{id, pass, expected, actual, reason}]`` (a failed case also keeps the
engine's ``raw`` answer). Everything that varies between two runs with the
same engine answers (timestamps, durations) lives under ``timing``, declared
last, so the rest of the report is byte-for-byte reproducible.

With ``--epochs K`` (K > 1) every case runs K times; the report then adds
``epochs``, ``passAt1``, ``passAtK`` and ``passHatK`` overall and per case, each
case's ``stability`` and its per-epoch results (see
:func:`sprintflow.scoring.epochs.merge_epochs` for the definitions). With one
epoch none of these keys appear, so the report is what it always was.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer

from ._base import Document

__all__ = [
    "CaseDifference",
    "CaseResult",
    "ComparatorConfig",
    "EpochResult",
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

Stability = Literal["always-pass", "always-fail", "flaky"]
"""How a case's epochs agree: every one passed, none did, or they differ."""

ScoreMode = Literal["plain", "flow"]
"""How the cases ran: in threads (``plain``) or as Prefect tasks (``flow``)."""

Verdict = Literal["a-better", "b-better", "no-significant-difference"]
"""What the McNemar test says of two prompts."""

_EPOCH_KEYS = ("epochs", "passes", "passAt1", "passAtK", "passHatK", "stability")


def _drop_absent(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """Leave out optional keys that are None, so a one-epoch document keeps its old bytes."""
    for key in keys:
        if key in data and data[key] is None:
            del data[key]
    return data


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


class EpochResult(Document):
    """One epoch of a case run several times (``--epochs``)."""

    epoch: int
    """1 to K, in the order the epochs were asked."""
    passed: bool = Field(alias="pass")
    actual: dict[str, Any] | None = None
    reason: str | None = None
    raw: str | None = None
    """The engine's stdout (capped), for a failed epoch only."""

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_absent(handler(self), ("raw",))


class CaseResult(Document):
    """The verdict on one case. ``actual`` is None when no answer could be parsed.

    Run over K > 1 epochs, the case passes only when every epoch passed (pass^K:
    a case that passes now and then is not reliably solved), ``actual`` and
    ``reason`` come from its first failed epoch, and the epoch fields are set.
    """

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
    passes: int | None = None
    """Epochs that passed (K > 1 only)."""
    pass_at_1: float | None = None
    """``passes / K``: the expected pass rate of one attempt (K > 1 only)."""
    pass_at_k: float | None = None
    """1.0 when at least one of the K epochs passed, else 0.0 (K > 1 only)."""
    pass_hat_k: float | None = None
    """1.0 when all K epochs passed, else 0.0 (K > 1 only)."""
    stability: Stability | None = None
    """``always-pass``, ``always-fail`` or ``flaky`` (K > 1 only)."""
    epochs: list[EpochResult] | None = None
    """Every epoch's verdict, in epoch order (K > 1 only)."""
    duration_s: float = Field(default=0.0, exclude=True)
    input_tokens: int | None = Field(default=None, exclude=True)
    output_tokens: int | None = Field(default=None, exclude=True)
    cost_usd: float | None = Field(default=None, exclude=True)

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_absent(handler(self), ("raw", *_EPOCH_KEYS))


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
    mode: ScoreMode = "plain"
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
    """``passed / total``; over K > 1 epochs a case counts as passed only when all K passed."""
    epochs: int | None = None
    """K, the times every case ran; absent for one epoch."""
    pass_at_1: float | None = None
    """Mean per-sample pass rate over all cases and epochs (K > 1 only)."""
    pass_at_k: float | None = None
    """Share of cases that passed in at least one of the K epochs (K > 1 only)."""
    pass_hat_k: float | None = None
    """Share of cases that passed in all K epochs, equal to ``score`` (K > 1 only)."""
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

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_absent(handler(self), _EPOCH_KEYS)

    def to_json(self, *, timings: bool = True) -> str:
        """The report as indented JSON; ``timings=False`` leaves out the ``timing`` section.
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

    A run over K > 1 epochs adds ``"epochs": K, "passAt1", "passAtK", "passHatK"``,
    ``"epochScores"`` (each epoch's share of passed cases, in epoch order) and
    ``"flakyIds"`` (cases whose epochs disagree); every epoch's per-case verdicts
    are in the persisted report.
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
    mode: ScoreMode = "plain"
    concurrency: int
    duration_s: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    report: str
    """Path of the persisted report, relative to the workspace root."""
    comparison: str | None = None
    """The stamp shared by the two reports of one ``--compare`` run."""
    epochs: int | None = None
    pass_at_1: float | None = None
    pass_at_k: float | None = None
    pass_hat_k: float | None = None
    epoch_scores: list[float] | None = None
    flaky_ids: list[CaseId] | None = None

    @model_serializer(mode="wrap")
    def _drop_empty(self, handler: Any) -> dict[str, Any]:
        return _drop_absent(handler(self), (*_EPOCH_KEYS, "epochScores", "flakyIds"))


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
    verdict: Verdict


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
