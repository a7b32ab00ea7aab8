"""The mutation check of ``go test``: the judge's gremlins on real trees the judge built, in both executors.

Real go, real gremlins (built by the judge once: :mod:`sprintflow.sandbox.gremlins`), no mocks. A
tested change is measured with no finding; a function whose new test only calls it is the
untested-change finding at its file:line; the cap and the budget bound the run; a report that is not
gremlins' is a clear failure. ``fixtures/mutation/gremlins-report.json`` is a real gremlins v0.6.0
report (``gremlins unleash --output``) of the module in ``FIXTURE_MODULE``: one mutant of each status.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sprintflow.evaluate.mutation import FOLDER, untested, with_mutation
from sprintflow.evaluate.mutation.changes import ChangedFile
from sprintflow.evaluate.mutation.gremlins import PLAN, REPORT, go_functions, parse_report, report, token_edit
from sprintflow.sandbox.executors import DockerExecutor, Executor, LocalExecutor
from sprintflow.sandbox.prepare import with_project_sandbox
from sprintflow.schemas import Outcome, StrategyResult
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.strategies import MutationSettings

from .judged_change import judged_tree
from .judged_change import measured as measured_check

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mutation"
COMMAND = "go test -count=1 ./..."

BEFORE = {
    "go.mod": "module example.com/calc\n\ngo 1.22\n",
    "calc.go": "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n",
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
                    '\tif got := Add(2, 2); got != 4 {\n\t\tt.Fatalf("Add(2, 2) = %d", got)\n\t}\n}\n',
}
# Add fixed, and a counter whose test checks what it counts: every changed function tested.
TESTED = {
    "calc.go": BEFORE["calc.go"].replace("a - b", "a + b")
    + "\n// Counter counts.\ntype Counter struct{ n int }\n\n// Inc counts one.\n"
    + "func (c *Counter) Inc() {\n\tc.n++\n}\n",
    "counter_test.go": 'package calc\n\nimport "testing"\n\nfunc TestInc(t *testing.T) {\n\tvar c Counter\n'
                       '\tc.Inc()\n\tif c.n != 1 {\n\t\tt.Fatal(c.n)\n\t}\n}\n',
}
# The same, and Double, whose new test only calls it (lines 16-23 of calc.go).
UNTESTED = {
    "calc.go": TESTED["calc.go"] + "\n// Double doubles.\nfunc Double(x int) int {\n\tif x > 100 {\n\t\treturn x\n"
                                   "\t}\n\treturn x * 2\n}\n",
    "counter_test.go": TESTED["counter_test.go"],
    "double_test.go": 'package calc\n\nimport "testing"\n\nfunc TestDouble(t *testing.T) {\n\tDouble(2)\n}\n',
}
DOUBLE_AT = 18  # `if x > 100`: Double's first mutant


def _executor(kind: str, workspace: Path, request) -> Executor:
    if kind == "local":
        return LocalExecutor()
    request.getfixturevalue("docker_ready")
    return with_project_sandbox(DockerExecutor(), workspace)


HELD_OUT_EVAL = {  # the planner's, in the baseline: a program of its own, which no `go test` runs
    "evals/check/main.go": 'package main\n\nimport (\n\t"os"\n\n\t"example.com/calc"\n)\n\n'
                           'func main() {\n\tif calc.Add(1, 1) != 2 || calc.Double(3) != 6 ||\n'
                           '\t\tcalc.Double(500) != 500 {\n'
                           '\t\tos.Exit(1)\n\t}\n}\n',
}


def _measure(root: Path, change: dict[str, str], kind: str, request, settings: MutationSettings,
             commands: tuple[str, ...] = (COMMAND,), before: dict[str, str] = BEFORE,
             ) -> tuple[MutationResult | None, float]:
    """``change`` over ``before``, judged as a sprint would: the baseline pinned, the tree built, then measured."""
    workspace = root / "ws"
    tree = judged_tree(workspace, before, change, "pin-go")
    return measured_check(tree, workspace, "go", _executor(kind, workspace, request), list(commands), 2.0, settings)


@pytest.mark.parametrize("kind", ["local", "docker"])
def test_the_held_out_evals_judge_gremlins_survivors(tmp_path, request, kind):
    """Double's new test only calls it; the held-out eval, a program `go test ./...` does not run, checks it:
    gremlins' survivors are written back token by token and the held-out command kills them."""
    mutation, _ = _measure(tmp_path, UNTESTED, kind, request, MutationSettings(),
                           commands=(COMMAND, "go run ./evals/check"), before={**BEFORE, **HELD_OUT_EVAL})
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    assert {f.function: f.killed >= 1 for f in mutation.functions} == {"Add": True, "Counter.Inc": True,
                                                                        "Double": True}
    assert untested(mutation) == []


@pytest.fixture(scope="module", params=["local", "docker"])
def measured(request, tmp_path_factory):
    """Each executor's measure of the tested change and of the untested one (the cap spread over them)."""
    kind = request.param
    tested = _measure(tmp_path_factory.mktemp(f"tested-{kind}"), TESTED, kind, request, MutationSettings())
    capped = _measure(tmp_path_factory.mktemp(f"untested-{kind}"), UNTESTED, kind, request,
                      MutationSettings(max_mutants=3))
    return kind, tested, capped


def test_a_tested_change_is_measured_with_no_finding(measured):
    _, (mutation, _), _ = measured
    assert mutation is not None and mutation.status == "measured", mutation
    assert mutation.tool == "gremlins v0.6.0" and mutation.kill_rate is not None and mutation.kill_rate > 0
    assert {(f.file, f.function) for f in mutation.functions} == {("calc.go", "Add"), ("calc.go", "Counter.Inc")}
    assert all(f.killed >= 1 for f in mutation.functions) and not untested(mutation)
    passed = StrategyResult(strategy="unit-test", required=True, result=Outcome.passed, details="ok")
    assert with_mutation(passed, mutation).result is Outcome.passed


def test_an_untested_added_function_fails_the_criterion_at_its_line(measured):
    _, _, (mutation, _) = measured
    assert mutation is not None and mutation.status == "measured", mutation
    by_name = {f.function: f for f in mutation.functions}
    assert by_name["Add"].killed >= 1 and by_name["Counter.Inc"].killed >= 1
    assert by_name["Double"].killed == 0 and by_name["Double"].mutants >= 1
    [finding] = untested(mutation)
    assert (finding.file, finding.line, finding.code) == ("calc.go", DOUBLE_AT, "untested-change")
    assert "none of 2 mutants of Double was killed" in finding.message
    passed = StrategyResult(strategy="unit-test", required=True, result=Outcome.passed, details="ok")
    failed = with_mutation(passed, mutation)
    assert failed.result is Outcome.failed and "calc.go:18" in failed.details


def test_the_cap_gives_every_changed_function_a_line_and_no_more(measured):
    _, _, (mutation, _) = measured
    # Add's line (1 mutant), Inc's (1), Double's first (2): 4, over the cap of 3 (each function gets one);
    # Double's `x * 2` is left out, not run.
    assert mutation.mutants == 4 and mutation.not_run == 1, mutation


def test_the_budget_bounds_the_run(tmp_path, request):
    mutation, seconds = _measure(tmp_path, UNTESTED, "local", request, MutationSettings(budget=0.5))
    assert mutation is not None and mutation.status == "failed", mutation
    assert "budget of 0.5 s" in (mutation.reason or "") and seconds < 30


def test_a_change_to_tests_only_has_no_mutant_to_judge(tmp_path, request):
    only_tests = {"calc_test.go": BEFORE["calc_test.go"] + "\nfunc TestMore(t *testing.T) {}\n"}
    mutation, _ = _measure(tmp_path, only_tests, "local", request, MutationSettings())
    assert mutation is not None and mutation.status == "nothing to judge" and mutation.mutants == 0


FIXTURE_MODULE = {
    "go.mod": "module example.com/fx\n\ngo 1.22\n",
    "fx.go": 'package fx\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Greet(s string) string {\n'
             '\treturn s + "!"\n}\n\nfunc Sum(n int) int {\n\tt := 0\n\tfor i := 0; i < n; i++ {\n\t\tt += i\n\t}\n'
             '\treturn t\n}\n\nfunc Max(a, b int) int {\n\tif a >= b {\n\t\treturn a\n\t}\n\treturn b\n}\n\n'
             'func Unused(x int) int {\n\treturn x * 3\n}\n',
    "fx_test.go": 'package fx\n\nimport "testing"\n\nfunc TestAll(t *testing.T) {\n'
                  '\tif Add(2, 2) != 4 || Greet("a") != "a!" || Sum(3) != 3 || Max(2, 1) != 2 {\n'
                  '\t\tt.Fatal("wrong")\n\t}\n}\n',
}
# How the fixture was made (mutate_go.py's PATH: its git and go before the toolchain's):
# gremlins unleash --integration --coverpkg ./... --diff x --workers 1 --timeout-coefficient 3 <ENABLED> --output ...
FIXTURE_CHANGES = [ChangedFile("fx.go", ((3, 31),))]


def test_a_real_gremlins_report_is_read_mutant_by_mutant():
    text = (FIXTURES / "gremlins-report.json").read_text()
    functions = {"fx.go": go_functions(FIXTURE_MODULE["fx.go"])}
    mutants = parse_report(text, FIXTURE_CHANGES, functions)
    statuses = {(m.function, m.line, m.operator): m.status for m in mutants}
    assert statuses[("Add", 4, "ARITHMETIC_BASE")] == "killed"
    assert statuses[("Greet", 8, "ARITHMETIC_BASE")] == "error"  # NOT VIABLE: string - string does not build
    assert statuses[("Sum", 13, "INCREMENT_DECREMENT")] == "timeout"  # i-- never ends: not a kill
    assert statuses[("Max", 20, "CONDITIONALS_BOUNDARY")] == "survived"  # LIVED
    assert statuses[("Unused", 27, "ARITHMETIC_BASE")] == "survived"  # NOT COVERED
    # Only the changed lines count: the same report, judged for Add's line alone.
    assert {m.function for m in parse_report(text, [ChangedFile("fx.go", ((4, 4),))], functions)} == {"Add"}
    # Each mutant as the token gremlins wrote at its position (a byte column: fx.go is ASCII, so its characters).
    written = [(m["type"], token_edit(FIXTURE_MODULE["fx.go"], "fx.go", m["line"], m["column"], m["type"]))
               for m in json.loads(text)["files"][0]["mutations"]]
    lines = FIXTURE_MODULE["fx.go"].splitlines()
    assert [(kind, lines[e.start[0] - 1][e.start[1] - 1:e.end[1] - 1], e.replacement) for kind, e in written if e] == [
        ("ARITHMETIC_BASE", "+", "-"), ("ARITHMETIC_BASE", "+", "-"), ("CONDITIONALS_BOUNDARY", "<", "<="),
        ("CONDITIONALS_NEGATION", "<", ">="), ("INCREMENT_DECREMENT", "++", "--"), ("INVERT_ASSIGNMENTS", "+=", "-="),
        ("REMOVE_SELF_ASSIGNMENTS", "+=", "="), ("CONDITIONALS_BOUNDARY", ">=", ">"),
        ("CONDITIONALS_NEGATION", ">=", "<"), ("ARITHMETIC_BASE", "*", "/")]
    assert token_edit(FIXTURE_MODULE["fx.go"], "fx.go", 4, 11, "INVERT_LOGICAL") is None  # not that mutator's token


@pytest.mark.parametrize("text, says", [
    ("not json", "malformed"),
    ('{"files": [{"file_name": "fx.go", "mutations": [{"type": "X", "status": "KILLED", "line": "4", '
     '"column": 1}]}]}', "files.0.mutations.0.line"),
    ('{"files": [{"file_name": "fx.go", "mutations": [{"type": "X", "status": "EATEN", "line": 4, "column": 1}]}]}',
     "unknown status 'EATEN'"),
    ('{"files": [{"file_name": "../etc/fx.go", "mutations": []}]}', "outside the module"),
    ('{"mutants": []}', "files"),
])
def test_a_report_that_is_not_gremlins_is_a_clear_failure(text, says):
    with pytest.raises(ValueError, match="gremlins") as failure:
        parse_report(text, FIXTURE_CHANGES, {})
    assert says in str(failure.value)


def test_a_mutant_the_runner_chose_that_gremlins_never_reported_is_a_failure(tmp_path):
    (tmp_path / FOLDER).mkdir()
    (tmp_path / "fx.go").write_text(FIXTURE_MODULE["fx.go"])
    (tmp_path / REPORT).write_text('{"files": []}')
    plan = {"tool": "gremlins v0.6.0", "candidates": [["fx.go", 4, 11, "ARITHMETIC_BASE", "RUNNABLE"],
                                                      ["fx.go", 27, 11, "ARITHMETIC_BASE", "NOT COVERED"]],
            "chosen": {"fx.go": [4]}}
    (tmp_path / PLAN).write_text(json.dumps(plan))
    with pytest.raises(ValueError, match="did not report the mutant ARITHMETIC_BASE of fx.go:4"):
        report(tmp_path, FIXTURE_CHANGES)
    # Stopped by the budget (partial), what it did not reach is not run; so is what the cap left out.
    (tmp_path / PLAN).write_text(json.dumps({**plan, "partial": True}))
    tool, mutants = report(tmp_path, FIXTURE_CHANGES)
    assert tool == "gremlins v0.6.0"
    assert [(m.function, m.status) for m in mutants] == [("Add", "not-run"), ("Unused", "not-run")]


def test_functions_are_found_around_comments_strings_and_type_literals():
    source = ('package p\n\nimport "fmt"\n\n/* func Fake() {\n} */\nfunc (s *Stack[T]) Push(v T) {\n'
              '\tfmt.Println("}", \'}\', `\n}`)\n}\n\nfunc Make[T any]() (out struct{ n int }, err error) {\n'
              '\treturn\n}\n\nvar handler = func() {}\n')
    assert go_functions(source) == [("Stack.Push", 7, 10), ("Make", 12, 14)]
