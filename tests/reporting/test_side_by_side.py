"""Two engines on the same contracts, side by side: the tables, the paired test and the page.

Two workspaces (copies of one project) share one history; claude sprints in one, codex in the
other, on the same four contracts:

========  ============================  =====================
contract  claude (workspace A)          codex (workspace B)
========  ============================  =====================
c1        fail, then pass (iteration 2)  fail, fail
c2        pass                          pass
c3        fail, fail                    fail
c4        pass                          fail
========  ============================  =====================

So claude alone went green on c1 and c4, both on c2, neither on c3: McNemar over (2, 0) discordant
pairs, p = 0.5.
"""

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from sprintflow.history.dataset import EVALS, append_rows
from sprintflow.history.records import eval_rows
from sprintflow.history.sources import load_history
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.reporting import analytics as r
from sprintflow.reporting.report import build_report, write_report
from sprintflow.schemas import EvalResult

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
PLAN = {"claude": {"c1": ["fail", "pass"], "c2": ["pass"], "c3": ["fail", "fail"], "c4": ["pass"]},
        "codex": {"c1": ["fail", "fail"], "c2": ["pass"], "c3": ["fail"], "c4": ["fail"]}}


def _eval_result(engine: str, contract: str, iteration: int, at: datetime, result: str) -> EvalResult:
    return EvalResult.model_validate({
        "evalId": f"eval-{contract}-{iteration}-{engine}", "contractId": contract, "specId": "spec-1",
        "iteration": iteration, "timestamp": at.isoformat().replace("+00:00", "Z"), "overallResult": result,
        "score": {"criteriaTotal": 1, "criteriaPassed": int(result == "pass"),
                  "criteriaFailed": int(result == "fail"), "criteriaSkipped": 0,
                  "requiredPassed": int(result == "pass"), "requiredFailed": int(result == "fail"),
                  "requiredTotal": 1},
        "strategyResults": [{"strategy": "unit-test", "required": True, "result": result,
                             "exitCode": int(result == "fail")}],
        "criteriaResults": [{"criterionId": "sc-1", "description": "Empty titles are rejected", "required": True,
                             "result": result, "evidence": "unit-test"}],
        "generatorFeedback": [] if result == "pass" else [
            {"priority": "critical", "category": "bug", "description": f"{engine} left {contract} storing empty titles",
             "expected": "400 with an error message"}],
        "summary": f"{engine} {contract} iteration {iteration}: {result}",
        "judged": {"treeDigest": f"h-{engine}-{contract}-{iteration}", "pinId": f"pin-{engine}-{contract}"},
    })


@pytest.fixture
def shared(tmp_path):
    """Workspaces A (claude) and B (codex) writing one shared history, each keeping its EvalResult files."""
    history = tmp_path / "history"
    homes = {"claude": tmp_path / "a", "codex": tmp_path / "b"}
    n = 0
    for engine, contracts in PLAN.items():
        layout = WorkspaceLayout(homes[engine])
        layout.evals_dir.mkdir(parents=True)
        for contract, results in contracts.items():
            for iteration, result in enumerate(results, start=1):
                n += 1
                doc = _eval_result(engine, contract, iteration, START + timedelta(hours=n), result)
                layout.eval_file(doc.eval_id).write_text(doc.model_dump_json(by_alias=True))
                append_rows(history, EVALS, eval_rows(doc, workspace_hash=None, git_sha=None, executor="local",
                                                      image=None, run_id=f"run-{n}", engine=engine,
                                                      workspace=str(homes[engine])))
    return homes, history


def test_each_contract_pairs_the_engines_verdicts_and_their_latest_evaluations(shared):
    homes, history = shared
    evals = load_history(homes["claude"], directory=history).evals
    table = r.engine_side_by_side(evals)
    assert table[["contract_id", "engine_a", "engine_b", "sprints_a", "green_a", "first_green_a", "green_b",
                  "first_green_b", "last_result_b"]].to_dict("records") == [
        {"contract_id": c, "engine_a": "claude", "engine_b": "codex", "sprints_a": 1, "green_a": int(a),
         "first_green_a": a, "green_b": int(b), "first_green_b": b, "last_result_b": last}
        for c, a, b, last in [("c1", True, False, "fail"), ("c2", True, True, "pass"), ("c3", False, False, "fail"),
                              ("c4", True, False, "fail")]]
    assert table.loc[0, "last_eval_id_a"] == "eval-c1-2-claude"
    assert table.loc[0, "last_workspace_b"] == str(homes["codex"])
    assert table.loc[0, "mean_iterations_to_green_a"] == 2.0
    pairs = r.engine_pairs(table)
    assert pairs.to_dict("records") == [{"engine_a": "claude", "engine_b": "codex", "contracts": 4, "both_green": 1,
                                         "only_a": 2, "only_b": 0, "neither": 1, "p_value": 0.5,
                                         "verdict": "no-significant-difference"}]


def test_a_contract_one_engine_ran_alone_is_not_paired(shared):
    homes, history = shared
    evals = load_history(homes["claude"], directory=history).evals
    alone = evals[~((evals["contract_id"] == "c4") & (evals["workspace"] == str(homes["codex"])))]
    assert r.engine_side_by_side(alone)["contract_id"].tolist() == ["c1", "c2", "c3"]
    assert r.engine_side_by_side(evals[evals["engine"].astype(object) != "codex"]).empty


def test_the_report_puts_both_engines_feedback_next_to_each_other(shared, tmp_path):
    homes, history = shared
    report = build_report(load_history(homes["claude"], directory=history), workspace=str(homes["claude"]))
    assert "  claude vs codex on the same 4 contracts: first sprint green with claude alone 2, codex alone 0, " \
           "both 1, neither 1; McNemar p = 0.5 (no-significant-difference)" in report.summary_lines()
    paths = write_report(report, tmp_path / "out")
    saved = pd.read_csv(paths["csv"] / "engine-pairs.csv")
    assert saved[["only_a", "only_b", "p_value"]].to_dict("records") == [{"only_a": 2, "only_b": 0, "p_value": 0.5}]
    page = paths["html"].read_text(encoding="utf-8")
    section = page[page.index('<section id="side-by-side">'):page.index('<section id="drill"')]
    # Each side's feedback comes from its own workspace's EvalResult file.
    assert "codex left c1 storing empty titles" in section
    assert "claude left c3 storing empty titles" in section
    assert "4 of 4 contract pairs" in section
    assert section.count("<tr>") == 5  # the header and the four contracts


def test_a_capped_side_by_side_says_how_many_it_leaves_out(shared, tmp_path, monkeypatch):
    from sprintflow.reporting.explore import details

    monkeypatch.setattr(details, "SIDE_BY_SIDE_LIMIT", 3)
    homes, history = shared
    paths = write_report(build_report(load_history(homes["claude"], directory=history),
                                      workspace=str(homes["claude"])), tmp_path / "out")
    page = paths["html"].read_text(encoding="utf-8")
    assert "3 of 4 contract pairs (the newest 3; 1 more in csv/engine-side-by-side.csv)" in page


def test_an_empty_history_or_one_engine_pairs_nothing(shared):
    homes, history = shared
    evals = load_history(homes["claude"], directory=history).evals
    for frame in (evals.iloc[:0], evals[evals["workspace"] == str(homes["claude"])]):
        table = r.engine_side_by_side(frame)
        assert table.empty and "last_eval_id_b" in table.columns
        assert r.engine_pairs(table).empty
