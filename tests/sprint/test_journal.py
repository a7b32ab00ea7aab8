"""The iteration journal is a typed record: written whole, and read back only when it is one."""

from __future__ import annotations

import os

from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas.journal import EngineCall, IterationJournal, JudgedChange, TesterJournal
from sprintflow.sprint.journal import read_journal, write_journal


def test_a_journal_round_trips_with_the_tester_step_inside(tmp_path):
    entry = IterationJournal(ok=True, cost_usd=0.25, hidden_writes=["evals/x.py"],
                             change=JudgedChange(admitted=["src/a.py (modified)"]), pin_id="pin-1",
                             tester=TesterJournal(status="finished", mode="retry", run_id="run-1",
                                                  engine=EngineCall(ok=True, cost_usd=0.1)))
    write_journal(tmp_path, "sprint-s-1", 1, entry)
    back = read_journal(tmp_path, "sprint-s-1", 1)
    assert back == entry and back.tester.engine_finished
    text = WorkspaceLayout(tmp_path).journal_file("sprint-s-1", 1).read_text()
    assert '"costUsd": 0.25' in text and '"hiddenWrites"' in text and '"runId": "run-1"' in text


def test_a_journal_that_is_not_one_is_not_taken_as_a_finished_step(tmp_path):
    path = WorkspaceLayout(tmp_path).journal_file("sprint-s-1", 1)
    path.parent.mkdir(parents=True)
    for text in ('{"ok": tr', '{"reason": "no ok"}', '["a"]', '{"ok": true, "tester": {"status": 3}}'):
        path.write_text(text)
        assert read_journal(tmp_path, "sprint-s-1", 1) is None, text
    path.unlink()
    os.mkfifo(path)  # never opened: reading it would block
    assert read_journal(tmp_path, "sprint-s-1", 1) is None
    path.unlink()
    path.symlink_to("/etc/passwd")
    assert read_journal(tmp_path, "sprint-s-1", 1) is None
