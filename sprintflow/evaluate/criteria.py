"""Judge each success criterion by its verificationMethod.

Strategy-backed methods take the verdict of the strategy of that type (an
api-check criterion named on specific endpoints is judged by those alone);
``custom`` criteria run their ``customCommand``; ``manual`` criteria are
judged elsewhere (an evaluator engine) or skipped with the reason. Evidence is
concrete, as the seed's evidence standards ask: commands, exit codes, file:line.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from sprintflow.engines import EngineReply, extract_json
from sprintflow.errors import OutsideWorkspace
from sprintflow.io.confine import read_confined
from sprintflow.io.process import CommandResult
from sprintflow.schemas import (
    CriterionResult,
    Outcome,
    SprintContract,
    StrategyResult,
    SuccessCriterion,
    VerificationMethod,
)

from .outcomes import Outcomes

__all__ = ["judge_by_command", "judge_by_strategy", "judge_manual", "manual_prompt", "skipped_manual"]


def _criterion(criterion: SuccessCriterion, result: Outcome, evidence: str, feedback: str = "") -> CriterionResult:
    return CriterionResult(criterion_id=criterion.criterion_id, description=criterion.description,
                           required=criterion.required, result=result, evidence=evidence,
                           feedback=feedback)


def judge_by_strategy(criterion: SuccessCriterion, strategy: StrategyResult | None) -> CriterionResult:
    """The verdict of the strategy named by the criterion's verificationMethod.

    Example:
        >>> criterion = SuccessCriterion(criterion_id="sc-1-1", description="It builds.",
        ...                              verification_method="build", required=True)
        >>> build = StrategyResult(strategy="build", required=True, result="pass", details="exited 0.")
        >>> judge_by_strategy(criterion, build).result, judge_by_strategy(criterion, None).result
        (<Outcome.passed: 'pass'>, <Outcome.failed: 'fail'>)
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
                      f"Fix the {method} failures listed in the generator feedback so that this "
                      f"holds: {criterion.description}")


def _names_criterion(strategy: StrategyResult, criterion: SuccessCriterion) -> bool:
    return criterion.criterion_id in strategy.output


def judge_by_command(criterion: SuccessCriterion, command: str, outcome: CommandResult,
                     outcomes: Outcomes | None = None) -> CriterionResult:
    """A custom criterion: exit 0 passes; could-not-run and timeouts fail closed. When the command is a
    test runner (``outcomes``), its failing canary's exit is not the code's, and a compromised
    runner or a test that did not count fails it."""
    if outcome.error:
        return _criterion(criterion, Outcome.failed, f"`{command}` could not run: {outcome.error}",
                          "Fix the customCommand so it can run in the sandbox.")
    if outcome.timed_out:
        return _criterion(criterion, Outcome.failed, f"`{command}` timed out and was killed.",
                          "The check must finish within its timeout.")
    evidence = f"`{command}` exited {outcome.exit_code}." + _output(outcome, outcomes)
    code = outcome.exit_code
    if outcomes is not None and outcomes.failed_for_canary_alone(code):
        code = 0
    if outcomes is not None and outcomes.compromised:
        return _criterion(criterion, Outcome.failed, f"The test runner cannot be believed: {outcomes.compromised}. "
                          f"{evidence}", f"{criterion.description} — its tests must run unaltered.").model_copy(
            update={"compromised": outcomes.compromised})
    if code == 0 and outcomes is not None and outcomes.problems:
        return _criterion(criterion, Outcome.failed, "Only a test that ran and passed counts: "
                          + "; ".join(outcomes.problems) + f". {evidence}",
                          f"{criterion.description} — every test of it must run and pass.")
    if code == 0 and outcomes is not None and outcomes.report.failures:
        # A runner told (or configured) to go on past failing tests exits 0: its report still says they failed.
        named = ", ".join(f.test for f in outcomes.report.failures[:5])
        return _criterion(criterion, Outcome.failed, f"The runner exited 0, but its tests failed: {named}. {evidence}",
                          f"{criterion.description} — every test of it must pass.")
    if code == 0:
        return _criterion(criterion, Outcome.passed, evidence)
    return _criterion(criterion, Outcome.failed, evidence,
                      f"{criterion.description} — `{command}` must exit 0.")


def _output(outcome: CommandResult, outcomes: Outcomes | None) -> str:
    """What the evidence quotes: a test runner's tally and failures (its canaries never), else the output's tail."""
    if outcomes is None or outcomes.report.counts is None:
        tail = (outcome.stdout + outcome.stderr).strip()[-600:]
        return f" Output: {tail}" if tail else ""
    counts = outcomes.report.counts
    failures = "; ".join(f"{f.test}: {f.message.splitlines()[0] if f.message else ''}"
                         for f in outcomes.report.failures[:3])
    return (f" {counts.total} tests: {counts.passed} passed, {counts.failed} failed, {counts.skipped} skipped."
            + (f" Failed: {failures}"[:1200] if failures else ""))


def is_held_out(command: str, held_out: list[str]) -> bool:
    """Whether a custom criterion's command runs a held-out eval: it names one of the held-out paths.

    Example:
        >>> is_held_out("python3 -m pytest -q evals", ["evals"]), is_held_out("pytest tests", ["evals"])
        (True, False)
    """
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    paths = [p.strip("/") for p in held_out if p.strip("/")]
    return any(word.strip("./") == path or word.strip("./").startswith(f"{path}/") for word in words for path in paths)


def skipped_manual(criterion: SuccessCriterion, reason: str) -> CriterionResult:
    """A manual criterion nobody could judge: skipped, and a required one blocks the pass."""
    return _criterion(criterion, Outcome.skipped, reason,
                      "Configure an evaluator engine (SPRINTFLOW_EVALUATOR_ENGINE) or verify by hand.")


MANUAL_FILE_CHARS = 20_000
MANUAL_FILE_BYTES = 4 << 20
"""A file longer than this is not shown to the evaluator engine at all."""
MANUAL_PROMPT_CHARS = 100_000


def manual_prompt(criterion: SuccessCriterion, contract: SprintContract, workspace: Path) -> str:
    """What an evaluator engine reads to judge a manual criterion by inspecting the code."""
    parts = [
        ("You are the evaluator of a coding sprint. Judge ONE success criterion by reading the code "
         "in the current directory. Be strict: if you cannot verify it, it fails."),
        f"## Sprint\n{contract.title}\n{contract.description}",
        f"## Criterion {criterion.criterion_id}\n{criterion.description}",
        f"## Evaluator notes\n{contract.evaluator_notes}",
        ('Answer with one JSON object only: {"result": "pass" or "fail", "evidence": "what you read, '
         'with file:line", "feedback": "if it fails: what is wrong and what should happen instead"}'),
    ]
    budget = MANUAL_PROMPT_CHARS - sum(map(len, parts))
    for name in contract.estimated_files:
        if budget <= 0:
            break
        try:  # what the engine reads (and what may be stored of its answer) never comes from outside
            data = read_confined(workspace, name, MANUAL_FILE_BYTES)
        except (OutsideWorkspace, OSError):
            continue
        text = data.decode("utf-8", errors="replace")[: min(MANUAL_FILE_CHARS, budget)]
        budget -= len(text)
        parts.append(f"## File {name}\n```\n{text}\n```")
    return "\n\n".join(parts) + "\n"


def judge_manual(criterion: SuccessCriterion, reply: EngineReply) -> CriterionResult:
    """The evaluator engine's verdict; an unusable answer fails closed with the raw text kept."""
    if not reply.ok:
        return _criterion(criterion, Outcome.failed,
                          f"The evaluator engine failed ({reply.reason}); raw output: {reply.raw[:500]!r}",
                          "Nothing verified this criterion; re-run when the evaluator engine works.")
    answer = extract_json(reply.text, prefer=("result",)) or {}
    verdict = str(answer.get("result", "")).lower()
    evidence = str(answer.get("evidence") or "").strip()
    if verdict not in ("pass", "fail") or not evidence:
        return _criterion(criterion, Outcome.failed,
                          f"The evaluator engine's answer has no result and evidence: {reply.text[:500]!r}",
                          "Nothing verified this criterion; the evaluator engine must answer in JSON.")
    outcome = Outcome.passed if verdict == "pass" else Outcome.failed
    return _criterion(criterion, outcome, f"Evaluator engine: {evidence}", str(answer.get("feedback") or ""))
