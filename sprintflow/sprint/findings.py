"""What the generator step's journal entry means for the evaluation: blocking issues, notes, usage."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sprintflow.evaluate.environment import DeclaredDependencies
from sprintflow.evaluate.feedback import strategy_environment_failure
from sprintflow.schemas import EvalResult, Outcome
from sprintflow.schemas.journal import IterationJournal

__all__ = ["environment_blocker", "generator_findings", "generator_usage", "touched_files"]


def generator_usage(entry: IterationJournal, engine: str) -> dict[str, Any]:
    """What the generator step cost, for the history rows."""
    tokens = [entry.input_tokens, entry.output_tokens]
    return {"engine": engine, "cost": entry.cost_usd,
            "tokens": sum(t for t in tokens if t is not None) if any(t is not None for t in tokens) else None}


def generator_findings(entry: IterationJournal) -> tuple[list[str], list[str]]:
    """Blocking issues and notes for the evaluation, from the generator step's journal entry."""
    change = entry.change
    blocking = []
    if not entry.ok:
        blocking.append(f"The generator step failed: {entry.reason}. Its output is kept in the iteration's "
                        "journal.")
    if entry.hidden_writes:
        blocking.append("The generator wrote into files hidden from it (held-out evals, the tester's tests, "
                        "sprintflow's state), which were thrown away: " + ", ".join(entry.hidden_writes[:20]))
    if change.critical:
        blocking.append("Part of the generator's change reaches what judges the code, so it is not judged and was "
                        "undone in the workspace: " + "; ".join(change.critical[:20])
                        + (f"; and {len(change.critical) - 20} more" if len(change.critical) > 20 else ""))
    if change.reaches:
        blocking.append("Code the generator wrote reaches into the test runner that judges it: "
                        + "; ".join(change.reaches[:20]))
    notes = [f"Files changed outside estimatedFiles: {', '.join(change.unexpected[:20])}"] if change.unexpected else []
    notes += change.notes
    notes += [f"{rel} decides how the code is judged (configuration or an existing test); the contract lets the "
              f"generator change it, so the change is judged. Review it:\n{diff}"
              for rel, diff in change.reviewed.items()]
    if entry.uncontained:
        notes.append(f"The generator ran uncontained ({entry.uncontained}): it could read the held-out files, "
                     "write outside the workspace and leave processes behind.")
    return blocking, notes


def touched_files(entry: IterationJournal) -> list[str]:
    """The files the generator's judged change touched, from its journal entry (``src/a.py (modified)``).

    Example:
        >>> entry = {"ok": True, "change": {"admitted": ["src/a.py (modified)", "b c.py (created)"]}}
        >>> touched_files(IterationJournal.model_validate(entry))
        ['src/a.py', 'b c.py']
    """
    return [re.sub(r" \([^()]*\)$", "", admitted) for admitted in entry.change.admitted]


def environment_blocker(result: EvalResult, workspace: Path) -> str | None:
    """Why a failed evaluation says nothing about the code: a required strategy's environment broke.

    The sprint then stops the contract as blocked instead of spending a generator
    iteration on it, and the same iteration is judged again once the environment is fixed.
    """
    if result.overall_result == "pass":
        return None
    declared = DeclaredDependencies.from_workspace(workspace)
    for strategy in result.strategy_results:
        if strategy.required and strategy.result is Outcome.failed:
            failure = strategy_environment_failure(strategy, declared)
            if failure is not None:
                return f"{strategy.strategy}: {failure.evidence}. {failure.hint}"
    return None
