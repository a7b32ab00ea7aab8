"""GitHub annotations, JUnit XML and the terminal text of an EvalResult."""

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from sprintflow.cli.evaluate import ITEM_LINES, _print_text
from sprintflow.evaluate.excerpt import combined_output
from sprintflow.evaluate.feedback import generator_feedback
from sprintflow.evaluate.formats import github_annotations, junit_xml
from sprintflow.parsers import parse_report
from sprintflow.schemas import (
    Category,
    CriterionResult,
    EvalResult,
    GeneratorFeedback,
    Outcome,
    Priority,
    Score,
    StrategyResult,
)

FEEDBACK = Path(__file__).resolve().parents[1] / "fixtures" / "feedback"


def ruff_lint_failure() -> StrategyResult:
    """click's `ruff check .` on the injected E741, parsed from the recording."""
    data = json.loads((FEEDBACK / "click" / "lint-ruff-new.json").read_text(encoding="utf-8"))
    parsed = parse_report("ruff-text", combined_output(data["stdout"], data["stderr"]),
                          ["/tmp/sfrec13/py/click-8.5.1"])
    return StrategyResult(strategy="lint", required=False, result=Outcome.failed, exit_code=1,
                          details="`ruff check .` exited 1.", diagnostics=parsed.diagnostics, duration_ms=1500)


def evaluation(strategies, feedback, criteria=()) -> EvalResult:
    return EvalResult(eval_id="eval-c-2", contract_id="c", spec_id="s", timestamp="2026-01-01T00:00:00Z",
                      iteration=2, overall_result="fail", summary="Sprint 1 FAILED.",
                      score=Score(criteria_total=len(criteria), criteria_passed=0, criteria_failed=len(criteria),
                                  criteria_skipped=0, required_passed=0, required_failed=0, required_total=0),
                      strategy_results=list(strategies), criteria_results=list(criteria),
                      generator_feedback=list(feedback))


def test_a_failing_ruff_error_is_an_error_annotation_and_a_note_a_warning():
    lint = ruff_lint_failure()
    items = generator_feedback([lint], [], [], {"lint": "ruff check ."})
    assert items[0].priority is Priority.medium  # lint is not required here, yet its error is an error
    note = GeneratorFeedback(priority=Priority.low, category=Category.quality, description="touched README.md",
                             expected="stay in scope")
    lines = github_annotations(evaluation([lint], [*items, note])).splitlines()
    assert lines[0].startswith("::error file=src/click/formatting.py,line=13,title=medium quality::lint E741:")
    assert lines[1].startswith("::warning title=low quality::touched README.md")
    assert lines[2] == "::error title=eval-c-2::Sprint 1 FAILED."


def test_junit_has_totals_times_and_marks_cached_results():
    lint = ruff_lint_failure()
    cached = StrategyResult(strategy="typecheck", required=True, result=Outcome.passed, details="ok",
                            duration_ms=2250, cached=True)
    criterion = CriterionResult(criterion_id="sc-1-1", description="d", required=True, result=Outcome.skipped,
                                evidence="manual")
    root = ET.fromstring(junit_xml(evaluation([lint, cached], [], [criterion])))
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped", "time")} == {
        "tests": "3", "failures": "1", "errors": "0", "skipped": "1", "time": "3.750"}
    strategies, criteria = root.findall("testsuite")
    assert (strategies.get("tests"), strategies.get("time"), criteria.get("skipped")) == ("2", "3.750", "1")
    case = strategies.find("testcase[@name='typecheck']")
    assert case.get("time") == "2.250"
    assert case.find("properties/property[@name='cached']").get("value") == "true"
    assert case.find("system-out").text.startswith("cached: reused from an identical earlier run")
    assert strategies.find("testcase[@name='lint']/properties") is None


def test_the_text_output_shows_every_item(capsys):
    items = [GeneratorFeedback(priority=Priority.high, category=Category.bug, file=f"src/m{i}.py", line=i,
                               description=f"problem {i} [with brackets]", expected="fixed") for i in range(1, 31)]
    long = GeneratorFeedback(priority=Priority.high, category=Category.bug, expected="x",
                             description="lint failed\nOutput:\n" + "\n".join(f"out {i}" for i in range(40)))
    _print_text(evaluation([], [*items, long]))
    printed = capsys.readouterr().out
    assert all(f"src/m{i}.py:{i} problem {i} [with brackets]" in printed for i in range(1, 31))
    assert f"out {ITEM_LINES - 3}" in printed and "more lines in the EvalResult" in printed
    assert not re.search(r"more items", printed)
