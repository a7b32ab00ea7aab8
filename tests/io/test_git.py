"""The HEAD commit read from a repository's files is git's own answer, in every shape a repository takes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sprintflow.io.git import _head_from_files, head_sha


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()


def _repo(tmp_path: Path, *extra: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main", *extra)
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    return repo


def test_a_branch_in_its_own_ref_file_packed_or_detached_reads_as_git_says(tmp_path):
    repo = _repo(tmp_path)
    truth = _git(repo, "rev-parse", "HEAD")
    assert _head_from_files(repo / ".git") == truth == head_sha(repo)
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert _head_from_files(repo / ".git") == truth
    (repo / "a.txt").write_text("two\n")
    _git(repo, "commit", "-q", "-am", "two")
    second = _git(repo, "rev-parse", "HEAD")  # a loose ref beside a stale packed one: the loose one counts
    assert _head_from_files(repo / ".git") == second == head_sha(repo)
    _git(repo, "checkout", "-q", "--detach", truth)
    assert _head_from_files(repo / ".git") == truth == head_sha(repo)


def test_a_sha256_repository_reads_as_git_says(tmp_path):
    repo = _repo(tmp_path, "--object-format=sha256")
    truth = _git(repo, "rev-parse", "HEAD")
    assert len(truth) == 64 and _head_from_files(repo / ".git") == truth


def test_what_the_files_cannot_tell_is_left_to_git(tmp_path):
    """An unborn branch, a worktree's .git file, a HEAD that is a link out or a FIFO or names a path that
    climbs out: no answer from the files (git's answer stands). A workspace inside a repository has its HEAD."""
    unborn = tmp_path / "unborn"
    unborn.mkdir()
    _git(unborn, "init", "-q", "-b", "main")
    assert _head_from_files(unborn / ".git") is None and head_sha(unborn) is None

    repo = _repo(tmp_path)
    truth = _git(repo, "rev-parse", "HEAD")
    _git(repo, "worktree", "add", "-q", str(tmp_path / "tree"), "-b", "other")
    assert (tmp_path / "tree" / ".git").is_file()
    assert _head_from_files(tmp_path / "tree" / ".git") is None
    (repo / "sub").mkdir()
    assert _head_from_files(repo / "sub" / ".git") is None and head_sha(repo / "sub") == truth  # the repository above

    (repo / ".git" / "HEAD").write_text("ref: refs/../../../outside\n")
    assert _head_from_files(repo / ".git") is None
    (repo / ".git" / "HEAD").unlink()
    (repo / ".git" / "HEAD").symlink_to(tmp_path / "tree" / ".git")
    assert _head_from_files(repo / ".git") is None
    (repo / ".git" / "HEAD").unlink()
    subprocess.run(["mkfifo", str(repo / ".git" / "HEAD")], check=True)
    assert _head_from_files(repo / ".git") is None  # and it returned: nothing blocked on the FIFO
