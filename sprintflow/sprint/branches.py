"""Every iteration's attempt kept: the workspace committed on the contract's branch.

Written with git's plumbing on a private index (``add``, ``write-tree``, ``commit-tree``,
``update-ref``), through :func:`~sprintflow.io.git.git`, which trusts nothing of the
repository's config: no hook runs, HEAD, the user's index and work tree stay as they are, and
the held-out evals, the tester's tests and ``.sprintflow/`` are never committed (the branch is
readable by the generator).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sprintflow.errors import ConfigError, WorkspaceError
from sprintflow.io.git import git
from sprintflow.schemas import SprintContract
from sprintflow.schemas.config import branch_pattern_problem

__all__ = ["branch_name", "commit_iteration"]

def branch_name(pattern: str, contract: SprintContract) -> str:
    """The branch of ``contract`` for ``pattern`` (``sprintflow/{contractId}``).

    Raises:
        ConfigError: the pattern names another placeholder, or the name is not a branch git accepts.

    Example:
        >>> from sprintflow.schemas import SprintContract
        >>> contract = SprintContract.model_construct(contract_id="sprint-s-1", spec_id="s")
        >>> branch_name("sprintflow/{contractId}", contract)
        'sprintflow/sprint-s-1'
    """
    problem = branch_pattern_problem(pattern, contractId=contract.contract_id, specId=contract.spec_id)
    if problem:
        raise ConfigError(f"sprint.branchPattern {problem}")
    name = pattern.format(contractId=contract.contract_id, specId=contract.spec_id)
    return name


def commit_iteration(workspace: Path, branch_pattern: str, contract: SprintContract, iteration: int,
                     hide: Iterable[str] = ()) -> str | None:
    """Commit the workspace (minus ``hide`` and ``.sprintflow/``) on the contract's branch; None if not a repo."""
    if not (workspace / ".git").is_dir():
        return None
    ref = f"refs/heads/{branch_name(branch_pattern, contract)}"
    hidden = [".sprintflow", *hide]
    index = workspace / ".git" / "sprintflow-index"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        parent = _commit_of(workspace, ref) or _commit_of(workspace, "HEAD")
        git("read-tree", *([parent] if parent else ["--empty"]), cwd=workspace, env=env, hide=hide)
        git("add", "-A", cwd=workspace, env=env, hide=hide)
        # Hidden from git, they read as empty: out of the index altogether, whatever the parent held.
        git("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *hidden, cwd=workspace, env=env, hide=hide)
        tree = git("write-tree", cwd=workspace, env=env, hide=hide).strip()
        message = f"sprintflow: {contract.contract_id} iteration {iteration}\n".encode()
        identity = {"GIT_AUTHOR_NAME": "sprintflow", "GIT_AUTHOR_EMAIL": "sprintflow@localhost",
                    "GIT_COMMITTER_NAME": "sprintflow", "GIT_COMMITTER_EMAIL": "sprintflow@localhost"}
        commit = git("commit-tree", tree, *(["-p", parent] if parent else []), cwd=workspace, stdin=message,
                     env={**env, **identity}, hide=hide).strip()
        git("update-ref", ref, commit, cwd=workspace, hide=hide)
    finally:
        index.unlink(missing_ok=True)
    return commit


def _commit_of(workspace: Path, name: str) -> str | None:
    try:
        return git("rev-parse", "--verify", "-q", f"{name}^{{commit}}", cwd=workspace, timeout=30).strip() or None
    except WorkspaceError:
        return None
