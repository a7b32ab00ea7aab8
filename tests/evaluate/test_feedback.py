"""One feedback item per distinct problem, on what real tools printed for real projects."""

import json
import runpy
from pathlib import Path

from sprintflow.evaluate.excerpt import combined_output
from sprintflow.evaluate.feedback import find_regressions, generator_feedback
from sprintflow.parsers import parse_report
from sprintflow.schemas import (
    Category,
    CriterionResult,
    EvalResult,
    Outcome,
    Priority,
    Score,
    StrategyResult,
)

ROOT = Path(__file__).resolve().parents[2]
FEEDBACK = ROOT / "tests" / "fixtures" / "feedback"
ENVIRONMENT = ROOT / "tests" / "fixtures" / "reports" / "environment"


def strategy(project: str, run: str, name: str, fmt: str | None) -> StrategyResult:
    """A failed strategy as the evaluator judges a recorded command: parsed diagnostics, output kept."""
    data = json.loads((FEEDBACK / project / f"{run}.json").read_text(encoding="utf-8"))
    root = json.loads((FEEDBACK / project / "project.json").read_text(encoding="utf-8"))["root"]
    output = combined_output(data["stdout"], data["stderr"])
    diagnostics = parse_report(fmt, output, [root]).diagnostics if fmt else []
    return StrategyResult(strategy=name, required=True, result=Outcome.failed, exit_code=data["exitCode"],
                          output=output[-4000:], details=f"`{data['command']}` exited {data['exitCode']}.",
                          diagnostics=diagnostics)


def faults(project: str) -> dict[str, tuple[str, int]]:
    meta = json.loads((FEEDBACK / project / "project.json").read_text(encoding="utf-8"))
    return {name: (where["file"], where["line"]) for name, where in meta["faults"].items()}


def test_the_same_type_error_from_build_typecheck_and_four_test_files_is_one_item():
    strategies = [strategy("tsconfig-paths", "build-npm-run", "build", "tsc"),
                  strategy("tsconfig-paths", "typecheck-tsc", "typecheck", "tsc"),
                  strategy("tsconfig-paths", "test-npm-test", "unit-test", "jest-text")]
    items = generator_feedback(strategies, [], [], {"build": "npm run build"})
    assert len(items) == 1
    item = items[0]
    assert (item.file, item.line) == faults("tsconfig-paths")["type"]
    assert item.description.startswith("build, typecheck, unit-test TS2322: Type 'string' is not assignable")
    assert "Failing tests: src/__tests__/" in item.description and "(+" not in item.description
    assert item.priority is Priority.critical and item.reproduction == "Run: npm run build"


def test_criteria_and_regressions_are_told_on_the_items_not_repeated():
    strategies = [strategy("destr", "lint-npm-run", "lint", "eslint-stylish"),
                  strategy("destr", "typecheck-tsc", "typecheck", "tsc"),
                  strategy("destr", "test-vitest3", "unit-test", "vitest-text")]
    criteria = [CriterionResult(criterion_id=f"sc-1-{i}", description=f"{s.strategy} passes", required=True,
                                result=Outcome.failed, evidence=s.details) for i, s in enumerate(strategies, 1)]
    previous = EvalResult(
        eval_id="eval-c-1", contract_id="c", spec_id="s", timestamp="2026-01-01T00:00:00Z", iteration=1,
        overall_result="pass", summary="", score=Score(criteria_total=3, criteria_passed=3, criteria_failed=0,
                                                       criteria_skipped=0, required_passed=3, required_failed=0,
                                                       required_total=3),
        strategy_results=[s.model_copy(update={"result": Outcome.passed}) for s in strategies],
        criteria_results=[c.model_copy(update={"result": Outcome.passed}) for c in criteria])
    regressions = find_regressions(previous, strategies, criteria)
    assert len(regressions) == 6
    items = generator_feedback(strategies, criteria, regressions, {})
    assert sorted((i.file, i.line) for i in items) == sorted(faults("destr").values())
    for item in items:
        assert item.category is Category.regression and item.priority is Priority.critical
        assert "This passed in eval-c-1 (a regression)." in item.description
        assert "Blocks criterion sc-1-" in item.description
    # A criterion no strategy explains (a custom check) still gets its own item.
    custom = CriterionResult(criterion_id="sc-1-9", description="the export has a header", required=True,
                             result=Outcome.failed, evidence="`python check.py` exited 1.")
    extra = generator_feedback(strategies, [*criteria, custom], regressions, {})
    assert len(extra) == 4 and extra[-1].description.startswith("Criterion sc-1-9 fail")


def test_real_diagnostics_come_first_and_none_is_cut():
    strategies = [strategy("destr", "test-vitest3", "unit-test", "vitest-text"),
                  strategy("destr", "lint-npm-run", "lint", "eslint-stylish"),
                  strategy("destr", "typecheck-tsc", "typecheck", "tsc")]
    criterion = CriterionResult(criterion_id="sc-1-1", description="export works", required=True,
                                result=Outcome.failed, evidence="no strategy says so")
    items = generator_feedback(strategies, [criterion], [], {})
    assert [i.description.split(" ")[0] for i in items] == ["typecheck", "unit-test:", "Criterion", "lint"]


def test_a_failure_no_parser_reads_carries_what_the_tool_said():
    ruff = strategy("humanize", "lint-ruff-mid", "lint", None)  # ruff 0.11 cannot read the config
    [item] = generator_feedback([ruff], [], [], {"lint": "ruff check ."})
    assert item.description.startswith("lint failed: `ruff check .` exited 2.\nOutput:\nruff failed")
    assert "unknown field `future-annotations`" in item.description


def test_environment_failures_are_one_environment_item_without_the_symptoms(tmp_path):
    eslint = StrategyResult(strategy="lint", required=True, result=Outcome.failed, exit_code=2,
                            output=(ENVIRONMENT / "eslint10-node18.txt").read_text(), details="exited 2")
    native = StrategyResult(strategy="unit-test", required=True, result=Outcome.failed, exit_code=1,
                            output=(ENVIRONMENT / "better-sqlite3-node-module-version.txt").read_text(),
                            details="exited 1", diagnostics=parse_report(
                                "generic", (ENVIRONMENT / "better-sqlite3-node-module-version.txt").read_text(),
                                ["/workspace"]).diagnostics)
    typecheck = strategy("destr", "typecheck-tsc", "typecheck", "tsc")
    items = generator_feedback([eslint, native, typecheck], [], [], {}, tmp_path)
    assert [i.category for i in items] == [Category.environment, Category.environment, Category.bug]
    assert "util.styleText is not a function" in items[0].description
    assert "runtime the project declares" in items[0].expected
    assert "NODE_MODULE_VERSION" in items[1].description and "npm ci / npm rebuild" in items[1].expected
    assert not any(i.file == "index.js" for i in items)


def test_the_recorded_projects_meet_the_feedback_goal():
    """The benchmark's own scoring on the recordings, for plain commands judged first and judged again
    (a sprint's next iteration on a tree nobody fixed): recall, noise, test names, reproductions."""
    bench = runpy.run_path(str(ROOT / "benchmarks" / "feedback.py"))
    catalogue = json.loads((FEEDBACK / "projects.json").read_text(encoding="utf-8"))
    languages = {"go": 6, "rust": 15, "java": 16}
    """Each ecosystem meets the goal alone, on at least this many faults."""
    totals = {"plain": [0] * 7, "repeated": [0] * 7, **{f"plain:{language}": [0] * 7 for language in languages}}
    for project in catalogue["projects"]:
        runs, project_faults = bench["load_project"](project)
        for label, chosen in bench["evaluations"](runs):
            kind = "plain" if label.startswith("plain") else label
            if kind not in totals:
                continue
            items = bench["feedback_for"](chosen, repeated=kind == "repeated")
            expected = {name: project_faults[name] for run in chosen for name in run.expects}
            counts = (len(bench["named_faults"](items, expected)), len(expected), len(items),
                      *bench["test_names"](items, chosen), *bench["reproductions"](items, chosen))
            for key in {kind, f"{kind}:{project['language']}"} & set(totals):
                totals[key] = [total + n for total, n in zip(totals[key], counts, strict=True)]
    assert totals["plain"][1] >= 25 and totals["repeated"][1] >= 20, totals
    assert totals["plain"][3] >= 10 and totals["repeated"][5] >= 5, totals  # failing tests and reproductions seen
    assert bench["goal_met"](*totals["plain"]) and bench["goal_met"](*totals["repeated"]), totals
    for language, faults in languages.items():
        assert totals[f"plain:{language}"][1] >= faults and bench["goal_met"](*totals[f"plain:{language}"]), \
            (language, totals[f"plain:{language}"])


def test_a_cap_hides_only_the_least_urgent_and_says_what_it_left_out():
    from sprintflow.evaluate.feedback import MAX_ITEMS_PER_STRATEGY
    from sprintflow.schemas import Diagnostic

    found = [Diagnostic(tool="ruff", file=f"gen/m{i:02}.py", line=1, code="E501", message="Line too long")
             for i in range(MAX_ITEMS_PER_STRATEGY + 9)]
    found.append(Diagnostic(tool="ruff", file="src/calc.py", line=7, code="F401", message="`os` imported but unused"))
    lint = StrategyResult(strategy="lint", required=True, result=Outcome.failed, exit_code=1, diagnostics=found)
    items = generator_feedback([lint], [], [], {"lint": "ruff check ."}, touched=["src/calc.py"])
    assert (items[0].file, items[0].line) == ("src/calc.py", 7)  # the change's own file first
    assert ("gen/m00.py", 1) in {(i.file, i.line) for i in items}  # the tool's first finding stays
    [more] = [i for i in items if "more lint errors" in i.description]
    assert more.description.startswith("10 more lint errors not listed here (E501 ×10) in gen/")
    assert len(items) == MAX_ITEMS_PER_STRATEGY + 1
