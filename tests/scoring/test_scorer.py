"""The scorer against real stub engines (scripts run as subprocesses), offline."""

from __future__ import annotations

import json
import os
import sys
import threading
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest

from sprintflow.engines import extract_json
from sprintflow.errors import ConfigError, DocumentError, InfrastructureError, InputError
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas.scoring import ComparatorConfig, EvalCase, ScoreHistoryRow, ScoreReport
from sprintflow.scoring.answers import CONTEXT_HEADING, build_prompt, compare_answer
from sprintflow.scoring.cases import iter_cases, parse_case_line, scan_cases
from sprintflow.scoring.comparison import compare_reports, mcnemar_exact
from sprintflow.scoring.epochs import merge_epochs, pass_at_k, pass_hat_k
from sprintflow.scoring.prepare import load_comparator, prepare_run
from sprintflow.scoring.report import persist_report
from sprintflow.scoring.runs import compare_prompts, score_case, score_cases, score_skill

# Answers as each case's input tells it to, so one file can hold every kind of answer.
STUB = r'''
import json, sys, time
prompt = sys.stdin.read()
head, _, context = prompt.partition("## Pre-fetched PR context")
case = json.loads(context)
mode, answer = case["stub"], case.get("answer")
if mode == "bare":
    print(json.dumps(answer))
elif mode == "fenced":
    print("Looking at the diff, here is my call.\n\n```json\n" + json.dumps(answer, indent=2) + "\n```\nHope it helps.")
elif mode == "wrapped":
    print("My verdict is " + json.dumps(answer) + " because of the auth changes.")
elif mode == "prose":
    print("I would escalate this one: the risk looks high.")
elif mode == "crash":
    print("partial", flush=True)
    print("RuntimeError: model overloaded", file=sys.stderr)
    sys.exit(3)
elif mode == "sleep":
    time.sleep(30)
elif mode == "empty":
    pass
elif mode == "claude":
    print(json.dumps({"type": "result", "result": json.dumps(answer), "total_cost_usd": 0.25,
                      "usage": {"input_tokens": 100, "output_tokens": 7}}))
elif mode == "versioned":
    print(json.dumps(answer if "VERSION 2" in head else case["wrong"]))
elif mode == "flaky":  # right on the first `right` calls for this case, wrong after: epochs disagree
    import fcntl, pathlib
    counter = pathlib.Path("calls") / str(case["key"])
    counter.parent.mkdir(exist_ok=True)
    with open(counter.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        calls = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(calls + 1))
    print(json.dumps(answer if calls < case["right"] else case["wrong"]))
elif mode == "echo-prompt":
    print(json.dumps({"escalate": head.startswith("You triage pull requests.") and context.startswith("\n\n{"),
                      "risk": "low"}))
'''

# exec: the engine is our direct child, so a timeout kill leaves no orphan behind.
ENGINE = f"exec {sys.executable} stub.py"
GOOD = {"escalate": True, "risk": "high"}
WRONG = {"escalate": False, "risk": "high"}


def case(cid, stub, answer=None, expected=None, **extra):
    return {"id": cid, "input": {"stub": stub, "answer": answer, **extra}, "expected": expected or GOOD}


@pytest.fixture()
def workspace(tmp_path):
    (tmp_path / "stub.py").write_text(STUB)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "triage.md").write_text("You triage pull requests.\nAnswer in JSON.\n")
    return tmp_path


def write_cases(root: Path, cases: list[dict] | str, skill: str = "triage") -> Path:
    path = root / "evals" / skill / "cases.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = cases if isinstance(cases, str) else "".join(json.dumps(c) + "\n" for c in cases)
    path.write_text(text)
    return path


def prepare(root: Path, cases, **kwargs):
    write_cases(root, cases)
    kwargs.setdefault("engine", ENGINE)
    return prepare_run("triage", root=root, **kwargs)


def by_id(report: ScoreReport) -> dict:
    return {c.id: c for c in report.cases}


# --------------------------------------------------------------------------- verdicts


def test_correct_answers_pass(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD), case("b", "bare", {"escalate": False, "risk": "low"},
                                                               {"escalate": False, "risk": "low"})])
    report = score_skill(run, persist=False)
    assert (report.total, report.passed, report.failed, report.score) == (2, 2, 0, 1.0)
    assert report.cases[0].actual == GOOD and report.cases[0].reason is None
    assert "raw" not in report.cases[0].to_dict()


def test_wrong_answers_fail_with_the_differing_field_named(workspace):
    report = score_skill(prepare(workspace, [case("a", "bare", WRONG)]), persist=False)
    result = report.cases[0]
    assert not result.passed
    assert result.reason == "escalate: expected true, got false"
    assert result.actual == WRONG and result.raw == json.dumps(WRONG) + "\n"


def test_fenced_and_prose_wrapped_json_parse_but_bare_prose_fails(workspace):
    report = score_skill(prepare(workspace, [case("fenced", "fenced", GOOD), case("wrapped", "wrapped", GOOD),
                                             case("prose", "prose")]), persist=False)
    results = by_id(report)
    assert results["fenced"].passed and results["wrapped"].passed
    assert not results["prose"].passed
    assert results["prose"].reason == "unparseable answer: no JSON object found"
    assert results["prose"].actual is None
    assert results["prose"].raw == "I would escalate this one: the risk looks high.\n"


def test_engine_crash_empty_answer_and_timeout_are_failed_cases_with_raw_kept(workspace):
    run = prepare(workspace, [case("crash", "crash"), case("empty", "empty"), case("slow", "sleep")],
                  timeout=1.0)
    report = score_skill(run, persist=False)
    results = by_id(report)
    assert results["crash"].reason == "engine exited with code 3: RuntimeError: model overloaded"
    assert results["crash"].raw == "partial\n"
    assert results["empty"].reason == "engine printed no answer"
    assert results["slow"].reason == "engine timed out after 1s"
    assert report.failed == 3 and report.score == 0.0


def test_a_mixed_set_gives_exact_aggregates_in_file_order(workspace):
    cases = [case("c1", "bare", GOOD), case("c2", "bare", WRONG), case("c3", "fenced", GOOD),
             case("c4", "prose"), case("c5", "crash"), case("c6", "bare", {"escalate": True}),
             case("c7", "claude", GOOD)]
    report = score_skill(prepare(workspace, cases), concurrency=3, persist=False)
    assert [c.id for c in report.cases] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    assert [c.passed for c in report.cases] == [True, False, True, False, False, False, True]
    assert (report.total, report.passed, report.failed) == (7, 3, 4)
    assert report.score == 3 / 7
    assert by_id(report)["c6"].reason == "risk: missing from the answer"


def test_every_case_is_scored_when_cases_far_outnumber_the_workers(workspace):
    write_cases(workspace, [case(i, "bare", GOOD if i % 4 else WRONG) for i in range(60)])
    answer = "cat >/dev/null; echo '{\"escalate\": true, \"risk\": \"high\"}'"
    report = score_skill(prepare_run("triage", root=workspace, engine=answer), concurrency=2, persist=False)
    assert [c.id for c in report.cases] == list(range(60))
    assert (report.total, report.passed) == (60, 60)


def test_engine_usage_and_cost_are_totalled_when_reported(workspace):
    report = score_skill(prepare(workspace, [case("a", "claude", GOOD), case("b", "claude", WRONG),
                                             case("c", "bare", GOOD)]), persist=False)
    assert report.usage.to_dict() == {"inputTokens": 200, "outputTokens": 14, "costUsd": 0.5}
    assert score_skill(prepare(workspace, [case("a", "bare", GOOD)]), persist=False).usage is None


def test_the_engine_gets_the_skill_prompt_then_the_heading_then_the_input(workspace):
    report = score_skill(prepare(workspace, [case("p", "echo-prompt", expected={"escalate": True})]),
                         persist=False)
    assert report.cases[0].passed, report.cases[0].reason
    assert build_prompt("Skill.\n\n", "diff\n") == f"Skill.\n\n{CONTEXT_HEADING}\n\ndiff\n"
    expected = f'S\n\n{CONTEXT_HEADING}\n\n{{\n  "files": [\n    "a.py"\n  ]\n}}\n'
    assert build_prompt("S", {"files": ["a.py"]}) == expected


def test_identical_engine_answers_give_byte_identical_reports_apart_from_timing(workspace):
    run = prepare(workspace, [case(i, "bare" if i % 2 else "prose", GOOD) for i in range(12)])
    first, second = score_skill(run, concurrency=6, persist=False), score_skill(run, concurrency=2, persist=False)
    assert first.to_json(timings=False) == second.to_json(timings=False)
    assert "timing" not in json.loads(first.to_json(timings=False))
    full = json.loads(first.to_json())
    assert list(full)[-1] == "timing" and set(full["timing"]["cases"]) == {str(i) for i in range(12)}


def test_an_engine_that_cannot_start_raises_infrastructure_error_not_a_failed_case(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD)])
    with pytest.raises(InfrastructureError, match="could not start"):
        score_cases(replace(run, root=workspace / "vanished"))


# --------------------------------------------------------------------------- the cases file


def test_the_cases_file_is_never_written(workspace):
    path = write_cases(workspace, [case(i, "bare", GOOD if i % 3 else WRONG) for i in range(10)])
    before, stat = path.read_bytes(), path.stat()
    run = prepare_run("triage", root=workspace, engine=ENGINE)
    score_skill(run, persist=True)
    compare_prompts(run, "prompts/triage.md", persist=True)
    after = path.stat()
    assert path.read_bytes() == before
    assert (after.st_mtime_ns, after.st_ino, after.st_size) == (stat.st_mtime_ns, stat.st_ino, stat.st_size)


def test_cases_are_streamed_one_line_at_a_time(tmp_path):
    # A FIFO delivers the first case long before the writer is done: a reader that
    # slurped the file would block here until the end.
    fifo = tmp_path / "cases.jsonl"
    os.mkfifo(fifo)
    go_on = threading.Event()

    def writer():
        with fifo.open("w") as handle:
            handle.write(json.dumps(case("first", "bare", GOOD)) + "\n")
            handle.flush()
            go_on.wait(10)
            handle.write(json.dumps(case("second", "bare", GOOD)) + "\n")

    thread = threading.Thread(target=writer)
    thread.start()
    cases = iter_cases(fifo)
    assert next(cases).id == "first"
    go_on.set()
    assert [c.id for c in cases] == ["second"]
    thread.join()


def test_checking_a_large_cases_file_takes_constant_memory(tmp_path):
    path = tmp_path / "cases.jsonl"
    line = {"input": "x" * 2000, "expected": {"escalate": True, "risk": "high"}}
    with path.open("w") as handle:
        for number in range(20_000):
            handle.write(json.dumps({"id": number, **line}) + "\n")
    assert path.stat().st_size > 40_000_000
    tracemalloc.start()
    try:
        total, _ = scan_cases(path, ComparatorConfig(fields=["escalate", "risk"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total == 20_000
    assert peak < 5_000_000  # a few ids and one line at a time, not the 40 MB file


def test_a_file_changed_during_scoring_is_detected(tmp_path):
    path = write_cases(tmp_path, [case("a", "bare", GOOD)])
    _, sha = scan_cases(path)
    path.write_text(json.dumps(case("b", "bare", GOOD)) + "\n")
    with pytest.raises(DocumentError, match="changed while it was being scored"):
        list(iter_cases(path, expect_sha256=sha))


def test_blank_lines_and_a_byte_order_mark_are_accepted(tmp_path):
    text = "\ufeff" + json.dumps(case("a", "bare")) + "\n\n   \n" + json.dumps(case(2, "bare")) + "\n"
    path = write_cases(tmp_path, text)
    assert scan_cases(path)[0] == 2
    assert [c.id for c in iter_cases(path)] == ["a", 2]


# --------------------------------------------------------------------------- hard errors


def problems(error: pytest.ExceptionInfo) -> list[str]:
    return [str(p) for p in error.value.problems]


def test_no_skill_and_a_bad_skill_name_are_input_errors(workspace):
    with pytest.raises(InputError, match="no skill given"):
        prepare_run(None, root=workspace, engine="true")
    with pytest.raises(InputError, match="invalid skill name"):
        prepare_run("../etc", root=workspace, engine="true")


def test_a_missing_cases_file_or_prompt_is_named(workspace):
    with pytest.raises(DocumentError) as error:
        prepare_run("triage", root=workspace, engine="true")
    assert problems(error) == ["evals/triage/cases.jsonl: no cases file for skill 'triage'"]
    write_cases(workspace, [case("a", "bare")])
    (workspace / "prompts" / "triage.md").unlink()
    with pytest.raises(DocumentError) as error:
        prepare_run("triage", root=workspace, engine="true")
    assert problems(error) == ["prompts/triage.md: no prompt file"]
    (workspace / "prompts" / "triage.md").write_text("  \n")
    with pytest.raises(DocumentError, match="the prompt is empty"):
        prepare_run("triage", root=workspace, engine="true")


def test_every_malformed_line_is_named_by_file_and_line(workspace):
    lines = [
        json.dumps(case("ok", "bare")),
        '{"id": "broken", "input": ',
        "[1, 2]",
        json.dumps({"id": "no-expected", "input": "x"}),
        json.dumps({"id": True, "input": "x", "expected": {"risk": "low"}}),
        json.dumps({"input": "x", "expected": "high"}),
        json.dumps({"id": "other-fields", "input": "x", "expected": {"label": "bug"}}),
        json.dumps(case("ok", "bare")),
    ]
    with pytest.raises(DocumentError) as error:
        prepare(workspace, "\n".join(lines) + "\n", engine="true")
    assert problems(error) == [
        "evals/triage/cases.jsonl:2: invalid JSON at column 27: Expecting value",
        "evals/triage/cases.jsonl:3: a case must be a JSON object with id, input and expected",
        "evals/triage/cases.jsonl:4: expected: missing: a case needs the expected answer fields",
        "evals/triage/cases.jsonl:5: id: must be a non-empty string or an integer",
        "evals/triage/cases.jsonl:6: id: missing",
        "evals/triage/cases.jsonl:6: expected: must be a JSON object naming at least one field",
        "evals/triage/cases.jsonl:7: expected: names none of the fields triage compares (escalate, risk)",
        "evals/triage/cases.jsonl:8: id: duplicate id 'ok' (first on line 1)",
    ]


def test_a_case_without_input_and_an_empty_file_are_errors(tmp_path):
    with pytest.raises(DocumentError, match=r"c.jsonl:1: input: missing"):
        parse_case_line(b'{"id": 1, "expected": {"risk": "low"}}', 1, "c.jsonl")
    path = write_cases(tmp_path, "\n\n")
    with pytest.raises(DocumentError, match="no cases"):
        scan_cases(path)


def test_problems_are_capped_so_a_garbage_file_gives_a_readable_error(tmp_path):
    path = write_cases(tmp_path, "not json\n" * 500)
    with pytest.raises(DocumentError) as error:
        scan_cases(path)
    assert len(error.value.problems) == 51 and "450 more problems" in str(error.value.problems[-1])


def test_no_engine_is_a_config_error(workspace, monkeypatch):
    monkeypatch.delenv("SPRINTFLOW_ENGINE", raising=False)
    monkeypatch.delenv("SPRINTFLOW_SCORER_ENGINE", raising=False)
    write_cases(workspace, [case("a", "bare")])
    with pytest.raises(ConfigError, match="no engine for the scorer"):
        prepare_run("triage", root=workspace)
    monkeypatch.setenv("SPRINTFLOW_ENGINE", "codex")
    assert prepare_run("triage", root=workspace).engine == "codex exec -"


# --------------------------------------------------------------------------- parsing and comparing


@pytest.mark.parametrize("text, expected", [
    ('{"escalate": true}', {"escalate": True}),
    ('  \n{"escalate": true}\n', {"escalate": True}),
    ('```json\n{"risk": "low"}\n```', {"risk": "low"}),
    ('Sure.\n```\n{"risk": "low"}\n```\nDone.', {"risk": "low"}),
    ('Sure.\n``` JSON\n{"risk": "low"}\n```', {"risk": "low"}),
    ('My answer: {"risk": "low", "why": "a {brace} in text"} - thanks', {"risk": "low", "why": "a {brace} in text"}),
    ('Note {not json} then {"risk": "high"}', {"risk": "high"}),
    ('{"meta": 1} and then {"escalate": false}', {"escalate": False}),
    ('```json\n{"meta": 1}\n```\n```json\n{"risk": "low"}\n```', {"risk": "low"}),
])
def test_extract_json_finds_the_answer(text, expected):
    assert extract_json(text, prefer=["escalate", "risk"]) == expected


@pytest.mark.parametrize("text", ["", "No JSON here.", "[1, 2, 3]", "{broken", "```json\n{oops}\n```",
                                  "{" * 10_000])
def test_extract_json_returns_none_without_an_object(text):
    assert extract_json(text) is None


def test_values_must_match_in_kind_not_just_python_equality():
    comparator = ComparatorConfig(fields=["escalate", "risk"])
    assert compare_answer({"escalate": True}, {"escalate": 1}, comparator)[1] == [
        "escalate: expected true, got 1"]
    assert compare_answer({"escalate": True}, {"escalate": "true"}, comparator)[1] == [
        'escalate: expected true, got "true"']
    assert compare_answer({"risk": "high"}, {"risk": "High"}, comparator)[1] == [
        'risk: expected "high", got "High"']
    assert compare_answer({"escalate": False, "risk": "low"}, {"escalate": False, "risk": "low", "why": "x"},
                          comparator) == ({"escalate": False, "risk": "low"}, [])


def test_comparator_case_insensitive_enums_and_numeric_tolerance():
    comparator = ComparatorConfig(fields=["risk", "confidence", "labels"], case_insensitive=["risk"],
                                  tolerance={"confidence": 0.1})
    assert compare_answer({"risk": "high", "confidence": 0.8, "labels": ["a", 1]},
                          {"risk": "HIGH", "confidence": 0.7, "labels": ["a", 1]}, comparator)[1] == []
    assert compare_answer({"confidence": 0.8}, {"confidence": 0.65}, comparator)[1] == [
        "confidence: expected 0.8, got 0.65"]
    assert compare_answer({"confidence": 1}, {"confidence": True}, comparator)[1] == [
        "confidence: expected 1, got true"]
    assert compare_answer({"labels": ["a", 1]}, {"labels": ["a", True]}, comparator)[1] == [
        'labels: expected ["a", 1], got ["a", true]']


def test_comparator_config_file_beside_the_cases_wins(workspace):
    cases_path = write_cases(workspace, [case("a", "bare", {"escalate": True, "risk": "HIGH"})])
    assert load_comparator("triage", cases_path).fields == ["escalate", "risk"]
    assert load_comparator("labeler", cases_path) == ComparatorConfig()
    (cases_path.parent / "comparator.json").write_text(
        json.dumps({"fields": ["escalate", "risk"], "caseInsensitive": ["risk"]}))
    report = score_skill(prepare_run("triage", root=workspace, engine=ENGINE), persist=False)
    assert report.passed == 1 and report.comparator.case_insensitive == ["risk"]
    (cases_path.parent / "comparator.json").write_text(json.dumps({"fields": "risk"}))
    with pytest.raises(DocumentError, match="comparator.json: fields"):
        load_comparator("triage", cases_path)
    (cases_path.parent / "comparator.json").write_text(json.dumps({"tolerance": {"x": -1}}))
    with pytest.raises(DocumentError, match="tolerance/x: must be >= 0"):
        load_comparator("triage", cases_path)


def test_an_unknown_skill_compares_every_expected_field(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "labeler.md").write_text("Label the PR.\n")
    (tmp_path / "stub.py").write_text(STUB)
    write_cases(tmp_path, [case("a", "bare", {"label": "bug", "extra": 1}, {"label": "bug"})], skill="labeler")
    run = prepare_run("labeler", root=tmp_path, engine=ENGINE)
    report = score_skill(run, persist=False)
    assert report.passed == 1 and report.cases[0].actual == {"label": "bug"}


def test_score_case_reports_only_the_compared_fields(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD)])
    result = score_case(run, EvalCase(id=9, input={"stub": "bare", "answer": {**GOOD, "why": "x"}},
                                      expected={**GOOD, "note": "ignored by triage"}))
    assert result.passed and result.expected == GOOD and result.actual == GOOD


# --------------------------------------------------------------------------- persistence and history


def test_reports_are_persisted_and_history_rows_appended(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD), case("b", "prose")])
    report = score_skill(run, persist=False)
    path = persist_report(report, workspace)
    persist_report(report, workspace)
    assert path.parent == workspace / ".sprintflow" / "scores" / "triage"
    assert ScoreReport.model_validate_json(path.read_text()).to_json() == report.to_json()
    rows = [json.loads(line) for line in WorkspaceLayout(workspace).scores_file.read_text().splitlines()]
    assert len(rows) == 2
    row = ScoreHistoryRow.model_validate(rows[0])
    assert (row.skill, row.total, row.passed, row.failed_ids, row.mode) == ("triage", 2, 1, ["b"], "plain")
    assert row.report == path.relative_to(workspace).as_posix()
    one_epoch_only = {"epochs", "passAt1", "passAtK", "passHatK", "epochScores", "flakyIds"}
    assert set(rows[0]) == {ScoreHistoryRow.model_fields[name].alias or name
                            for name in ScoreHistoryRow.model_fields} - one_epoch_only


# --------------------------------------------------------------------------- comparing prompts


@pytest.mark.parametrize("only_a, only_b", [(0, 0), (0, 1), (1, 9), (3, 3), (2, 15), (40, 60), (0, 10)])
def test_mcnemar_exact_matches_the_binomial_test(only_a, only_b):
    from math import comb
    n = only_a + only_b
    expected = 1.0 if n == 0 else min(1.0, 2 * sum(comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2 ** n)
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected)
    assert mcnemar_exact(only_a, only_b) == mcnemar_exact(only_b, only_a)


def test_mcnemar_known_values():
    assert mcnemar_exact(0, 10) == 2 / 1024
    assert mcnemar_exact(5, 5) == 1.0
    assert mcnemar_exact(2, 15) == pytest.approx(0.002349853515625)  # scipy.stats.binomtest(2, 17).pvalue


def test_compare_prompts_reports_differences_and_a_verdict(workspace):
    cases = [case(f"v{i}", "versioned", GOOD, wrong=WRONG) for i in range(10)]
    cases += [case("same-pass", "bare", GOOD), case("same-fail", "prose")]
    (workspace / "prompts" / "triage-v2.md").write_text("You triage pull requests. VERSION 2\n")
    run = prepare(workspace, cases)
    comparison, a, b = compare_prompts(run, "prompts/triage-v2.md", concurrency=4, persist=True)
    assert (a.passed, b.passed) == (1, 11)
    assert [d.id for d in comparison.differences] == [f"v{i}" for i in range(10)]
    assert comparison.differences[0].reason_a == "escalate: expected true, got false"
    assert (comparison.both_passed, comparison.both_failed) == (1, 1)
    assert comparison.mcnemar.only_b_passed == 10 and comparison.mcnemar.p_value == 2 / 1024
    assert comparison.mcnemar.verdict == "b-better"
    reversed_ = compare_reports(b, a)
    assert reversed_.mcnemar.verdict == "a-better"
    assert compare_reports(a, a).mcnemar.verdict == "no-significant-difference"
    saved = sorted(p.name for p in (workspace / ".sprintflow" / "scores" / "triage").iterdir())
    assert [name.split("-", 1)[1] for name in saved] == ["a.json", "b.json", "compare.json"]
    rows = [json.loads(line) for line in WorkspaceLayout(workspace).scores_file.read_text().splitlines()]
    assert [r["promptFile"] for r in rows] == ["prompts/triage.md", "prompts/triage-v2.md"]
    assert rows[0]["comparison"] == rows[1]["comparison"] is not None


# --------------------------------------------------------------------------- epochs


def _brute_force(n: int, c: int, k: int) -> tuple[float, float]:
    """pass@k and pass^k by enumerating every k-subset of n samples, c of them passing."""
    from itertools import combinations
    samples = [True] * c + [False] * (n - c)
    subsets = list(combinations(samples, k))
    return (sum(any(s) for s in subsets) / len(subsets), sum(all(s) for s in subsets) / len(subsets))


@pytest.mark.parametrize("n, c, k", [(1, 0, 1), (1, 1, 1), (3, 1, 1), (3, 1, 2), (3, 1, 3), (5, 2, 2),
                                     (5, 4, 3), (6, 6, 4), (7, 0, 3), (8, 3, 8)])
def test_pass_at_k_and_pass_hat_k_match_enumeration(n, c, k):
    expected_at, expected_hat = _brute_force(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(expected_at)
    assert pass_hat_k(n, c, k) == pytest.approx(expected_hat)


def test_estimators_refuse_impossible_counts():
    for n, c, k in [(3, 4, 1), (3, 1, 0), (3, 1, 4), (2, -1, 1)]:
        with pytest.raises(ValueError):
            pass_at_k(n, c, k)
        with pytest.raises(ValueError):
            pass_hat_k(n, c, k)


def test_epochs_run_every_case_k_times_and_report_pass_at_k(workspace):
    cases = [case("steady", "bare", GOOD), case("once", "flaky", GOOD, key="once", right=1, wrong=WRONG),
             case("twice", "flaky", GOOD, key="twice", right=2, wrong=WRONG), case("never", "prose")]
    report = score_skill(prepare(workspace, cases), epochs=3, concurrency=4, persist=False)
    cases_by_id = by_id(report)
    assert {cid: (c.passes, c.stability, c.passed) for cid, c in cases_by_id.items()} == {
        "steady": (3, "always-pass", True), "once": (1, "flaky", False), "twice": (2, "flaky", False),
        "never": (0, "always-fail", False)}
    assert [len(c.epochs) for c in report.cases] == [3, 3, 3, 3]
    assert sum(e.passed for e in cases_by_id["once"].epochs) == 1  # each epoch was really a separate call
    assert (workspace / "calls" / "once").read_text() == "3"
    # overall: pass@1 = mean per-sample rate, pass@3 = any passed, pass^3 = all passed (= score)
    assert report.epochs == 3
    assert report.pass_at_1 == pytest.approx((3 + 1 + 2 + 0) / 12)
    assert (report.pass_at_k, report.pass_hat_k) == (0.75, 0.25)
    assert (report.passed, report.failed, report.score) == (1, 3, 0.25)
    once = cases_by_id["once"]
    assert (once.pass_at_1, once.pass_at_k, once.pass_hat_k) == (pytest.approx(1 / 3, abs=1e-6), 1.0, 0.0)
    assert once.reason.startswith("failed 2 of 3 epochs; epoch ")
    assert once.reason.endswith("escalate: expected true, got false")
    assert once.actual == WRONG  # the first failed epoch stands for the case
    data = json.loads(report.to_json(timings=False))
    assert list(data)[:10] == ["skill", "total", "passed", "failed", "score", "epochs", "passAt1", "passAtK",
                               "passHatK", "cases"]
    assert list(data["cases"][1])[:11] == ["id", "pass", "expected", "actual", "reason", "passes", "passAt1",
                                           "passAtK", "passHatK", "stability", "epochs"]
    assert all("raw" in e for e in data["cases"][3]["epochs"])  # a failed epoch keeps its raw answer
    assert all("raw" not in e for e in data["cases"][0]["epochs"])


def test_one_epoch_keeps_the_report_exactly_as_before(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD), case("b", "prose")])
    one = score_skill(run, epochs=1, persist=False)
    data = json.loads(one.to_json(timings=False))
    assert list(data)[:6] == ["skill", "total", "passed", "failed", "score", "cases"]
    assert [list(c) for c in data["cases"]] == [["id", "pass", "expected", "actual", "reason"],
                                                ["id", "pass", "expected", "actual", "reason", "raw"]]
    assert not {"epochs", "passAt1", "passAtK", "passHatK"} & set(data)
    assert merge_epochs([one.cases]) is one.cases


def test_identical_answers_over_epochs_give_byte_identical_reports(workspace):
    run = prepare(workspace, [case(i, "bare" if i % 3 else "prose", GOOD) for i in range(9)])
    first = score_skill(run, epochs=4, concurrency=5, persist=False)
    second = score_skill(run, epochs=4, concurrency=2, persist=False)
    assert first.to_json(timings=False) == second.to_json(timings=False)
    assert first.pass_at_k == first.pass_hat_k == first.score == first.pass_at_1 == 6 / 9


def test_the_history_keeps_every_epoch(workspace):
    cases = [case("steady", "bare", GOOD), case("once", "flaky", GOOD, key="h-once", right=1, wrong=WRONG)]
    report = score_skill(prepare(workspace, cases), epochs=3, concurrency=1, persist=False)
    path = persist_report(report, workspace)
    row = json.loads(WorkspaceLayout(workspace).scores_file.read_text().splitlines()[-1])
    assert (row["epochs"], row["flakyIds"], row["failedIds"]) == (3, ["once"], ["once"])
    assert row["epochScores"] == [1.0, 0.5, 0.5]  # one call at a time: epoch 1 got the one right answer
    assert (row["passAt1"], row["passAtK"], row["passHatK"]) == (report.pass_at_1, 1.0, 0.5)
    saved = ScoreReport.model_validate_json(path.read_text())
    assert saved.to_json() == report.to_json()
    assert [e.passed for e in saved.cases[1].epochs] == [True, False, False]


def test_epochs_out_of_range_are_input_errors(workspace):
    run = prepare(workspace, [case("a", "bare", GOOD)])
    for epochs in (0, 101):
        with pytest.raises(InputError, match="epochs must be between 1 and 100"):
            score_skill(run, epochs=epochs, persist=False)
