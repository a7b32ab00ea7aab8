"""What the generator step's journal entry means for the evaluation: blocking issues, notes, usage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sprintflow.evaluate.environment import DeclaredDependencies
from sprintflow.evaluate.feedback import strategy_environment_failure
from sprintflow.schemas import EvalResult, Outcome

__all__ = ["environment_blocker", "generator_findings", "generator_usage"]


def generator_usage(entry: dict[str, Any], engine: str) -> dict[str, Any]:
    """What the generator step cost, for the history rows."""
    tokens = [entry.get("inputTokens"), entry.get("outputTokens")]
    return {"engine": engine, "cost": entry.get("costUsd"),
            "tokens": sum(t for t in tokens if t is not None) if any(t is not None for t in tokens) else None}


def generator_findings(entry: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Blocking issues and notes for the evaluation, from the generator step's journal entry."""
    blocking = []
    if not entry["ok"]:
        blocking.append(f"The generator step failed: {entry['reason']}. Its output is kept in the iteration "
                        "journal under .sprintflow/runs/sprint/.")
    if entry["tampered"]:
        blocking.append("The generator changed protected files, which were restored: "
                        + ", ".join(entry["tampered"][:20]))
    if entry.get("hiddenWrites"):
        blocking.append("The generator wrote into files hidden from it (held-out evals, the tester's tests, "
                        "sprintflow's state), which were thrown away: " + ", ".join(entry["hiddenWrites"][:20]))
    if entry.get("harness"):
        blocking.append("The generator changed files that decide how the code is judged (test-runner and linter "
                        "configuration, conftest.py, package.json scripts, sprintflow's config), which were "
                        "restored: " + ", ".join(entry["harness"][:20]))
    if entry.get("tests"):
        blocking.append("The generator changed or deleted existing tests, which were restored (add tests, do not "
                        "weaken the ones there): " + ", ".join(entry["tests"][:20]))
    if entry.get("reaches"):
        blocking.append("Code the generator wrote reaches into the test runner that judges it: "
                        + "; ".join(entry["reaches"][:20]))
    notes = ([f"Files changed outside estimatedFiles: {', '.join(entry['unexpected'][:20])}"]
             if entry["unexpected"] else [])
    notes += [f"{rel} decides how the code is judged (a harness file or an existing test); the contract lets the "
              f"generator change it, so the change is kept. Review it:\n{diff}"
              for rel, diff in (entry.get("reviewed") or {}).items()]
    if entry.get("uncontained"):
        notes.append(f"The generator ran uncontained ({entry['uncontained']}): it could read the held-out files "
                     "and leave processes behind.")
    return blocking, notes


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
