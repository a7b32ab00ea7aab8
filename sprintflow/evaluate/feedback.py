"""From results to what the generator reads: score, regressions, feedback items, summary.

One feedback item per issue (one diagnostic, one failed criterion, one
regression), ordered critical → low, each with file:line where known, what
should happen instead, and how to reproduce it.
"""

from __future__ import annotations

from typing import Literal

from sprintflow.schemas import (
    Category,
    CriterionResult,
    Diagnostic,
    EvalResult,
    GeneratorFeedback,
    Outcome,
    Priority,
    Regression,
    Score,
    StrategyResult,
)

__all__ = ["find_regressions", "generator_feedback", "overall_result", "process_items", "score", "summarize"]

MAX_ITEMS_PER_STRATEGY = 20
_PRIORITY_ORDER = {p: i for i, p in enumerate(Priority)}
# Why each strategy's failure matters, phrased as what should happen instead.
_EXPECTED = {
    "build": "The build completes with exit code 0 and writes its output.",
    "typecheck": "The code type-checks with zero errors.",
    "lint": "The linter reports zero errors for this rule.",
    "unit-test": "The test passes.",
    "api-check": "The endpoint answers with the expected status and body keys.",
    "playwright": "The end-to-end test passes in a real browser.",
}


def score(criteria: list[CriterionResult]) -> Score:
    required = [c for c in criteria if c.required]
    return Score(
        criteria_total=len(criteria),
        criteria_passed=sum(c.result is Outcome.passed for c in criteria),
        criteria_failed=sum(c.result is Outcome.failed for c in criteria),
        criteria_skipped=sum(c.result is Outcome.skipped for c in criteria),
        required_passed=sum(c.result is Outcome.passed for c in required),
        required_failed=sum(c.result is not Outcome.passed for c in required),
        required_total=len(required),
    )


def overall_result(strategies: list[StrategyResult], criteria: list[CriterionResult]) -> Literal["pass", "fail"]:
    """Pass only when every required strategy and every required criterion passed.

    A required strategy may be ``skipped`` only where the seed allows it
    (Playwright not installed); a required criterion that was skipped blocks.
    """
    strategies_ok = all(s.result is not Outcome.failed for s in strategies if s.required)
    criteria_ok = all(c.result is Outcome.passed for c in criteria if c.required)
    return "pass" if strategies_ok and criteria_ok else "fail"


def find_regressions(previous: EvalResult | None, strategies: list[StrategyResult],
                     criteria: list[CriterionResult]) -> list[Regression]:
    """What passed in the previous evaluation of this contract and fails now."""
    if previous is None:
        return []
    regressions: list[Regression] = []
    before = {s.strategy: s for s in previous.strategy_results}
    for now in strategies:
        was = before.get(now.strategy)
        if was and was.result is Outcome.passed and now.result is Outcome.failed:
            regressions.append(Regression(
                description=f"The {now.strategy} strategy passed in {previous.eval_id} and fails now.",
                evidence=now.details, severity="critical" if now.required else "major",
                affected_files=sorted({d.file for d in now.diagnostics if d.file})))
    before_criteria = {c.criterion_id: c for c in previous.criteria_results}
    for now_c in criteria:
        was_c = before_criteria.get(now_c.criterion_id)
        if was_c and was_c.result is Outcome.passed and now_c.result is Outcome.failed:
            regressions.append(Regression(
                description=f"Criterion {now_c.criterion_id} passed in {previous.eval_id} and fails now: "
                            f"{now_c.description}",
                evidence=now_c.evidence, severity="critical" if now_c.required else "minor"))
    return regressions


def generator_feedback(strategies: list[StrategyResult], criteria: list[CriterionResult],
                       regressions: list[Regression], commands: dict[str, str]) -> list[GeneratorFeedback]:
    """One actionable item per issue, critical first."""
    items: list[GeneratorFeedback] = []
    for result in strategies:
        items.extend(_strategy_items(result, commands.get(result.strategy)))
    covered = {s.strategy for s in strategies if s.result is not Outcome.passed}
    for criterion in criteria:
        if criterion.result is not Outcome.passed:
            items.append(_criterion_item(criterion, covered))
    for regression in regressions:
        items.append(GeneratorFeedback(
            priority=Priority.critical, category=Category.regression,
            file=regression.affected_files[0] if regression.affected_files else None,
            description=regression.description,
            expected="What worked in the previous iteration keeps working.",
            reproduction=regression.evidence[:500]))
    return sorted(items, key=lambda item: _PRIORITY_ORDER[item.priority])


def process_items(blocking_issues: list[str], notes: list[str]) -> list[GeneratorFeedback]:
    """Findings about the sprint process itself: blocking ones are critical, notes are low."""
    blocking = [GeneratorFeedback(priority=Priority.critical, category=Category.bug, description=issue,
                                  expected="The generator step completes and leaves protected files untouched.")
                for issue in blocking_issues]
    low = [GeneratorFeedback(priority=Priority.low, category=Category.quality, description=note,
                             expected="Changes stay within the contract's estimatedFiles, or the contract lists them.")
           for note in notes]
    return blocking + low


def _strategy_priority(result: StrategyResult) -> Priority:
    if result.strategy in ("build", "typecheck") and result.required:
        return Priority.critical
    if result.strategy == "lint" or not result.required:
        return Priority.medium
    return Priority.high


def _strategy_items(result: StrategyResult, command: str | None) -> list[GeneratorFeedback]:
    reproduction = f"Run: {command}" if command else None
    if result.result is Outcome.skipped:
        return [GeneratorFeedback(priority=Priority.medium, category=Category.quality,
                                  description=f"{result.strategy} was skipped: {result.details}",
                                  expected="The strategy is configured so it can run.",
                                  reproduction=reproduction)]
    if result.result is not Outcome.failed:
        return []
    priority = _strategy_priority(result)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if not errors:
        return [GeneratorFeedback(priority=priority, category=Category.bug,
                                  description=f"{result.strategy} failed: {result.details}",
                                  expected=_EXPECTED.get(result.strategy, "The check exits 0."),
                                  reproduction=reproduction)]
    items = [_diagnostic_item(result.strategy, d, priority, reproduction)
             for d in errors[:MAX_ITEMS_PER_STRATEGY]]
    if len(errors) > MAX_ITEMS_PER_STRATEGY:
        items.append(GeneratorFeedback(
            priority=priority, category=Category.bug,
            description=f"{len(errors) - MAX_ITEMS_PER_STRATEGY} more {result.strategy} errors "
                        "not listed here; fix the ones above first, then re-run.",
            expected=_EXPECTED.get(result.strategy, "The check exits 0."), reproduction=reproduction))
    return items


def _diagnostic_item(strategy: str, d: Diagnostic, priority: Priority,
                     reproduction: str | None) -> GeneratorFeedback:
    code = f" {d.code}" if d.code and not d.code.startswith("sc-") else ""
    description = f"{strategy}{code}: {d.message}" + (f" Hint: {d.hint}" if d.hint else "")
    expected = _EXPECTED.get(strategy, "The check passes.")
    if d.expected is not None or d.received is not None:
        expected = f"Expected {d.expected}, received {d.received}. {expected}"
    category = Category.quality if strategy == "lint" else Category.bug
    if strategy == "api-check" and d.received == "404":
        category = Category.missing_feature
    return GeneratorFeedback(priority=priority, category=category, file=d.file, line=d.line,
                             description=description[:2000], expected=expected,
                             reproduction=reproduction)


def _criterion_item(criterion: CriterionResult, failing_strategies: set[str]) -> GeneratorFeedback:
    priority = Priority.high if criterion.required else Priority.medium
    category = Category.missing_feature if criterion.result is Outcome.failed else Category.quality
    return GeneratorFeedback(
        priority=priority, category=category,
        description=f"Criterion {criterion.criterion_id} {criterion.result.value}: "
                    f"{criterion.description} Evidence: {criterion.evidence}"[:2000],
        expected=criterion.feedback or criterion.description)


def summarize(contract_title: str, sprint_number: int, result: str, score_: Score,
              feedback: list[GeneratorFeedback]) -> str:
    """2–3 sentences: the result and score, the most critical issue, what to focus on."""
    head = (f"Sprint {sprint_number} ({contract_title}) {'PASSED' if result == 'pass' else 'FAILED'}: "
            f"{score_.required_passed} of {score_.required_total} required criteria passed "
            f"({score_.criteria_passed} of {score_.criteria_total} in all).")
    if result == "pass":
        tail = f" {len(feedback)} non-blocking note(s) remain." if feedback else ""
        return head + tail
    top = feedback[0] if feedback else None
    if top is None:
        return head + " No single finding explains the failure; see the criteria results."
    where = f" at {top.file}:{top.line}" if top.file and top.line else (f" in {top.file}" if top.file else "")
    focus = sorted({i.file for i in feedback if i.priority in (Priority.critical, Priority.high) and i.file})
    focus_text = (f" The Generator should focus on {', '.join(focus[:3])}." if focus
                  else f" The Generator should focus on the {top.priority.value} items first.")
    return f"{head} The most critical issue{where}: {top.description[:300].rstrip('.')}.{focus_text}"
