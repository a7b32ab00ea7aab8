"""The history dataset: tidy rows, atomic appends, compaction under readers, importers."""

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sprintflow.errors import DocumentError, WorkspaceError
from sprintflow.history import dataset as history
from sprintflow.history import sources
from sprintflow.history.dataset import EVAL_SCHEMA, EVALS, append_rows, compact, read_table
from sprintflow.history.records import eval_rows, record_evaluation
from sprintflow.history.sources import bug_rows, load_history, score_rows
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas import EvalResult


def make_eval(contract="sprint-spec-1-1", iteration=1, result="fail", timestamp="2026-05-13T10:31:00Z",
              strategies=(("lint", "pass"), ("unit-test", "fail")), criteria=(("sc-1-1", "pass"),),
              regressions=0) -> EvalResult:
    passed = sum(r == "pass" for _, r in criteria)
    return EvalResult.model_validate({
        "evalId": f"eval-{contract}-{iteration}", "contractId": contract, "specId": "spec-1",
        "timestamp": timestamp, "iteration": iteration, "overallResult": result, "summary": "s",
        "score": {"criteriaTotal": len(criteria), "criteriaPassed": passed,
                  "criteriaFailed": len(criteria) - passed, "criteriaSkipped": 0, "requiredPassed": passed,
                  "requiredFailed": len(criteria) - passed, "requiredTotal": len(criteria)},
        "strategyResults": [{"strategy": name, "required": True, "result": r, "durationMs": 1200,
                             "errorCount": 0 if r == "pass" else 2} for name, r in strategies],
        "criteriaResults": [{"criterionId": cid, "description": "d", "required": True, "result": r,
                             "evidence": "e"} for cid, r in criteria],
        "regressions": [{"description": "x", "evidence": "y", "severity": "major"}] * regressions,
    })


def rows_for(result: EvalResult, **extra):
    fields = {"workspace_hash": "h1", "git_sha": None, "executor": "local", "image": None, "run_id": "r1"}
    return eval_rows(result, **{**fields, **extra})


def test_history_dir_defaults_to_the_workspace_and_the_setting_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    assert WorkspaceLayout(Path(tmp_path)).history_dir == tmp_path / ".sprintflow" / "history"
    monkeypatch.setenv("SPRINTFLOW_HISTORY", str(tmp_path / "shared"))
    assert WorkspaceLayout(Path(tmp_path)).history_dir == tmp_path / "shared"


def test_one_evaluation_becomes_tidy_rows():
    rows = rows_for(make_eval(regressions=1), engine="claude", tokens=1200, cost=0.02,
                    methods={"sc-1-1": "unit-test"})
    assert [(r["kind"], r.get("name"), r["result"]) for r in rows] == [
        ("evaluation", None, "fail"), ("strategy", "lint", "pass"), ("strategy", "unit-test", "fail"),
        ("criterion", "sc-1-1", "pass")]
    evaluation, lint, _, criterion = rows
    assert (evaluation["regressions"], evaluation["tokens"], evaluation["cost_usd"]) == (1, 1200, 0.02)
    assert (lint["duration_ms"], lint["error_count"], lint["cached"]) == (1200, 0, False)
    assert criterion["method"] == "unit-test"
    assert {r["contract_id"] for r in rows} == {"sprint-spec-1-1"} and {r["iteration"] for r in rows} == {1}
    assert str(rows[0]["timestamp"]) == "2026-05-13 10:31:00+00:00"
    assert set(rows[0]) <= set(EVAL_SCHEMA.names)


def test_rows_become_the_same_table_pyarrow_would_build_from_them():
    """Rows are converted through Arrow's JSON reader (no pandas import); the table must be
    what ``pa.Table.from_pylist`` makes of them: odd text, nulls, NaN, huge ints, any time offset, long lines."""
    import datetime as dt

    import pyarrow as pa

    odd = 'quote " backslash \\ newline \n line-separator \u2028 emoji \U0001F600 nul \x00'
    rows = [*rows_for(make_eval(contract="c-1"), engine=odd, tokens=2**62, cost=float("nan")),
            {"kind": "evaluation", "timestamp": dt.datetime(2026, 5, 13, 12, 31, 0, 999999,
                                                            tzinfo=dt.timezone(dt.timedelta(hours=2))),
             "recorded_at": dt.datetime(2026, 5, 13, 10, 31), "cost_usd": float("inf"), "iteration": None,
             "image": "x" * (3 << 19), "not_a_column": "left out"}]  # a line longer than the reader's block
    ours = history.as_table(EVALS, rows)
    theirs = pa.Table.from_pylist([{n: r.get(n) for n in EVAL_SCHEMA.names} for r in rows], schema=EVAL_SCHEMA)
    assert ours.schema == EVAL_SCHEMA and ours.to_pylist()[1:] == theirs.to_pylist()[1:]
    first, expected = ours.to_pylist()[0], theirs.to_pylist()[0]
    assert first["engine"] == odd and first["cost_usd"] != first["cost_usd"]  # NaN stays NaN
    assert {k: v for k, v in first.items() if k != "cost_usd"} == {k: v for k, v in expected.items() if k != "cost_usd"}
    assert history.as_table(EVALS, []).num_rows == 0


def test_appends_write_new_files_atomically_and_read_back_in_the_schema(tmp_path):
    first = append_rows(tmp_path, EVALS, rows_for(make_eval()))
    second = append_rows(tmp_path, EVALS, rows_for(make_eval(iteration=2, result="pass")))
    assert first != second and first.parent == tmp_path / "evals"
    assert sorted(p.name for p in (tmp_path / "evals").iterdir() if not p.name.startswith(".compact")) == \
        sorted([first.name, second.name])  # no temp file left behind
    assert append_rows(tmp_path, EVALS, []) is None
    frame = read_table(tmp_path, EVALS)
    assert list(frame.columns) == EVAL_SCHEMA.names and len(frame) == 8
    assert frame.groupby("kind").size().to_dict() == {"criterion": 2, "evaluation": 2, "strategy": 4}


def test_a_missing_table_reads_as_empty_with_its_columns(tmp_path):
    frame = read_table(tmp_path, EVALS)
    assert frame.empty and list(frame.columns) == EVAL_SCHEMA.names
    assert list(read_table(tmp_path, EVALS, columns=["kind", "result"]).columns) == ["kind", "result"]


def test_since_keeps_rows_at_or_after_the_bound(tmp_path):
    append_rows(tmp_path, EVALS, rows_for(make_eval(timestamp="2026-05-01T00:00:00Z")))
    append_rows(tmp_path, EVALS, rows_for(make_eval(iteration=2, timestamp="2026-05-13T00:00:00Z")))
    assert set(read_table(tmp_path, EVALS, since="2026-05-13").iteration) == {2}
    assert set(read_table(tmp_path, EVALS, since="2026-05-01T00:00:00+00:00").iteration) == {1, 2}


def test_many_small_files_are_compacted_into_one_without_losing_a_row(tmp_path):
    for i in range(1, 8):
        append_rows(tmp_path, EVALS, rows_for(make_eval(iteration=i)), compact_after=4)
    files = sorted((tmp_path / "evals").glob("part-*.parquet"))
    assert len(files) <= 4 and any(f.name.endswith("-compacted.parquet") for f in files)
    frame = read_table(tmp_path, EVALS)
    assert sorted(frame[frame.kind == "evaluation"].iteration) == list(range(1, 8))
    merged = compact(tmp_path, EVALS)
    assert [p.name for p in (tmp_path / "evals").glob("part-*.parquet")] == [merged.name]
    assert len(read_table(tmp_path, EVALS)) == 7 * 4
    assert compact(tmp_path, EVALS) is None  # one file: nothing to do


def test_a_reader_never_counts_a_row_twice_while_a_compaction_runs(tmp_path, monkeypatch):
    for i in range(1, 4):
        append_rows(tmp_path, EVALS, rows_for(make_eval(iteration=i)))
    real_read, compacted = pq.read_table, []

    def read_then_compact(path, **kwargs):
        table = real_read(path, **kwargs)
        if not compacted:  # a compactor merges and deletes right after our first read
            compacted.append("running")
            compacted[0] = compact(tmp_path, EVALS)
        return table

    monkeypatch.setattr(history.pq, "read_table", read_then_compact)
    frame = read_table(tmp_path, EVALS)
    assert compacted[0] is not None
    assert sorted(frame[frame.kind == "evaluation"].iteration) == [1, 2, 3]


def test_a_merged_file_hides_the_sources_it_names_before_they_are_removed(tmp_path, monkeypatch):
    for i in range(1, 4):
        append_rows(tmp_path, EVALS, rows_for(make_eval(iteration=i)))
    monkeypatch.setattr(Path, "unlink", lambda self, missing_ok=False: None)  # crash before the removal
    compact(tmp_path, EVALS)
    assert len(list((tmp_path / "evals").glob("part-*.parquet"))) == 4
    assert len(read_table(tmp_path, EVALS)) == 3 * 4


def test_a_table_that_keeps_vanishing_is_an_error_not_a_loop(tmp_path, monkeypatch):
    append_rows(tmp_path, EVALS, rows_for(make_eval()))

    def vanished(path, **kwargs):
        raise FileNotFoundError(path)

    monkeypatch.setattr(history.pq, "read_table", vanished)
    with pytest.raises(WorkspaceError, match="vanishing"):
        read_table(tmp_path, EVALS)


def _append_many(folder: str, writer: int) -> int:
    for i in range(1, 13):
        rows = rows_for(make_eval(contract=f"c-{writer}", iteration=i))
        append_rows(folder, EVALS, rows, compact_after=5)
    return writer


def test_concurrent_writers_and_compactors_keep_every_row_once(tmp_path):
    # forkserver, not fork: the session may already run Prefect's threads, which fork would copy mid-lock.
    with ProcessPoolExecutor(4, mp_context=multiprocessing.get_context("forkserver")) as pool:
        list(pool.map(_append_many, [str(tmp_path)] * 4, range(4)))
    frame = read_table(tmp_path, EVALS)
    evaluations = frame[frame.kind == "evaluation"]
    assert len(frame) == 4 * 12 * 4
    assert evaluations.groupby("contract_id").iteration.apply(sorted).to_dict() == {
        f"c-{w}": list(range(1, 13)) for w in range(4)}


def test_record_evaluation_adds_the_git_sha_and_the_contract_methods(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    contracts = tmp_path / ".sprintflow" / "contracts"
    contracts.mkdir(parents=True)
    contract = json.loads((Path(__file__).parents[2] / "examples/python-api/.sprintflow/contracts"
                           ).glob("*.json").__next__().read_text())
    contract["contractId"] = "sprint-spec-1-1"
    contract["successCriteria"][0]["criterionId"] = "sc-1-1"
    (contracts / "sprint-spec-1-1.json").write_text(json.dumps(contract))
    path = record_evaluation(tmp_path, make_eval(), content_hash="abc", executor="docker",
                             image="img:1", run_id="flow-run-1")
    assert path.parent == tmp_path / ".sprintflow" / "history" / "evals"
    frame = read_table(WorkspaceLayout(Path(tmp_path)).history_dir, EVALS)
    assert set(frame.workspace_hash) == {"abc"} and set(frame.executor) == {"docker"}
    assert frame.git_sha.isna().all()  # not a git repository
    assert frame.loc[frame.kind == "criterion", "method"].tolist() == [
        contract["successCriteria"][0]["verificationMethod"]]
    assert set(frame.workspace) == {str(tmp_path.resolve())}



def test_record_evaluation_takes_the_methods_from_the_contract_it_judged_not_from_a_file_of_that_id(
        tmp_path, monkeypatch):
    # The contract judged may live anywhere (--contract); a file of the same id in the workspace's
    # contracts folder, if any, is another document.
    from sprintflow.schemas import SprintContract

    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    data = json.loads((Path(__file__).parents[2] / "examples/python-api/.sprintflow/contracts"
                       ).glob("*.json").__next__().read_text())
    data["contractId"] = "sprint-spec-1-1"
    data["successCriteria"][0]["criterionId"] = "sc-1-1"
    judged = SprintContract.model_validate(data)
    other = {**data, "successCriteria": [{**data["successCriteria"][0], "verificationMethod": "manual"}]}
    _write(tmp_path / ".sprintflow" / "contracts" / "sprint-spec-1-1.json", json.dumps(other))
    record_evaluation(tmp_path, make_eval(), content_hash="abc", executor="local", image=None, run_id="r",
                      contract=judged)
    frame = read_table(WorkspaceLayout(Path(tmp_path)).history_dir, EVALS)
    assert frame.loc[frame.kind == "criterion", "method"].tolist() == [
        judged.success_criteria[0].verification_method.value]
    assert judged.success_criteria[0].verification_method.value != "manual"

def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_bug_events_are_read_with_torn_lines_reported(tmp_path):
    lines = [{"id": "bug-1", "status": "open", "event": "open", "unit": "u", "test_name": "t",
              "run_id": "r", "created_at": "2026-05-01T00:00:00Z", "updated_at": "2026-05-01T00:00:00Z"},
             {"id": "bug-1", "status": "fixed", "event": "transition", "from_status": "open", "unit": "u",
              "test_name": "t", "run_id": "r", "created_at": "2026-05-01T00:00:00Z",
              "updated_at": "2026-05-01T06:00:00Z"}]
    _write(tmp_path / ".sprintflow" / "bugs.ndjson", "".join(json.dumps(x) + "\n" for x in lines) + '{"id": "bu')
    problems = []
    frame = bug_rows(tmp_path, problems)
    assert frame[["bug_id", "event", "status"]].values.tolist() == [
        ["bug-1", "open", "open"], ["bug-1", "transition", "fixed"]]
    assert frame.updated_at.iloc[1] == pd.Timestamp("2026-05-01T06:00:00Z")
    assert len(problems) == 1 and "torn line" in problems[0]


def test_score_rows_speak_snake_case(tmp_path):
    row = {"kind": "score", "recordedAt": "2026-05-01T00:00:00Z", "skill": "triage", "total": 8, "passed": 7,
           "failed": 1, "score": 0.875, "promptSha256": "ab" * 32, "costUsd": 0.01, "inputTokens": 10}
    _write(tmp_path / ".sprintflow" / "history" / "scores.ndjson", json.dumps(row) + "\n")
    frame = score_rows(tmp_path)
    assert frame[["skill", "score", "prompt_sha256", "cost_usd", "input_tokens"]].values.tolist() == [
        ["triage", 0.875, "ab" * 32, 0.01, 10]]


def test_test_runs_are_read_from_their_result_files(tmp_path):
    run = {"run_id": "run-1", "summary": {"total": 4, "passed": 3, "failed": 1, "skipped": 0},
           "crashed": False, "next_action": "retry_coder", "duration_ms": 900}
    _write(tmp_path / ".sprintflow" / "runs" / "run-1" / "result.json", json.dumps(run))
    _write(tmp_path / ".sprintflow" / "runs" / "run-2" / "result.json", "{not json")
    problems = []
    frame = sources.testrun_rows(tmp_path, problems)
    assert frame[["run_id", "total", "failed", "crashed"]].values.tolist() == [["run-1", 4, 1, False]]
    assert len(problems) == 1 and "run-2" in problems[0]


def test_load_history_adds_eval_files_no_row_records_and_filters_since(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    recorded = make_eval(iteration=1, timestamp="2026-05-01T00:00:00Z")
    record_evaluation(tmp_path, recorded, content_hash="h", executor="local", image=None, run_id="r")
    evals = tmp_path / ".sprintflow" / "evals"
    later = make_eval(iteration=2, result="pass", timestamp="2026-05-10T00:00:00Z")
    for result in (recorded, later):
        _write(evals / f"{result.eval_id}.json", result.to_json())
    loaded = load_history(tmp_path)
    assert sorted(loaded.evals[loaded.evals.kind == "evaluation"].iteration) == [1, 2]
    since = load_history(tmp_path, since="2026-05-05", columns=["kind", "iteration"])
    assert set(since.evals.iteration) == {2} and set(since.evals.columns) == {"eval_id", "timestamp", "kind",
                                                                              "iteration"}


def test_an_eval_file_that_is_no_evalresult_is_refused_by_name_not_skipped(tmp_path, monkeypatch):
    # Read as every document is read: what validate would refuse, the history refuses too (one located line).
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    _write(tmp_path / ".sprintflow" / "evals" / "eval-broken-1.json", "{}")
    with pytest.raises(DocumentError, match="eval-broken-1.json: \\$: 'evalId' is a required property"):
        load_history(tmp_path)


def test_load_history_refuses_a_missing_workspace(tmp_path):
    with pytest.raises(WorkspaceError):
        load_history(tmp_path / "nope")


# --------------------------------------------------------------------------- test runs behind strategy rows


NOTE = ("`pytest -q` exited 1 with 1 error(s). TestRun run-20260513-103115 in .sprintflow/runs/run-20260513-103115/; "
        "bugs opened ['bug-1'], fixed none.")


def test_a_unit_test_row_names_the_test_run_of_its_result_and_of_a_result_written_before_the_field():
    result = make_eval()
    result.strategy_results[1].test_run = "run-20260513-103115"  # as the unit-test strategy records it
    assert [r.get("test_run") for r in rows_for(result) if r["kind"] == "strategy"] == [None, "run-20260513-103115"]
    earlier = result.to_dict()
    del earlier["strategyResults"][1]["testRun"]
    earlier["strategyResults"][1]["details"] = NOTE  # the note earlier results named it in
    rows = rows_for(EvalResult.model_validate(earlier))
    assert [r.get("test_run") for r in rows if r["kind"] == "strategy"] == [None, "run-20260513-103115"]


def test_files_written_before_test_run_existed_still_load(tmp_path):
    folder = tmp_path / EVALS
    folder.mkdir()
    old = history.as_table(EVALS, rows_for(make_eval())).drop_columns(["test_run"])  # as written before
    pq.write_table(old, folder / "part-20260101T000000000000Z-old.parquet")
    result = make_eval(iteration=2)
    result.strategy_results[1].test_run = "run-20260513-103115"
    append_rows(tmp_path, EVALS, rows_for(result))
    everything = read_table(tmp_path, EVALS)
    assert everything["test_run"].dropna().tolist() == ["run-20260513-103115"] and len(everything) == 8
    some = read_table(tmp_path, EVALS, columns=["kind", "test_run"])
    assert list(some.columns) == ["kind", "test_run"] and some["test_run"].notna().sum() == 1


def test_unit_test_rows_read_each_test_of_each_run(tmp_path):
    run = {"run_id": "run-1", "summary": {"total": 3, "passed": 2, "failed": 1, "skipped": 0}, "crashed": False,
           "next_action": "retry_coder", "passed_tests": ["a > adds", "a > lists"],
           "failures": [{"test": "a > rejects empty", "hint": "h"}]}
    _write(tmp_path / ".sprintflow" / "runs" / "run-1" / "result.json", json.dumps(run))
    frame = sources.unit_test_rows(tmp_path)
    assert sorted(zip(frame.test, frame.passed, strict=True)) == [
        ("a > adds", True), ("a > lists", True), ("a > rejects empty", False)]
    assert set(frame.run_id) == {"run-1"} and str(frame.recorded_at.dtype).startswith("datetime64")


def test_a_slice_of_a_frame_without_every_column_appends_its_rows_once(tmp_path):
    frame = pd.DataFrame(rows_for(make_eval()) * 3).drop(columns=["test_run", "engine"])
    frame["recorded_at"] = pd.Timestamp("2026-05-13 10:32", tz="UTC")
    append_rows(tmp_path, EVALS, frame.iloc[4:8])  # an index that does not start at 0
    back = read_table(tmp_path, EVALS)
    assert len(back) == 4 and back["kind"].notna().all() and back["test_run"].isna().all()
