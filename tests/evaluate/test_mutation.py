"""The mutation check, on real trees the judge built: cosmic-ray against pytest, Stryker's own report."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from sprintflow.evaluate.mutation import FOLDER, MutationJob, measure, summarize, untested, with_mutation
from sprintflow.evaluate.mutation.changes import ChangedFile, changed_files, changed_ranges
from sprintflow.evaluate.mutation.stryker import Stryker
from sprintflow.evaluate.mutation.stryker import report as stryker_report
from sprintflow.evaluate.mutation.tools import ToolRun
from sprintflow.evaluate.view import open_view
from sprintflow.judge.baseline import pin_baseline
from sprintflow.judge.tree import WorkspaceStore, remove_tree
from sprintflow.sandbox.executors import LocalExecutor
from sprintflow.schemas import Outcome, StrategyResult
from sprintflow.schemas.evaluation import MutantRecord
from sprintflow.schemas.strategies import MutationSettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mutation"
RUNNER = Path(__file__).resolve().parents[2] / "sprintflow/sandbox/scripts/mutate_python.py"
PLAN = RUNNER.with_name("stryker_plan.cjs")
TS_APP = Path(__file__).resolve().parents[2] / "examples/ts-app"

BEFORE = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "src/shop/__init__.py": "def total(prices):\n    return sum(prices)\n",
    "tests/test_total.py": "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n",
    "evals/test_label.py": "from shop import label\n\n\ndef test_label():\n"
                           "    assert label(20) == 'dear' and label(5) == 'cheap'\n",
}
CHANGE = {
    # discount: the unit tests check it; label: only the held-out eval does; shout: called, never checked.
    "src/shop/__init__.py": BEFORE["src/shop/__init__.py"]
    + "\n\ndef discount(price, percent):\n    if percent > 100:\n        return 0\n"
    + "    return price - price * percent / 100\n"
    + "\n\ndef label(price):\n    if price > 10:\n        return 'dear'\n    return 'cheap'\n"
    + "\n\ndef shout(text):\n    if len(text) > 3:\n        return text.upper()\n    return text\n",
    "tests/test_discount.py": "from shop import discount, shout\nfrom shop.test_util import half\n\n\n"
                              "def test_discount():\n"
                              "    assert discount(200, 10) == 180\n    assert discount(50, 150) == 0\n\n\n"
                              "def test_shout_runs():\n    shout('hello')\n    half(4)\n",
    # Named like a test, but no test is collected from it: code under test like any other.
    "src/shop/test_util.py": "def half(x):\n    return x / 2\n",
}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One judged change measured once: a tested function, an untested one; the tree before and after."""
    workspace = tmp_path_factory.mktemp("shop")
    for rel, text in BEFORE.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    store = WorkspaceStore(workspace)
    pin_baseline(store, "pin-mutation")
    for rel, text in CHANGE.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    snapshot = store.scan()
    tree = dataclasses.replace(store.materialize(snapshot.manifest, snapshot.dependencies), pin_id="pin-mutation")
    before = {p.relative_to(tree.root).as_posix(): p.read_bytes() for p in tree.root.rglob("*") if p.is_file()}
    executor = LocalExecutor().for_tree(tree)
    view = open_view(tree.root)
    job = MutationJob(MutationSettings(max_mutants=16), tree.root, workspace, "pin-mutation")
    try:
        with view.layer("unit-test-mutation") as layer:
            mutation = measure(job, "pytest", layer, executor, ["python3 -m pytest -q -p no:cacheprovider tests",
                                                                "python3 -m pytest -q -p no:cacheprovider evals"], 1.0)
        after = {p.relative_to(tree.root).as_posix(): p.read_bytes() for p in tree.root.rglob("*") if p.is_file()}
        yield mutation, job, before, after
    finally:
        view.close()
        remove_tree(tree)


def test_only_the_changed_source_lines_are_mutated(measured):
    mutation, job, _, _ = measured
    assert mutation is not None and mutation.status == "measured" and mutation.tool.startswith("cosmic-ray 8.")
    # Every changed Python file is handed to the runner; the unchanged total is not mutated.
    assert {c.path: c.lines for c in job.changes("pytest")} == {
        "src/shop/__init__.py": ((5, 8), (11, 14), (17, 20)), "src/shop/test_util.py": ((1, 2),),
        "tests/test_discount.py": ((1, 2), (5, 7), (10, 12))}  # split at blank lines: nothing to mutate there
    # The file pytest collected tests from is the test: its functions are not mutated, test_util's are.
    assert {f.function for f in mutation.functions} == {"discount", "label", "shout", "half"}
    assert all(5 <= f.line <= 20 for f in mutation.functions if f.file == "src/shop/__init__.py")
    assert mutation.mutants <= 16 and mutation.kill_rate is not None


def test_a_function_whose_tests_pass_whatever_it_does_fails_the_criterion_at_its_line(measured):
    mutation, _, _, _ = measured
    by_name = {f.function: f for f in mutation.functions}
    assert by_name["discount"].killed >= 1 and by_name["shout"].killed == 0 and by_name["shout"].mutants >= 1
    assert by_name["label"].killed >= 1  # the held-out eval is one of the judging tests
    assert by_name["half"].killed == 0
    finding, helper = untested(mutation)
    assert (finding.file, finding.code) == ("src/shop/__init__.py", "untested-change")
    assert 16 <= finding.line <= 20 and "none of" in finding.message and "shout" in finding.message
    assert (helper.file, helper.line, helper.code) == ("src/shop/test_util.py", 2, "untested-change")
    passed = StrategyResult(strategy="unit-test", required=True, result=Outcome.passed, details="3 tests passed.")
    failed = with_mutation(passed, mutation)
    assert failed.result is Outcome.failed and failed.mutation == mutation
    assert "the tests pass whatever this code does" in failed.details and failed.diagnostics[0] == finding
    assert all(s.status != "killed" for s in mutation.survivors)


def test_mutating_leaves_the_judged_tree_as_it_was(measured):
    _, _, before, after = measured
    assert after == before  # the mutants lived in the layer, never in the store's hard links
    assert not any(rel.startswith(FOLDER) for rel in after)


def test_a_check_that_cannot_finish_fails_and_a_missing_tool_is_said(tmp_path):
    passed = StrategyResult(strategy="unit-test", required=True, result=Outcome.passed)
    from sprintflow.schemas.evaluation import MutationResult

    stopped = MutationResult(tool="cosmic-ray", status="failed", reason="it wrote no report (exit -9)")
    assert with_mutation(passed, stopped).result is Outcome.failed
    missing = MutationResult(tool="Stryker", status="unavailable", reason="Stryker is not installed")
    assert with_mutation(passed, missing).result is Outcome.passed
    assert with_mutation(passed, None) == passed
    # The runner says cosmic-ray is missing with its own exit code, so the judge can tell it from a crash.
    (tmp_path / "job.json").write_text(json.dumps({"files": {}, "testCommand": "true", "maxMutants": 1,
                                                   "budget": 1, "mutantTimeout": 1, "seed": 1, "report": "r"}))
    python = shutil.which("python3") or sys.executable
    done = subprocess.run([python, "-I", "-S", str(RUNNER), "job.json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 3 and "cosmic-ray is not installed" in done.stdout


def test_stryker_is_named_with_the_command_that_installs_it(tmp_path):

    reason = Stryker().missing(tmp_path, "vitest")
    assert reason and "npm install --save-dev @stryker-mutator/core @stryker-mutator/vitest-runner" in reason
    for package in ("@stryker-mutator/core", "@stryker-mutator/vitest-runner"):
        (tmp_path / "node_modules" / package).mkdir(parents=True)
        (tmp_path / "node_modules" / package / "package.json").write_text("{}")
    assert Stryker().missing(tmp_path, "vitest") is None


def _stryker_plan(root: Path, changes: list[ChangedFile], cap: int, tests: tuple[str, ...] = ()) -> dict:
    """What ``stryker_plan.cjs`` chooses in ``root`` (with the TypeScript example's node_modules): the
    options Stryker gets, and the functions and left-out tests it writes for the judge."""
    (root / FOLDER).mkdir(exist_ok=True)
    if not (root / "node_modules").exists():
        (root / "node_modules").symlink_to(TS_APP / "node_modules")  # Stryker's instrumenter, TypeScript
    Stryker().command(ToolRun("vitest", root, LocalExecutor(), changes, [], MutationSettings(max_mutants=cap), 10,
                              tests))
    subprocess.run(["node", str(PLAN), f"{FOLDER}/stryker-job.json"], cwd=root, check=True, timeout=60)
    return {"stryker": json.loads((root / FOLDER / "stryker.json").read_text()),
            "plan": json.loads((root / FOLDER / "functions.json").read_text())}


def test_strykers_mutants_are_put_in_the_functions_the_typescript_compiler_finds(tmp_path):
    """A report Stryker 9.6 wrote for the TypeScript example (src/store.ts:22-47 mutated): each mutant
    belongs to its own function (two in one changed block are two), by the project's TypeScript."""
    (tmp_path / FOLDER).mkdir()
    shutil.copyfile(FIXTURES / "stryker-ts-app.json", tmp_path / FOLDER / "report.json")
    # Without the map of functions, each changed line stands alone.
    tool, mutants = stryker_report(tmp_path)
    assert tool == "Stryker 9.6.1" and len(mutants) == 42
    assert {m.status for m in mutants} <= {"killed", "survived", "timeout", "error", "not-run"}
    assert sum(m.status == "killed" for m in mutants) == 25
    assert {m.function for m in mutants} == {f"line {m.line}" for m in mutants}
    report = json.loads((tmp_path / FOLDER / "report.json").read_text())
    (tmp_path / "src").mkdir()
    (tmp_path / "src/store.ts").write_text(report["files"]["src/store.ts"]["source"])  # the tree Stryker saw
    _stryker_plan(tmp_path, [ChangedFile("src/store.ts", ((22, 47),))], cap=100)
    _, mutants = stryker_report(tmp_path)
    assert {m.function for m in mutants} == {"normalizeTitle", "summarize"}
    found = summarize("Stryker", mutants, None)
    assert [f.function for f in found.functions if f.killed == 0] == ["summarize"]
    # A file the runner collected tests from is a test, whatever its name: its mutants are not counted.
    report["testFiles"]["src/store.ts"] = {"tests": [{"id": "99", "name": "a test in a source file"}]}
    (tmp_path / FOLDER / "report.json").write_text(json.dumps(report))
    assert stryker_report(tmp_path)[1] == []
    # A damaged report is an error the judge reports (the check then fails), never a crash.
    (tmp_path / FOLDER / "report.json").write_text('{"files": {"src/store.ts": {"mutants": [{"status": 1}]}}}')
    with pytest.raises((KeyError, TypeError, ValueError)):
        stryker_report(tmp_path)


def _scaled(functions: int) -> str:
    """``functions`` TypeScript functions of six lines and eight of Stryker's mutants each."""
    return "".join(f"\nexport function scaled{i}(x: number): number {{\n  if (x > {i}) {{\n    return x * {i + 2};\n"
                   f"  }}\n  return x - {i};\n}}\n" for i in range(functions))


def test_stryker_runs_at_most_the_cap_and_every_changed_function_gets_one(tmp_path):
    # Stryker mutates every node of the lines it is given: 80 mutants of a 50-line change, a third of
    # a second each. The plan gives it exactly the nodes chosen.
    (tmp_path / "src").mkdir()
    (tmp_path / "src/extra.ts").write_text(_scaled(10))
    (tmp_path / "src/other.ts").write_text(_scaled(2))
    changes = [ChangedFile("src/extra.ts", ((1, 70),)), ChangedFile("src/other.ts", ((9, 14),))]
    chosen = _stryker_plan(tmp_path, changes, cap=2)["stryker"]["mutate"]
    # Eleven changed functions (scaled1 of other.ts alone changed there): one node each, whatever the cap.
    assert len(chosen) == 11 and sum(r.startswith("src/other.ts:") for r in chosen) == 1
    for pattern in chosen:
        match = re.fullmatch(r"(.+):(\d+):(\d+)-(\d+):(\d+)", pattern)
        assert match, pattern
        file, start, _, end, _ = match.groups()
        assert start == end and (file == "src/extra.ts" or 9 <= int(start) <= 14), pattern  # one expression each
    plan = _stryker_plan(tmp_path, changes, cap=1000)
    assert len(plan["stryker"]["mutate"]) > 11 and plan["plan"]["tests"] == []
    assert [f["name"] for f in plan["plan"]["functions"]["src/other.ts"]] == ["scaled0", "scaled1"]


def test_the_test_files_the_run_named_are_left_out_and_strykers_run_must_agree(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src/extra.ts").write_text(_scaled(1))
    (tmp_path / "test").mkdir()
    (tmp_path / "test/extra.test.ts").write_text("import { expect, test } from 'vitest';\n"
                                                 "test('one', () => { expect(1).toBe(1); });\n")
    changes = [ChangedFile("src/extra.ts", ((1, 7),)), ChangedFile("test/extra.test.ts", ((1, 2),))]
    plan = _stryker_plan(tmp_path, changes, cap=16, tests=("test/extra.test.ts",))
    assert plan["plan"]["tests"] == ["test/extra.test.ts"]
    assert all(r.startswith("src/extra.ts:") for r in plan["stryker"]["mutate"])
    report = {"files": {}, "testFiles": {"test/extra.test.ts": {"tests": [{"id": "0", "name": "one"}]}}}
    (tmp_path / FOLDER / "report.json").write_text(json.dumps(report))
    assert stryker_report(tmp_path)[1] == []
    # The run's report named a source file a test: Stryker's run collected none from it, so the
    # check cannot say its changes were judged.
    report["testFiles"] = {}
    (tmp_path / FOLDER / "report.json").write_text(json.dumps(report))
    with pytest.raises(ValueError, match="test/extra.test.ts was left out as a test file"):
        stryker_report(tmp_path)
    # A change of tests alone keeps them: Stryker's run says which files they are.
    only_tests = _stryker_plan(tmp_path, changes[1:], cap=16, tests=("test/extra.test.ts",))
    assert only_tests["plan"]["tests"] == [] and only_tests["stryker"]["mutate"]


def test_a_change_with_no_mutant_in_it_has_nothing_to_judge(tmp_path):
    # Stryker given nothing to mutate fails ("No tests were executed"): the plan writes its empty report.
    (tmp_path / "src").mkdir()
    (tmp_path / "src/types.ts").write_text("export interface Extra {\n  a: number;\n}\n")
    plan = _stryker_plan(tmp_path, [ChangedFile("src/types.ts", ((1, 3),))], cap=16)
    assert plan["stryker"]["mutate"] == []
    tool, mutants = stryker_report(tmp_path)
    assert tool.startswith("Stryker ") and mutants == []
    assert summarize(tool, mutants, 1).status == "nothing to judge"


def test_changed_lines_are_the_judged_files_new_lines(tmp_path):
    assert changed_ranges("a\nb\n", "a\nb\n") == ()
    assert changed_ranges("a\nb\nc\n", "a\nc\n") == ()  # a deletion leaves nothing to mutate
    for rel, text in {"src/m.py": "x = 2\n", "tests/test_m.py": "x = 3\n", "setup.py": "", "conftest.py": "x = 4\n",
                      "docs/m.py": "", "node_modules/p/i.js": "x", "src/big.py": "é" * 10}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = changed_files(tmp_path, {"src/m.py": "x = 1\n"}.get, (".py", ".js"))
    # Names decide nothing (the mutation run tells the tests); dependencies and empty files are left out.
    assert [(c.path, c.lines) for c in found] == [("conftest.py", ((1, 1),)), ("src/big.py", ((1, 1),)),
                                                  ("src/m.py", ((1, 1),)), ("tests/test_m.py", ((1, 1),))]


def test_a_changed_function_no_mutant_of_which_ran_fails_the_check():
    def mutant(function, status):
        return MutantRecord(file="src/a.py", line=3, function=function, operator="op", status=status)

    judged = summarize("cosmic-ray", [mutant("tested", "killed"), mutant("slow", "not-run"),
                                      mutant("slow", "error")], 100)
    assert judged.status == "failed" and "src/a.py:3 slow" in judged.reason
    assert "1 not run when the budget ran out, 1 could not be loaded" in judged.reason
    failed = with_mutation(StrategyResult(strategy="unit-test", required=True, result=Outcome.passed), judged)
    assert failed.result is Outcome.failed
    assert summarize("cosmic-ray", [mutant("tested", "killed"), mutant("tested", "not-run")], 1).status == "measured"


def test_every_changed_function_gets_a_mutant_whatever_the_cap():
    runner = importlib.util.spec_from_file_location("mutate_python_runner", RUNNER)
    module = importlib.util.module_from_spec(runner)
    runner.loader.exec_module(module)
    specs = [SimpleNamespace(module_path=Path("src/a.py"), definition_name=f"f{i:02d}", start_pos=(i, 0),
                             operator_name="op", occurrence=0) for i in range(20)]
    chosen = module._spread(specs + [SimpleNamespace(**{**vars(specs[0]), "occurrence": 1})], 16, random.Random(1))
    assert {spec.definition_name for spec in chosen} == {f"f{i:02d}" for i in range(20)}
    assert len(chosen) == 20
