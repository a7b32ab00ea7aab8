"""Every iteration's diff kept: the workspace committed on the contract's branch."""

from __future__ import annotations

from pathlib import Path

from sprintflow.io.git import git
from sprintflow.schemas import SprintContract

__all__ = ["commit_iteration"]


def commit_iteration(workspace: Path, branch_pattern: str, contract: SprintContract, iteration: int) -> str | None:
    """Commit the workspace on the contract's branch so every attempt's diff is kept; None if not a repo."""
    if not (workspace / ".git").exists():
        return None
    branch = branch_pattern.format(contractId=contract.contract_id, specId=contract.spec_id)
    identity = ("-c", "user.name=sprintflow", "-c", "user.email=sprintflow@localhost")
    if git("rev-parse", "--abbrev-ref", "HEAD", cwd=workspace).strip() != branch:
        git("checkout", "-q", "-B", branch, cwd=workspace)
    git("add", "-A", "--", ".", ":!.sprintflow", cwd=workspace)
    git(*identity, "commit", "-q", "--allow-empty", "-m", f"sprintflow: {contract.contract_id} iteration {iteration}",
        cwd=workspace)
    return git("rev-parse", "HEAD", cwd=workspace).strip()
