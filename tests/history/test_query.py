"""SQL over the history's Parquet files: the same answers as the pandas analytics, each row once."""

import shutil

import pandas as pd
import pytest
from synthetic_history import synthetic_evals

from sprintflow.errors import InputError, OutOfMemory
from sprintflow.history.dataset import EVALS, append_rows, compact, live_parts, read_table
from sprintflow.history.query import EvalTable, history_query
from sprintflow.history.records import record_evaluation
from sprintflow.history.sources import load_history
from sprintflow.reporting import analytics as r
from tests.history.test_dataset import make_eval

BY_STRATEGY = """
SELECT name AS strategy, count(*) FILTER (WHERE result = 'pass') AS passed,
       count(*) FILTER (WHERE result = 'fail') AS failed, count(*) FILTER (WHERE result = 'skipped') AS skipped
FROM evals WHERE kind = 'strategy' GROUP BY name ORDER BY name
"""


@pytest.fixture
def history(tmp_path):
    frame = synthetic_evals(300, workspace=str(tmp_path))
    for start in range(0, len(frame), 500):
        append_rows(tmp_path, EVALS, frame.iloc[start:start + 500], compact_after=1000)
    return tmp_path


def test_an_aggregation_in_sql_gives_the_analytics_counts(history):
    expected = r.pass_rate_by_strategy(read_table(history, EVALS)).sort_values("strategy", ignore_index=True)
    answer = history_query(history, BY_STRATEGY)
    assert answer.to_dict("records") == expected[["strategy", "passed", "failed", "skipped"]].to_dict("records")


def test_a_compacted_file_beside_its_sources_is_counted_once(history):
    before = history_query(history, "SELECT count(*) AS n FROM evals")["n"].item()
    sources = live_parts(history, EVALS)
    kept = history / "kept"
    kept.mkdir()
    for path in sources:  # a compactor that stopped after writing the merged file, before removing its sources
        shutil.copy(path, kept / path.name)
    compact(history, EVALS)
    for path in kept.iterdir():
        shutil.copy(path, history / EVALS / path.name)
    assert len(list((history / EVALS).glob("part-*.parquet"))) == len(sources) + 1
    assert history_query(history, "SELECT count(*) AS n FROM evals")["n"].item() == before


def test_params_fill_placeholders_and_an_empty_history_has_every_column(history, tmp_path_factory):
    lint = history_query(history, "SELECT count(*) AS n FROM evals WHERE name = $name", {"name": "lint"})
    evaluations = (read_table(history, EVALS, columns=["kind"])["kind"] == "evaluation").sum()
    assert lint["n"].item() == evaluations  # every evaluation ran lint once
    empty = history_query(tmp_path_factory.mktemp("none"), "SELECT count(tester_kill_rate) AS n FROM evals")
    assert empty["n"].item() == 0


def test_sql_duckdb_refuses_is_one_clear_line(history):
    with pytest.raises(InputError, match=r'^history query: Binder Error: .*"nope"') as raised:
        history_query(history, "SELECT nope FROM evals")
    assert "\n" not in str(raised.value)


def test_a_query_that_runs_out_of_memory_is_not_called_wrong_input():
    # DuckDB's out-of-memory error is one of its errors, but the machine's limit, not the SQL's fault:
    # it goes up as it is, for the CLI to say so (exit 3), not as an input error (exit 2).
    table = EvalTable.of(pd.DataFrame({"kind": ["strategy"], "result": ["pass"]}))
    table._connection.execute("SET memory_limit = '1MB'")
    with pytest.raises(Exception) as raised:
        table.query("SELECT list(i) AS numbers FROM range(3000000) r(i)")
    assert not isinstance(raised.value, InputError)
    assert str(OutOfMemory.of(raised.value)).startswith("out of memory (failed to allocate ")


def test_the_analytics_over_the_files_answer_as_over_the_loaded_rows(history):
    # One implementation per question: the same SQL over the Parquet files (the report's path) and over the
    # DataFrame a notebook loads, so the two give the same tables.
    loaded = load_history(history, directory=history, columns=r.REPORT_COLUMNS)
    for function in (r.pass_rate_by_strategy, r.pass_rate_by_week, r.criterion_pass_rate, r.time_to_green,
                     r.criterion_greens, r.criteria_coverage, r.flaky_strategies, r.cost_per_sprint,
                     r.engine_comparison, r.first_pass_yield, r.kill_rates):
        pd.testing.assert_frame_equal(function(loaded.table), function(loaded.evals), check_dtype=False,
                                      check_index_type=False, obj=function.__name__)


def test_the_table_counts_a_since_bound_and_unrecorded_eval_files_as_the_loaded_rows(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    recorded = make_eval(iteration=1, timestamp="2026-05-01T00:00:00Z")
    record_evaluation(tmp_path, recorded, content_hash="h", executor="local", image=None, run_id="r")
    later = make_eval(iteration=2, result="pass", timestamp="2026-05-10T00:00:00Z")
    for result in (recorded, later):  # the later one is only a file: no history row records it
        path = tmp_path / ".sprintflow" / "evals" / f"{result.eval_id}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(result.to_json(), encoding="utf-8")
    for since, iterations in ((None, [1, 2]), ("2026-05-05", [2])):
        loaded = load_history(tmp_path, since=since)
        rows = loaded.table.rows("evaluation", ["iteration", "sprint"])
        assert rows["iteration"].tolist() == iterations
        assert rows["sprint"].tolist() == loaded.evals.loc[loaded.evals.kind == "evaluation", "sprint"].tolist()


def test_sprints_are_numbered_in_sql_as_in_pandas(history):
    loaded = load_history(history, directory=history, columns=r.REPORT_COLUMNS)
    for kind in ("evaluation", "criterion"):
        expected = loaded.evals.loc[loaded.evals.kind == kind, "sprint"].tolist()
        assert loaded.table.rows(kind, ["sprint"])["sprint"].tolist() == expected
        assert EvalTable.of(loaded.evals.drop(columns="sprint")).rows(kind, ["sprint"])["sprint"].tolist() == expected


def test_a_cost_that_is_not_a_number_counts_as_unreported_over_the_files_as_in_pandas(tmp_path):
    # DuckDB reads a NaN in a Parquet file as a number and would sum it into the sprint's and the period's cost.
    at = pd.Timestamp("2026-01-05", tz="UTC")
    rows = [{"kind": "evaluation", "workspace": "/a", "contract_id": "c", "sprint_run": "p", "iteration": i,
             "result": "pass", "timestamp": at, "cost_usd": cost} for i, cost in ((1, 0.5), (2, float("nan")))]
    append_rows(tmp_path, EVALS, rows)
    loaded = load_history(tmp_path, directory=tmp_path, columns=r.REPORT_COLUMNS)
    for evals in (loaded.table, loaded.evals):
        assert r.cost_per_sprint(evals)["cost_usd"].tolist() == [0.5]
        assert r.cost_over_time(evals)["cost_usd"].tolist() == [0.5]
        assert r.engine_comparison(evals)["cost_usd"].tolist() == [0.5]
