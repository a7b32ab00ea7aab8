"""The bugs.ndjson lifecycle: dedup, transitions, reopen, torn lines, concurrent writers, the fold."""

import json
import multiprocessing
import os
import re
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sprintflow.errors import InputError, TransitionError
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.testruns.bugs import (
    RUNNER_TEST_NAME,
    TRANSITIONS,
    fold_bugs,
    list_bugs,
    open_bug,
    sync_bugs,
    transition_bug,
)
from sprintflow.testruns.testrun import build_test_run, record_test_run


@contextmanager
def scratch_dir():
    """tmpfs when there is one: the lock and append code is the same, only fsync is cheaper."""
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=base) as folder:
        yield Path(folder)


@pytest.fixture
def path(tmp_path):
    return WorkspaceLayout(tmp_path).bugs_file


def test_a_failure_opens_one_bug_in_the_seeds_form(path):
    opened = open_bug(path, unit="todo-be", test_name="缺 body title → 400", run_id="run-1",
                      detail="TypeError: ...", got=500)
    bug = opened.bug
    assert opened.action == "opened" and path == path.parent / "bugs.ndjson"
    assert re.fullmatch(r"bug-\d{8}-\d{4}-[0-9a-f]{4}", bug.id)
    assert (bug.status, bug.source, bug.severity, bug.category) == ("open", "unit_test", "high", "unknown")
    assert bug.affected_units == ["todo-be"] and bug.title == "缺 body title → 400"
    record = json.loads(path.read_text())
    assert record["unit"] == "todo-be" and record["test_name"] == "缺 body title → 400"
    assert record["created_at"] == record["updated_at"] and record["reopen_count"] == 0


def test_the_same_failure_reuses_its_active_bug(path):
    first = open_bug(path, unit="u", test_name="t", run_id="run-1").bug
    transition_bug(path, first.id, "fixing", by="coder")
    again = open_bug(path, unit="u", test_name="t", run_id="run-2")
    assert again.action == "reused" and again.bug.id == first.id and again.bug.status == "fixing"
    other_unit = open_bug(path, unit="v", test_name="t", run_id="run-2")
    assert other_unit.action == "opened" and other_unit.bug.id != first.id
    assert len(path.read_text().splitlines()) == 3  # open, fixing, the other unit's open


def test_the_lifecycle_records_who_and_which_fix(path):
    bug = open_bug(path, unit="u", test_name="auth rejects a bad token", run_id="run-1").bug
    assert bug.severity == "critical"
    transition_bug(path, bug.id, "fixing", by="coder")
    fixed = transition_bug(path, bug.id, "fixed", by="tester", fix_refs=["run-2"], run_id="run-2")
    assert (fixed.status, fixed.by, fixed.fix_refs, fixed.from_status) == ("fixed", "tester", ["run-2"], "fixing")
    assert fold_bugs(path).bugs[bug.id] == fixed
    assert [json.loads(line)["status"] for line in path.read_text().splitlines()] == ["open", "fixing", "fixed"]


def test_a_fixed_bug_failing_again_is_reopened_and_counted(path):
    bug = open_bug(path, unit="u", test_name="t", run_id="run-1").bug
    transition_bug(path, bug.id, "fixed", by="tester", fix_refs=["run-2"])
    reopened = open_bug(path, unit="u", test_name="t", run_id="run-3", detail="new stack")
    assert reopened.action == "reopened" and reopened.bug.id == bug.id
    assert reopened.bug.detail == "new stack"
    assert (reopened.bug.status, reopened.bug.reopened, reopened.bug.reopen_count) == ("open", True, 1)
    assert reopened.bug.run_id == "run-3" and reopened.bug.fix_refs == ["run-2"]
    transition_bug(path, bug.id, "fixed", by="tester")
    assert transition_bug(path, bug.id, "open", by="tester").reopen_count == 2


@pytest.mark.parametrize("steps, to", [([], "open"), (["fixing"], "open"), (["fixed"], "fixing"),
                                       ([], "closed")])
def test_illegal_transitions_raise_and_write_nothing(path, steps, to):
    bug = open_bug(path, unit="u", test_name="t", run_id="run-1").bug
    for step in steps:
        transition_bug(path, bug.id, step)
    before = path.read_bytes()
    with pytest.raises(TransitionError, match=bug.id):
        transition_bug(path, bug.id, to)
    assert path.read_bytes() == before


def test_an_unknown_bug_is_an_input_error(path):
    with pytest.raises(InputError, match="no bug 'bug-x'"):
        transition_bug(path, "bug-x", "fixed")


def test_a_runner_crash_is_an_infra_bug(path):
    bug = open_bug(path, unit="u", test_name="<vitest>", run_id="run-1", source="unit_test_infra").bug
    assert bug.source == "unit_test_infra"
    assert [b.id for b in list_bugs(path, unit="u", statuses=["open"])] == [bug.id]
    assert list_bugs(path, unit="other") == [] and list_bugs(path, statuses=["fixed"]) == []


def test_a_torn_last_line_is_skipped_reported_and_kept(path):
    bug = open_bug(path, unit="u", test_name="t", run_id="run-1").bug
    with path.open("a") as handle:
        handle.write('{"id": "bug-torn", "status": "fix')  # a writer died mid-line
    fold = fold_bugs(path)
    assert list(fold.bugs) == [bug.id]
    assert fold.problems == [f"{path}:2: torn line (a writer crashed mid-write)"]
    transition_bug(path, bug.id, "fixed")  # still works; the new record gets its own line
    fold = fold_bugs(path)
    assert fold.bugs[bug.id].status == "fixed"
    assert len(fold.problems) == 1 and fold.problems[0].startswith(f"{path}:2: invalid JSON")
    assert '{"id": "bug-torn", "status": "fix\n' in path.read_text()  # never rewritten


def test_lines_that_are_not_bugs_are_reported_not_fatal(path):
    bug = open_bug(path, unit="u", test_name="t", run_id="run-1").bug
    with path.open("a") as handle:
        handle.write('{"id": "bug-y", "status": "vanished"}\n[1, 2]\n\n')
    fold = fold_bugs(path)
    assert list(fold.bugs) == [bug.id]
    assert [p.split(": ")[1] for p in fold.problems] == ["not a bug record", "not a bug record"]
    assert fold_bugs(path.parent / "missing.ndjson").bugs == {}


def test_records_written_with_the_seeds_unit_id_are_read(path):
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({
        "id": "bug-20260513-1031-c9f2", "status": "open", "source": "unit_test", "unit_id": "todo-be",
        "run_id": "run-20260513-1031", "test_name": "缺 body title → 400", "category": "unknown",
        "severity": "high", "created_at": "2026-05-13T10:31:00Z", "updated_at": "2026-05-13T10:31:00Z",
    }, ensure_ascii=False) + "\n")
    assert open_bug(path, unit="todo-be", test_name="缺 body title → 400", run_id="r").action == "reused"
    fixed = transition_bug(path, "bug-20260513-1031-c9f2", "fixed", by="tester")
    assert json.loads(path.read_text().splitlines()[-1])["unit"] == fixed.unit == "todo-be"


def test_a_file_replaced_at_the_same_path_is_folded_afresh(path):
    open_bug(path, unit="u", test_name="t", run_id="run-1")
    fold_bugs(path)
    path.unlink()
    second = open_bug(path, unit="u", test_name="t2", run_id="run-1").bug
    assert list(fold_bugs(path).bugs) == [second.id]


# --- several processes at once -----------------------------------------------------------------

def _lifecycles(path, worker, count):
    for i in range(count):
        bug = open_bug(path, unit=f"unit-{worker}", test_name=f"test {i}", run_id="run-1",
                       detail="x" * (i % 300)).bug
        transition_bug(path, bug.id, "fixing", by=f"coder-{worker}")
        transition_bug(path, bug.id, "fixed", by="tester", fix_refs=[f"run-{i}"])


def _same_failures(path, count, barrier):
    barrier.wait()
    for i in range(count):
        open_bug(path, unit="shared", test_name=f"test {i}", run_id="run-1")


def _run(target, processes, args_of):
    workers = [multiprocessing.Process(target=target, args=args_of(w)) for w in range(processes)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0] * processes


def test_concurrent_writers_lose_and_tear_nothing():
    processes, bugs_each = 4, 250  # 3000 events
    with scratch_dir() as folder:
        path = WorkspaceLayout(folder).bugs_file
        started = time.perf_counter()
        _run(_lifecycles, processes, lambda w: (path, w, bugs_each))
        elapsed = time.perf_counter() - started
        lines = path.read_text().splitlines()
        fold = fold_bugs(path)
    print(f"\n{processes} processes x {bugs_each * 3} events: {elapsed:.2f} s")
    assert len(lines) == processes * bugs_each * 3 and fold.problems == []
    assert len(fold.bugs) == processes * bugs_each
    assert {bug.status for bug in fold.bugs.values()} == {"fixed"}
    assert sorted((b.unit, b.test_name) for b in fold.bugs.values()) == sorted(
        (f"unit-{w}", f"test {i}") for w in range(processes) for i in range(bugs_each))


def test_concurrent_reports_of_the_same_failures_open_each_bug_once():
    processes, failures = 4, 200
    with scratch_dir() as folder:
        path = WorkspaceLayout(folder).bugs_file
        barrier = multiprocessing.Barrier(processes)
        _run(_same_failures, processes, lambda w: (path, failures, barrier))
        lines = path.read_text().splitlines()
        fold = fold_bugs(path)
    assert len(lines) == failures and len(fold.bugs) == failures and fold.problems == []


# --- the fold against a reference model ---------------------------------------------------------

KEYS = st.sampled_from([("u1", "a"), ("u1", "b"), ("u2", "a")])
OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("report"), KEYS),
    st.tuples(st.just("move"), KEYS, st.sampled_from(["open", "fixing", "fixed", "wontfix"])),
), max_size=15)


class ReferenceModel:
    """The rules in their plainest form: a dict of key -> (status, reopen count)."""

    def __init__(self):
        self.bugs = {}

    def report(self, key):
        status, reopens = self.bugs.get(key, (None, 0))
        if status is None:
            self.bugs[key] = ("open", 0)
        elif status == "fixed":
            self.bugs[key] = ("open", reopens + 1)

    def move(self, key, to):
        status, reopens = self.bugs[key]
        if to not in TRANSITIONS.get(status, ()):
            return False
        self.bugs[key] = (to, reopens + (status == "fixed"))
        return True


@settings(max_examples=80, deadline=None)
@given(OPERATIONS)
def test_fold_matches_the_reference_model(operations):
    model = ReferenceModel()
    with scratch_dir() as folder:
        path = WorkspaceLayout(folder).bugs_file
        ids = {}
        for operation in operations:
            if operation[0] == "report":
                key = operation[1]
                ids[key] = open_bug(path, unit=key[0], test_name=key[1], run_id="run-1").bug.id
                model.report(key)
            elif operation[1] in ids:
                _, key, to = operation
                legal = model.move(key, to)
                try:
                    transition_bug(path, ids[key], to, by="tester")
                    assert legal
                except TransitionError:
                    assert not legal
        fold = fold_bugs(path)
    assert {(b.unit, b.test_name): (b.status, b.reopen_count) for b in fold.bugs.values()} == model.bugs
    assert fold.problems == []


# --- bridging test runs (the seed's samples A, B and C) ------------------------------------------

REPORT = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "jest" / "30.5.2.json"


def judged(report_text, run_id, exit_code=1):
    return build_test_run(report_text, "jest", run_id=run_id, exit_code=exit_code,
                          roots=["/tmp/sfrec/jest30"])


def all_green(report_text):
    data = json.loads(report_text)
    for suite in data["testResults"]:
        suite["status"] = "passed"
        for test in suite["assertionResults"]:
            test["status"] = "passed" if test["status"] == "failed" else test["status"]
    return json.dumps(data)


def test_failures_open_bugs_once_and_green_tests_fix_them(tmp_path):
    red = REPORT.read_text()
    first = sync_bugs(tmp_path, judged(red, "run-1"), unit="api", run_id="run-1")
    assert len(first.bugs_opened) == 6 and first.bugs_transitioned == []
    ids = [f.bug_id for f in first.test_run.failures]
    assert ids == first.bugs_opened
    bugs = fold_bugs(WorkspaceLayout(tmp_path).bugs_file).bugs
    assert bugs[ids[0]].severity == "high" and bugs[ids[0]].title.endswith("expected 404, got 500")

    again = sync_bugs(tmp_path, judged(red, "run-2"), unit="api", run_id="run-2")
    assert again.bugs_opened == [] and [f.bug_id for f in again.test_run.failures] == ids

    green = sync_bugs(tmp_path, judged(all_green(red), "run-3", 0), unit="api", run_id="run-3")
    fixed = {t["id"] for t in green.bugs_transitioned}
    assert len(fixed) == 5 and all(t["to"] == "fixed" for t in green.bugs_transitioned)
    bugs = fold_bugs(WorkspaceLayout(tmp_path).bugs_file).bugs
    assert all(bugs[i].fix_refs == ["run-3"] for i in fixed)
    assert [b.test_name for b in bugs.values() if b.status == "open"] == ["tests/broken.test.js"]

    regression = sync_bugs(tmp_path, judged(red, "run-4"), unit="api", run_id="run-4")
    assert regression.bugs_opened == []
    assert {t["id"] for t in regression.bugs_transitioned} == fixed
    assert {t["from"] for t in regression.bugs_transitioned} == {"fixed"}


def test_a_crashed_runner_opens_an_infra_bug_until_a_run_works(tmp_path):
    crashed = build_test_run(None, "vitest", run_id="run-1", exit_code=1, stderr="SyntaxError")
    sync = sync_bugs(tmp_path, crashed, unit="profile-be", run_id="run-1")
    bug = fold_bugs(WorkspaceLayout(tmp_path).bugs_file).bugs[sync.bugs_opened[0]]
    assert (bug.source, bug.test_name) == ("unit_test_infra", RUNNER_TEST_NAME)
    assert "SyntaxError" in bug.detail
    works = sync_bugs(tmp_path, judged(REPORT.read_text(), "run-2"), unit="profile-be", run_id="run-2")
    assert {"id": bug.id, "from": "open", "to": "fixed"} in works.bugs_transitioned


def test_sample_a_result_json_names_the_bug_of_each_failure(tmp_path):
    run = judged(REPORT.read_text(), "run-20260513-1031")
    sync = sync_bugs(tmp_path, run, unit="api", run_id=run.run_id)
    folder = record_test_run(tmp_path, run.run_id, sync.test_run, "stdout", "stderr")
    result = json.loads((folder / "result.json").read_text())
    assert [f["bug_id"] for f in result["failures"]] == sync.bugs_opened
    assert set(sync.bugs_opened) == set(fold_bugs(WorkspaceLayout(tmp_path).bugs_file).bugs)
