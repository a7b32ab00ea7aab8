"""The cargo parsers on what cargo 1.95.0, clippy 0.1.95 and rustfmt 1.9.0 printed for real crates.

``tests/fixtures/reports/cargo/`` (see the README there): strsim 0.11.1 from crates.io, a single crate,
and the rust-lang/regex workspace, each with injected faults; hexyl 0.17.0 (a CLI tested through
assert_cmd) and the rust-phf workspace with the faults of ``tests/fixtures/feedback/``. Every fault
must be found at its file:line, and nothing else.
"""

from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import PARSERS, parse_report
from sprintflow.parsers._common import TestCounts

CARGO = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "cargo"
STRSIM_FMT = "/tmp/rec-rust/strsim-fmt"
WORKSPACE_FMT = "/tmp/rec-rust/regex-ws-fmt"


def parsed(name: str, fmt: str = "cargo", roots=()):
    return parse_report(fmt, (CARGO / name).read_text(encoding="utf-8"), roots)


def found(report) -> list[tuple]:
    return [(d.severity, d.file, d.line, d.column, d.code) for d in report.diagnostics]


def test_both_formats_are_registered():
    assert {"cargo", "cargo-json"} <= set(PARSERS)


# --- compiler and clippy diagnostics -------------------------------------------------------------

BUILD = [("error", "src/lib.rs", 87, 32, "E0425"), ("error", "src/lib.rs", 86, 20, "E0308"),
         ("warning", "src/lib.rs", 61, 9, "unused_variables")]


def test_build_errors_and_warnings_at_their_primary_location():
    report = parsed("1.95.0-build.txt")
    assert found(report) == BUILD
    assert [d.message for d in report.diagnostics] == [
        "cannot find value `missing_b` in this scope", "mismatched types", "unused variable: `unused`"]
    assert report.counts is None and report.error_count == 2


def test_clippy_lints_are_named_by_their_lint_and_level():
    report = parsed("clippy-0.1.95.txt")
    assert found(report) == [
        ("warning", "src/lib.rs", 85, 8, "clippy::len_zero"),
        ("error", "src/lib.rs", 89, 8, "clippy::absurd_extreme_comparisons"),  # deny by default
        ("warning", "src/lib.rs", 123, 25, "clippy::implicit_saturating_sub"),
        ("warning", "src/lib.rs", 175, 6, "clippy::needless_lifetimes"),
        ("warning", "src/lib.rs", 89, 8, "unused_comparisons"),
    ]
    assert report.counts is None


def test_workspace_paths_are_relative_to_the_workspace_root():
    report = parsed("1.95.0-workspace-check.txt")
    assert found(report) == [("error", "regex-syntax/src/lib.rs", 265, 54, "E0425"),
                             ("warning", "regex-lite/src/utf8.rs", 40, 9, "unused_variables")]


def test_a_repeated_lint_borrows_the_code_rustc_named_once():
    text = ("warning: unused variable: `a`\n --> src/lib.rs:2:9\n  |\n"
            "  = note: `#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default\n\n"
            "warning: unused variable: `b`\n --> src/lib.rs:3:9\n  |\n2 |     let b = 1;\n\n"
            "warning: constants have by default a `'static` lifetime\n --> src/lib.rs:9:21\n  |\n"
            "  = help: for further information visit https://rust-lang.github.io/rust-clippy/rust-1.95.0/"
            "index.html#redundant_static_lifetimes\n")
    assert [d.code for d in parse_report("cargo", text).diagnostics] == [
        "unused_variables", "unused_variables", "clippy::redundant_static_lifetimes"]


def test_an_error_without_a_location_is_kept_and_cargo_summaries_are_not():
    text = ("warning: no edition set: defaulting to the 2015 edition\n"
            "error: failed to run custom build command for `openssl-sys v0.9.1`\n"
            "warning: `app` (lib) generated 1 warning\n"
            "error: could not compile `app` (lib) due to 1 previous error\n"
            "error: doctest failed, to rerun pass `--doc`\n"
            "error: 1 target failed:\n    `--doc`\n")  # --no-fail-fast's summary, one target
    report = parse_report("cargo", text)
    assert [(d.message, d.file) for d in report.diagnostics] == [
        ("failed to run custom build command for `openssl-sys v0.9.1`", None)]


# --- cargo test ------------------------------------------------------------------------------------

STRSIM_FAILURES = [
    ("tests::hamming_diff", "src/lib.rs", 787, 9, "Ok(4)", "Ok(3)"),
    ("tests::hamming_unwraps_error", "src/lib.rs", 825, 35, None, None),
    ("tests::levenshtein_empty", "src/lib.rs", 1002, 9, "1", "0"),
]


def failures(report) -> list[tuple]:
    return sorted((f.test, f.file, f.line, f.column, f.expected, f.received) for f in report.failures)


def test_failing_tests_with_their_panic_location_and_values():
    report = parsed("1.95.0-test.txt")
    assert failures(report) == STRSIM_FAILURES
    assert report.counts == TestCounts(total=90, passed=86, failed=3, skipped=1)
    assert {t.name: t.status for t in report.tests}["tests::hamming_ignored"] == "skipped"
    messages = {f.test: f.message for f in report.failures}
    assert messages["tests::hamming_unwraps_error"] == \
        "called `Result::unwrap()` on an `Err` value: DifferentLengthArgs"
    assert messages["tests::hamming_diff"] == "assertion `left == right` failed\n  left: Ok(4)\n right: Ok(3)"
    assert report.error_count == 3
    assert {d.test for d in report.diagnostics} == {name for name, *_ in STRSIM_FAILURES}


def test_backtraces_are_left_out_and_every_test_binary_counts():
    report = parsed("1.95.0-test-no-fail-fast-backtrace.txt")
    # unit tests (90), tests/lib.rs (8) and doctests (11)
    assert report.counts == TestCounts(total=109, passed=104, failed=4, skipped=1)
    assert failures(report) == sorted([*STRSIM_FAILURES,
                                       ("src/lib.rs - hamming (line 77)", "src/lib.rs", 77, None, "Ok(2)", "Ok(3)")])
    assert all("stack backtrace" not in f.message and "rustc/" not in f.message for f in report.failures)


def test_workspace_tests_are_located_in_their_member():
    report = parsed("1.95.0-workspace-test.txt")
    assert failures(report) == [
        ("tests::word_byte", "regex-syntax/src/lib.rs", 401, 9, None, None),
        ("utf8::tests::decode_valid", "regex-lite/src/utf8.rs", 144, 9, "['x']", "['☃']"),
    ]
    assert report.counts == TestCounts(total=212, passed=210, failed=2, skipped=0)
    assert {f.test: f.message for f in report.failures}["tests::word_byte"] == \
        "assertion failed: is_word_byte(b'-')"


def test_a_test_target_that_does_not_compile_is_a_load_error_at_its_compile_error():
    report = parsed("1.95.0-test-compile-error.txt")
    assert [(t.name, t.status) for t in report.tests] == [("strsim (lib test)", "load_error")]
    assert report.counts == TestCounts(total=1, passed=0, failed=1, skipped=0)
    (failure,) = report.failures
    assert (failure.file, failure.line, failure.column, failure.code) == ("src/lib.rs", 807, 29, "E0308")
    assert found(report) == [("error", "src/lib.rs", 807, 29, "E0308")]  # once, not twice


def test_quiet_output_counts_from_the_summary():
    text = ("running 3 tests\n.Fi\nfailures:\n\n---- t::b stdout ----\n\n"
            "thread 't::b' (9) panicked at src/lib.rs:4:5:\nboom\n\nfailures:\n    t::b\n\n"
            "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n")
    report = parse_report("cargo", text)
    assert report.counts == TestCounts(total=3, passed=1, failed=1, skipped=1)
    assert failures(report) == [("t::b", "src/lib.rs", 4, 5, None, None)]


def test_the_panic_format_before_rust_1_73():
    text = ("running 1 test\ntest t::a ... FAILED\n\nfailures:\n\n---- t::a stdout ----\n"
            "thread 't::a' panicked at 'assertion failed: `(left == right)`\n  left: `1`,\n right: `2`', "
            "src/lib.rs:6:9\n\n")
    (failure,) = parse_report("cargo", text).failures
    assert (failure.file, failure.line, failure.column) == ("src/lib.rs", 6, 9)


def test_should_panic_tests_keep_their_name():
    report = parse_report("cargo", "running 1 test\ntest t::a - should panic ... ok\n")
    assert [(t.name, t.status) for t in report.tests] == [("t::a", "passed")]


# --- cargo fmt --check -----------------------------------------------------------------------------

def test_each_rustfmt_hunk_is_a_finding_on_its_first_changed_line():
    report = parsed("rustfmt-1.9.0-check.txt", roots=[STRSIM_FMT])
    assert found(report) == [("error", "src/lib.rs", 84, None, "rustfmt"),
                             ("error", "src/lib.rs", 991, None, "rustfmt")]
    assert report.diagnostics[0].message == ("rustfmt would reformat this code: "
                                             "`pub fn hamming(a: &str,b: &str) -> HammingResult {` -> "
                                             "`pub fn hamming(a: &str, b: &str) -> HammingResult {`")


def test_rustfmt_in_a_workspace():
    report = parsed("rustfmt-1.9.0-workspace-check.txt", roots=[WORKSPACE_FMT])
    assert found(report) == [("error", "regex-lite/src/utf8.rs", 39, None, "rustfmt"),
                             ("error", "regex-syntax/src/lib.rs", 401, None, "rustfmt")]


def test_the_older_rustfmt_diff_header():
    text = "Diff in /w/src/main.rs at line 1:\n fn main() {\n-    let x=1;\n+    let x = 1;\n }\n"
    assert found(parse_report("cargo", text, ["/w"])) == [("error", "src/main.rs", 2, None, "rustfmt")]


def test_a_chained_command_reads_as_one_report():
    text = "\n".join((CARGO / name).read_text(encoding="utf-8")
                     for name in ("rustfmt-1.9.0-check.txt", "clippy-0.1.95.txt"))
    report = parse_report("cargo", text, [STRSIM_FMT])
    assert [d.code for d in report.diagnostics][:3] == ["rustfmt", "rustfmt", "clippy::len_zero"]
    assert len(report.diagnostics) == 7


# --- --message-format=json -------------------------------------------------------------------------

def test_json_compiler_messages():
    report = parsed("1.95.0-check-json.txt", "cargo-json")
    assert found(report) == BUILD
    assert report.counts is None


def test_json_in_a_workspace():
    report = parsed("1.95.0-workspace-check-json.txt", "cargo-json")
    assert found(report) == [("warning", "regex-lite/src/utf8.rs", 40, 9, "unused_variables"),
                             ("error", "regex-syntax/src/lib.rs", 265, 54, "E0425")]


def test_json_with_the_tests_output_between_the_messages():
    report = parsed("1.95.0-test-json.txt", "cargo-json")
    assert failures(report) == STRSIM_FAILURES
    assert report.counts == TestCounts(total=90, passed=86, failed=3, skipped=1)


def test_json_of_a_test_target_that_does_not_compile():
    report = parsed("1.95.0-test-compile-error-json.txt", "cargo-json")
    assert found(report) == [("error", "src/lib.rs", 807, 29, "E0308")]  # the failure-note is no finding


def test_json_without_any_message_is_an_error():
    with pytest.raises(ReportError, match="cargo-json report has no JSON messages"):
        parse_report("cargo-json", "error: could not find `Cargo.toml`\n")


def test_json_spans_in_another_crates_macro_point_at_the_call():
    line = ('{"reason":"compiler-message","message":{"level":"error","message":"m","code":null,"spans":['
            '{"is_primary":true,"file_name":"/rustc/abc/library/core/src/macros/mod.rs","line_start":1,'
            '"column_start":1,"expansion":{"span":{"file_name":"src/lib.rs","line_start":7,"column_start":5,'
            '"is_primary":true}}}]}}')
    assert found(parse_report("cargo-json", line)) == [("error", "src/lib.rs", 7, 5, None)]


# --- cargo nextest ---------------------------------------------------------------------------------

def test_nextest_failures_with_their_binary_and_the_skipped_test_of_the_summary():
    report = parsed("nextest-0.9.151-no-fail-fast.txt", "cargo-nextest")
    assert failures(report) == STRSIM_FAILURES
    assert sorted(f.test_id for f in report.failures) == [f"strsim {name}" for name, *_ in STRSIM_FAILURES]
    # 97 run (unit tests and tests/lib.rs; nextest runs no doctests) and the ignored one
    assert report.counts == TestCounts(total=98, passed=94, failed=3, skipped=1)
    assert {f.test: f.message for f in report.failures}["tests::hamming_unwraps_error"] == \
        "called `Result::unwrap()` on an `Err` value: DifferentLengthArgs"


def test_nextest_stopping_at_the_first_failure_counts_what_ran():
    report = parsed("nextest-0.9.151.txt", "cargo-nextest")
    assert failures(report) == STRSIM_FAILURES[:1]
    assert report.counts == TestCounts(total=22, passed=20, failed=1, skipped=1)
    assert report.error_count == 1  # `error: test run failed` is no finding


def test_nextest_in_a_workspace():
    report = parsed("nextest-0.9.151-workspace.txt", "cargo-nextest")
    assert failures(report) == [
        ("tests::word_byte", "regex-syntax/src/lib.rs", 401, 9, None, None),
        ("utf8::tests::decode_valid", "regex-lite/src/utf8.rs", 144, 9, "['x']", "['☃']"),
    ]
    assert report.counts == TestCounts(total=212, passed=210, failed=2, skipped=0)


def test_nextest_retries_timeouts_and_a_build_that_failed():
    text = ("error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n\n"
            "error: could not compile `app` (lib test) due to 1 previous error\n")
    report = parse_report("cargo-nextest", text)
    assert [(t.name, t.status) for t in report.tests] == [("app (lib test)", "load_error")]
    assert found(report) == [("error", "src/lib.rs", 3, 5, "E0425")]
    text = ("   TRY 1 FAIL [   0.01s] (1/3) app t::flaky\n   TRY 2 PASS [   0.01s] (1/3) app t::flaky\n"
            "      TIMEOUT [  60.00s] (2/3) app t::slow\n         SKIP [         ] (3/3) app t::later\n"
            "     Summary [  60.02s] 2 tests run: 1 passed, 1 timed out, 1 skipped\n")
    report = parse_report("cargo-nextest", text)
    assert {t.name: t.status for t in report.tests} == {"t::flaky": "passed", "t::slow": "failed",
                                                         "t::later": "skipped"}
    assert report.counts == TestCounts(total=3, passed=1, failed=1, skipped=1)


def test_nextest_junit_reads_with_the_junit_parser():
    report = parsed("nextest-0.9.151-junit.xml", "junit")
    # nextest leaves skipped tests out of its JUnit report
    assert report.counts == TestCounts(total=97, passed=94, failed=3, skipped=0)
    assert sorted(f.test for f in report.failures) == [f"strsim.{name}" for name, *_ in STRSIM_FAILURES]
    assert all("panicked at src/lib.rs:" in f.message for f in report.failures)
    workspace = parsed("nextest-0.9.151-workspace-junit.xml", "junit")
    assert sorted(f.test for f in workspace.failures) == ["regex-lite.utf8::tests::decode_valid",
                                                           "regex-syntax.tests::word_byte"]


def test_nextest_junit_failures_are_located_at_the_panic():
    report = parsed("nextest-0.9.151-junit.xml", "junit")
    assert sorted((f.file, f.line) for f in report.failures) == [("src/lib.rs", 787), ("src/lib.rs", 825),
                                                                 ("src/lib.rs", 1002)]


def test_clippy_then_nextest_reads_as_one_combined_report():
    text = "\n".join((CARGO / name).read_text(encoding="utf-8")
                     for name in ("clippy-0.1.95.txt", "nextest-0.9.151-no-fail-fast.txt"))
    report = parse_report("cargo+cargo-nextest", text)
    assert [d.code for d in report.diagnostics if d.test is None] == [
        "clippy::len_zero", "clippy::absurd_extreme_comparisons", "clippy::implicit_saturating_sub",
        "clippy::needless_lifetimes", "unused_comparisons"]
    assert failures(report) == STRSIM_FAILURES
    # a combined report counts the tests it names: the skipped one nextest only counts is left out
    assert report.counts == TestCounts(total=97, passed=94, failed=3, skipped=0)


# --- hexyl 0.17.0 (a binary crate tested through assert_cmd) and the rust-phf workspace ---------------

HEXYL = "/tmp/rec-rust/hexyl-0.17.0"


def test_a_panic_in_the_program_a_test_ran_is_the_failure_s_place():
    # assert_cmd's panic is placed in the standard library (`library/core/src/ops/function.rs`); the
    # message quotes the stderr of the hexyl binary, which panicked at src/main.rs:340.
    report = parsed("1.95.0-test-assert-cmd.txt", roots=[HEXYL])
    assert failures(report) == [("basic::fails_on_non_existing_input", None, None, None, None, None),
                                ("skip::fails_if_negative_offset_is_too_large", "src/main.rs", 340, 98, None, None)]
    assert report.counts == TestCounts(total=56, passed=54, failed=2, skipped=0)
    message = {f.test: f.message for f in report.failures}["skip::fails_if_negative_offset_is_too_large"]
    assert message.startswith("Unexpected stderr, failed var.contains(Failed to jump)\n")
    assert "TryFromIntError" in message and "RUST_BACKTRACE" not in message


def test_with_a_backtrace_a_panic_outside_the_project_is_placed_at_the_test_s_frame():
    report = parsed("1.95.0-test-assert-cmd-backtrace.txt", roots=[HEXYL])
    assert failures(report) == [
        ("basic::fails_on_non_existing_input", "tests/integration_tests.rs", 62, 46, None, None),
        ("skip::fails_if_negative_offset_is_too_large", "src/main.rs", 340, 98, None, None)]
    # the backtraces (the test's, the binary's and anyhow's, quoted in the message) are left out
    assert all("at /rustc/" not in f.message and "backtrace" not in f.message.lower() for f in report.failures)


def test_a_backtrace_frame_names_where_the_project_called_the_panicking_crate():
    dep = "/root/.cargo/registry/src/index.crates.io-1/dep-1.0.0/src/lib.rs:9:5"
    text = ("running 1 test\ntest t::uses_dep ... FAILED\n\nfailures:\n\n---- t::uses_dep stdout ----\n\n"
            f"thread 't::uses_dep' (5) panicked at {dep}:\n"
            "boom\nstack backtrace:\n   0: __rustc::rust_begin_unwind\n"
            "             at /rustc/abc/library/std/src/panicking.rs:689:5\n   1: dep::explode\n"
            f"             at {dep}\n"
            "   2: app::parse\n             at ./src/parse.rs:12:9\n   3: app::t::uses_dep\n"
            "             at ./src/lib.rs:40:9\n   4: __libc_start_call_main\n"
            "             at ./csu/../sysdeps/nptl/libc_start_call_main.h:58:16\n"
            "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n\n"
            "failures:\n    t::uses_dep\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; "
            "0 filtered out; finished in 0.00s\n")
    assert failures(parse_report("cargo", text)) == [("t::uses_dep", "src/parse.rs", 12, 9, None, None)]


def test_json_reports_a_crate_built_for_host_and_target_once():
    # phf_shared is built twice (for phf_macros, a proc macro, and for phf): cargo's JSON has its clippy
    # finding twice, where the human output says "(1 duplicate)".
    report = parsed("clippy-0.1.95-workspace-json.txt", "cargo-json")
    assert found(report) == [("error", "phf_shared/src/lib.rs", 65, 17, "clippy::eq_op")]


def test_a_panic_in_another_checkout_keeps_its_place_without_a_backtrace():
    text = ("running 1 test\ntest t::a ... FAILED\n\nfailures:\n\n---- t::a stdout ----\n\n"
            "thread 't::a' (5) panicked at /work/sibling/src/lib.rs:3:5:\nboom\n"
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n"
            "failures:\n    t::a\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; "
            "0 filtered out; finished in 0.00s\n")
    assert failures(parse_report("cargo", text)) == [("t::a", "/work/sibling/src/lib.rs", 3, 5, None, None)]
    std = text.replace("/work/sibling/src/lib.rs:3:5", "/rustc/abc/library/core/src/ops/function.rs:250:5")
    assert failures(parse_report("cargo", std)) == [("t::a", None, None, None, None, None)]
