"""From results to what the generator reads: score, regressions, feedback items, summary.

One feedback item per distinct problem, ordered by what to fix first, each with
file:line where known, what should happen instead, and how to reproduce it; see
:func:`generator_feedback`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sprintflow.evaluate.environment import DeclaredDependencies, EnvironmentFailure, classify_environment
from sprintflow.evaluate.excerpt import relevant_output
from sprintflow.evaluate.reproduction import select_tests, split_js_id, test_runner
from sprintflow.evaluate.under_test import code_under_test
from sprintflow.judge.areas import is_test
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

__all__ = [
    "find_regressions",
    "generator_feedback",
    "overall_result",
    "process_items",
    "score",
    "strategy_environment_failure",
    "summarize",
    "with_process_items",
]

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
                       regressions: list[Regression], commands: dict[str, str],
                       workspace: Path | None = None, held_out_feedback: str = "opaque",
                       touched: Sequence[str] = ()) -> list[GeneratorFeedback]:
    """One actionable item per distinct problem, in the order the generator should fix them.

    * A strategy that failed because of its environment (see
      :mod:`~sprintflow.evaluate.environment`) gives one ``environment`` item with
      what to fix; its diagnostics are symptoms and are not listed.
    * The same diagnostic from several strategies (build and typecheck both
      reporting one TS2322, four test files failing on it) is one item naming them all.
    * A failed strategy without a parsed error carries the relevant part of its output.
    * Criterion and regression items are not repeated when a strategy's items
      already explain them: those items say which criterion they block and that
      they regressed.
    * A failed test is named by its runner's id, and its reproduction runs exactly that test
      (:mod:`.reproduction`); when it failed in the test itself, the item points at the code the
      test exercises (:mod:`.under_test`), the test's own line named beside it.
    * Order: priority, then files the change touched, then environment, located diagnostics,
      other failures, criteria, regressions, notes. A strategy's items beyond
      ``MAX_ITEMS_PER_STRATEGY`` are its least urgent ones, never its first nor one in a touched
      file, and one item says how many of which were left out.

    Args:
        strategies, criteria, regressions: the evaluation's results.
        commands: each strategy's command, for the reproduction step.
        workspace: where the evaluation ran; its manifests tell a missing declared
            dependency (an environment failure) from an import the code got wrong.
        held_out_feedback: what an item of a failed held-out eval tells (``opaque``: its criterion
            and description; ``summary``: also how many of its tests failed). Never its output.
        touched: the files the judged change touched; their items come first.
    """
    declared = DeclaredDependencies.from_workspace(workspace) if workspace else None
    regressed = {match[1]: r for r in regressions if (match := _STRATEGY_REGRESSION.match(r.description))}
    environment: dict[tuple[str, str | None], _Item] = {}
    problems: dict[tuple, _Item] = {}
    others: list[_Item] = []
    context = _Context(workspace, frozenset(touched))
    for result in strategies:
        command = commands.get(result.strategy) or None
        reproduction = f"Run: {command}" if command else None
        if result.result is Outcome.skipped:
            others.append(_Item(_skipped_item(result, reproduction), _NOTE, [result.strategy]))
            continue
        if result.result is not Outcome.failed:
            continue
        failure = strategy_environment_failure(result, declared)
        if failure is not None:
            _add_environment(environment, failure, result, reproduction)
            continue
        errors = [d for d in result.diagnostics if d.severity == "error"]
        if not errors:
            others.append(_Item(_unparsed_item(result, reproduction), _UNPARSED, [result.strategy]))
            continue
        shown, left_out = _shown(errors, context.touched)
        for d in shown:
            _add_diagnostic(problems, result, d, reproduction, command, context)
        if left_out:
            others.append(_Item(_more_item(result, left_out, reproduction), _UNPARSED, [result.strategy]))
    explained = [*environment.values(), *problems.values(), *others]
    held_out = {c.criterion_id for c in criteria if c.held_out}
    items = [*explained, *_criterion_items(criteria, strategies, explained, held_out_feedback),
             *_regression_items(regressions, regressed, explained, held_out)]
    for item in items:
        item.touched = bool(item.item.file and item.item.file in context.touched)
    return [item.render() for item in sorted(items, key=_Item.order)]


@dataclass(frozen=True)
class _Context:
    """What every item of one evaluation is judged against."""

    workspace: Path | None
    touched: frozenset[str]


def _shown(errors: list[Diagnostic], touched: frozenset[str]) -> tuple[list[Diagnostic], list[Diagnostic]]:
    """A strategy's errors to list, and those left out: the first and every one in a touched file are
    always listed; beyond ``MAX_ITEMS_PER_STRATEGY`` the rest, in the tool's order, are left out."""
    shown = [d for i, d in enumerate(errors) if i == 0 or (d.file and d.file in touched)]
    for d in errors:
        if len(shown) >= MAX_ITEMS_PER_STRATEGY:
            break
        if not any(d is kept for kept in shown):
            shown.append(d)
    return shown, [d for d in errors if not any(d is kept for kept in shown)]


# As find_regressions words a strategy's regression.
_STRATEGY_REGRESSION = re.compile(r"^The (\S+) strategy passed in ")
# Kinds of item, in the order they are shown within one priority.
_ENVIRONMENT, _LOCATED, _UNLOCATED, _UNPARSED, _CRITERION, _REGRESSION, _NOTE = range(7)


@dataclass
class _Item:
    """A feedback item being built: merged strategies, tests, criteria and regressions."""

    item: GeneratorFeedback
    kind: int
    strategies: list[str]
    code: str | None = None
    messages: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)
    criteria: list[str] = field(default_factory=list)
    regressed_in: str | None = None
    command: str | None = None
    """The check's command, changed into each failing test's own reproduction."""
    runner: str | None = None
    asserted_at: str | None = None
    """Where the test failed, when the item points at the code it exercises instead."""
    touched: bool = False
    reproduction_is_tests: bool = True
    """False when the item's own reproduction is another strategy's command (the build's)."""

    def order(self) -> tuple[int, bool, int, bool, int, str, int]:
        return (self.kind == _NOTE, self.item.priority is Priority.low, _PRIORITY_ORDER[self.item.priority],
                not self.touched, self.kind, self.item.file or "~", self.item.line or 0)

    def render(self) -> GeneratorFeedback:
        if self.kind not in (_LOCATED, _UNLOCATED):
            return self._annotated(self.item.description)
        head = ", ".join(self.strategies) + (f" {self.code}" if self.code else "")
        text = f"{head}: " + "\n".join(self.messages)
        if self.tests:
            shown = ", ".join(self.tests[:5]) + (f" (+{len(self.tests) - 5} more)" if len(self.tests) > 5 else "")
            text += f"\nFailing test{'s' if len(self.tests) > 1 else ''}: {shown}"
            text += f" (it failed at {self.asserted_at})." if self.asserted_at else "."
        selected = (select_tests(self.command, self.runner, self.tests[:20])
                    if self.command and self.runner and self.tests else None)
        if selected is not None and self.reproduction_is_tests:
            self.item = self.item.model_copy(update={"reproduction": f"Run: {selected}"})
        elif selected is not None:  # a compiler's error the tests failed on too: both reproduce it
            self.item = self.item.model_copy(update={
                "reproduction": f"{self.item.reproduction or ''}; the failing tests alone: {selected}".lstrip("; ")})
        return self._annotated(text)

    def _annotated(self, text: str) -> GeneratorFeedback:
        if self.criteria:
            text += f" Blocks criterion {', '.join(self.criteria)}."
        update: dict[str, object] = {"description": text[:_MAX_DESCRIPTION]}
        if self.regressed_in:
            update["description"] = (text + f" This passed in {self.regressed_in} (a regression).")[:_MAX_DESCRIPTION]
            update["category"] = Category.regression
        return self.item.model_copy(update=update)


_MAX_DESCRIPTION = 4000


def _problem_key(d: Diagnostic) -> tuple:
    """Diagnostics with one key are one problem: same place and code (or message, for code-less findings).

    Test failures at one place are one problem whatever the test: a parametrised
    assertion failing for three inputs, or four test files failing on one type error.
    """
    if d.code and not d.code.startswith("sc-"):
        return (d.file, d.line, d.code)
    if (d.test or d.tool in _TEST_TOOLS) and d.file and d.line:  # a failing test, whichever runner's
        return (d.file, d.line)
    return (d.file, d.line, d.message)


_TEST_TOOLS = {"vitest", "jest", "junit", "playwright", "pytest", "go"}
"""Runners whose failures are told by their tool even without a test id (EvalResults written before ids)."""


def _add_diagnostic(problems: dict[tuple, _Item], result: StrategyResult, d: Diagnostic,
                    reproduction: str | None, command: str | None, context: _Context) -> None:
    key = _problem_key(d)
    test, message = _split_test(d)
    existing = problems.get(key)
    if existing is None:
        item = _diagnostic_item(result.strategy, d, _strategy_priority(result), reproduction)
        asserted_at = None
        if test and d.file and is_test(d.file) and context.workspace is not None:
            # The generator may change the code, not the test: point at what the test exercises.
            target = code_under_test(context.workspace, d.file, d.line)
            if target is not None:
                asserted_at = f"{d.file}:{d.line}" if d.line else d.file
                item = item.model_copy(update={"file": target[0], "line": target[1]})
        problems[key] = _Item(item, _LOCATED if item.file and item.line else _UNLOCATED, [result.strategy],
                              code=d.code if d.code and not d.code.startswith("sc-") else None,
                              messages=[message + (f" Hint: {d.hint}" if d.hint else "")],
                              tests=[test] if test else [], command=command,
                              runner=test_runner(d.tool, command or ""), asserted_at=asserted_at)
        return
    if result.strategy not in existing.strategies:
        existing.strategies.append(result.strategy)
        priority = _strategy_priority(result)
        if _PRIORITY_ORDER[priority] < _PRIORITY_ORDER[existing.item.priority]:
            existing.item = existing.item.model_copy(update={"priority": priority})
    if test and test not in existing.tests:
        existing.tests.append(test)
    if test and existing.runner is None and (runner := test_runner(d.tool, command or "")) is not None:
        existing.command, existing.runner, existing.reproduction_is_tests = command, runner, False
    if message not in existing.messages and len(existing.messages) < 3 and not d.test and d.tool not in _TEST_TOOLS:
        existing.messages.append(message)


def _split_test(d: Diagnostic) -> tuple[str | None, str]:
    """A failed test's id and error (its message is ``<test name>: <error>``, the name as the runner
    printed it); other tools' messages are the error."""
    if d.test:
        titles = split_js_id(d.test)[1]
        for name in (d.test, " > ".join(titles), " › ".join(titles), " ".join(titles), d.test.split(" ", 1)[-1]):
            if d.message.startswith(f"{name}: "):
                return d.test, d.message[len(name) + 2:]
        return d.test, d.message
    if d.tool in _TEST_TOOLS and ": " in d.message:
        test, message = d.message.split(": ", 1)
        return test, message
    return None, d.message


def strategy_environment_failure(result: StrategyResult,
                                 declared: DeclaredDependencies | None) -> EnvironmentFailure | None:
    """The environment failure behind a failed strategy, from all it said; None when the code is to blame."""
    text = "\n".join([result.output, result.details, *(d.message for d in result.diagnostics)])
    return classify_environment(text, result.exit_code, declared)


def _add_environment(found: dict[tuple[str, str | None], _Item], failure: EnvironmentFailure,
                     result: StrategyResult, reproduction: str | None) -> None:
    key = (failure.kind.value, failure.subject)
    if key in found:
        found[key].strategies.append(result.strategy)
        item = found[key].item
        found[key].item = item.model_copy(update={"description": item.description.replace(
            " could not run", f", {result.strategy} could not run", 1)})
        return
    item = GeneratorFeedback(
        priority=Priority.critical, category=Category.environment,
        description=f"{result.strategy} could not run because of the environment, not the code "
                    f"({failure.kind.value}): {failure.evidence}",
        expected=failure.hint, reproduction=reproduction)
    found[key] = _Item(item, _ENVIRONMENT, [result.strategy])


def _skipped_item(result: StrategyResult, reproduction: str | None) -> GeneratorFeedback:
    return GeneratorFeedback(priority=Priority.medium, category=Category.quality,
                             description=f"{result.strategy} was skipped: {result.details}",
                             expected="The strategy is configured so it can run.", reproduction=reproduction)


def _unparsed_item(result: StrategyResult, reproduction: str | None) -> GeneratorFeedback:
    """A failure no parser could locate: the details, and what the tool said that matters."""
    excerpt = relevant_output(result.output)
    description = f"{result.strategy} failed: {result.details}"
    if excerpt:
        description += f"\nOutput:\n{excerpt}"
    return GeneratorFeedback(priority=_strategy_priority(result), category=Category.bug,
                             description=description,
                             expected=_EXPECTED.get(result.strategy, "The check exits 0."), reproduction=reproduction)


def _more_item(result: StrategyResult, left_out: list[Diagnostic], reproduction: str | None) -> GeneratorFeedback:
    """What a cap left out: how many, of which rules, in which files."""
    rules: dict[str, int] = {}
    for d in left_out:
        rules[d.code or "no rule"] = rules.get(d.code or "no rule", 0) + 1
    files = sorted({d.file for d in left_out if d.file})
    kinds = ", ".join(f"{rule} ×{n}" for rule, n in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))[:8])
    where = ", ".join(files[:8]) + (f" and {len(files) - 8} more files" if len(files) > 8 else "")
    return GeneratorFeedback(
        priority=_strategy_priority(result), category=Category.bug,
        description=f"{len(left_out)} more {result.strategy} errors not listed here ({kinds})"
                    + (f" in {where}" if where else "") + "; fix the ones above first, then re-run.",
        expected=_EXPECTED.get(result.strategy, "The check exits 0."), reproduction=reproduction)


def _criterion_items(criteria: list[CriterionResult], strategies: list[StrategyResult],
                     explained: list[_Item], held_out_feedback: str = "opaque") -> list[_Item]:
    """Criteria the strategy items explain become notes on them; the others are items of their own
    (a held-out eval's names it and its description only)."""
    by_details = {s.details: s.strategy for s in strategies if s.result is not Outcome.passed and s.details}
    items = []
    for criterion in criteria:
        if criterion.result is Outcome.passed:
            continue
        strategy = by_details.get(criterion.evidence)
        owners = [item for item in explained if strategy in item.strategies]
        if owners:
            for owner in owners:
                owner.criteria.append(criterion.criterion_id)
            continue
        item = _held_out_item(criterion, held_out_feedback) if criterion.held_out else _criterion_item(criterion)
        items.append(_Item(item, _CRITERION, []))
    return items


_COUNTS = re.compile(r"(\d+) (failed|passed|skipped|error)")


def _held_out_item(criterion: CriterionResult, mode: str) -> GeneratorFeedback:
    """A failed held-out eval, as the generator may learn of it: which, and what it asks; never its
    source, assertions, values or output (which would stop it being held out)."""
    summary = ""
    if mode == "summary":
        counts = {what: int(n) for n, what in _COUNTS.findall(criterion.evidence.split("Output:")[0])}
        summary = f" ({counts.get('failed', 0)} of its tests failed)" if counts else ""
    return GeneratorFeedback(
        priority=Priority.high if criterion.required else Priority.medium, category=Category.missing_feature,
        description=f"Held-out criterion {criterion.criterion_id} {criterion.result.value}{summary}: "
                    f"{criterion.description} (a held-out eval: what it checks is not shown)",
        expected=criterion.description)


def _regression_items(regressions: list[Regression], regressed: dict[str, Regression],
                      explained: list[_Item], held_out: frozenset[str] | set[str] = frozenset()) -> list[_Item]:
    """Regressions the strategy and criterion items already carry are marked on them, not repeated
    (a held-out eval's without its evidence)."""
    items = []
    for regression in regressions:
        strategy = next((name for name, r in regressed.items() if r is regression), None)
        criterion = regression.description.split(" ")[1] if regression.description.startswith("Criterion ") else None
        owners = [item for item in explained
                  if (strategy and strategy in item.strategies) or (criterion and criterion in item.criteria)]
        if owners:
            previous = _previous_eval(regression.description)
            for owner in owners:
                owner.regressed_in = owner.regressed_in or previous
                if regression.severity == "critical":
                    owner.item = owner.item.model_copy(update={"priority": Priority.critical})
            continue
        items.append(_Item(GeneratorFeedback(
            priority=Priority.critical, category=Category.regression,
            file=regression.affected_files[0] if regression.affected_files else None,
            description=regression.description,
            expected="What worked in the previous iteration keeps working.",
            reproduction=None if criterion in held_out else regression.evidence[:500]), _REGRESSION, []))
    return items


def _previous_eval(description: str) -> str:
    match = re.search(r"passed in (\S+) and fails now", description)
    return match[1] if match else "the previous evaluation"


def with_process_items(feedback: list[GeneratorFeedback], blocking_issues: list[str],
                       notes: list[str]) -> list[GeneratorFeedback]:
    """The evaluation's items around the sprint process's: blocking ones first, notes after every failure.

    Example:
        >>> items = with_process_items([], ["The generator step failed: timeout."], ["Files changed outside x"])
        >>> [i.priority.value for i in items]
        ['critical', 'low']
    """
    return [*process_items(blocking_issues, []), *feedback, *process_items([], notes)]


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


def _criterion_item(criterion: CriterionResult) -> GeneratorFeedback:
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
    # A note is never the most critical issue while a failure is there.
    top = next((i for i in feedback if i.priority is not Priority.low), feedback[0] if feedback else None)
    if top is None:
        return head + " No single finding explains the failure; see the criteria results."
    where = f" at {top.file}:{top.line}" if top.file and top.line else (f" in {top.file}" if top.file else "")
    # The files to change: not the tests the generator may not change (their items name the code).
    focus = list(dict.fromkeys(i.file for i in feedback
                               if i.priority in (Priority.critical, Priority.high) and i.file and not is_test(i.file)))
    focus_text = (f" The Generator should focus on {', '.join(focus[:3])}." if focus
                  else f" The Generator should focus on the {top.priority.value} items first.")
    # Cut at a word, said to be cut: half a test name reads as a name.
    described = top.description if len(top.description) <= 300 else top.description[:300].rsplit(None, 1)[0] + " …"
    return f"{head} The most critical issue{where}: {described.rstrip('.')}.{focus_text}"
