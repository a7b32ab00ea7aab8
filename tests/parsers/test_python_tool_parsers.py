"""parse_ruff_json (ruff 0.5.7 and 0.17.6) and parse_mypy (mypy 2.4.1) against real output."""

from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import parse_mypy, parse_ruff_json

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
ROOT = "/tmp/sfrec/pyproj"
RUFF_FINDINGS = [
    ("src/shop/api.py", 1, 8, "F401"),
    ("src/shop/api.py", 2, 8, "F401"),
    ("src/shop/api.py", 30, 5, "E741"),
    ("src/shop/api.py", 30, 5, "F841"),
    ("src/shop/api.py", 31, 30, "F821"),
    ("src/shop/api.py", 36, 5, "F821"),
]
MYPY_ERRORS = [
    ("tests/test_broken.py", 1, "import-not-found"),
    ("src/shop/api.py", 18, "index"),
    ("src/shop/api.py", 26, "return-value"),
    ("src/shop/api.py", 31, "name-defined"),
]


def read(tool: str, name: str) -> str:
    return (REPORTS / tool / name).read_text(encoding="utf-8")


def test_ruff_0_5_syntax_errors_have_no_code():
    report = parse_ruff_json(read("ruff", "0.5.7.json"), [ROOT])
    found = [(d.file, d.line, d.column, d.code) for d in report.diagnostics]
    assert found == [*RUFF_FINDINGS, ("src/shop/broken.py", 1, 12, None),
                     ("src/shop/broken.py", 1, 13, None)]
    assert report.error_count == 8
    assert report.diagnostics[0].message == "`os` imported but unused"


def test_ruff_0_17_names_syntax_errors_and_gives_a_severity():
    report = parse_ruff_json(read("ruff", "0.17.6.json"), [ROOT])
    found = [(d.file, d.line, d.column, d.code) for d in report.diagnostics]
    assert found == [*RUFF_FINDINGS[:2], ("src/shop/api.py", 10, 51, "UP045"), *RUFF_FINDINGS[2:],
                     ("src/shop/broken.py", 1, 12, "invalid-syntax"),
                     ("src/shop/broken.py", 1, 13, "invalid-syntax")]
    assert {d.severity for d in report.diagnostics} == {"error"}
    assert {d.tool for d in report.diagnostics} == {"ruff"}


def test_ruff_warning_severity_is_kept():
    text = ('[{"code": "X1", "message": "m", "filename": "/w/a.py", "severity": "warning",'
            ' "location": {"row": 2, "column": 1}}]')
    report = parse_ruff_json(text, ["/w"])
    assert (report.diagnostics[0].severity, report.error_count) == ("warning", 0)


def test_mypy_errors_without_columns_notes_kept_as_details_of_their_error():
    report = parse_mypy(read("mypy", "2.4.1.txt"), [ROOT])
    assert [(d.file, d.line, d.code) for d in report.diagnostics] == MYPY_ERRORS
    assert {d.column for d in report.diagnostics} == {None}
    assert report.error_count == 4
    assert report.diagnostics[2].message == 'Incompatible return value type (got "int", expected "str")'
    # The note at the error's own line is its detail; reveal_type's note at another line is no one's.
    assert report.diagnostics[0].message.splitlines()[1].startswith("See https://mypy.readthedocs.io")
    assert not any("Revealed type" in d.message for d in report.diagnostics)


def test_mypy_with_column_numbers():
    report = parse_mypy(read("mypy", "2.4.1-columns.txt"), [ROOT])
    assert [(d.file, d.line, d.code) for d in report.diagnostics] == MYPY_ERRORS
    assert [d.column for d in report.diagnostics] == [1, 12, 12, 30]


def test_mypy_syntax_errors():
    report = parse_mypy(read("mypy", "2.4.1-syntax.txt"))
    assert [(d.file, d.line, d.code) for d in report.diagnostics] == [
        ("src/shop/broken.py", 1, "syntax"), ("src/shop/broken.py", 1, "syntax")]


def test_mypy_success_and_empty_output_have_no_diagnostics():
    assert parse_mypy(read("mypy", "2.4.1-ok.txt")).diagnostics == []
    assert parse_mypy("").error_count == 0


def test_mypy_output_that_is_not_mypy_is_an_error():
    with pytest.raises(ReportError, match="mypy output has no mypy line.*No module named mypy"):
        parse_mypy("/usr/bin/python3: No module named mypy\n")


def test_ruff_garbage_is_an_error():
    with pytest.raises(ReportError, match="ruff report is not valid JSON"):
        parse_ruff_json("warning: unknown rule\n[")
