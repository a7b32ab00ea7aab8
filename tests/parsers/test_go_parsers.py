"""Go's tools on real modules (google/uuid, spf13/cobra) with injected faults: tests/fixtures/reports/README.md."""

from pathlib import Path

import pytest

from sprintflow.evaluate.environment import EnvironmentKind, classify_environment
from sprintflow.parsers import parse_report

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def read(name: str) -> str:
    return (REPORTS / name).read_text(encoding="utf-8")


@pytest.fixture
def uuid(tmp_path):
    """The roots a run in the uuid checkout had: its go.mod names the module its packages are in."""
    (tmp_path / "go.mod").write_text("module github.com/google/uuid\n\ngo 1.21\n")
    return [str(tmp_path), "/tmp/rec-go/uuid"]


@pytest.fixture
def cobra(tmp_path):
    (tmp_path / "go.mod").write_text("module github.com/spf13/cobra\n\ngo 1.15\n")
    return [str(tmp_path), "/tmp/rec-go/cobra"]


def located(report):
    return [(d.test, d.file, d.line, d.code) for d in report.diagnostics]


def test_compiler_errors_are_found_at_their_column_with_the_lines_that_continue_them(uuid):
    report = parse_report("go-build", read("go/1.26.8-build-uuid.txt"), uuid)
    assert [(d.file, d.line, d.column) for d in report.diagnostics] == [
        ("util.go", 11, 15), ("uuid.go", 246, 26), ("uuid.go", 246, 26)]
    assert report.diagnostics[0].message == 'cannot use "one" (untyped string constant) as int value in variable ' \
                                            'declaration'
    assert report.diagnostics[2].message.splitlines() == [
        "too many arguments in call to encodeHex", "have ([]byte, UUID, unknown type)", "want ([]byte, UUID)"]
    assert report.error_count == 3 and {d.tool for d in report.diagnostics} == {"go"}


def test_a_subpackages_findings_are_at_paths_from_the_module_root(cobra, uuid):
    assert located(parse_report("go-build", read("go/1.26.8-build-cobra.txt"), cobra)) == [
        (None, "command.go", 2074, None)]
    [vet] = parse_report("go-build", read("go/1.26.8-vet-cobra.txt"), cobra).diagnostics
    assert (vet.file, vet.line, vet.column, vet.message) == (
        "doc/util.go", 55, 51, "fmt.Sprintf format %s has arg n of wrong type int")
    [vet] = parse_report("go-build", read("go/1.26.8-vet-uuid.txt"), uuid).diagnostics
    assert (vet.file, vet.line) == ("uuid.go", 77)


def test_staticcheck_names_each_check_and_reports_nothing_twice(cobra):
    report = parse_report("go-build", read("go/staticcheck-2026.2.2-cobra.txt"), cobra)
    assert [(d.file, d.line, d.code) for d in report.diagnostics] == [
        ("args.go", 133, "U1000"), ("args.go", 134, "SA4006"), ("args.go", 136, "SA4000"),
        ("command_test.go", 2930, "SA1029"), ("completions_test.go", 1301, "SA1029"), ("doc/util.go", 54, "U1000")]
    assert report.diagnostics[0].message == "func checkTwice is unused"
    # A compile error staticcheck meets is reported for the package and for its tests: it is one finding.
    twice = parse_report("go-build", "-: # m\n./a.go:3:2: declared and not used: n (compile)\n"
                                     "-: # m [m.test]\n./a.go:3:2: declared and not used: n (compile)\n")
    assert [(d.file, d.line, d.code) for d in twice.diagnostics] == [("a.go", 3, None)]


def test_golangci_lint_names_each_linter_and_its_quoted_source_is_not_the_message(cobra):
    report = parse_report("go-build", read("go/golangci-lint-2.15.0-cobra.txt"), cobra)
    ours = [(d.file, d.line, d.code, d.message) for d in report.diagnostics if d.code not in ("goconst", "gosec")]
    assert ours == [
        ("args.go", 136, "gocritic", "dupSubExpr: suspicious identical LHS and RHS for `||` operator"),
        ("args.go", 134, "ineffassign", "ineffectual assignment to n"),
        ("args.go", 133, "unused", "func checkTwice is unused"),
        ("doc/util.go", 54, "unused", "func unusedHelper is unused")]
    assert len(report.diagnostics) == 55  # cobra's own configuration adds 50 goconst findings and a gosec one


def test_golangci_lints_quoted_source_and_caret_are_not_the_message():
    report = parse_report("go-build", "a.go:5:2: ineffectual assignment to n (ineffassign)\n\tn = 2\n\t^\n"
                                      "1 issues:\n* ineffassign: 1\n")
    assert [(d.line, d.code, d.message) for d in report.diagnostics] == [
        (5, "ineffassign", "ineffectual assignment to n")]


def test_gofmt_lists_files_and_its_diffs_give_each_hunks_first_changed_line(uuid):
    listed = parse_report("gofmt", read("go/1.26.8-gofmt-l-uuid.txt"), uuid)
    assert {"util.go", "time.go"} <= {d.file for d in listed.diagnostics} and len(listed.diagnostics) == 9
    assert all(d.line is None and d.code == "gofmt" for d in listed.diagnostics)
    diffs = parse_report("gofmt", read("go/1.26.8-gofmt-d-uuid.txt"), uuid)
    at = {(d.file, d.line) for d in diffs.diagnostics}
    assert {("util.go", 45), ("time.go", 14), ("dce.go", 45), ("dce.go", 53)} <= at and len(diffs.diagnostics) == 13
    assert diffs.diagnostics[0].message == "not formatted as gofmt formats it: run gofmt -w dce.go"


@pytest.mark.parametrize("name", ["go/1.26.8-test-fail-uuid.txt", "go/1.26.8-test-v-fail-uuid.txt",
                                  "go/1.26.8-json-fail-uuid.txt"])
def test_a_failing_check_in_a_loop_is_one_finding_with_its_count(uuid, name):
    fmt = "go-test-json" if "json" in name else "go-test"
    [failure] = parse_report(fmt, read(name), uuid).diagnostics
    assert (failure.test, failure.file, failure.line) == ("TestNew", "uuid_test.go", 220)
    assert failure.message == ("TestNew: Random UUID of version VERSION_4\n"
                               "uuid_test.go:220: Random UUID of version VERSION_4 (30 times)")


@pytest.mark.parametrize(("fmt", "name"), [("go-test-json", "go/1.26.8-json-fail-uuid.txt"),
                                           ("go-test", "go/1.26.8-test-v-fail-uuid.txt")])
def test_the_json_stream_and_v_count_every_test_and_its_skips(uuid, fmt, name):
    report = parse_report(fmt, read(name), uuid)
    assert (report.counts.total, report.counts.passed, report.counts.failed, report.counts.skipped) == (197, 195, 1, 1)
    statuses = {t.name: t.status for t in report.tests}
    assert statuses["TestNew"] == "failed" and statuses["TestJSONUnmarshal/empty"] == "passed"
    assert "TestJSONUnmarshal" not in statuses  # a parent ends as its subtests did: they are the tests


@pytest.mark.parametrize("name", ["go/1.26.8-test-panic-uuid.txt", "go/1.26.8-json-panic-uuid.txt"])
def test_a_panic_is_found_where_the_code_panicked_with_the_test_that_reached_it(uuid, name):
    fmt = "go-test-json" if "json" in name else "go-test"
    [panic] = parse_report(fmt, read(name), uuid).diagnostics
    assert (panic.test, panic.file, panic.line, panic.code) == ("TestNullUUIDValue", "uuid.go", 248, "panic")
    assert panic.message == ("TestNullUUIDValue: panic: runtime error: slice bounds out of range [:37] with "
                             "length 36 (called from null_test.go:59)")


@pytest.mark.parametrize("name", ["go/1.26.8-test-build-uuid.txt", "go/1.26.8-json-build-uuid.txt"])
def test_a_test_package_that_does_not_build_is_a_build_failure_not_a_failing_test(uuid, name):
    fmt = "go-test-json" if "json" in name else "go-test"
    report = parse_report(fmt, read(name), uuid)
    assert located(report) == [(None, "seq_test.go", 9, None)]
    assert report.failures == [] and report.error_count == 1 and "none of its tests ran" in report.diagnostics[0].hint


def test_a_multi_package_run_names_each_test_in_its_package_and_tells_a_panic_apart(cobra):
    report = parse_report("go-test", read("go/1.26.8-test-cobra.txt"), cobra)
    assert located(report) == [
        ("TestFailGenFishCompletionFile", "fish_completions_test.go", 141, "panic"),
        ("./doc TestGenManDoc", "doc/man_docs_test.go", 48, None),
        ("./doc TestGenManNoHiddenParents", "doc/man_docs_test.go", 83, None),
        ("./doc TestGenManNoGenTag", "doc/man_docs_test.go", 117, None),
        ("./doc TestGenManTree", "doc/man_docs_test.go", 174, None)]
    assert report.diagnostics[0].message.splitlines() == [
        "TestFailGenFishCompletionFile: panic: runtime error: invalid memory address or nil pointer dereference",
        "[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x69d6d2]"]
    stream = parse_report("go-test-json", read("go/1.26.8-json-cobra-doc.txt"), cobra)
    assert located(stream) == located(report)[1:]
    assert (stream.counts.total, stream.counts.failed) == (19, 4)


def test_a_panic_outside_any_test_block_is_named_from_its_stack():
    report = parse_report("go-test", "panic: test timed out after 1s\n\trunning tests:\n\t\tTestSlow (1s)\n\n"
                                     "goroutine 7 [running]:\nexample.com/m.TestSlow(0xc0)\n\t/w/a_test.go:9 +0x1d\n"
                                     "FAIL\texample.com/m\t1.012s\n", ["/w"])
    assert [(d.test, d.file, d.line, d.message) for d in report.diagnostics] == [
        ("TestSlow", "a_test.go", 9, "TestSlow: panic: test timed out after 1s")]


@pytest.mark.parametrize(("name", "kind", "subject"), [
    ("go-1.26.8-goproxy-off.txt", EnvironmentKind.missing_dependency, None),
    ("go-1.26.8-proxy-refused.txt", EnvironmentKind.missing_dependency, "github.com/mattn/go-colorable@v0.1.14"),
    ("go-1.26.8-toolchain.txt", EnvironmentKind.toolchain, "go1.27.3"),
])
def test_what_the_go_command_says_of_its_environment_is_an_environment_failure(name, kind, subject):
    failure = classify_environment(read(f"environment/{name}"), 1)
    assert failure is not None and (failure.kind, failure.subject) == (kind, subject)
    assert "go mod download" in failure.hint or "GOTOOLCHAIN=go1.27.3" in failure.hint


def test_the_changes_own_go_sum_and_build_errors_are_not_the_environments():
    for output in (read("go/1.26.8-build-uuid.txt"), read("go/1.26.8-test-build-uuid.txt"),
                   "a.go:3:2: missing go.sum entry for module providing package github.com/x/y (imported by m)",
                   "verifying github.com/x/y@v1.0.0: checksum mismatch",
                   '    client_test.go:12: Get "http://127.0.0.1:9/health": dial tcp 127.0.0.1:9: connect: '
                   'connection refused'):
        assert classify_environment(output, 1) is None
