"""The parsers of the tools' default human-readable output, on what real tools printed.

Two sources: ``tests/fixtures/reports/<tool>/`` (recorded on purpose-made failures,
see the README there) and ``tests/fixtures/feedback/<project>/`` (real projects with
injected faults, recorded by ``benchmarks/record_feedback.py``; stdout and stderr
are read together, as the tools split their reports across both).
"""

import json
from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import parse_report, parse_vitest_text
from sprintflow.parsers._common import TestCounts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPORTS = FIXTURES / "reports"
HUMANIZE = "/tmp/sfrec13/env/humanize"
SCRATCH = "/tmp/sfrec13/scratch"


def report(path: str) -> str:
    return (REPORTS / path).read_text(encoding="utf-8")


def recorded(project: str, run: str) -> tuple[str, list[str], dict]:
    """A recorded run's output (stdout then stderr), the roots the tool printed, the fault places."""
    data = json.loads((FIXTURES / "feedback" / project / f"{run}.json").read_text(encoding="utf-8"))
    meta = json.loads((FIXTURES / "feedback" / project / "project.json").read_text(encoding="utf-8"))
    faults = {name: (where["file"], where["line"]) for name, where in meta["faults"].items()}
    return data["stdout"] + "\n" + data["stderr"], [meta["root"]], faults


def located(parsed) -> list[tuple]:
    return [(d.file, d.line) for d in parsed.diagnostics if d.severity == "error"]


# --- pytest ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, counts", [
    ("9.0.3-collection-error.txt", TestCounts(total=1, passed=0, failed=1, skipped=0)),
    ("8.4.2-collection-error.txt", TestCounts(total=1, passed=0, failed=1, skipped=0)),
    ("7.4.4-collection-error.txt", TestCounts(total=1, passed=0, failed=1, skipped=0)),
])
def test_pytest_collection_error_is_a_located_load_error_not_exit_2(name, counts):
    parsed = parse_report("pytest", report(f"pytest/{name}"), [HUMANIZE])
    failure = parsed.failures[0]
    assert (failure.test, failure.file, failure.line) == ("tests/test_broken.py", "tests/test_broken.py", 1)
    assert failure.message == "ModuleNotFoundError: No module named 'humanize.does_not_exist'"
    assert parsed.tests[0].status == "load_error"
    assert parsed.counts == counts


def test_pytest_continue_on_collection_errors_reports_both_kinds():
    parsed = parse_report("pytest", report("pytest/9.0.3-continue.txt"), [HUMANIZE])
    assert located(parsed) == [("tests/test_broken.py", 1), ("tests/test_number.py", 95)]
    assertion = parsed.failures[1]
    assert assertion.test == "tests/test_number.py::test_intword_powers"
    assert assertion.message.startswith("AssertionError: assert 12 == (12 + 1)")
    statuses = [t.status for t in parsed.tests]
    assert statuses.count("load_error") == 1 and statuses.count("failed") == 1
    assert parsed.counts.passed == parsed.counts.total - 2


def test_pytest_verbose_names_every_test():
    parsed = parse_report("pytest", report("pytest/9.0.3-verbose.txt"), [HUMANIZE])
    names = [t.name for t in parsed.tests]
    assert "tests/test_number.py::test_intword_powers" in names
    assert not any(name.startswith("(passed test") for name in names)
    assert parsed.counts.failed == 1 and parsed.counts.passed > 200


def test_pytest_quiet_short_traceback_and_no_traceback():
    short = parse_report("pytest", report("pytest/9.0.3-q-tb-short.txt"), [HUMANIZE])
    assert located(short) == [("tests/test_number.py", 95)]
    # --tb=no: only the short summary names the failure; it still counts and points at the file.
    bare = parse_report("pytest", report("pytest/7.4.4-q-tb-no.txt"), [HUMANIZE])
    assert [(f.test, f.file) for f in bare.failures] == [("tests/test_number.py::test_intword_powers",
                                                         "tests/test_number.py")]
    assert bare.counts.failed == 1 and bare.counts.total > 100


def test_pytest_clean_run_and_non_pytest_output():
    clean = parse_report("pytest", report("pytest/9.0.3-pass.txt"), [HUMANIZE])
    assert clean.failures == [] and clean.counts.passed == clean.counts.total > 0
    with pytest.raises(ReportError, match="pytest output has no session header"):
        parse_report("pytest", "Traceback (most recent call last):\nKeyError: 'x'")


@pytest.mark.parametrize("project, run", [("humanize", "test-pytest9"), ("humanize", "test-pytest8"),
                                          ("click", "test-pytest7"), ("click", "test-pytest-q"),
                                          ("marshmallow", "test-pytest8")])
def test_pytest_on_real_projects_names_the_injected_assertion(project, run):
    text, roots, faults = recorded(project, run)
    parsed = parse_report("pytest", text, roots)
    assert located(parsed) == [faults["assertion"]]
    assert parsed.counts.failed == 1 and parsed.counts.passed > 100


# --- vitest and jest ---------------------------------------------------------------------------


def test_vitest_1_default_reporter_with_a_file_that_cannot_load():
    parsed = parse_report("vitest-text", report("vitest/1.6.1-default.txt"), [f"{SCRATCH}/vitest1"])
    by_test = {f.test: f for f in parsed.failures}
    broken = by_test["tests/broken.test.js"]
    assert broken.message.startswith("Error: Failed to load url ../src/does-not-exist.js")
    failure = by_test["api > returns 404 for a missing page"]
    assert (failure.file, failure.line, failure.expected, failure.received) == ("tests/api.test.js", 9, "404", "500")
    assert parsed.counts == TestCounts(total=4, passed=1, failed=2, skipped=1)


@pytest.mark.parametrize("project, run, passed", [("destr", "test-vitest3", 21), ("neverthrow", "test-npm-test", 116)])
def test_vitest_2_and_3_default_reporter_on_real_projects(project, run, passed):
    text, roots, faults = recorded(project, run)
    parsed = parse_report("vitest-text", text, roots)
    assert located(parsed) == [faults["assertion"]]
    assert parsed.counts == TestCounts(total=passed + 1, passed=passed, failed=1, skipped=0)


@pytest.mark.parametrize("name", ["29.7.0-default.txt", "30.1.3-default.txt"])
def test_jest_default_reporter(name):
    parsed = parse_report("jest-text", report(f"jest/{name}"), [f"{SCRATCH}/jest29"])
    assert [(f.test, f.file, f.line) for f in parsed.failures] == [
        ("api › returns 404 for a missing page", "tests/api.test.js", 8),
        ("api › summarizes items", "tests/api.test.js", 11),
        ("tests/broken.test.js", "tests/broken.test.js", 1),
    ]
    assert (parsed.failures[0].expected, parsed.failures[0].received) == ("404", "500")
    assert parsed.failures[2].message == "Cannot find module '../src/does-not-exist' from 'tests/broken.test.js'"
    assert [t.status for t in parsed.tests].count("load_error") == 1
    assert (parsed.counts.passed, parsed.counts.skipped) == (1, 1)


def test_jest_single_file_lists_its_passing_and_skipped_tests_by_name():
    parsed = parse_report("jest-text", report("jest/29.7.0-one-file.txt"), [f"{SCRATCH}/jest29"])
    assert {(t.name, t.status) for t in parsed.tests if t.status != "failed"} == {
        ("returns 200 for the root", "passed"), ("is not written yet", "skipped")}


def test_ts_jest_type_errors_fail_suites_at_the_type_error_with_its_code():
    text, roots, faults = recorded("tsconfig-paths", "test-npm-test")
    parsed = parse_report("jest-text", text, roots)
    assert {(d.file, d.line, d.code) for d in parsed.diagnostics} == {(*faults["type"], "TS2322")}
    assert len(parsed.failures) == 4 and all(t.status == "load_error" for t in parsed.tests if t.status != "passed")
    assert parsed.counts.passed == 28


def test_jest_and_vitest_reject_foreign_output():
    with pytest.raises(ReportError, match="jest output has no PASS/FAIL line"):
        parse_report("jest-text", "sh: 1: jest: not found")
    with pytest.raises(ReportError, match="vitest output has no RUN header"):
        parse_report("vitest-text", "sh: 1: vitest: not found")


# --- linters and type checkers ------------------------------------------------------------------


@pytest.mark.parametrize("project, rule", [("destr", "no-debugger"),
                                           ("neverthrow", "@typescript-eslint/no-explicit-any")])
def test_eslint_stylish_through_npm_run(project, rule):
    text, roots, faults = recorded(project, "lint-npm-run")
    parsed = parse_report("eslint-stylish", text, roots)
    assert located(parsed) == [faults["lint"]]
    assert parsed.diagnostics[0].code == rule


def test_eslint_stylish_message_over_several_lines_keeps_its_file_rule_and_whole_text():
    # defu linted after its build wrote dist/: ban-types prints a paragraph, its rule on the last line.
    text, roots, faults = recorded("defu", "lint-eslint-built")
    parsed = parse_report("eslint-stylish", text, roots)
    files = [d.file for d in parsed.diagnostics]
    assert faults["lint"] in located(parsed) and set(files) == {"dist/defu.d.cts", "dist/defu.d.mts",
                                                                 "dist/defu.d.ts", "src/defu.ts"}
    ban = [d for d in parsed.diagnostics if d.file.startswith("dist/")]
    assert {d.code for d in ban} == {"@typescript-eslint/ban-types"}
    assert all(d.message.startswith("Don't use `Function` as a type.")
               and d.message.endswith("explicitly define the function shape") for d in ban)


def test_eslint_stylish_warnings_parse_errors_and_foreign_text():
    parsed = parse_report("eslint-stylish", "/w/src/a.js\n  1:5  error  Parsing error: Unexpected token\n"
                                            "  3:1  warning  Unexpected console statement  no-console\n\n"
                                            "✖ 2 problems (1 error, 1 warning)\n", ["/w"])
    assert [(d.line, d.code, d.severity) for d in parsed.diagnostics] == [(1, None, "error"),
                                                                          (3, "no-console", "warning")]
    assert parse_report("eslint-stylish", "\n> app@1.0.0 lint\n> eslint .\n\n").diagnostics == []
    with pytest.raises(ReportError, match="eslint output has no stylish finding"):
        parse_report("eslint-stylish", (REPORTS / "environment" / "eslint10-node18.txt").read_text())


@pytest.mark.parametrize("project, run, version", [
    ("humanize", "lint-ruff-new", "0.17.6 full"), ("click", "lint-ruff-new", "0.17.6 full"),
    ("click", "lint-ruff-concise", "0.17.6 concise"), ("marshmallow", "lint-ruff-mid", "0.11.13 full"),
])
def test_ruff_text_formats_on_real_projects(project, run, version):
    text, roots, faults = recorded(project, run)
    parsed = parse_report("ruff-text", text, roots)
    assert located(parsed) == [faults["lint"]], version
    assert parsed.diagnostics[0].code == "E741"
    assert parsed.diagnostics[0].message == "Ambiguous variable name: `l`"


def test_ruff_0_5_full_format_and_a_ruff_that_cannot_read_its_config():
    parsed = parse_report("ruff-text", report("ruff/0.5.7-full.txt"), ["/tmp/sfrec13/py/click-8.5.1"])
    assert len(parsed.diagnostics) == 13
    assert ("src/click/formatting.py", 13) in located(parsed)
    assert {d.code for d in parsed.diagnostics} == {"UP038", "E741"}
    text, roots, _ = recorded("humanize", "lint-ruff-mid")
    with pytest.raises(ReportError, match="ruff output has no finding"):
        parse_report("ruff-text", text, roots)


@pytest.mark.parametrize("project, run", [("click", "typecheck-mypy-new"), ("click", "typecheck-mypy-mid"),
                                          ("marshmallow", "typecheck-mypy-pretty"),
                                          ("humanize", "typecheck-mypy-new")])
def test_mypy_pretty_keeps_the_whole_message_and_the_code(project, run):
    text, roots, faults = recorded(project, run)
    parsed = parse_report("mypy", text, roots)
    assert located(parsed) == [faults["type"]]
    d = parsed.diagnostics[0]
    assert d.code == "assignment"
    assert d.message == 'Incompatible types in assignment (expression has type "str", variable has type "int")'


def test_mypy_1_10_pretty_with_wrapped_codes_and_json_lines():
    parsed = parse_report("mypy", report("mypy/1.10.1-pretty.txt"), ["/tmp/sfrec13/py/click-8.5.1"])
    assert parsed.error_count == 19
    wrapped = parsed.diagnostics[1]
    assert (wrapped.file, wrapped.line, wrapped.code) == ("src/click/formatting.py", 276, "type-arg")
    assert wrapped.message == '"Generator" expects 3 type arguments, but 1 given'
    as_json = parse_report("mypy", report("mypy/2.4.1-json.txt"), [HUMANIZE])
    assert [(d.file, d.line, d.column, d.code) for d in as_json.diagnostics] == [
        ("src/humanize/number.py", 40, 16, "assignment")]


def test_a_clean_compile_through_npm_run_is_no_diagnostic_not_an_unreadable_report():
    assert parse_report("tsc", "\n> app@1.0.0 typecheck\n> tsc --noEmit\n\n").diagnostics == []
    assert parse_report("mypy", "\n> app@1.0.0 types\n> mypy src\n\nSuccess: no issues found in 3 source files\n"
                        ).diagnostics == []


@pytest.mark.parametrize("project, run", [("destr", "typecheck-tsc"), ("destr", "typecheck-tsc-pretty"),
                                          ("neverthrow", "typecheck-npm-run"), ("tsconfig-paths", "build-npm-run"),
                                          ("tsconfig-paths", "typecheck-tsc")])
def test_tsc_plain_and_pretty_through_npm_run(project, run):
    text, roots, faults = recorded(project, run)
    parsed = parse_report("tsc", text, roots)
    assert located(parsed) == [faults["type"]]


# --- playwright, the generic fallback, combined formats ----------------------------------------


@pytest.mark.parametrize("name", ["1.61.1-list.txt", "1.61.1-line.txt"])
def test_playwright_list_and_line_reporters(name):
    parsed = parse_report("playwright-text", report(f"playwright/{name}"), ["/tmp/sfrec13/pwapp"])
    assert [(f.file, f.line, f.expected, f.received) for f in parsed.failures] == [
        ("e2e/todos.spec.ts", 14, '"a title is required"', '"title is required"'),
        ("e2e/todos.spec.ts", 20, "3", "1"),
    ]
    assert parsed.failures[1].message == "Error: expect(received).toBe(expected) // Object.is equality\n" \
                                         "Expected: 3 Received: 1"
    assert parsed.counts == TestCounts(total=4, passed=1, failed=2, skipped=1)


def test_generic_fallback_reads_eslint_visualstudio_format():
    text, roots, faults = recorded("tsconfig-paths", "lint-npm-run")
    parsed = parse_report("generic", text, roots)
    assert located(parsed) == [faults["lint"]]
    assert parsed.diagnostics[0].code == "eqeqeq"


def test_generic_fallback_skips_vendor_paths_urls_and_places_outside_the_workspace():
    text = ("node_modules/x/index.js:3:1 boom\nsee http://localhost:3000/a.js:1\n/usr/lib/python3/x.py:2: e\n"
            "/elsewhere/b.py:4: error\n")
    assert parse_report("generic", text, ["/w"]).diagnostics == []


def test_combined_format_reads_every_tool_of_a_chained_script():
    text, roots, faults = recorded("neverthrow", "test-npm-test")  # `vitest run && npm run test-types`
    parsed = parse_report("vitest-text+tsc", text, roots)
    assert located(parsed) == [faults["assertion"]] and parsed.counts.failed == 1
    with pytest.raises(ReportError, match="no part of vitest-text\\+tsc could read the output"):
        parse_report("vitest-text+tsc", "something else entirely")


def test_a_vitest_object_diff_shows_what_differs_where_its_values_are_cut():
    """vitest 2.1.9 on the TypeScript example with a store that adds each todo twice."""
    parsed = parse_vitest_text(report("vitest/2.1.9-object-diff.txt"), ["/w/ts-app"])
    cut = next(d for d in parsed.diagnostics if d.test == "test/app.test.ts > todo API > GET /todos lists todos "
                                                        "in creation order")
    assert cut.expected != cut.received and "…" not in cut.expected + cut.received
    assert cut.expected == '"id": 2,' and cut.received.startswith('"id": 1, "title": "one",')
    whole = next(d for d in parsed.diagnostics if d.test.endswith("numbers todos from 1"))
    assert (whole.expected, whole.received) == ("{ id: 2, title: 'second' }", "{ id: 3, title: 'second' }")


def test_go_test_names_the_innermost_failing_subtest_in_its_package_folder(tmp_path):
    """go 1.26.8 on a module whose package codec has a failing subtest and a failing test."""
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    parsed = parse_report("go-test", report("go/1.26.8-default.txt"), [str(tmp_path)])
    assert [(d.test, d.file, d.line) for d in parsed.diagnostics] == [
        ("./codec TestJSON/nested", "codec/codec_test.go", 7), ("./codec TestOther", "codec/codec_test.go", 12)]
    assert parsed.diagnostics[1].message == 'TestOther: Encode("") = ""'


@pytest.mark.parametrize("name", ["lint", "check"])
def test_biome_keeps_each_findings_message_and_rule(name):
    """biome 2.6.8 on a file with an unused variable, a `==` and a `debugger` (and, for check, formatting)."""
    parsed = parse_report("biome", report(f"biome/2.6.8-{name}.txt"), ["/tmp/sfrec/biome"])
    lint = [(d.file, d.line, d.code, d.severity, d.message) for d in parsed.diagnostics if d.line]
    assert lint == [
        ("src/index.js", 2, "lint/correctness/noUnusedVariables", "warning", "This variable unused is unused."),
        ("src/index.js", 3, "lint/suspicious/noDoubleEquals", "error",
         "Using == may be unsafe if you are relying on type coercion."),
        ("src/index.js", 3, "lint/suspicious/noDebugger", "error",
         "This is an unexpected use of the debugger statement.")]
    assert all("━" not in d.message for d in parsed.diagnostics)
    assert [d.file for d in parsed.diagnostics if d.code == "format"] == (
        ["package.json", "src/index.js"] if name == "check" else [])
