"""parse_tsc against real tsc 5.9.3 output (plain, --pretty, and a fileless error)."""

from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import parse_tsc

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
EXPECTED = [
    ("src/a.ts", 14, 7, "TS6133"),
    ("src/a.ts", 16, 9, "TS2322"),
    ("src/a.ts", 17, 11, "TS2345"),
    ("src/a.ts", 18, 14, "TS2322"),
    ("src/b.ts", 3, 42, "TS2353"),
    ("src/b.ts", 4, 13, "TS2551"),
    ("src/b.ts", 6, 14, "TS2322"),
]


def read(name: str) -> str:
    return (REPORTS / "tsc" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["5.9.3.txt", "5.9.3-pretty.txt"])
def test_both_output_forms_give_the_same_located_errors(name):
    report = parse_tsc(read(name))
    assert [(d.file, d.line, d.column, d.code) for d in report.diagnostics] == EXPECTED
    assert {d.tool for d in report.diagnostics} == {"tsc"}
    assert {d.severity for d in report.diagnostics} == {"error"}
    assert report.error_count == 7
    assert report.counts is None and report.failures == []
    assert report.diagnostics[2].message == (
        "Argument of type 'number' is not assignable to parameter of type 'string'.")


@pytest.mark.parametrize("name", ["5.9.3.txt", "5.9.3-pretty.txt"])
def test_indented_follow_up_lines_belong_to_the_message(name):
    last = parse_tsc(read(name)).diagnostics[-1]
    assert last.message == (
        "Type '(name: number) => void' is not assignable to type '(name: string) => void'.\n"
        "Types of parameters 'name' and 'name' are incompatible.\n"
        "Type 'string' is not assignable to type 'number'.")


def test_pretty_code_frames_and_related_locations_are_not_messages():
    messages = [d.message for d in parse_tsc(read("5.9.3-pretty.txt")).diagnostics]
    assert not any("~~" in m or "declared here" in m for m in messages)


def test_an_error_without_a_file():
    [d] = parse_tsc(read("5.9.3-no-project.txt")).diagnostics
    assert (d.file, d.line, d.code) == (None, None, "TS5058")
    assert d.message == "The specified path does not exist: 'missing.json'."


def test_absolute_paths_are_made_workspace_relative():
    text = "/workspace/src/a.ts(12,5): error TS2345: Bad argument.\n"
    assert parse_tsc(text, ["/workspace"]).diagnostics[0].file == "src/a.ts"
    assert parse_tsc(text, "/workspace/").diagnostics[0].file == "src/a.ts"


def test_empty_output_is_a_clean_compile():
    assert parse_tsc("").diagnostics == []
    assert parse_tsc("\n").error_count == 0


def test_output_without_a_diagnostic_is_an_error():
    with pytest.raises(ReportError, match="tsc output has no diagnostic line.*Segmentation"):
        parse_tsc("Segmentation fault (core dumped)\n")
