"""unit-test: every test passes; a vitest, jest or JUnit report also becomes a TestRun with hints.

A pass counts only when it means something (:mod:`..outcomes`): a canary planted beside the
tests must fail and one must pass (the runner can still say fail), and every test that ran on
the sprint's baseline must have run and passed.
"""

from __future__ import annotations

import dataclasses

from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport
from sprintflow.schemas import Diagnostic, Outcome, StrategyResult, StrategyType
from sprintflow.schemas.strategies import UnitTestStrategy as UnitTestConfig
from sprintflow.testruns.testrun import TEST_REPORT_FORMATS, judge_test_run, new_run_id

from ..canary import plant, runner_of
from ..outcomes import Outcomes, console_of, judge_outcomes, reference_of
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

    def judge(self, run: StrategyRun) -> Judged:
        """Plant the canaries in the test files (unless the baseline showed none of them runs), then run."""
        spec, command = self.report_spec(run.workspace), self.command() or ""
        runner = runner_of(spec.format if spec else None, command)
        reference = run.reference
        expected = reference is None or bool(reference.canaries or reference.files)
        canary = plant(run.workspace, runner, collected=reference.files if reference else ()) \
            if runner and expected else None
        judged = super().judge(dataclasses.replace(run, planted=canary))
        return dataclasses.replace(judged, planted=canary.paths) if canary else judged

    def judge_output(self, run: StrategyRun, command: str, outcome: CommandResult,
                     parsed: ParsedReport | None) -> Judged:
        """The verdict on the tests that count (canaries out), the reference it makes, and the tester's
        view of the run: a TestRun whose hints reach the diagnostics."""
        if parsed is None or parsed.counts is None:
            return self._with_test_run(run, command, outcome, parsed)
        spec = self.report_spec(run.workspace)
        console = console_of(runner_of(spec.format if spec else None, command), spec.report_path if spec else None,
                             outcome.stdout, outcome.stderr)
        reference = reference_of(parsed, run.planted, console)
        outcomes = judge_outcomes(parsed, run.planted, run.reference, exit_code=outcome.exit_code, console=console)
        if outcomes.failed_for_canary_alone(outcome.exit_code):
            outcome = dataclasses.replace(outcome, exit_code=0)
        judged = self._with_test_run(run, command, outcome, outcomes.report)
        return dataclasses.replace(judged, result=_counted(judged.result, outcomes), reference=reference)

    def _with_test_run(self, run: StrategyRun, command: str, outcome: CommandResult,
                       parsed: ParsedReport | None) -> Judged:
        judged = super().judge_output(run, command, outcome, parsed)
        spec = self.report_spec(run.workspace)
        fmt = spec.format if spec else None
        # Report files and the test runners' own text (``pytest -q``'s summary lines) alike: whatever
        # counted tests names them, for the test's history and its bugs.
        if parsed is None or fmt is None or (fmt not in TEST_REPORT_FORMATS and parsed.counts is None):
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


def _counted(result: StrategyResult, outcomes: Outcomes) -> StrategyResult:
    """The result, failed when its runner was compromised or a test the baseline ran did not run now."""
    if outcomes.compromised:
        return result.model_copy(update={"result": Outcome.failed, "compromised": outcomes.compromised,
                                         "details": f"The test runner cannot be believed: {outcomes.compromised}. "
                                                    f"What it reported: {result.details}"})
    if outcomes.problems:
        missing = [Diagnostic(tool="unit-test", severity="error", code="not-run", message=problem)
                   for problem in outcomes.problems]
        return result.model_copy(update={"result": Outcome.failed, "diagnostics": [*missing, *result.diagnostics],
                                         "error_count": (result.error_count or 0) + len(missing),
                                         "details": "Only a test that ran and passed counts: "
                                                    + "; ".join(outcomes.problems) + f". {result.details}"})
    return result
