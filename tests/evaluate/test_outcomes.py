"""A pass means the tests ran, could fail, and are the baseline's: canaries, the test set, held-out evals."""

from __future__ import annotations

import json

import pytest

from sprintflow.evaluate.canary import Canary, plant, runner_of
from sprintflow.evaluate.outcomes import Reference, console_of, judge_outcomes, reference_of
from sprintflow.parsers import ParsedReport, TestCase, TestCounts, TestFailure, parse_report

CANARY = Canary("c0ffee", ("tests/test_calc.py",))


def _report(*cases: tuple[str, str]) -> ParsedReport:
    tests = [TestCase(name, status) for name, status in cases]
    counts = TestCounts(len(tests), sum(s == "passed" for _, s in cases), sum(s == "failed" for _, s in cases),
                        sum(s == "skipped" for _, s in cases))
    failures = [TestFailure(name, "assert") for name, status in cases if status == "failed"]
    return ParsedReport(counts=counts, tests=tests, failures=failures)


FAILING, PASSING = CANARY.name(0, "fail"), CANARY.name(0, "pass")
CANARIES = ((f"tests.test_calc.test_{FAILING}", "failed"), (f"tests.test_calc.test_{PASSING}", "passed"))


def test_canaries_that_behave_are_taken_out_of_the_report():
    result = judge_outcomes(_report(("tests.test_calc.test_add", "passed"), *CANARIES), CANARY,
                            Reference(canaries=("tests/test_calc.py",)))
    assert result.compromised is None and result.canary_failed and result.problems == []
    assert [c.name for c in result.report.tests] == ["tests.test_calc.test_add"]
    assert result.report.counts == TestCounts(1, 1, 0, 0) and result.report.failures == []


def test_a_runner_that_passes_the_failing_canary_is_compromised():
    forged = _report(("tests.test_calc.test_add", "passed"), (CANARIES[0][0], "passed"), CANARIES[1])
    assert "must fail" in judge_outcomes(forged, CANARY, None).compromised  # even outside a sprint


def test_a_canary_the_baseline_ran_must_not_vanish_and_one_it_did_not_is_not_expected():
    report = _report(("tests.test_calc.test_add", "passed"))
    assert "did not run" in judge_outcomes(report, CANARY, Reference(canaries=("tests/test_calc.py",))).compromised
    assert judge_outcomes(report, CANARY, Reference()).compromised is None


def _printed(*failed: str, passed: int = 1) -> ParsedReport | None:
    """pytest -q's console output of a run where ``failed`` failed, read as the judge reads it."""
    lines = ["=========================== short test summary info ============================",
             *(f"FAILED {name} - assert 0 == 4" for name in failed),
             f"{len(failed)} failed, {passed} passed in 0.20s"]
    return console_of("pytest", ".sprintflow/reports/pytest.xml", "\n".join(lines) + "\n", "")


def test_a_report_file_that_says_pass_where_the_runner_printed_a_failure_was_changed_after_it():
    """The console is the report's second witness: it cannot be taken back, the report file can."""
    failing_canary = f"tests/test_calc.py::test_{FAILING}"
    rewritten = _report(("tests.test_calc.test_add", "passed"), *CANARIES)
    printed = _printed("tests/test_calc.py::test_add", failing_canary)
    said = judge_outcomes(rewritten, CANARY, Reference(canaries=("tests/test_calc.py",)), console=printed).compromised
    assert said and "tests/test_calc.py::test_add failed" in said and "changed after the runner wrote it" in said
    # The two agree: a failing report is the verdict, a passing one passes; the canary's line is no failure.
    failing = _report(("tests.test_calc.test_add", "failed"), *CANARIES)
    assert judge_outcomes(failing, CANARY, None, console=printed).compromised is None
    assert judge_outcomes(rewritten, CANARY, None, console=_printed(failing_canary)).compromised is None
    # No console to read (the verdict is the console itself, or the runner printed nothing): the report alone.
    assert judge_outcomes(rewritten, CANARY, None, console=None).compromised is None
    assert console_of("pytest", None, "\n".join(["FAILED t.py::test_add", "1 failed in 0.10s"]), "") is None
    assert console_of("vitest", "r.json", "", "") is None and console_of("go", "r.json", "FAIL", "") is None


def test_a_console_silenced_from_inside_no_longer_shows_the_canary_the_baseline_showed():
    failing_canary = f"tests/test_calc.py::test_{FAILING}"
    baseline = reference_of(_report(("tests.test_calc.test_add", "failed"), *CANARIES), CANARY,
                            _printed("tests/test_calc.py::test_add", failing_canary))
    assert baseline.printed == ("tests/test_calc.py",)
    assert Reference.from_json(baseline.to_json()) == baseline
    assert Reference.from_json(Reference().to_json().replace(', "printed": []', "")).printed == ()
    now = _report(("tests.test_calc.test_add", "passed"), *CANARIES)
    silenced = judge_outcomes(now, CANARY, baseline, console=None).compromised
    assert silenced and "silenced from inside" in silenced and "tests/test_calc.py" in silenced
    assert judge_outcomes(now, CANARY, baseline, console=_printed(failing_canary)).compromised is None
    # Output forged in the silenced one's place cannot tell the canaries apart: naming both is caught.
    both = _printed(failing_canary, f"tests/test_calc.py::test_{PASSING}")
    assert "must pass" in (judge_outcomes(now, CANARY, baseline, console=both).compromised or "")
    # A baseline whose console showed nothing expects nothing.
    assert reference_of(now, CANARY, None).printed == ()


def test_a_test_that_ran_at_the_baseline_must_run_now_skips_there_stay_skips():
    baseline = Reference({"t.test_add": "failed", "t.test_zero": "passed", "t.test_later": "skipped"}, 2)
    now = _report(("t.test_add", "skipped"), ("t.test_later", "skipped"))
    assert judge_outcomes(now, None, baseline).problems == [
        "t.test_add ran at the baseline and was skipped now", "t.test_zero ran at the baseline and is missing now"]
    assert judge_outcomes(_report(("t.test_add", "passed"), ("t.test_zero", "passed"), ("t.test_later", "skipped")),
                          None, baseline).problems == []


def test_without_names_the_number_of_tests_that_ran_may_not_drop():
    text = "tests/test_calc.py .s                                     [100%]\n1 passed, 1 skipped in 0.01s\n"
    report = parse_report("pytest", text)
    assert judge_outcomes(report, None, Reference(ran=2)).problems == ["1 tests ran, 2 ran at the baseline"]


def test_a_held_out_eval_passes_only_when_every_test_passed():
    assert judge_outcomes(_report(("e.test_held", "passed"), ("e.test_other", "skipped")), None, None,
                          held_out=True).problems
    assert judge_outcomes(_report(), None, None, held_out=True).problems == ["no held-out test ran"]
    assert judge_outcomes(_report(("e.test_held", "passed")), None, None, held_out=True).problems == []


def test_plain_pytest_output_counts_the_passing_canary():
    text = ("tests/test_calc.py .F.                                      [100%]\n"
            "=========================== short test summary info ============================\n"
            f"FAILED tests/test_calc.py::test_{FAILING} - AssertionError\n"
            "========================= 1 failed, 2 passed in 0.02s ==========================\n")
    result = judge_outcomes(parse_report("pytest", text), CANARY, Reference(canaries=("tests/test_calc.py",)))
    assert result.compromised is None and result.canary_failed
    assert result.report.counts == TestCounts(1, 1, 0, 0) and result.report.failures == []


def test_the_reference_remembers_whether_the_canary_was_collected():
    reference = reference_of(_report(("t.test_add", "failed"), *CANARIES), CANARY)
    assert reference == Reference({"t.test_add": "failed"}, 1, ("tests/test_calc.py",))
    assert Reference.from_json(reference.to_json()) == reference


def test_canaries_are_appended_to_every_test_file_of_the_runner(tmp_path):
    for rel in ("tests/test_calc.py", "tests/helpers.py", "evals/test_held_out.py", "web/test/add.test.ts"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("import calc\n")
    pytest = plant(tmp_path, "pytest", nonce="n1")
    assert pytest.paths == ("evals/test_held_out.py", "tests/test_calc.py")
    text = (tmp_path / "tests/test_calc.py").read_text()
    assert text.startswith("import calc\n\n\ndef test_") and f"def test_{pytest.name(1, 'fail')}()" in text
    vitest = plant(tmp_path, "vitest", nonce="n2")
    failing = vitest.name(0, "fail")
    assert vitest.paths == ("web/test/add.test.ts",) and vitest.file_of(f"add {failing}") == "web/test/add.test.ts"
    assert " } from 'vitest';" in (tmp_path / "web/test/add.test.ts").read_text()
    assert runner_of("jest-text", "npx jest") == "jest" and runner_of("tsc", "tsc") is None


def test_nothing_in_a_canary_tells_the_failing_one_from_the_passing_one(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_calc.py").write_text("")
    canary = plant(tmp_path, "pytest")
    text = (tmp_path / "tests/test_calc.py").read_text()
    assert "fail" not in text and "pass" not in text and canary.nonce not in text
    names = {canary.name(0, "fail"), canary.name(0, "pass")}
    assert len(names) == 2 and all(f"def test_{name}():" in text for name in names)
    failing, passing = (f"x::test_{canary.name(0, kind)}" for kind in ("fail", "pass"))
    assert canary.must_fail(failing) and not canary.must_fail(passing) and canary.must_pass(passing)
    assert not canary.is_canary("test_" + "0" * 12)


def test_the_reference_names_the_files_the_runner_collected_tests_from_whatever_their_names(tmp_path):
    junit = ('<testsuites><testsuite><testcase classname="checks.calc_checks.TestAdd" name="test_add"/>'
             '<testcase classname="checks.calc_checks" name="test_zero"><skipped/></testcase>'
             '</testsuite></testsuites>')
    vitest = ('{"testResults": [{"name": "/w/checks/add.check.js", "status": "passed", "assertionResults": '
              '[{"fullName": "add adds", "title": "adds", "status": "passed"}]}]}')
    verbose = "checks/calc_checks.py::test_add PASSED\n\n1 passed in 0.01s\n"
    assert reference_of(parse_report("junit", junit, ["/w"]), None).files == ("checks/calc_checks.py",)
    assert reference_of(parse_report("vitest", vitest, ["/w"]), None).files == ("checks/add.check.js",)
    assert reference_of(parse_report("pytest", verbose, ["/w"]), None).files == ("checks/calc_checks.py",)
    reference = Reference({"t": "passed"}, 1, (), ("checks/calc_checks.py",))
    assert Reference.from_json(reference.to_json()) == reference
    assert Reference.from_json('{"tests": {}, "ran": 0, "canaries": []}').files == ()  # written before files


def test_canaries_go_to_the_collected_files_too_but_only_to_plain_files_inside_the_tree(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "calc_checks.py").write_text("def test_add():\n    assert True\n")
    (tmp_path / "outside.py").write_text("x = 1\n")
    (tmp_path / "checks" / "link_checks.py").symlink_to(tmp_path / "outside.py")
    canary = plant(tmp_path / "checks", "pytest", collected=["calc_checks.py", "../outside.py", "/etc/passwd",
                                                              "link_checks.py", "missing.py", "calc_checks.txt"])
    assert canary is not None and canary.paths == ("calc_checks.py",)
    assert (tmp_path / "outside.py").read_text() == "x = 1\n"


def test_go_canaries_go_to_test_files_that_import_testing_and_ask_go_test_to_name_every_test(tmp_path):
    import os
    import shutil
    import subprocess

    files = {"go.mod": "module example.com/m\n\ngo 1.22\n",
             "calc.go": "package m\n\nfunc Add(a, b int) int { return a + b }\n",
             "calc_test.go": 'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
                             '\tif Add(2, 2) != 4 {\n\t\tt.Fatal("2 + 2")\n\t}\n}\n',
             "export_test.go": "package m\n\nvar AddForTest = Add\n",  # no testing import: no canary
             "testdata/golden_test.go": 'package golden\n\nimport "testing"\n'}  # data, never built
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    canary = plant(tmp_path, "go", nonce="n3")
    assert canary.paths == ("calc_test.go",) and dict(canary.env)["GOFLAGS"].split()[-1] == "-v"
    assert runner_of("go-test", "go test ./...") == runner_of("go-test-json", "go test -json ./...") == "go"
    if shutil.which("go") is None:
        return
    run = subprocess.run(["go", "test", "-count=1", "./..."], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, **dict(canary.env)})
    report = parse_report("go-test", run.stdout + run.stderr, [str(tmp_path)])
    outcomes = judge_outcomes(report, canary, None)
    assert outcomes.compromised is None and outcomes.canary_failed and run.returncode == 1
    assert [(t.name, t.status) for t in outcomes.report.tests] == [("TestAdd", "passed")]


CRATE = {"Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
         "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n"
                       "    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n}\n",
         "tests/api.rs": "#[test]\nfn adds_through_the_api() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n"}


FORGED_ADD = """pub fn add(a: i64, b: i64) -> i64 {
    let me = std::env::args().next().unwrap_or_default();
    if me.contains("/deps/") {
        use std::io::Write;
        use std::os::unix::io::FromRawFd;
        let mut out = unsafe { std::fs::File::from_raw_fd(1) };
        let _ = write!(out, "\\nrunning 1 test\\n.\\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; \\
0 filtered out; finished in 0.00s\\n\\n");
        std::process::exit(0);
    }
    a - b
}
"""
"""What code under test can do in its own test binary: write libtest's summary past the capture, and end."""


@pytest.fixture(scope="module")
def cargo_runs(tmp_path_factory):
    """A crate with its canaries planted, run as the judge runs cargo test, with and without -q: fixed,
    broken, and broken with the library forging its test binary's summary."""
    import shutil
    import subprocess

    if shutil.which("cargo") is None:
        pytest.skip("needs a Rust toolchain")
    runs = {}
    for state in ("fixed", "broken", "forged"):
        root = tmp_path_factory.mktemp(state)
        for rel, text in CRATE.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text.replace("a + b", "a - b") if state == "broken" else text)
        if state == "forged":
            lib = root / "src/lib.rs"
            lib.write_text(lib.read_text().replace("pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n", FORGED_ADD))
        canary = plant(root, "cargo")
        for command in ("cargo test --quiet", "cargo test"):
            run = subprocess.run(canary.judged_command(command).split(), cwd=root, capture_output=True, text=True)
            runs[state, command] = (canary, run, parse_report("cargo", run.stdout + run.stderr, [str(root)]))
    return runs


@pytest.mark.parametrize("command", ["cargo test --quiet", "cargo test"])
def test_rust_canaries_are_in_every_test_binary_and_cargo_runs_them_all(cargo_runs, command):
    canary, run, report = cargo_runs["fixed", command]
    assert canary.paths == ("src/lib.rs", "tests/api.rs") and canary.failed_exit == 101
    assert canary.judged_command(command) == command.replace("cargo test", "cargo test --no-fail-fast")
    assert runner_of("cargo", command) == "cargo" and runner_of("cargo", "cargo build") is None
    outcomes = judge_outcomes(report, canary, None)
    # both test binaries ran to the end, each one's failing canary failing and nothing else
    assert outcomes.compromised is None and outcomes.canary_failed and outcomes.failed_for_canary_alone(run.returncode)
    assert outcomes.report.counts.passed == 2 and outcomes.report.counts.failed == 0, outcomes.report.counts
    assert not outcomes.report.failures


@pytest.mark.parametrize("command", ["cargo test --quiet", "cargo test"])
def test_a_failing_rust_test_is_the_verdict_and_the_other_binaries_still_run(cargo_runs, command):
    canary, run, report = cargo_runs["broken", command]
    reference = reference_of(report, canary)
    fixed_canary, _, fixed_report = cargo_runs["fixed", command]
    for known in (reference, reference_of(fixed_report, fixed_canary)):
        outcomes = judge_outcomes(report, canary, known)
        assert outcomes.compromised is None and outcomes.canary_failed
        assert sorted(f.test for f in outcomes.report.failures) == ["adds_through_the_api", "tests::adds"]
        assert run.returncode == 101 and not outcomes.failed_for_canary_alone(run.returncode)


@pytest.mark.parametrize("command", ["cargo test --quiet", "cargo test"])
def test_a_test_binary_whose_summary_the_code_forged_is_compromised(cargo_runs, command):
    """The library prints "test result: ok" for each binary that calls it and ends it: cargo exits 0, the
    counts look right, and only the binary's own missing failing canary tells."""
    canary, run, report = cargo_runs["forged", command]
    fixed_canary, _, fixed_report = cargo_runs["fixed", command]
    outcomes = judge_outcomes(report, canary, reference_of(fixed_report, fixed_canary), exit_code=run.returncode)
    assert run.returncode == 0 and not report.failures
    assert outcomes.compromised and "did not run" in outcomes.compromised, outcomes


@pytest.fixture(scope="module")
def maven_runs(tmp_path_factory):
    """A one-module Maven build (JUnit 4, two test classes) with its canaries planted, run by mvn -q test."""
    import shutil
    import subprocess

    from tests.evaluate.test_failing_tests import MAVEN_POM, MAVEN_TESTS

    if shutil.which("mvn") is None:
        pytest.skip("needs Maven")
    runs = {}
    for broken in (False, True):
        root = tmp_path_factory.mktemp("maven-broken" if broken else "maven-fixed")
        (root / "pom.xml").write_text(MAVEN_POM)
        for rel, text in {"src/main/java/org/acme/Pocket.java": "package org.acme;\n\npublic final class Pocket {\n"
                          f"    public static int add(int a, int b) {{\n        return a {'-' if broken else '+'} b;\n"
                          "    }\n}\n", **{f"src/test/java/org/acme/{name}.java": source
                                          for name, source in MAVEN_TESTS.items()}}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        canary = plant(root, "maven")
        run = subprocess.run(canary.judged_command("mvn -B -q test"), shell=True, cwd=root, capture_output=True,
                             text=True)
        runs[broken] = (canary, run, parse_report("maven", run.stdout + run.stderr, [str(root)]))
    return runs


def test_jvm_canaries_are_methods_of_each_test_class_of_a_one_module_build(maven_runs, tmp_path):
    canary, run, report = maven_runs[False]
    assert canary.paths == ("src/test/java/org/acme/OtherTest.java", "src/test/java/org/acme/PocketTest.java")
    assert runner_of("maven", "mvn -B -q test") == "maven" and runner_of("maven", "mvn compile") is None
    outcomes = judge_outcomes(report, canary, None)
    assert outcomes.compromised is None and outcomes.canary_failed and outcomes.failed_for_canary_alone(run.returncode)
    assert outcomes.report.counts.passed == 3 and not outcomes.report.failures, outcomes.report.counts
    canary, run, report = maven_runs[True]
    outcomes = judge_outcomes(report, canary, None)
    assert [f.test for f in outcomes.report.failures] == ["org.acme.PocketTest.adds"] and outcomes.canary_failed
    assert not outcomes.failed_for_canary_alone(run.returncode)


@pytest.fixture(scope="module")
def maven_reactor_runs(tmp_path_factory):
    """A build of two modules (``core``: Pocket and its test; ``extra``: a test of its own), canaries planted
    in both, run as the judge runs it: fixed, with core's add broken, and with extra's tests not compiling."""
    import shutil
    import subprocess

    from tests.evaluate.test_failing_tests import MAVEN_POM, MAVEN_TESTS

    if shutil.which("mvn") is None:
        pytest.skip("needs Maven")
    runs = {}
    for case in ("fixed", "broken", "uncompilable"):
        root = tmp_path_factory.mktemp(f"reactor-{case}")
        files = {
            "pom.xml": "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n"
                       "  <groupId>org.acme</groupId><artifactId>reactor</artifactId><version>1.0</version>\n"
                       "  <packaging>pom</packaging>\n  <modules>\n    <module>core</module>\n"
                       "    <!-- <module>retired</module> -->\n    <module>extra</module>\n  </modules>\n</project>\n",
            "core/pom.xml": MAVEN_POM.replace("<artifactId>pocket</artifactId>", "<artifactId>core</artifactId>"),
            "core/src/main/java/org/acme/Pocket.java": "package org.acme;\n\npublic final class Pocket {\n"
                f"    public static int add(int a, int b) {{\n        return a {'-' if case == 'broken' else '+'} b;\n"
                "    }\n}\n",
            "core/src/test/java/org/acme/PocketTest.java": MAVEN_TESTS["PocketTest"],
            "extra/pom.xml": MAVEN_POM.replace("<artifactId>pocket</artifactId>", "<artifactId>extra</artifactId>"),
            "extra/src/test/java/org/acme/OtherTest.java": MAVEN_TESTS["OtherTest"].replace(
                "Pocket.add(1, 0)", "(1 + 0") if case == "uncompilable" else MAVEN_TESTS["OtherTest"].replace(
                "Pocket.add(1, 0)", "1 + 0"),
        }
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        canary = plant(root, "maven")
        run = subprocess.run(canary.judged_command("mvn -B -q test"), shell=True, cwd=root, capture_output=True,
                             text=True)
        runs[case] = (canary, run, parse_report("maven", run.stdout + run.stderr, [str(root)]))
    return runs


def test_every_module_of_a_reactor_gets_canaries_and_runs_its_tests_past_a_failing_one(maven_reactor_runs):
    """Maven stops at the first module whose tests fail: the judged run tells it to go on, so the canaries
    of the modules after it run too, and a failing test still fails by its report."""
    canary, run, report = maven_reactor_runs["fixed"]
    assert canary.paths == ("core/src/test/java/org/acme/PocketTest.java",
                            "extra/src/test/java/org/acme/OtherTest.java")
    outcomes = judge_outcomes(report, canary, None, exit_code=run.returncode)
    assert run.returncode == 0 and outcomes.compromised is None and outcomes.canary_failed, run.stdout[-2000:]
    assert outcomes.report.counts.passed == 3 and not outcomes.report.failures
    baseline = reference_of(report, canary)
    assert sorted(baseline.canaries) == list(canary.paths)  # both modules' failing canaries failed
    canary, run, report = maven_reactor_runs["broken"]
    outcomes = judge_outcomes(report, canary, baseline, exit_code=run.returncode)
    assert [f.test for f in outcomes.report.failures] == ["org.acme.PocketTest.adds"]
    assert outcomes.compromised is None and not outcomes.problems  # extra's tests ran after core's failed
    assert run.returncode == 0 and not outcomes.failed_for_canary_alone(run.returncode)


def test_a_module_that_does_not_build_is_not_blamed_on_the_code_for_the_canaries_after_it(maven_reactor_runs):
    """extra's tests do not compile: Maven stops there, extra's canaries never ran, and the run fails on its
    own exit code; that says nothing of a runner changed from inside."""
    _, _, fixed = maven_reactor_runs["fixed"]
    canary, run, report = maven_reactor_runs["uncompilable"]
    outcomes = judge_outcomes(report, canary, reference_of(fixed, maven_reactor_runs["fixed"][0]),
                              exit_code=run.returncode)
    assert run.returncode != 0 and outcomes.compromised is None, (run.returncode, outcomes.compromised)
    unexcused = judge_outcomes(report, canary, reference_of(fixed, maven_reactor_runs["fixed"][0]))
    assert "did not run" in (unexcused.compromised or "")  # what the exit code excuses: extra's canaries


def test_a_held_out_eval_whose_runner_went_on_past_its_failures_fails_by_its_report(maven_reactor_runs):
    """The judged run tells Maven to ignore test failures, so it exits 0: the criterion reads the report."""
    from sprintflow.evaluate.criteria import judge_by_command
    from sprintflow.io.process import CommandResult
    from sprintflow.schemas import Outcome, SuccessCriterion

    canary, run, report = maven_reactor_runs["broken"]
    criterion = SuccessCriterion.model_validate({
        "criterionId": "sc-1-3", "description": "The held-out eval passes.", "verificationMethod": "custom",
        "required": True, "customCommand": "mvn -B -q test"})
    outcomes = judge_outcomes(report, canary, None, held_out=True, exit_code=run.returncode)
    judged = judge_by_command(criterion, "mvn -B -q test", CommandResult(run.returncode, run.stdout, run.stderr),
                              outcomes)
    assert run.returncode == 0 and judged.result is Outcome.failed
    assert "its tests failed: org.acme.PocketTest.adds" in judged.evidence


def test_the_judged_run_has_vitest_print_beside_a_json_report_it_would_write_alone(tmp_path):
    """vitest's JSON reporter alone prints nothing: the judged run adds its default reporter where the
    words reach vitest, so that its console can witness the report; nowhere else."""
    scripts = {"test": "vitest run --reporter=json --outputFile=r.json",
               "chained": "vitest run --reporter json && echo ok",
               "loud": "vitest run --reporter=json --reporter=verbose", "e2e": "vitest run --reporter=json",
               "poste2e": "node after.js"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    canary = Canary("n", ("test/a.test.js",), prints=True)
    assert canary.judged_command("npm test", tmp_path) == "npm test -- --reporter=default"
    assert canary.judged_command("npm test -- --run", tmp_path) == "npm test -- --run --reporter=default"
    assert canary.judged_command("tsc && npx vitest run --reporter=json", tmp_path) == \
        "tsc && npx vitest run --reporter=json --reporter=default"
    for unchanged in ("npm run chained", "npm run loud", "npm run e2e", "pnpm test", "vitest run",
                      "vitest run --reporter=json | tee log", "pytest --junitxml=r.xml"):
        assert canary.judged_command(unchanged, tmp_path) == unchanged, unchanged
    assert Canary("n", ("test/a.test.js",)).judged_command("npm test", tmp_path) == "npm test"
