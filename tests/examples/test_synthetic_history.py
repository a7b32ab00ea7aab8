"""The synthetic history is shaped like a real one and tells the story the notebooks show."""

import pandas as pd

from sprintflow.reporting import analytics as r
from sprintflow.history.dataset import EVAL_SCHEMA
from sprintflow.history.sources import load_history
from synthetic_history import STRATEGIES, demo_workspace, synthetic_evals


def test_rows_per_evaluation_and_columns_match_the_history_schema():
    frame = synthetic_evals(500)
    kinds = frame.kind.value_counts()
    assert kinds["strategy"] == len(STRATEGIES) * kinds["evaluation"]
    assert kinds["criterion"] == 4 * kinds["evaluation"]
    assert set(frame.columns) <= set(EVAL_SCHEMA.names)
    assert set(frame.result) == {"pass", "fail", "skipped"}


def test_the_same_seed_gives_the_same_history():
    pd.testing.assert_frame_equal(synthetic_evals(300, seed=3), synthetic_evals(300, seed=3))
    assert not synthetic_evals(300, seed=3).equals(synthetic_evals(300, seed=4))


def test_the_agent_gets_better_and_playwright_is_the_flakiest(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    history = load_history(demo_workspace(tmp_path, evaluations=3000))
    weeks = r.pass_rate_by_week(history.evals, by_strategy=False)
    assert weeks.pass_rate.head(4).mean() < weeks.pass_rate.tail(4).mean()
    assert r.flaky_strategies(history.evals).strategy.iloc[0] == "playwright"
    assert len(history.bugs) and len(history.scores) and len(history.testruns) and not history.problems
