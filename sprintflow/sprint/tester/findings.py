"""What a tester step's journal entry means for the evaluation: blocking issues and notes."""

from __future__ import annotations

from sprintflow.evaluate.strategies import strategy_for
from sprintflow.schemas import ProjectConfig, StrategyType
from sprintflow.schemas.journal import TesterJournal

from .prompt import tester_settings

__all__ = ["evaluator_runs_tests", "tester_findings"]


def evaluator_runs_tests(project: ProjectConfig) -> bool:
    """Whether an evaluator unit-test strategy names the tester's tests folder in its command.

    Then its failures reach the generator through the evaluation already; else
    :func:`tester_findings` passes them on as blocking issues.

    Example:
        >>> evaluator_runs_tests(ProjectConfig())
        False
    """
    tests_dir = tester_settings(project).tests_dir
    return any(s.type is StrategyType.unit_test and tests_dir in (strategy_for(s, project).command() or "")
               for s in project.strategies())


def tester_findings(entry: TesterJournal, previous: TesterJournal | None,
                    evaluated: bool) -> tuple[list[str], list[str]]:
    """Blocking issues and notes for the evaluation, from a tester step's journal entry.

    Blocking: files the tester changed outside its sandbox; its failing tests
    unless the evaluator runs them itself (``evaluated``); a run that crashed
    twice in a row (the seed escalates a repeated crash to the coder). Notes: a
    first crash, a failed engine call, every self-check problem.

    Example:
        >>> from sprintflow.schemas.journal import EngineCall
        >>> entry = TesterJournal(status="finished", mode="test", run_id="r", restored=["src/app.py"],
        ...                       engine=EngineCall(ok=True))
        >>> tester_findings(entry, None, evaluated=True)[0]
        ['The tester wrote outside its sandbox; restored: src/app.py']
    """
    blocking: list[str] = []
    notes = [f"Tester self-check: {problem}" for problem in entry.self_check]
    if entry.restored:
        blocking.append("The tester wrote outside its sandbox; restored: " + ", ".join(entry.restored[:20]))
    if entry.engine is not None and not entry.engine.ok:
        notes.append(f"The tester engine failed ({entry.engine.reason}); the tests already written were run.")
    if entry.crashed:
        again = bool(previous and previous.crashed)
        message = f"The tester's test run {entry.run_id} crashed: {entry.crash_reason}"
        (blocking if again else notes).append(message + (" (twice in a row)" if again else ""))
    elif not evaluated:
        blocking.extend(f"The tester's test {f.test} fails. Hint: {f.hint}" for f in entry.failures)
    return blocking, notes
