"""The plain parts of a sprint: contracts in dependency order, the generator's prompt,
guardrails around the generator, the resumable iteration journal.

Resumability rests on three atomically written files per iteration, checked in
this order when a run starts again: the contract (``iterationHistory``), the
EvalResult of the iteration, and the journal that says the generator step of
the iteration finished. Whatever exists is reused; only what is missing runs.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from sprintflow.errors import DocumentError, Problem
from sprintflow.schemas import (
    ContractStatus,
    EvalResult,
    IterationRecord,
    ProjectConfig,
    SprintContract,
    utc_now,
)
from sprintflow.schemas.validation import parse_json_file, validate_data

from .evaluation import eval_path
from .guard import Snapshot, before_after_diff, matches, paths_scope
from .store import atomic_write_text, sprintflow_dir
from .workspace import file_hashes

__all__ = ["Guard", "GuardReport", "contracts_dir", "dependency_order", "generator_prompt", "journal_path",
           "load_contracts", "load_eval", "read_journal", "record_iteration", "write_contract", "write_journal"]


def contracts_dir(workspace: Path) -> Path:
    return sprintflow_dir(workspace) / "contracts"


def load_contracts(folder: Path) -> dict[str, tuple[Path, SprintContract]]:
    """Every contract in ``folder``, validated together (schema, seed rules, dependsOn, cycles)."""
    if not folder.is_dir():
        raise DocumentError([Problem(str(folder), "", "no contracts folder here (run `sprintflow plan` first)")])
    raw = {path: parse_json_file(path) for path in sorted(folder.glob("*.json"))}
    if not raw:
        raise DocumentError([Problem(str(folder), "", "no contract files (*.json) found")])
    known = {data.get("contractId") for data in raw.values() if isinstance(data, dict)}
    problems = [p for path, data in raw.items() for p in validate_data(data, "contract", str(path), known)]
    if problems:
        raise DocumentError(problems)
    contracts = {data["contractId"]: (path, SprintContract.model_validate(data)) for path, data in raw.items()}
    dependency_order({cid: c for cid, (_, c) in contracts.items()})  # raises on a cycle
    return contracts


def dependency_order(contracts: dict[str, SprintContract]) -> list[str]:
    """Contract ids so that every contract comes after what it depends on (ties: sprint number).

    Example:
        >>> dependency_order({"b": b_depends_on_a, "a": a})
        ['a', 'b']
    """
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(cid: str, path: list[str]) -> None:
        if state.get(cid) == "done":
            return
        if state.get(cid) == "visiting":
            cycle = " -> ".join(path[path.index(cid):] + [cid])
            raise DocumentError([Problem(cid, "dependsOn", f"dependency cycle: {cycle}")])
        state[cid] = "visiting"
        for dep in sorted(contracts[cid].depends_on, key=lambda d: contracts[d].sprint_number):
            visit(dep, path + [cid])
        state[cid] = "done"
        order.append(cid)

    for cid in sorted(contracts, key=lambda c: (contracts[c].sprint_number, c)):
        visit(cid, [])
    return order


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
        "Do not modify .sprintflow/, the held-out evals or other protected paths: changes there are "
        "detected, undone, and fail the iteration.",
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


def journal_path(workspace: Path, contract_id: str, iteration: int) -> Path:
    return sprintflow_dir(workspace) / "runs" / "sprint" / contract_id / f"iteration-{iteration}.json"


def write_journal(workspace: Path, contract_id: str, iteration: int, entry: dict) -> None:
    """Mark the generator step of an iteration as finished (atomic: present means done)."""
    atomic_write_text(journal_path(workspace, contract_id, iteration), json.dumps(entry, indent=2) + "\n")


def read_journal(workspace: Path, contract_id: str, iteration: int) -> dict | None:
    path = journal_path(workspace, contract_id, iteration)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def load_eval(workspace: Path, contract_id: str, iteration: int) -> EvalResult | None:
    """The EvalResult of one iteration, if it was written."""
    path = eval_path(workspace, f"eval-{contract_id}-{iteration}")
    return EvalResult.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def write_contract(path: Path, contract: SprintContract) -> None:
    atomic_write_text(path, contract.to_json())


def record_iteration(contract: SprintContract, result: EvalResult) -> None:
    """Append the iteration to the history (once), point lastEvalId at it."""
    if any(r.iteration == result.iteration for r in contract.iteration_history):
        return
    contract.iteration_history.append(IterationRecord(iteration=result.iteration, eval_id=result.eval_id,
                                                      result=result.overall_result, timestamp=result.timestamp))
    contract.last_eval_id = result.eval_id
    contract.updated_at = utc_now()


@dataclass
class GuardReport:
    """What the generator step changed that it should not have."""

    tampered: list[str] = field(default_factory=list)
    """Protected files changed, added or removed (all restored)."""
    unexpected: list[str] = field(default_factory=list)
    """Files changed outside the contract's estimatedFiles (reported, kept)."""
    changed: list[str] = field(default_factory=list)


class Guard:
    """Snapshots the protected paths before the generator runs; restores them after.

    Protected: ``.sprintflow/``, the held-out evals, ``protected_paths`` and any
    ``also`` (the tester's tests folder: the code writer must not weaken the tests
    that judge it).
    """

    def __init__(self, workspace: Path, project: ProjectConfig, contract: SprintContract,
                 also: tuple[str, ...] = ()):
        self.workspace = workspace
        self.protected = [".sprintflow", *project.sprint.held_out, *project.protected_paths, *also]
        self.expected = contract.estimated_files
        self.before_all = file_hashes(workspace)
        self.snapshot = Snapshot(workspace, paths_scope(self.protected))

    def check_and_restore(self) -> GuardReport:
        """Compare, restore any protected path that changed, and report."""
        tampered = self.snapshot.restore()
        changed = sorted(before_after_diff(self.before_all, file_hashes(self.workspace)))
        unexpected = [f for f in changed if not matches(f, self.expected)]
        return GuardReport(tampered=tampered, unexpected=unexpected, changed=changed)


def commit_iteration(workspace: Path, branch_pattern: str, contract: SprintContract, iteration: int) -> str | None:
    """Commit the workspace on the contract's branch so every attempt's diff is kept; None if not a repo."""
    if not (workspace / ".git").exists():
        return None
    branch = branch_pattern.format(contractId=contract.contract_id, specId=contract.spec_id)
    git = ["git", "-C", str(workspace), "-c", "user.name=sprintflow", "-c", "user.email=sprintflow@localhost"]
    current = subprocess.run([*git, "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True).stdout.strip()
    if current != branch:
        subprocess.run([*git, "checkout", "-q", "-B", branch], check=True, capture_output=True)
    subprocess.run([*git, "add", "-A", "--", ".", ":!.sprintflow"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m",
                    f"sprintflow: {contract.contract_id} iteration {iteration}"], check=True, capture_output=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()


def transition(contract: SprintContract, to: ContractStatus) -> bool:
    """Transition unless already there (resume may find the contract mid-change)."""
    if contract.status is to:
        return False
    contract.transition(to)
    return True
