"""unit-test: every test passes; a vitest, jest or JUnit report also becomes a TestRun with hints."""

from __future__ import annotations

from sprintflow.io.process import CommandResult
from sprintflow.schemas import Outcome, StrategyType
from sprintflow.schemas.strategies import UnitTestStrategy as UnitTestConfig
from sprintflow.testing.testrun import TEST_REPORT_FORMATS, judge_test_run, new_run_id

from ..parsers import ParsedReport
from .base import Judged, Strategy, StrategyRun, duration_ms, exit_code_verdict, register

__all__ = ["UnitTestStrategy", "test_verdict"]


def test_verdict(command: str, outcome: CommandResult, parsed: ParsedReport | None) -> tuple[Outcome, str]:
    """Exit code and failures, with the tally; no test at all passes vacuously, as the seed allows."""
    verdict, details = exit_code_verdict(command, outcome, parsed)
    counts = parsed.counts if parsed else None
    if counts is None:
        return verdict, details
    tally = f"{counts.total} tests: {counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped."
    if counts.total == 0 and verdict is Outcome.passed:
        return verdict, f"{details} No tests found: passing vacuously, as the seed allows for a first sprint."
    if verdict is Outcome.failed and parsed and parsed.failures:
        first = parsed.failures[0]
        return verdict, f"{tally} First failure: {first.test}: {first.message.splitlines()[0] if first.message else ''}"
    return verdict, f"{details} {tally}"


test_verdict.__test__ = False  # type: ignore[attr-defined]  # a verdict, not a pytest test


@register
class UnitTestStrategy(Strategy[UnitTestConfig]):
    type = StrategyType.unit_test
    default_command = "npm test"
    command_key = "test"

    def verdict(self, run: StrategyRun, command: str, outcome: CommandResult,
                parsed: ParsedReport | None) -> tuple[Outcome, str]:
        return test_verdict(command, outcome, parsed)

    def judge_output(self, run: StrategyRun, command: str, outcome: CommandResult,
                     parsed: ParsedReport | None) -> Judged:
        """The verdict, plus the tester's view of the run: a TestRun whose hints reach the diagnostics."""
        judged = super().judge_output(run, command, outcome, parsed)
        spec = self.report_spec(run.workspace)
        fmt = spec.format if spec else None
        if parsed is None or fmt not in TEST_REPORT_FORMATS:
            return judged
        test_run = judge_test_run(parsed, fmt, run_id=new_run_id(), stdout=outcome.stdout, stderr=outcome.stderr,
                                  exit_code=outcome.exit_code, timed_out=outcome.timed_out,
                                  duration_ms=duration_ms(outcome), contract=run.contract)
        hints = {failure.test: failure.hint for failure in test_run.failures}
        diagnostics = [d.model_copy(update={"hint": next((h for t, h in hints.items() if d.message.startswith(t)),
                                                         None)})
                       for d in judged.result.diagnostics]
        result = judged.result.model_copy(update={"diagnostics": diagnostics})
        return Judged(result, test_run, outcome.stdout, outcome.stderr)
