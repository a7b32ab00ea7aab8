"""One sprint or evaluation per workspace: a second process refuses, naming the first."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from sprintflow.errors import WorkspaceBusy
from sprintflow.io.locks import workspace_lock

HOLD = "import sys, time; from sprintflow.io.locks import workspace_lock\n" \
       "with workspace_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(30)\n"


def test_a_second_process_refuses_and_a_killed_holder_releases_it(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(WorkspaceBusy, match=rf"pid {holder.pid} .* is working on this workspace"):
            with workspace_lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    with workspace_lock(tmp_path):  # the kernel released the dead holder's lock
        pass


def test_a_waiting_holder_is_told_who_holds_it_and_runs_when_it_lets_go(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD.replace("time.sleep(30)", "sys.stdin.readline()"),
                               str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    told: list[str] = []

    def let_go(who: str) -> None:
        told.append(who)
        holder.stdin.write("done\n")
        holder.stdin.flush()

    try:
        assert holder.stdout.readline().strip() == "held"
        with workspace_lock(tmp_path, on_busy=let_go):
            assert holder.wait(timeout=30) == 0  # the block ran only once the holder was gone
    finally:
        holder.kill()
        holder.wait()
    assert len(told) == 1 and f"pid {holder.pid} " in told[0]
