"""Judge each success criterion by its verificationMethod.

Strategy-backed methods take the verdict of the strategy of that type (an
api-check criterion named on specific endpoints is judged by those alone);
``custom`` criteria run their ``customCommand``; ``manual`` criteria are
judged elsewhere (an evaluator engine) or skipped with the reason. Evidence is
concrete, as the seed's evidence standards ask: commands, exit codes, file:line.
"""

from __future__ import annotations

from sprintflow.schemas import (
    CriterionResult,
    Outcome,
    StrategyResult,
    SuccessCriterion,
    VerificationMethod,
)

from .process import CommandResult

__all__ = ["judge_by_command", "judge_by_strategy", "skipped_manual"]


def _criterion(criterion: SuccessCriterion, result: Outcome, evidence: str, feedback: str = "") -> CriterionResult:
    return CriterionResult(criterion_id=criterion.criterion_id, description=criterion.description,
                           required=criterion.required, result=result, evidence=evidence,
                           feedback=feedback)


def judge_by_strategy(criterion: SuccessCriterion, strategy: StrategyResult | None) -> CriterionResult:
    """The verdict of the strategy named by the criterion's verificationMethod.

    Example:
        >>> judge_by_strategy(criterion, build_result).result
        <Outcome.passed: 'pass'>
    """
    method = criterion.verification_method.value
    if strategy is None:
        return _criterion(criterion, Outcome.failed, f"No {method} strategy ran, so nothing verified this.",
                          f"Configure a {method} strategy so this criterion can be checked.")
    tagged = [d for d in strategy.diagnostics if d.code == criterion.criterion_id]
    if criterion.verification_method is VerificationMethod.api_check and _names_criterion(strategy, criterion):
        if tagged:
            return _criterion(criterion, Outcome.failed, "; ".join(d.message for d in tagged),
                              f"Make the endpoint behave as the criterion says: {criterion.description}")
        return _criterion(criterion, Outcome.passed,
                          f"The endpoint checks for {criterion.criterion_id} all passed.")
    evidence = strategy.details or f"{method} ended {strategy.result.value}"
    if strategy.result is Outcome.passed:
        return _criterion(criterion, Outcome.passed, evidence)
    if strategy.result is Outcome.skipped:
        return _criterion(criterion, Outcome.skipped, evidence,
                          f"The {method} strategy was skipped, so this criterion is unverified.")
    return _criterion(criterion, Outcome.failed, evidence,
                      f"{criterion.description} does not hold yet: fix the {method} failures listed "
                      "in the generator feedback.")


def _names_criterion(strategy: StrategyResult, criterion: SuccessCriterion) -> bool:
    return criterion.criterion_id in strategy.output


def judge_by_command(criterion: SuccessCriterion, command: str, outcome: CommandResult) -> CriterionResult:
    """A custom criterion: exit 0 passes; could-not-run and timeouts fail closed."""
    if outcome.error:
        return _criterion(criterion, Outcome.failed, f"`{command}` could not run: {outcome.error}",
                          "Fix the customCommand so it can run in the sandbox.")
    if outcome.timed_out:
        return _criterion(criterion, Outcome.failed, f"`{command}` timed out and was killed.",
                          "The check must finish within its timeout.")
    tail = (outcome.stdout + outcome.stderr).strip()[-600:]
    evidence = f"`{command}` exited {outcome.exit_code}." + (f" Output: {tail}" if tail else "")
    if outcome.exit_code == 0:
        return _criterion(criterion, Outcome.passed, evidence)
    return _criterion(criterion, Outcome.failed, evidence,
                      f"{criterion.description} — `{command}` must exit 0.")


def skipped_manual(criterion: SuccessCriterion, reason: str) -> CriterionResult:
    """A manual criterion nobody could judge: skipped, and a required one blocks the pass."""
    return _criterion(criterion, Outcome.skipped, reason,
                      "Configure an evaluator engine (SPRINTFLOW_EVALUATOR_ENGINE) or verify by hand.")
