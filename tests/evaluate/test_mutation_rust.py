"""The mutation check of ``cargo test``: the judge's cargo-mutants, on real crates the judge built, in
both executors; and its report (a real ``outcomes.json``) read strictly."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sprintflow.evaluate.mutation import FOLDER, untested, with_mutation
from sprintflow.evaluate.mutation.cargo_mutants import OUTCOMES, report
from sprintflow.sandbox.cargo_mutants import VERSION, build
from sprintflow.sandbox.executors import DockerExecutor, Executor, LocalExecutor
from sprintflow.schemas import Outcome, StrategyResult
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.strategies import MutationSettings

from .judged_change import judged_tree
from .judged_change import measured as measured_check

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mutation"

CARGO_TOML = ('[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
              '[[test]]\nname = "heldout"\npath = "evals/heldout.rs"\n')
TESTS = ("\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    fn helper(x: i64) -> i64 {\n        x + 1\n    }\n\n"
         "    #[test]\n    fn adds() {\n        assert_eq!(add(2, helper(1)), 4);\n    }\n{more}}\n")
BEFORE = {
    "Cargo.toml": CARGO_TOML,
    "src/lib.rs": "/// The sum of a and b.\npub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n"
                  + TESTS.replace("{more}", ""),
    "evals/heldout.rs": "#[test]\nfn adds_held_out() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n",
}
TESTED = {  # add fixed, a new function and a test that checks it
    "src/lib.rs": "/// The sum of a and b.\npub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
                  "/// Twice x, capped.\npub fn double(x: i64) -> i64 {\n    if x > 100 {\n        return 200;\n"
                  "    }\n    x * 2\n}\n"
                  + TESTS.replace("{more}", "\n    #[test]\n    fn doubles() {\n        assert_eq!(double(3), 6);\n"
                                            "        assert_eq!(double(500), 200);\n    }\n"),
}
UNTESTED = {  # add fixed, and a new function a test only calls
    "src/lib.rs": "/// The sum of a and b.\npub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n"
                  "/// Half of x, rounded down.\npub fn halve(x: i64) -> i64 {\n    x / 2\n}\n"
                  + TESTS.replace("{more}", "\n    #[test]\n    fn halves() {\n        halve(8);\n    }\n"),
}


@pytest.fixture(scope="module")
def cargo_mutants_built():
    """The judge's cargo-mutants (built once on a machine, about two minutes; scripts/install.sh builds it)."""
    binary = build(progress=print)
    assert binary is not None, "cargo-mutants could not be built (the host's cargo and crates.io)"
    return binary


HELD_OUT_ONLY = {  # add fixed, halve checked by the held-out eval alone, triple by nothing that looks
    "src/lib.rs": UNTESTED["src/lib.rs"].replace(
        "/// Half of x", "/// Three times x.\npub fn triple(x: i64) -> i64 {\n    x * 3\n}\n\n/// Half of x"),
}
HELD_OUT_EVAL = {  # the planner's, in the baseline: a program no `cargo test` runs (it only builds it)
    "examples/check.rs": "fn main() {\n    assert_eq!(calc::add(1, 1), 2);\n    assert_eq!(calc::halve(9), 4);\n}\n",
}


def _measure(tmp_path: Path, change: dict[str, str], executor: Executor,
             settings: MutationSettings | None = None, commands: tuple[str, ...] = ("cargo test --quiet",),
             before: dict[str, str] = BEFORE) -> tuple[MutationResult | None, float]:
    """``change`` judged against the crate ``before``: the mutation check as a passed ``cargo test`` gets it."""
    workspace = tmp_path / "calc"
    tree = judged_tree(workspace, before, change, "pin-rust")
    if isinstance(executor, DockerExecutor):
        from sprintflow.sandbox.prepare import with_project_sandbox

        executor = with_project_sandbox(executor, workspace, progress=print)
    return measured_check(tree, workspace, "cargo", executor, list(commands), 1.0,
                          settings or MutationSettings(max_mutants=16))


@pytest.mark.parametrize("executor", [LocalExecutor, DockerExecutor], ids=["local", "docker"])
def test_the_held_out_evals_judge_the_survivors(tmp_path, cargo_mutants_built, executor, request):
    if executor is DockerExecutor:
        request.getfixturevalue("docker_ready")
    mutation, _ = _measure(tmp_path, HELD_OUT_ONLY, executor(), before={**BEFORE, **HELD_OUT_EVAL},
                           commands=("cargo test --quiet", "cargo run --quiet --example check"))
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    by_name = {f.function: f.killed for f in mutation.functions}
    # halve: only the held-out eval tells; triple: nothing does, and it alone is named.
    assert by_name["add"] >= 1 and by_name["halve"] >= 1 and by_name["triple"] == 0, by_name
    assert [f.message.rsplit(" ", 3)[1] for f in untested(mutation)] == ["triple"]


def _passed() -> StrategyResult:
    return StrategyResult(strategy="unit-test", required=True, result=Outcome.passed, details="2 tests passed.")


def test_a_tested_change_is_measured_and_passes(tmp_path, cargo_mutants_built):
    mutation, seconds = _measure(tmp_path, TESTED, LocalExecutor())
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    assert mutation.tool == f"cargo-mutants {VERSION}"
    # The changed functions, by cargo-mutants' names; nothing of the #[cfg(test)] module (helper, the tests).
    assert {f.function for f in mutation.functions} == {"add", "double"}
    assert all(f.killed >= 1 for f in mutation.functions) and mutation.kill_rate and mutation.kill_rate > 0
    assert untested(mutation) == [] and with_mutation(_passed(), mutation).result is Outcome.passed
    print(f"tested change: {mutation.mutants} mutants, kill rate {mutation.kill_rate}, {seconds:.1f} s")


def test_an_untested_function_fails_the_criterion_at_its_line(tmp_path, cargo_mutants_built):
    mutation, seconds = _measure(tmp_path, UNTESTED, LocalExecutor())
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    by_name = {f.function: f for f in mutation.functions}
    assert set(by_name) == {"add", "halve"} and by_name["add"].killed >= 1 and by_name["halve"].killed == 0
    [finding] = untested(mutation)
    assert (finding.file, finding.line, finding.code) == ("src/lib.rs", 8, "untested-change")
    assert "the tests pass whatever this code does" in finding.message and "halve" in finding.message
    failed = with_mutation(_passed(), mutation)
    assert failed.result is Outcome.failed and "(src/lib.rs:8)" in failed.details
    print(f"untested change: {mutation.mutants} mutants, kill rate {mutation.kill_rate}, {seconds:.1f} s")


def test_the_cap_is_honoured_and_every_changed_function_gets_a_mutant(tmp_path, cargo_mutants_built):
    mutation, _ = _measure(tmp_path, TESTED, LocalExecutor(), MutationSettings(max_mutants=1))
    assert mutation is not None and mutation.status == "measured"
    # Two changed functions: one mutant each, whatever the cap (add and double have eleven between them).
    assert mutation.mutants == 2 and {f.function for f in mutation.functions} == {"add", "double"}
    mutation, _ = _measure(tmp_path / "3", TESTED, LocalExecutor(), MutationSettings(max_mutants=4))
    assert mutation is not None and mutation.mutants == 4


def test_a_change_of_the_unit_test_module_alone_has_nothing_to_judge(tmp_path, cargo_mutants_built):
    # Code in #[cfg(test)] is the tests' (cargo-mutants mutates none of it), whatever file it is in.
    only_tests = {"src/lib.rs": BEFORE["src/lib.rs"].replace(
        "        x + 1\n", "        if x > 3 {\n            return x;\n        }\n        x + 1\n")}
    mutation, _ = _measure(tmp_path, only_tests, LocalExecutor())
    assert mutation is not None and mutation.status == "nothing to judge", mutation.reason if mutation else None
    assert mutation.mutants == 0


def test_mutants_left_when_the_budget_ran_out_are_not_run_and_the_check_fails(tmp_path, cargo_mutants_built):
    mutation, seconds = _measure(tmp_path, TESTED, LocalExecutor(), MutationSettings(max_mutants=16, budget=0.5))
    assert mutation is not None and mutation.status == "failed", mutation
    assert mutation.reason and "not run when the budget ran out" in mutation.reason and seconds < 60


def test_in_docker_too(tmp_path, cargo_mutants_built, docker_ready):
    mutation, seconds = _measure(tmp_path, UNTESTED, DockerExecutor())
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    assert mutation.tool == f"cargo-mutants {VERSION}"
    [finding] = untested(mutation)
    assert (finding.file, finding.line) == ("src/lib.rs", 8) and "halve" in finding.message
    assert {f.function: f.killed >= 1 for f in mutation.functions} == {"add": True, "halve": False}
    print(f"docker: {mutation.mutants} mutants, kill rate {mutation.kill_rate}, {seconds:.1f} s")


def _recorded(tmp_path: Path) -> Path:
    """The runner's plan and the outcomes.json cargo-mutants 27.1.0 wrote for ``UNTESTED``, in a layer."""
    (tmp_path / FOLDER / "mutants.out").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "cargo-mutants-plan.json", tmp_path / FOLDER / "report.json")
    shutil.copyfile(FIXTURES / "cargo-mutants-outcomes.json", tmp_path / OUTCOMES)
    return tmp_path


def test_a_real_outcomes_file_is_read(tmp_path):
    tool, mutants = report(_recorded(tmp_path), {"src/lib.rs"})
    assert tool == "cargo-mutants 27.1.0" and len(mutants) == 10
    assert {(m.function, m.status) for m in mutants} == {("add", "killed"), ("halve", "survived")}
    assert all(m.file == "src/lib.rs" and m.line in (3, 8) for m in mutants)
    assert any(m.operator == "replace + with - in add" for m in mutants)


def _rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("damage, says", [
    (lambda root: (root / OUTCOMES).write_text('{"outcomes": [{"scenario": "Baseline"'), "Invalid JSON"),
    (lambda root: _rewrite(root / OUTCOMES, lambda d: d["outcomes"][1].update(summary="Exploded")), "summary"),
    (lambda root: _rewrite(root / OUTCOMES, lambda d: d["outcomes"][1]["scenario"]["Mutant"].update(
        name="src/lib.rs:1:1: something else")), "which was not chosen"),
    (lambda root: _rewrite(root / OUTCOMES, lambda d: d["outcomes"].append(d["outcomes"][1])), "twice"),
    (lambda root: _rewrite(root / OUTCOMES, lambda d: d["outcomes"][1]["scenario"]["Mutant"]["span"]["start"].update(
        line=40)), "the plan at src/lib.rs:"),
    (lambda root: _rewrite(root / OUTCOMES, lambda d: d["outcomes"][1].update(summary="Success")), "success"),
    (lambda root: _rewrite(root / FOLDER / "report.json", lambda d: d["chosen"][0].update(file="../x.rs")),
     "not inside the judged tree"),
    (lambda root: _rewrite(root / FOLDER / "report.json", lambda d: d["chosen"][0].update(file="src/other.rs")),
     "which the change did not touch"),
], ids=["truncated", "unknown-summary", "not-chosen", "twice", "moved", "success", "outside", "unchanged-file"])
def test_a_malformed_report_is_a_clear_error(tmp_path, damage, says):
    root = _recorded(tmp_path)
    damage(root)
    with pytest.raises(ValueError, match=says):
        report(root, {"src/lib.rs"})


def test_a_mutant_without_an_outcome_was_not_run(tmp_path):
    root = _recorded(tmp_path)
    _rewrite(root / OUTCOMES, lambda d: d.update(outcomes=d["outcomes"][:3]))  # the budget ran out
    _, mutants = report(root, {"src/lib.rs"})
    assert sum(m.status == "not-run" for m in mutants) == 7


def test_where_the_tool_is_missing_the_runner_says_so_with_its_own_exit_code(tmp_path):
    """The judge tells "unavailable" (exit 3) from a crash: a project's own Docker image has no cargo-mutants."""
    import subprocess
    import sys

    from sprintflow.sandbox.executors import SCRIPTS_DIR

    (tmp_path / "job.json").write_text(json.dumps({"binary": str(tmp_path / "absent"),
                                                   "unavailable": "cargo-mutants is not in this sandbox image"}))
    done = subprocess.run([sys.executable, "-I", "-S", str(SCRIPTS_DIR / "mutate_rust.py"), "job.json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3 and "cargo-mutants is not in this sandbox image" in done.stdout
