"""parse_junit_xml against real pytest 9.0.3 --junitxml reports (xunit2 and xunit1)."""

import json
from pathlib import Path

import pytest

from sprintflow.errors import ReportError
from sprintflow.parsers import TestCounts, parse_junit_xml

REPORTS = Path(__file__).resolve().parents[1] / "fixtures" / "reports"
ROOT = "/tmp/sfrec/pyproj"


def read(name: str) -> str:
    return (REPORTS / "junit" / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["pytest-9.0.3.xml", "pytest-9.0.3-xunit1.xml"])
def test_failures_are_located_at_the_innermost_workspace_frame(name):
    report = parse_junit_xml(read(name), [ROOT])
    assert report.counts == TestCounts(total=9, passed=1, failed=7, skipped=1)
    assert report.error_count == 7
    assert [(f.test, f.file, f.line) for f in report.failures] == [
        ("tests.test_broken", "tests/test_broken.py", 1),
        ("tests.test_api.test_missing_is_404", "tests/test_api.py", 13),
        ("tests.test_api.test_user_name", "tests/test_api.py", 18),
        # The TypeError is raised inside the code under test, not in the test.
        ("tests.test_api.test_user_name_helper", "src/shop/api.py", 18),
        ("tests.test_api.test_summary", "tests/test_api.py", 26),
        ("tests.test_api.test_answers_in_time", "tests/test_api.py", 31),
        ("tests.test_api.TestStatus.test_status_method", "tests/test_api.py", 42),
    ]


def test_expected_and_received_from_pytest_assertions():
    failures = parse_junit_xml(read("pytest-9.0.3.xml"), [ROOT]).failures
    assert [(f.expected, f.received) for f in failures] == [
        (None, None),
        ("404", "500"),
        (None, None),
        (None, None),
        ("{'count': 2, 'ids': [1, 2]}", "{'count': 2, 'ids': [2, 3]}"),
        (None, None),
        ("404", "500"),  # `AssertionError: wrong status` then `assert 500 == 404`
    ]


def test_messages_are_the_error_lines():
    failures = parse_junit_xml(read("pytest-9.0.3.xml"), [ROOT]).failures
    assert failures[0].message == "ModuleNotFoundError: No module named 'shop.does_not_exist'"
    assert failures[1].message == ("AssertionError: assert 500 == 404\n"
                                   "+  where 500 = get_status('/missing')")
    assert failures[5].message == "Failed: Timeout (>0.2s) from pytest-timeout."
    assert failures[1].stack.rstrip().endswith("tests/test_api.py:13: AssertionError")


def test_each_failure_is_a_junit_diagnostic():
    report = parse_junit_xml(read("pytest-9.0.3.xml"), [ROOT])
    d = report.diagnostics[1]
    assert (d.tool, d.file, d.line, d.expected, d.received) == (
        "junit", "tests/test_api.py", 13, "404", "500")
    assert d.message.startswith("tests.test_api.test_missing_is_404: AssertionError: assert 500 == 404")


def test_interrupted_collection_is_one_failure():
    report = parse_junit_xml(read("pytest-9.0.3-collection-error.xml"), [ROOT])
    assert report.counts == TestCounts(total=1, passed=0, failed=1, skipped=0)
    [f] = report.failures
    assert (f.test, f.file, f.line) == ("tests.test_broken", "tests/test_broken.py", 1)


def test_passing_run():
    report = parse_junit_xml(read("pytest-9.0.3-pass.xml"), [ROOT])
    assert report.counts == TestCounts(total=2, passed=1, failed=0, skipped=1)
    assert report.error_count == 0


def test_without_a_traceback_the_declared_location_is_used():
    xunit1 = ('<testsuites><testsuite><testcase classname="tests.test_a" name="test_x" '
              'file="tests/test_a.py" line="7"><failure message="boom" /></testcase>'
              '</testsuite></testsuites>')
    assert (parse_junit_xml(xunit1).failures[0].file, parse_junit_xml(xunit1).failures[0].line) == (
        "tests/test_a.py", 8)  # pytest writes the 0-based line of the def
    xunit2 = ('<testsuite><testcase classname="pkg.test_a.TestThing" name="test_x">'
              '<error message="boom" /></testcase></testsuite>')
    f = parse_junit_xml(xunit2).failures[0]
    assert (f.test, f.file, f.line, f.message) == ("pkg.test_a.TestThing.test_x", "pkg/test_a.py",
                                                   None, "boom")


@pytest.mark.parametrize("text, problem", [
    ("", "junit report is empty"),
    ("<testsuite><testcase>", "junit report is not valid XML \\(no element found"),
    ('{"tests": 1}', "junit report is not valid XML \\(not well-formed"),
    ("<html><body>502</body></html>", "should have <testsuites> or <testsuite> at its root, not <html>"),
])
def test_malformed_reports_raise_report_error(text, problem):
    with pytest.raises(ReportError, match=problem):
        parse_junit_xml(text)


FEEDBACK = Path(__file__).resolve().parents[1] / "fixtures" / "feedback"


def test_surefire_reports_put_one_after_another_read_as_one():
    # java-classmate's `cat target/surefire-reports/TEST-*.xml > junit.xml` (38 documents, one per class),
    # recorded in tests/fixtures/feedback/classmate/test-junit.json.
    recording = json.loads((FEEDBACK / "classmate" / "test-junit.json").read_text(encoding="utf-8"))
    text = recording["reports"][".sprintflow/reports/junit.xml"]
    assert text.count("<?xml") == 38
    report = parse_junit_xml(text, ["/tmp/rec-java/java-classmate"])
    assert report.counts == TestCounts(total=260, passed=257, failed=3, skipped=0)
    array_type = "src/main/java/com/fasterxml/classmate/types/ResolvedArrayType.java"
    assert [(f.test, f.file, f.line) for f in report.failures] == [
        ("com.fasterxml.classmate.TestTypeDescriptions.testPrimitiveTypes",
         "src/test/java/com/fasterxml/classmate/TestTypeDescriptions.java", 66),
        # thrown in the code the tests call, as Maven's output places it
        ("com.fasterxml.classmate.types.ResolvedArrayTypeTest.appendBriefDescription", array_type, 114),
        ("com.fasterxml.classmate.types.ResolvedArrayTypeTest.appendFullDescription", array_type, 114),
    ]
    assert report.failures[2].message == (
        "unexpected space in array description: Existing java.lang.Object (called from "
        "src/test/java/com/fasterxml/classmate/types/ResolvedArrayTypeTest.java:182)")


def test_documents_one_after_another_that_are_not_reports_are_refused():
    with pytest.raises(ReportError, match="junk after document element"):
        parse_junit_xml("<testsuite/><html/>")


def test_surefire_xml_of_nested_classes_assertj_and_wrapped_exceptions():
    # spring-petclinic's reports, one after another (tests/fixtures/feedback/spring-petclinic/test-junit.json).
    recording = json.loads((FEEDBACK / "spring-petclinic" / "test-junit.json").read_text(encoding="utf-8"))
    report = parse_junit_xml(recording["reports"][".sprintflow/reports/junit.xml"], ["/tmp/rec-java/spring-petclinic"])
    owner = "org.springframework.samples.petclinic.owner"
    validator = "src/main/java/org/springframework/samples/petclinic/owner/PetValidator.java"
    assert [(f.test, f.file, f.line) for f in report.failures] == [
        # a @Nested class's test, named by the nested class (as the maven parser names it too)
        (f"{owner}.PetControllerTests$ProcessUpdateFormHasErrors.processUpdateFormWithInvalidBirthDate", validator, 51),
        (f"{owner}.PetTypeFormatterTests.testPrint",
         "src/test/java/org/springframework/samples/petclinic/owner/PetTypeFormatterTests.java", 60),
        (f"{owner}.PetValidatorTests$ValidateHasErrors.validateWithInvalidBirthDate", validator, 51),
    ]
    assertion = report.failures[1]
    assert assertion.message == 'expected: "Gerbil"\n but was: "Hamster"'
    assert (assertion.expected, assertion.received) == ("Gerbil", "Hamster")
    assert report.counts == TestCounts(total=55, passed=52, failed=3, skipped=0)


def test_surefire_xml_of_a_multi_module_build_is_placed_in_its_module():
    # jsonschema-generator's reports of two modules, one after another: each suite's `basedir` property
    # names its module's folder (tests/fixtures/feedback/jsonschema-generator/test-junit.json).
    recording = json.loads((FEEDBACK / "jsonschema-generator" / "test-junit.json").read_text(encoding="utf-8"))
    report = parse_junit_xml(recording["reports"][".sprintflow/reports/junit.xml"],
                             ["/tmp/rec-java/jsonschema-generator"])
    assert [(f.file, f.line) for f in report.failures] == [
        ("jsonschema-module-jackson/src/test/java/com/github/victools/jsonschema/module/jackson/"
         "JsonPropertySorterTest.java", 66)]
    assert report.counts == TestCounts(total=1131, passed=1130, failed=1, skipped=0)
