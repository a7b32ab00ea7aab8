"""Workspaces from a git repository and branch: cloned into the checkout cache, then kept up to date."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sprintflow.errors import WorkspaceError
from sprintflow.io.checkouts import CHECKOUTS_ENV

from .conftest import deployed_flows

deployed = deployed_flows()


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def origin(tmp_path) -> Path:
    """A repository with a ``feature`` branch, as a team's remote would hold it."""
    repo = tmp_path / "origin"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    git("config", "user.email", "t@example.com", cwd=repo)
    git("config", "user.name", "t", cwd=repo)
    (repo / "app.txt").write_text("v1\n")
    git("add", ".", cwd=repo)
    git("commit", "-qm", "v1", cwd=repo)
    git("checkout", "-qb", "feature", cwd=repo)
    return repo


def test_clones_the_branch_then_follows_it_keeping_results(origin, tmp_path, monkeypatch):
    monkeypatch.setenv(CHECKOUTS_ENV, str(tmp_path / "checkouts"))
    source = deployed.WorkspaceSource(workspace=".", git_url=f"file://{origin}", git_branch="feature")
    first = deployed.checkout.fn(source.git_url, source.git_branch)
    assert Path(first, "app.txt").read_text() == "v1\n"
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=Path(first)).strip() == "feature"

    Path(first, ".sprintflow").mkdir()
    Path(first, ".sprintflow", "kept.json").write_text("{}")
    Path(first, "stray.txt").write_text("left by a generator")
    (origin / "app.txt").write_text("v2\n")
    git("commit", "-qam", "v2", cwd=origin)

    again = deployed.checkout.fn(source.git_url, source.git_branch)
    assert again == first
    assert Path(again, "app.txt").read_text() == "v2\n"
    assert Path(again, ".sprintflow", "kept.json").exists()  # history survives updates
    assert not Path(again, "stray.txt").exists()


def test_a_plain_path_works_too_and_a_missing_one_is_refused(origin, tmp_path, monkeypatch):
    monkeypatch.setenv(CHECKOUTS_ENV, str(tmp_path / "checkouts"))
    cloned = deployed.checkout.fn(str(origin), "main")
    assert Path(cloned, "app.txt").exists()
    with pytest.raises(WorkspaceError, match="does not exist"):
        deployed.resolve_workspace(deployed.WorkspaceSource(workspace=str(tmp_path / "nope")))
    with pytest.raises(WorkspaceError, match="git clone"):
        deployed.checkout.fn(str(tmp_path / "not-a-repo"), "main")
