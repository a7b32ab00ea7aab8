"""The registry, parse_report's errors, the shared helpers, and the docstring examples."""

import doctest
import importlib
from pathlib import Path

import pytest

from sprintflow import parsers
from sprintflow.errors import ReportError
from sprintflow.parsers import PARSERS, ParsedReport, parse_report
from sprintflow.parsers._common import (
    expected_received,
    innermost_frame,
    relativise,
    strip_ansi,
)

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
ROOTS = ["/tmp/sfrec/vitest3", "/tmp/sfrec/jest30", "/tmp/sfrec/pw", "/tmp/sfrec/pyproj",
         "/tmp/sfrec/eslint9", "/tmp/sfrec13/env/humanize", "/tmp/sfrec13/scratch/vitest1",
         "/tmp/sfrec13/scratch/jest29", "/tmp/sfrec13/ts/destr", "/tmp/sfrec13/py/click-8.5.1",
         "/tmp/sfrec13/pwapp", "/tmp/sfrec13/ts/tsconfig-paths", "/tmp/rec-go/uuid", "/tmp/rec-go/cobra",
         "/tmp/rec-jvm/cli"]
TOOLS = {"vitest-text": "vitest", "jest-text": "jest", "eslint-stylish": "eslint", "ruff-text": "ruff",
         "playwright-text": "playwright", "go-test": "go", "go-test-json": "go", "go-build": "go",
         "cargo-json": "cargo", "cargo-nextest": "cargo", "maven": "surefire"}
ONE_FIXTURE = {
    "tsc": ("tsc/5.9.3.txt", 7),
    "eslint": ("eslint/9.39.5.json", 4),
    "ruff": ("ruff/0.17.6.json", 9),
    "mypy": ("mypy/2.4.1.txt", 4),
    "vitest": ("vitest/3.2.7.json", 6),
    "jest": ("jest/30.5.2.json", 6),
    "junit": ("junit/pytest-9.0.3.xml", 7),
    "playwright": ("playwright/1.65.1.json", 4),
    "pytest": ("pytest/9.0.3-continue.txt", 2),
    "vitest-text": ("vitest/1.6.1-default.txt", 2),
    "jest-text": ("jest/29.7.0-default.txt", 3),
    "eslint-stylish": ("eslint/stylish-9.39.5.txt", 1),
    "ruff-text": ("ruff/0.5.7-full.txt", 13),
    "playwright-text": ("playwright/1.61.1-list.txt", 2),
    "generic": ("generic/eslint-visualstudio-8.14.0.txt", 1),
    "go-test": ("go/1.26.8-default.txt", 2),
    "go-test-json": ("go/1.26.8-json-cobra-doc.txt", 4),
    "go-build": ("go/staticcheck-2026.2.2-cobra.txt", 6),
    "gofmt": ("go/1.26.8-gofmt-d-uuid.txt", 13),
    "biome": ("biome/2.6.8-check.txt", 4),
    "cargo": ("cargo/clippy-0.1.95.txt", 1),
    "cargo-json": ("cargo/1.95.0-check-json.txt", 2),
    "cargo-nextest": ("cargo/nextest-0.9.151-no-fail-fast.txt", 3),
    "maven": ("maven/3.8.7-surefire-3.1.2-test.txt", 2),
}


def test_every_format_is_registered():
    assert sorted(PARSERS) == sorted(ONE_FIXTURE)


@pytest.mark.parametrize("fmt", sorted(ONE_FIXTURE))
def test_parse_report_dispatches_by_format(fmt):
    name, errors = ONE_FIXTURE[fmt]
    report = parse_report(fmt, (REPORTS / name).read_text(encoding="utf-8"), ROOTS)
    assert isinstance(report, ParsedReport)
    assert report.error_count == errors
    assert {d.tool for d in report.diagnostics} == {TOOLS.get(fmt, fmt)}
    assert all(d.file and not d.file.startswith("/") for d in report.diagnostics)


def test_unknown_format_names_the_known_ones():
    with pytest.raises(ReportError, match="unknown report format 'tap'; known formats: tsc, eslint"):
        parse_report("tap", "ok 1")


@pytest.mark.parametrize("fmt", ["eslint", "ruff", "vitest", "jest", "playwright"])
def test_json_formats_reject_empty_and_non_json_text(fmt):
    with pytest.raises(ReportError, match=f"^{fmt} report is empty; expected the JSON of `"):
        parse_report(fmt, "  \n")
    with pytest.raises(ReportError, match=f"^{fmt} report is not valid JSON .*it starts with '<html>"):
        parse_report(fmt, "<html>Bad gateway</html>")


def test_a_value_of_the_wrong_type_is_a_report_error_not_a_validation_traceback():
    text = '[{"code": "F401", "message": "m", "filename": "a.py", "location": {"row": "one"}}]'
    with pytest.raises(ReportError, match="ruff report has an unexpected shape"):
        parse_report("ruff", text)


def test_text_formats_accept_empty_output():
    assert parse_report("tsc", "").error_count == 0
    assert parse_report("mypy", "").error_count == 0


def test_relativise_strips_the_longest_root_and_file_urls():
    roots = ["/workspace", "/workspace/packages/web"]
    assert relativise("/workspace/packages/web/src/a.ts", roots) == "src/a.ts"
    assert relativise("file:///workspace/src/a.ts", roots) == "src/a.ts"
    assert relativise("./src/a.ts", roots) == "src/a.ts"
    assert relativise("/workspaces/other/a.ts", roots) == "/workspaces/other/a.ts"
    assert relativise("/usr/lib/node.js", "/workspace") == "/usr/lib/node.js"


def test_strip_ansi():
    assert strip_ansi("\x1b[2mexpect(\x1b[22m\x1b[31mreceived\x1b[39m") == "expect(received"


@pytest.mark.parametrize("message, values", [
    ("expected 500 to be 404 // Object.is equality", ("404", "500")),
    ("AssertionError: expected 500 to deeply equal 404\n    at /w/a.test.ts:3:1", ("404", "500")),
    ("expected 'a' to strictly equal 'b'", ("'b'", "'a'")),
    ("expected 5 to be a number", (None, None)),
    (("Error: expect(received).toBe(expected)\n\nExpected: \x1b[32m404\x1b[39m\n"
      "Received: \x1b[31m500\x1b[39m"), ("404", "500")),
    ('Expected string: "Shop"\nReceived string: "Cart"', ('"Shop"', '"Cart"')),
    ("AssertionError: assert 500 == 404\n +  where 500 = get_status('/missing')", ("404", "500")),
    ("E       assert [1] == [1, 2]", ("[1, 2]", "[1]")),
    ("TypeError: Cannot read properties of undefined (reading 'name')", (None, None)),
])
def test_expected_received_shapes(message, values):
    assert expected_received(message) == values


def test_innermost_frame_skips_dependencies_and_prefers_the_workspace():
    js = ("Error: x\n    at fn (/w/node_modules/lib/index.js:1:1)\n"
          "    at node:internal/process/task_queues:95:5\n    at Object.t (/w/src/a.test.js:9:35)")
    assert innermost_frame(js, ["/w"]) == ("src/a.test.js", 9, 35)
    py = ("/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n"
          "tests/test_a.py:3: in <module>\n    import x\nsrc/x.py:1: ImportError")
    assert innermost_frame(py, []) == ("src/x.py", 1, None)
    native = 'Traceback:\n  File "/w/tests/test_a.py", line 4, in test_a\n    assert f()'
    assert innermost_frame(native, ["/w"]) == ("tests/test_a.py", 4, None)
    assert innermost_frame("no frames here", ["/w"]) is None


@pytest.mark.parametrize("module", ["_common", "eslint", "generic", "jest_style", "junit", "playwright",
                                    "pytest_text", "python_tools", "runner_text", "typescript"])
def test_docstring_examples_hold(module):
    target = importlib.import_module(f"sprintflow.parsers.{module}")
    result = doctest.testmod(target, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_package_docstring_examples_hold():
    result = doctest.testmod(parsers, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
