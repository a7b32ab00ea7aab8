"""Engine A vs engine B over one history shared by many workspaces, with real sprints.

Three copies of one project sprint with engine A (it fixes the contract at iteration 2) and three
with engine B (it never does), every workspace writing to one ``SPRINTFLOW_HISTORY``; the scripted
engines report their cost as agent CLIs do. Each figure of the report must count six sprints.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from sprintflow.evaluate.result import contract_evals, load_eval
from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.flows.sprint import sprint_flow
from sprintflow.history.sources import load_history
from sprintflow.orchestration.runs import run_flow
from sprintflow.reporting import analytics as r
from sprintflow.reporting.report import build_report, write_report
from tests.fixtures.sprint.make_workspace import make_workspace
from tests.reporting.test_html import _open, sync_playwright  # noqa: F401  (the browser fixture)

ENGINE = Path(__file__).resolve().parents[1] / "fixtures" / "sprint" / "priced_engine.py"
ENGINE_A = f"python3 {ENGINE} 2 0.063 1200"
"""Fixes the contract at iteration 2; $0.063 and 1,200 tokens a call: $0.126 a sprint."""
CONTRACT = "sprint-spec-tiny-1"


def _workspace(root: Path, engine: str) -> Path:
    """A copy of the tiny project with its first contract only; engine A is named in its config, engine
    B is a script inside the workspace (so its command line differs in every copy)."""
    workspace = make_workspace(root)
    (workspace / ".sprintflow" / "contracts" / "sprint-spec-tiny-2.json").unlink()
    with (workspace / "sprintflow.toml").open("a") as config:
        config.write(f'\n[engines]\nlabels = {{ "engine-a" = "{ENGINE_A}" }}\n')
    shutil.copy(ENGINE, workspace / "engine_b.py")
    return workspace


@pytest.fixture(scope="module")
def shared(prefect_harness, tmp_path_factory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("shared")
    history = root / "history"
    patch = pytest.MonkeyPatch()
    patch.setenv("SPRINTFLOW_HISTORY", str(history))
    workspaces = []
    try:
        for name, engine, limit in [*((f"a{i}", ENGINE_A, 3) for i in range(3)),
                                    *((f"b{i}", None, 3) for i in range(3))]:
            workspace = _workspace(root / name, ENGINE_A)
            command = engine or f"python3 {workspace / 'engine_b.py'} 0 0.011 300"
            outcome = run_flow(sprint_flow, str(workspace), engine=command, executor="local", max_iterations=limit)
            assert outcome == {CONTRACT: "completed" if engine else "needs-rework"}
            workspaces.append(workspace)
    finally:
        patch.undo()
    return history, workspaces


def test_each_figure_counts_every_sprint_of_a_history_shared_by_six_workspaces(shared):
    history, workspaces = shared
    evals = load_history(workspaces[0], directory=history, columns=r.REPORT_COLUMNS).evals
    sprints = r.time_to_green(evals)
    assert len(sprints) == 6 and sprints["workspace"].nunique() == 6
    assert sorted(sprints["engine"]) == ["engine-a"] * 3 + ["python3 ./engine_b.py 0 0.011 300"] * 3
    a = sprints[sprints["engine"] == "engine-a"]
    b = sprints[sprints["engine"] != "engine-a"]
    assert a["green"].all() and a["iterations_to_green"].tolist() == [2, 2, 2] and (a["hours_to_green"] >= 0).all()
    assert not b["green"].any() and b["iterations"].tolist() == [3, 3, 3] and b["hours_to_green"].isna().all()

    engines = r.engine_comparison(evals).set_index("engine")
    counts = ["evaluations", "passed", "sprints", "green", "first_pass"]
    b_name = b["engine"].iloc[0]
    assert engines.loc["engine-a", counts].tolist() == [6, 3, 3, 3, 0]
    assert engines.loc[b_name, counts].tolist() == [9, 0, 3, 0, 0]
    assert engines.loc["engine-a", "cost_per_sprint"] == pytest.approx(0.126)
    assert engines.loc[b_name, "cost_per_sprint"] == pytest.approx(0.033)
    assert engines.loc["engine-a", "cost_per_green_sprint"] == pytest.approx(0.126)
    assert pd.isna(engines.loc[b_name, "cost_per_green_sprint"])
    assert engines.loc["engine-a", "tokens"] == 6 * 1200 and engines.loc[b_name, "tokens"] == 9 * 300
    assert engines.loc["engine-a", "mean_iterations_to_green"] == 2.0
    assert engines.loc["engine-a", "median_hours_to_green"] >= 0  # two iterations can share a second

    costs = r.cost_per_sprint(evals)
    assert len(costs) == 6 and costs["cost_usd"].sum() == pytest.approx(3 * 0.126 + 3 * 0.033)
    assert r.first_pass_yield(evals)[["sprints", "first_pass"]].values.tolist() == [[6, 0]]
    assert int(r.cost_over_time(evals)["sprints"].sum()) == 6
    criteria = r.criterion_time_to_green(evals).set_index("criterion")
    assert criteria.loc["sc-1-2", ["sprints", "green"]].tolist() == [6, 3]
    assert criteria.loc["sc-1-1", ["sprints", "green", "median_iterations_to_green"]].tolist() == [6, 6, 1.0]
    methods = evals.loc[evals["kind"] == "criterion", "method"].astype(str)
    assert set(methods) == {"build", "custom"}


def test_the_report_and_its_page_file_each_sprint_under_its_engine(shared, monkeypatch):
    history, workspaces = shared
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:4999/api")  # a server the page links runs to
    evals = load_history(workspaces[3], directory=history).evals
    report = build_report(load_history(workspaces[3], directory=history, columns=r.REPORT_COLUMNS),
                          workspace=str(workspaces[3]))
    summary = report.summary_text()
    assert "50.0% of 6 sprints went green" in summary, summary
    assert "engine engine-a:" in summary and "$0.13 per sprint" in summary and "$0.03 per sprint" in summary
    page = report.page
    assert page is not None
    sprints = page.greens[page.greens["level"] == "contract"].groupby("engine")["items"].sum().to_dict()
    assert sprints == {"engine-a": 3, "python3 ./engine_b.py 0 0.011 300": 3}
    started = page.activity.groupby("engine")["sprints"].sum().to_dict()
    assert started == {"engine-a": 3, "python3 ./engine_b.py 0 0.011 300": 3}
    cost = page.activity.groupby("engine")["cost"].sum()
    assert cost["engine-a"] == pytest.approx(0.378)
    assert cost["python3 ./engine_b.py 0 0.011 300"] == pytest.approx(0.099)
    # Every sampled evaluation opens its own EvalResult, read from the workspace it ran in.
    assert len(page.evaluations) == 15
    assert {e["workspace"] for e in page.evaluations} == {str(w) for w in workspaces}
    assert set(page.details) == {e["key"] for e in page.evaluations}
    for evaluation in page.evaluations:
        stored = json.loads((Path(evaluation["workspace"]) / ".sprintflow" / "evals"
                             / f"{evaluation['eval_id']}.json").read_text())
        assert stored["iteration"] == evaluation["iteration"] and stored["judged"]["pinId"] == evaluation["sprint_run"]
        # The drill-down reaches the transcript of the iteration, and the flow run that evaluated it.
        detail = page.details[evaluation["key"]]
        assert f"iteration {evaluation['iteration']})" in detail["generator"]["prompt"]
        assert "sc-1-2" in detail["generator"]["prompt"]
        answer = detail["generator"]["answer"]
        assert f"iteration {evaluation['iteration']}: state.txt written" in answer
        assert "sk-ant-" not in answer and "***" in answer
        run_ids = set(evals.loc[evals["eval_id"] == evaluation["eval_id"], "run_id"].astype(str))
        assert {evaluation["flow_run"]} == {f"http://127.0.0.1:4999/runs/flow-run/{run}" for run in run_ids}


def test_an_iteration_evaluated_twice_keeps_both_evalresults_and_the_history_points_to_each(prefect_harness,
                                                                                           tmp_path):
    workspace = make_workspace(tmp_path / "ws")
    (workspace / "state.txt").write_text("1")
    contract = str(workspace / ".sprintflow" / "contracts" / f"{CONTRACT}.json")
    first = run_flow(evaluate_flow, str(workspace), contract, executor="local")
    (workspace / "state.txt").write_text("2")
    second = run_flow(evaluate_flow, str(workspace), contract, executor="local")
    assert first.iteration == second.iteration == 1 and first.eval_id != second.eval_id
    assert (first.overall_result, second.overall_result) == ("fail", "pass")
    kept = contract_evals(workspace, CONTRACT)
    assert [r.eval_id for r in kept] == [first.eval_id, second.eval_id]
    assert load_eval(workspace, CONTRACT, 1) == second
    evals = load_history(workspace).evals
    rows = evals[evals["kind"] == "evaluation"]
    assert sorted(rows["eval_id"].astype(str)) == sorted([first.eval_id, second.eval_id])
    page = build_report(load_history(workspace), workspace=str(workspace)).page
    assert page is not None
    assert {page.details[e["key"]]["summary"] for e in page.evaluations} == {first.summary, second.summary}


def test_engine_bs_bars_can_be_clicked_at_0_percent_and_list_all_its_evaluations(shared, sync_playwright, tmp_path):  # noqa: F811
    history, workspaces = shared
    report = build_report(load_history(workspaces[0], directory=history, columns=r.REPORT_COLUMNS),
                          workspace=str(workspaces[0]))
    path = write_report(report, tmp_path / "out")["html"]
    with sync_playwright() as playwright:
        browser, page, errors = _open(playwright, path, [])
        try:
            bar = '#charts path[aria-roledescription="bar"][aria-label*="engine: python3 ./engine_b.py"]'
            # Each engine chart's row for engine B: its pass rate and green rate are 0 % (no width), and it
            # has no iterations to green (no bar at all); the row's click target lists its evaluations.
            for label in ("pass rate [95%]: 0.0%", "green [95%]: 0.0%", "mean_iterations", "per sprint"):
                page.locator(f'{bar}[aria-label*="{label}"]').last.click()  # the row, not the visible bar
                page.wait_for_function("document.querySelector('#drill h2').textContent.includes('engine_b.py')")
                assert page.locator("#drill tbody tr").count() == 9, label
                assert page.inner_text("#drill .count").startswith(
                    "9 of the sampled evaluations match (of 9 in the history: 0 not sampled)"), label
                page.locator(f'{bar}[aria-label*="{label}"]').last.dblclick()  # clears the pick
                page.wait_for_function("document.querySelector('#drill').hidden")
        finally:
            browser.close()
    assert not errors
