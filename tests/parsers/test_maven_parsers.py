"""The maven parser (Maven's output and plain javac's) and the junit parser on Surefire's XML, on real reports.

The reports were recorded from Apache Commons CLI 1.6.0 (one module, JUnit 4 and 5 under Surefire 3.1.2),
Failsafe 3.3.3-SNAPSHOT (a multi-module build, TestNG under Surefire 2.22.2) and jackson-module-kotlin
2.18.4 (Kotlin 1.8.10, JUnit 4 under Surefire 3.4.0) with faults put in, and from the feedback
benchmark's Java projects (java-classmate, spring-petclinic, jsonschema-generator: Surefire 3.5.4);
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


CLASSMATE = "/tmp/rec-java/java-classmate"
ARRAY_TYPE = "src/main/java/com/fasterxml/classmate/types/ResolvedArrayType.java"
ARRAY_TYPE_TEST = "src/test/java/com/fasterxml/classmate/types/ResolvedArrayTypeTest.java"


def test_an_exception_thrown_in_the_code_a_test_calls_is_placed_where_it_was_thrown():
    # java-classmate (tests/fixtures/feedback/classmate, `mvn test`): `ResolvedArrayType.java:114` throws
    # in two tests (one through `appendFullDescription`); the third is an assertion in its test.
    report = parse("3.8.7-surefire-3.5.4-classmate-test.txt", roots=[CLASSMATE])
    assert failed(report) == [
        ("com.fasterxml.classmate.TestTypeDescriptions.testPrimitiveTypes",
         "src/test/java/com/fasterxml/classmate/TestTypeDescriptions.java", 66),
        ("com.fasterxml.classmate.types.ResolvedArrayTypeTest.appendBriefDescription", ARRAY_TYPE, 114),
        ("com.fasterxml.classmate.types.ResolvedArrayTypeTest.appendFullDescription", ARRAY_TYPE, 114),
    ]
    brief, full = report.failures[1:]
    assert brief.message == ("java.lang.IllegalStateException: unexpected space in array description: "
                             f"Existing java.lang.Object (called from {ARRAY_TYPE_TEST}:155)")
    assert full.message.endswith(f"(called from {ARRAY_TYPE_TEST}:182)")
    assert (report.failures[0].expected, report.failures[0].received) == ("[B]", "[Z]")
    assert (report.counts.total, report.counts.failed) == (260, 3)


@pytest.mark.parametrize(("stack", "origin"), [
    # the test's own frame first: an assertion failed in the test
    ("\tat org.junit.Assert.fail(Assert.java:89)\n\tat a.b.c.FooTest.t(FooTest.java:9)", None),
    # a library's frame, then the test's
    ("\tat java.util.Objects.requireNonNull(Objects.java:209)\n\tat a.b.c.FooTest.t(FooTest.java:9)", None),
    # the project's code, called from a test helper: the code, not the helper
    ("\tat a.b.c.impl.Foo.run(Foo.java:12)\n\tat a.b.c.AbstractBaseTest.call(AbstractBaseTest.java:40)\n"
     "\tat a.b.c.FooTest.t(FooTest.java:9)", ("core/src/main/java/a/b/c/impl/Foo.java", 12)),
    # another package of the same vendor is a library (two shared names are not enough)
    ("\tat a.b.other.Foo.run(Foo.java:12)\n\tat a.b.c.FooTest.t(FooTest.java:9)", None),
    # wrapped (MockMvc's ServletException): the root cause's frames decide
    ("\tat a.b.web.Dispatcher.run(Dispatcher.java:5)\n\tat a.b.c.FooTest.t(FooTest.java:9)\n"
     "Caused by: java.lang.NullPointerException: x\n\tat a.b.c.Validator.check(Validator.kt:7)\n\t... 3 more",
     ("core/src/main/kotlin/a/b/c/Validator.kt", 7)),
])
def test_where_a_test_s_exception_came_from(stack, origin):
    assert maven.jvm_origin("a.b.c.FooTest", stack, "core") == origin


PETCLINIC = "/tmp/rec-java/spring-petclinic"
OWNER = "org/springframework/samples/petclinic/owner"


def test_assertj_messages_nested_test_classes_and_wrapped_exceptions():
    # spring-petclinic (tests/fixtures/feedback/spring-petclinic, `mvn -q test`): an AssertJ assertion, whose
    # message has a blank line in it; `PetValidator.java:51` throwing in a `@Nested` class's test (Surefire's
    # summary then names no line) and, wrapped in MockMvc's ServletException, in a controller's (nested) test.
    report = parse("3.8.7-surefire-3.5.4-petclinic-q-test.txt", roots=[PETCLINIC])
    validator = f"src/main/java/{OWNER}/PetValidator.java"
    assert failed(report) == [
        ("org.springframework.samples.petclinic.owner.PetTypeFormatterTests.testPrint",
         f"src/test/java/{OWNER}/PetTypeFormatterTests.java", 60),
        # `@Nested` classes' tests, named by the nested class as the XML names them (Surefire's summary and
        # blocks name the outer one, which `-Dtest=` would select none of their tests by)
        ("org.springframework.samples.petclinic.owner.PetControllerTests$ProcessUpdateFormHasErrors."
         "processUpdateFormWithInvalidBirthDate", validator, 51),
        ("org.springframework.samples.petclinic.owner.PetValidatorTests$ValidateHasErrors."
         "validateWithInvalidBirthDate", validator, 51),
    ]
    assertion, wrapped, nested = report.failures
    assert assertion.message == 'org.opentest4j.AssertionFailedError:\nexpected: "Gerbil"\n but was: "Hamster"'
    assert (assertion.expected, assertion.received) == ("Gerbil", "Hamster")
    assert wrapped.message.startswith("jakarta.servlet.ServletException: Request processing failed: "
                                      "java.lang.NullPointerException: ")
    assert wrapped.message.endswith(f"(called from src/test/java/{OWNER}/PetControllerTests.java:188)")
    assert nested.message.endswith(f"(called from src/test/java/{OWNER}/PetValidatorTests.java:110)")
    assert (report.counts.total, report.counts.failed) == (55, 3)


VICTOOLS = "/tmp/rec-java/jsonschema-generator"
JACKSON_TEST = ("jsonschema-module-jackson/src/test/java/com/github/victools/jsonschema/module/jackson/"
                "JsonPropertySorterTest.java")


@pytest.mark.parametrize("name", ["3.8.7-surefire-3.5.4-multimodule-q-test.txt",
                                  "3.8.7-surefire-3.5.4-multimodule-fae-test.txt"])
def test_surefire_3_5_names_the_failing_module_s_reports_folder(name):
    # jsonschema-generator (tests/fixtures/feedback/jsonschema-generator): `mvn -q test` says which module
    # failed only in Surefire 3.5's `See /abs/module/target/surefire-reports for the individual test results.`
    report = parse(name, roots=[VICTOOLS])
    assert failed(report) == [("com.github.victools.jsonschema.module.jackson.JsonPropertySorterTest."
                               "testPropertySortingAlphabeticallyByDefault", JACKSON_TEST, 66)]
    if "fae" in name:  # `-fae` went on to the Swagger 2 module, which does not compile
        assert [(d.tool, d.file, d.line) for d in report.diagnostics if d.severity == "error"][0] == (
            "javac", "jsonschema-module-swagger-2/src/main/java/com/github/victools/jsonschema/module/swagger2/"
                     "Swagger2SchemaDefinitionNamingStrategy.java", 52)
        assert report.error_count == 2


def test_checkstyle_s_audit_line_names_the_module_once():
    # Checkstyle's own `/abs/module/src/…/MethodScope.java:76:9: … [NeedBraces]` and the plugin's
    # `src/…/MethodScope.java:[76,9] (blocks) NeedBraces: …` (relative to the module): one finding.
    report = parse("3.8.7-checkstyle-12.3.0-multimodule-verify.txt", roots=[VICTOOLS])
    assert [d for d in located(report) if d[0] == "checkstyle"] == [
        ("checkstyle", "error", "jsonschema-generator/src/main/java/com/github/victools/jsonschema/generator/"
                                "MethodScope.java", 76, 9, "NeedBraces")]
    assert report.diagnostics[0].message == "'if' construct must use '{}'s."
    assert report.error_count == 1


def test_docstring_examples_hold():
    result = doctest.testmod(maven, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
