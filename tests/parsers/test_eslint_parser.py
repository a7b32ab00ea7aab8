"""parse_eslint_json against real ESLint 8.57.1 and 9.39.5 JSON reports."""

from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import parse_eslint_json

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"


def read(name: str) -> str:
    return (REPORTS / "eslint" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name, root", [("8.57.1.json", "/tmp/sfrec/eslint8"),
                                        ("9.39.5.json", "/tmp/sfrec/eslint9")])
def test_rules_severities_and_locations(name, root):
    report = parse_eslint_json(read(name), [root])
    found = [(d.file, d.line, d.column, d.code, d.severity) for d in report.diagnostics]
    assert found == [
        ("src/app.js", 1, 10, "no-unused-vars", "error"),
        ("src/app.js", 4, 7, "prefer-const", "error"),
        ("src/app.js", 5, 9, "no-unused-vars", "error"),
        ("src/app.js", 6, 16, "eqeqeq", "warning"),
        ("src/app.js", 7, 5, "no-console", "warning"),
        ("src/broken.js", 2, 3, None, "error"),
    ]
    assert report.error_count == 4
    assert report.diagnostics[-1].message == "Parsing error: Unexpected keyword 'return'"
    assert {d.tool for d in report.diagnostics} == {"eslint"}


def test_ignored_file_notice_is_a_warning_without_a_line():
    [d] = parse_eslint_json(read("9.39.5-ignored.json"), ["/tmp/sfrec/eslint9"]).diagnostics
    assert (d.file, d.line, d.code, d.severity) == ("dist/out.js", None, None, "warning")
    assert d.message.startswith("File ignored because of a matching ignore pattern")


def test_without_roots_paths_stay_as_printed():
    d = parse_eslint_json(read("9.39.5.json")).diagnostics[0]
    assert d.file == "/tmp/sfrec/eslint9/src/app.js"


def test_an_object_instead_of_the_file_array_is_an_error():
    with pytest.raises(ReportError, match="eslint report should be a JSON array of files, got dict"):
        parse_eslint_json('{"filePath": "a.js"}')
