"""SQL over the history's Parquet files: the same answers as the pandas analytics, each row once."""

import shutil

import pytest
from synthetic_history import synthetic_evals

from sprintflow.errors import InputError
from sprintflow.history.dataset import EVALS, append_rows, compact, live_parts, read_table
from sprintflow.history.query import history_query
from sprintflow.reporting import analytics as r

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
