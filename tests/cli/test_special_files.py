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


def test_the_report_skips_a_fifo_ledger_and_says_so(tmp_path):
    # The report reads many workspaces' ledgers: one that is not a file is skipped and named, never waited on,
    # also when no evaluation was readable (the summary used to end before its problems).
    os.makedirs(tmp_path / ".sprintflow")
    os.mkfifo(tmp_path / ".sprintflow" / "bugs.ndjson")
    done = _sprintflow("report", ".", "--out", str(tmp_path / "out"), "--no-flow", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"{tmp_path / '.sprintflow' / 'bugs.ndjson'}: a FIFO, not a regular file" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
