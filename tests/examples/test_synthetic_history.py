"""The synthetic history is shaped like a real one and tells the story the notebooks show."""

import subprocess
import sys
from pathlib import Path

import pandas as pd

from sprintflow.reporting import analytics as r
from sprintflow.history.dataset import EVAL_SCHEMA
from sprintflow.history.sources import load_history
from sprintflow.reporting.report import build_report
from sprintflow.schemas import EvalResult
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


def test_every_sprint_runs_in_time_order_with_both_executors_and_its_own_ids():
    frame = synthetic_evals(2000)
    evaluations = frame[frame.kind == "evaluation"]
    assert evaluations.eval_id.is_unique
    first = evaluations[~evaluations.duplicated(["contract_id", "iteration"])].sort_values(["contract_id", "iteration"])
    assert (first.groupby("contract_id").timestamp.diff().dropna() > pd.Timedelta(0)).all()
    assert set(evaluations.executor) == {"docker", "local"}
    assert frame.loc[frame.executor == "local", "image"].isna().all()
    assert evaluations.groupby("contract_id").sprint_run.nunique().eq(1).all()
    # The first evaluation of every sprint is its first iteration: the two first-pass yields agree.
    overall = r.first_pass_yield(frame)
    by_week = r.first_pass_yield(frame, freq="W")
    assert by_week.first_pass.sum() == overall.first_pass.iloc[0] and by_week.sprints.sum() == overall.sprints.iloc[0]
    assert (r.time_to_green(frame).iterations_to_green.dropna() >= 1).all()


def test_the_command_writes_a_labelled_history_whose_every_evaluation_opens(tmp_path, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)
    script = Path(__file__).parents[2] / "examples" / "history" / "synthetic_history.py"
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "ws"), "--evaluations", "300"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "wrote a synthetic history of 300 evaluations" in run.stdout
    history = load_history(tmp_path / "ws")
    assert history.synthetic and "synthetic_history.py" in history.synthetic and not history.problems
    evaluations = history.evals[history.evals.kind == "evaluation"]
    files = {p.stem: p for p in (tmp_path / "ws" / ".sprintflow" / "evals").glob("*.json")}
    assert set(files) == set(evaluations.eval_id.astype(str))
    row = evaluations.iloc[-1]
    result = EvalResult.model_validate_json(files[str(row.eval_id)].read_text())
    assert (result.overall_result, result.iteration, result.executor.kind) == (row.result, row.iteration, row.executor)
    assert result.judged is not None and result.judged.pin_id == row.sprint_run
    report = build_report(history, workspace=str(tmp_path / "ws"))
    assert report.summary_lines()[1].startswith("  SYNTHETIC DEMO DATA, not a real history: Synthetic demo history")
    assert report.page is not None and set(report.page.details) == {e["key"] for e in report.page.evaluations}


def test_the_command_refuses_a_bad_count_in_one_line(tmp_path):
    script = Path(__file__).parents[2] / "examples" / "history" / "synthetic_history.py"
    run = subprocess.run([sys.executable, str(script), str(tmp_path), "--evaluations", "0"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--evaluations must be at least 1" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / ".sprintflow").exists()
