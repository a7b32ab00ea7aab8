"""What the generator reads: the contract, its notes, the files to touch, the last feedback."""

from __future__ import annotations

from sprintflow.schemas import EvalResult, SprintContract

__all__ = ["generator_prompt"]


def generator_prompt(contract: SprintContract, iteration: int, previous: EvalResult | None) -> str:
    """What the generator reads: the contract, its notes, the files to touch, the last feedback."""
    criteria = "\n".join(f"- {c.criterion_id} ({c.verification_method.value}"
                         f"{', required' if c.required else ''}): {c.description}"
                         for c in contract.success_criteria)
    parts = [
        f"# Sprint {contract.sprint_number}: {contract.title} (iteration {iteration})",
        contract.description,
        f"## Success criteria\n{criteria}",
        f"## Generator notes\n{contract.generator_notes}",
        "## Files you are expected to touch\n" + "\n".join(f"- {f}" for f in contract.estimated_files),
        "How the work is judged is not yours to change. The judge takes your change to the project's "
        "files and judges a copy of its own: .sprintflow/ and the held-out evals are hidden from you; "
        "configuration (dotfiles, conftest.py, test-runner, linter and compiler configs, package.json "
        "scripts, sprintflow's config), the tests already there and new files at the project's top level "
        "are judged only when listed above; other changes to them are undone and fail the iteration. "
        "Caches, build output, .git/ and dependency folders are never judged: declare a dependency in the "
        "manifest and the lockfile. Add new modules and tests freely.",
    ]
    if previous is not None:
        feedback = "\n".join(
            f"- [{f.priority.value}/{f.category.value}] "
            + (f"{f.file}:{f.line} " if f.file and f.line else (f"{f.file} " if f.file else ""))
            + f"{f.description}\n  expected: {f.expected}"
            + (f"\n  reproduce: {f.reproduction}" if f.reproduction else "")
            for f in previous.generator_feedback)
        regressions = "\n".join(f"- ({r.severity}) {r.description}" for r in previous.regressions)
        parts.append(f"## Result of iteration {previous.iteration}: {previous.overall_result.upper()}\n"
                     f"{previous.summary}\n\n### Feedback\n{feedback or '(none)'}")
        if regressions:
            parts.append(f"### Regressions\n{regressions}")
    return "\n\n".join(parts) + "\n"


