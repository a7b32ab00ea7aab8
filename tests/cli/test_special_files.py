"""A FIFO where a document, a report or the bug ledger should be is one located error, never a wait.

Each command runs in a child with a deadline: a command that opened the FIFO for reading would block there.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _sprintflow(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("args, fifo", [
    (["validate", "contract.json"], "contract.json"),
    (["testrun", "parse", "report.xml", "--format", "junit"], "report.xml"),
    (["bugs", "list", "--workspace", "."], ".sprintflow/bugs.ndjson"),
], ids=["validate", "testrun-parse", "bugs-list"])
def test_a_fifo_is_refused_at_once(tmp_path, args, fifo):
    (tmp_path / fifo).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(tmp_path / fifo)
    done = _sprintflow(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "a FIFO, not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_the_report_refuses_a_fifo_ledger_at_once(tmp_path):
    # Not a torn line (skipped and listed) but no ledger at all: one located line, exit 2, never a wait.
    os.makedirs(tmp_path / ".sprintflow")
    os.mkfifo(tmp_path / ".sprintflow" / "bugs.ndjson")
    done = _sprintflow("report", ".", "--out", str(tmp_path / "out"), "--no-flow", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"{tmp_path / '.sprintflow' / 'bugs.ndjson'}: a FIFO, not a regular file" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out").exists()


def test_a_report_with_no_evaluation_still_names_what_it_skipped(tmp_path):
    (tmp_path / ".sprintflow").mkdir()
    (tmp_path / ".sprintflow" / "bugs.ndjson").write_text('{"id": "bug-1", "status": "open"\n')
    done = _sprintflow("report", ".", "--out", str(tmp_path / "out"), "--no-flow", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "1 unreadable lines or files skipped:" in done.stdout and "bugs.ndjson:1:" in done.stdout
