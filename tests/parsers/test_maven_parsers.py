"""The maven parser (Maven's output and plain javac's) and the junit parser on Surefire's XML, on real reports.

The reports were recorded from Apache Commons CLI 1.6.0 (one module, JUnit 4 and 5 under Surefire 3.1.2),
Failsafe 3.3.3-SNAPSHOT (a multi-module build, TestNG under Surefire 2.22.2) and jackson-module-kotlin
2.18.4 (Kotlin 1.8.10, JUnit 4 under Surefire 3.4.0) with faults put in;
``tests/fixtures/reports/README.md`` says how.
"""

import doctest
from pathlib import Path

import pytest

from sprintflow.parsers import maven, parse_report
from sprintflow.parsers._common import TEST_RUNNER_FORMATS

MAVEN = Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "maven"
CLI, FAILSAFE = "/tmp/rec-jvm/cli", "/tmp/rec-jvm/fs"
ROOTS = [CLI, FAILSAFE]
UTIL = "src/main/java/org/apache/commons/cli/Util.java"
UTIL_TEST = "src/test/java/org/apache/commons/cli/UtilTest.java"
OKHTTP = "modules/okhttp/src/test/java/dev/failsafe/okhttp/FailsafeCallTest.java"
RETROFIT = "modules/retrofit/src/test/java/dev/retrofit/FailsafeCallTest.java"


def parse(name, roots=ROOTS, fmt="maven"):
    return parse_report(fmt, (MAVEN / name).read_text(encoding="utf-8"), roots)


def located(report):
    return [(d.tool, d.severity, d.file, d.line, d.column, d.code) for d in report.diagnostics]


def failed(report):
    return [(f.test, f.file, f.line) for f in report.failures]


@pytest.mark.parametrize("name", ["3.8.7-surefire-3.1.2-test.txt", "3.8.7-surefire-3.1.2-q-test.txt"])
def test_failing_tests_are_named_by_class_and_method_at_their_line(name):
    report = parse(name)
    assert failed(report) == [
        ("org.apache.commons.cli.UtilTest.testStripLeadingHyphens", UTIL_TEST, 38),
        ("org.apache.commons.cli.UtilTest.testStripLeadingAndTrailingQuotes", UTIL_TEST, 32),
    ]
    assertion, exception = report.failures
    assert assertion.message == "org.junit.ComparisonFailure: expected:<foo[o]> but was:<foo[]>"
    assert (assertion.expected, assertion.received) == ("foo[o]", "foo[]")
    assert exception.message == "java.lang.IllegalStateException: boom"
    assert (exception.expected, exception.received) == (None, None)
    assert "at org.apache.commons.cli.UtilTest.testStripLeadingHyphens(UtilTest.java:38)" in assertion.stack
    # `Tests run: 448, Failures: 1, Errors: 1, Skipped: 59`: the passing and skipped ones go unnamed.
    assert (report.counts.total, report.counts.passed, report.counts.failed, report.counts.skipped) == \
        (448, 387, 2, 59)
    assert [t.name for t in report.tests if t.status == "failed"] == [f.test for f in report.failures]
    assert report.tests[-1].name == "(passed test 387)"
    assert located(report) == [("surefire", "error", UTIL_TEST, 38, None, None),
                               ("surefire", "error", UTIL_TEST, 32, None, None)]
    assert report.diagnostics[0].test == "org.apache.commons.cli.UtilTest.testStripLeadingHyphens"


@pytest.mark.parametrize("name", ["3.8.7-compile-error.txt", "3.8.7-q-compile-error.txt"])
def test_a_compile_failure_is_told_apart_from_failing_tests(name):
    report = parse(name)
    # Maven prints each error twice (the COMPILATION ERROR block, then the failed goal's): once here.
    assert located(report) == [("javac", "error", UTIL, 56, 20, None), ("javac", "error", UTIL, 59, 34, None)]
    assert report.diagnostics[0].message == \
        "cannot find symbol\nsymbol:   variable strng\nlocation: class org.apache.commons.cli.Util"
    assert report.diagnostics[1].message == "incompatible types: possible lossy conversion from long to int"
    assert report.counts is None and report.failures == [] and report.tests == []


def test_plain_javac_with_its_carets_and_notes():
    report = parse("javac-17.0.15.txt", roots=[])
    assert located(report) == [
        ("javac", "error", UTIL, 56, 20, None),
        ("javac", "error", UTIL, 59, 34, None),
        ("javac", "warning", "src/main/java/org/apache/commons/cli/Parser.java", 346, 32, "unchecked"),
        ("javac", "warning", "src/main/java/org/apache/commons/cli/Parser.java", 346, 74, "unchecked"),
        ("javac", "warning", "src/main/java/org/apache/commons/cli/DefaultParser.java", 701, 24, "unchecked"),
        ("javac", "warning", "src/main/java/org/apache/commons/cli/DefaultParser.java", 701, 66, "unchecked"),
    ]
    assert report.diagnostics[0].message == "cannot find symbol\nsymbol:   variable strng\nlocation: class Util"
    assert report.diagnostics[3].message.splitlines() == [
        "[unchecked] unchecked conversion", "required: Collection<? extends E>", "found:    List",
        "where E is a type-variable:", "E extends Object declared in class ArrayList"]
    assert report.error_count == 2 and report.counts is None


def test_checkstyle_findings():
    report = parse("3.8.7-checkstyle-3.3.0.txt")
    assert located(report) == [("checkstyle", "error", UTIL, 24, 5, "JavadocVariable"),
                               ("checkstyle", "error", UTIL, 24, 24, "StaticVariableName"),
                               ("checkstyle", "error", UTIL, 57, 37, "NoWhitespaceBefore")]
    assert report.diagnostics[1].message == "Name 'Bad_Name' must match pattern '^[a-z][a-zA-Z0-9]*$'."
    assert report.counts is None


def test_spotbugs_findings_are_placed_in_the_class_source():
    report = parse("3.8.7-spotbugs-4.7.3.6.txt")
    assert located(report) == [("spotbugs", "error", UTIL, 25, None, "ES_COMPARING_PARAMETER_STRING_WITH_EQ")]
    assert report.diagnostics[0].message == ("Medium: Comparison of String parameter using == or != in "
                                             "org.apache.commons.cli.Util.sameText(String, String)")


@pytest.mark.parametrize("name", ["3.8.7-surefire-2.22.2-testng-multimodule-fae.txt",
                                  "3.8.7-surefire-2.22.2-testng-multimodule-q-fae.txt"])
def test_each_module_s_failures_are_placed_in_that_module(name):
    # Two modules each have a FailsafeCallTest; `-fae` ran both. TestNG under this project's listener
    # groups a class's failures as reruns (`Run 6: …`); `testCancel` failed for real in both (its socket
    # closed before the expected IOException), the others are the faults put in.
    report = parse(name)
    assert failed(report) == [
        ("dev.failsafe.okhttp.FailsafeCallTest.testCancel", OKHTTP, 176),
        ("dev.failsafe.okhttp.FailsafeCallTest.testRetryPolicyOn400", OKHTTP, 77),  # the assertion's lambda
        ("dev.retrofit.FailsafeCallTest.testCancel", RETROFIT, 191),
        ("dev.retrofit.FailsafeCallTest.testSuccess", RETROFIT, 67),
    ]
    on400 = report.failures[1]
    assert (on400.message, on400.expected, on400.received) == ("expected [4] but found [3]", "4", "3")
    assert report.failures[3].message == "IllegalState boom"
    # Surefire counted one failed "test" per module for these grouped classes; the named ones count.
    assert (report.counts.total, report.counts.failed, report.counts.passed) == (4, 4, 0)


KOTLIN = "/tmp/rec-jvm/jmk"
KOTLIN_MAIN = "src/main/kotlin/com/fasterxml/jackson/module/kotlin"


def test_kotlin_compile_errors_are_read_once_in_both_shapes():
    # `Exceptions.kt: (40, 50) …` from the compiler, `Exceptions.kt:[40,50] …` in the failed goal's block.
    report = parse("3.8.7-kotlin-1.8.10-compile-error.txt", roots=[KOTLIN])
    assert located(report) == [("kotlinc", "error", f"{KOTLIN_MAIN}/Exceptions.kt", 40, 50, None)]
    assert report.diagnostics[0].message == "Unresolved reference: msgg"
    assert report.counts is None


def test_kotlin_tests_are_placed_in_src_test_kotlin():
    report = parse("3.8.7-kotlin-1.8.10-surefire-3.4.0-test.txt", roots=[KOTLIN])
    dsl = "src/test/kotlin/com/fasterxml/jackson/module/kotlin/DslTest.kt"
    assert failed(report) == [
        ("com.fasterxml.jackson.module.kotlin.DslTest.createModuleWithBuilderOptions", dsl, 42),
        ("com.fasterxml.jackson.module.kotlin.DslTest.createModuleWithEmptyInitializer", dsl, 27),
    ]
    assert (report.failures[0].expected, report.failures[0].received) == ("124", "123")
    assert report.failures[1].message == "java.lang.IllegalStateException: boom"
    assert (report.counts.total, report.counts.passed, report.counts.failed) == (6, 4, 2)
    # The compiler's 30 warnings (deprecations the project has, and the fault's always-false condition).
    warnings = [d for d in report.diagnostics if d.tool == "kotlinc"]
    assert len(warnings) == 30 and {d.severity for d in warnings} == {"warning"}
    assert (warnings[0].file, warnings[0].line, warnings[0].column) == (f"{KOTLIN_MAIN}/Converters.kt", 54, 19)
    assert report.error_count == 2


def test_a_build_that_fails_before_compiling_says_why():
    # Commons CLI's newest tree: its parent's enforcer rule wants Maven 3.9.
    report = parse("3.8.7-enforcer-requires-3.9.txt")
    assert [(d.tool, d.file, d.severity) for d in report.diagnostics] == [("maven", None, "error")]
    assert report.diagnostics[0].message.splitlines() == [
        "Failed to execute goal org.apache.maven.plugins:maven-enforcer-plugin:3.6.3:enforce "
        "(enforce-maven-version) on project commons-cli:",
        "Rule 0: org.apache.maven.enforcer.rules.version.RequireMavenVersion failed with message:",
        "Detected Maven Version: 3.8.7 is not in the allowed range [3.9,).",
    ]
    assert report.counts is None


def test_nothing_of_maven_in_the_text_claims_nothing():
    report = parse_report("maven", "")
    assert report.diagnostics == [] and report.counts is None
    assert "maven" in TEST_RUNNER_FORMATS


def test_surefire_xml_reads_as_junit_with_names_and_skipped_tests():
    report = parse("surefire-3.1.2-TEST-PosixParserTest.xml", fmt="junit")
    assert (report.counts.total, report.counts.passed, report.counts.skipped) == (64, 54, 10)
    assert "org.apache.commons.cli.PosixParserTest.testAmbiguousLongWithoutEqualSingleDash" in \
        [t.name for t in report.tests if t.status == "skipped"]
    failing = parse("surefire-3.1.2-TEST-UtilTest.xml", fmt="junit")
    assert [(f.test, f.message) for f in failing.failures] == [
        ("org.apache.commons.cli.UtilTest.testStripLeadingAndTrailingQuotes", "boom"),
        ("org.apache.commons.cli.UtilTest.testStripLeadingHyphens", "expected:<foo[o]> but was:<foo[]>"),
    ]


def test_surefire_xml_failures_are_placed_in_the_java_test_file():
    failing = parse("surefire-3.1.2-TEST-UtilTest.xml", roots=[CLI], fmt="junit")
    assert [(f.file, f.line) for f in failing.failures] == [(UTIL_TEST, 32), (UTIL_TEST, 38)]


def test_docstring_examples_hold():
    result = doctest.testmod(maven, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
