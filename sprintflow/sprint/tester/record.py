"""What a tester step leaves: its run id, its judged run in ``result.json``, its journal entry."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.engines import EngineReply
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.journal import EngineCall, TesterFailure, TesterJournal
from sprintflow.schemas.testrun import TestRun
from sprintflow.testruns.testrun import new_run_id

__all__ = ["MAX_FAILURES_KEPT", "EngineSummary", "TesterStep", "load_test_run", "new_tester_run_id"]

MAX_FAILURES_KEPT = 20
"""Failures (test and hint) copied into the iteration journal; result.json keeps them all."""


def new_tester_run_id(workspace: Path) -> str:
    """A fresh run id marked as the tester's: ``run-20260513-103115-tester`` (``-2``… if taken).

    Example:
        >>> import tempfile
        >>> new_tester_run_id(Path(tempfile.mkdtemp()))  # doctest: +ELLIPSIS
        'run-...-tester'
    """
    base = f"{new_run_id()}-tester"
    layout = WorkspaceLayout(workspace)
    run_id, number = base, 1
    while layout.run_dir(run_id).exists():
        number += 1
        run_id = f"{base}-{number}"
    return run_id


def load_test_run(workspace: Path, run_id: str) -> TestRun | None:
    """The TestRun of ``.sprintflow/runs/<run_id>/result.json``, or None when absent.

    Example:
        >>> import tempfile
        >>> load_test_run(Path(tempfile.mkdtemp()), "run-20260513-103115-tester") is None
        True
    """
    path = WorkspaceLayout(workspace).run_dir(run_id) / "result.json"
    return TestRun.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None



@dataclass(frozen=True)
class EngineSummary:
    """How the tester engine's call went (the raw output is not kept here)."""

    ok: bool
    reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int = 0

    @classmethod
    def of(cls, reply: EngineReply) -> EngineSummary:
        return cls(ok=reply.ok, reason=reply.reason, input_tokens=reply.input_tokens,
                   output_tokens=reply.output_tokens, cost_usd=reply.cost_usd,
                   duration_ms=round(reply.duration_s * 1000))


@dataclass(frozen=True)
class TesterStep:
    """What one tester step did."""

    mode: str
    test_run: TestRun
    """The judged run, bug ids filled in, as ``result.json`` holds it."""
    engine: EngineSummary
    restored: list[str] = field(default_factory=list)
    """Files the engine changed outside its sandbox (all restored)."""
    self_check: list[str] = field(default_factory=list)
    """One sentence per failed self-check; empty when every check passed."""
    bugs_opened: list[str] = field(default_factory=list)
    bugs_transitioned: list[dict[str, str]] = field(default_factory=list)
    mutation: MutationResult | None = None
    """Its passing tests graded by the mutation check of the change (:mod:`sprintflow.evaluate.mutation`)."""

    @property
    def run_id(self) -> str:
        return self.test_run.run_id

    def journal(self) -> TesterJournal:
        """The step as the iteration journal records it (``status: finished``)."""
        run, engine = self.test_run, self.engine
        return TesterJournal(
            status="finished", mode=self.mode, run_id=run.run_id,
            result_ref=f".sprintflow/runs/{run.run_id}/result.json",
            ok=run.ok, crashed=run.crashed, crash_reason=run.crash_reason, summary=run.summary.model_dump(),
            failures=[TesterFailure(test=f.test, hint=f.hint) for f in run.failures[:MAX_FAILURES_KEPT]],
            restored=self.restored, self_check=self.self_check, bugs_opened=self.bugs_opened,
            bugs_transitioned=self.bugs_transitioned, mutation=self.mutation,
            engine=EngineCall(ok=engine.ok, reason=engine.reason, input_tokens=engine.input_tokens,
                              output_tokens=engine.output_tokens, cost_usd=engine.cost_usd,
                              duration_ms=engine.duration_ms))
