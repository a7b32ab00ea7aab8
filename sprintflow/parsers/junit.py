"""JUnit XML as pytest ``--junitxml`` writes it (xunit2 by default, xunit1 with file/line), and as Surefire,
Failsafe, Gradle and cargo nextest write it (Surefire's reports may come one after another, one per class)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from sprintflow.errors import ReportError

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    expected_received,
    failure_report,
    innermost_frame,
    relativise,
    report_parser,
)
from .cargo import RUST_PANIC
from .maven import JVM_FRAME, jvm_expected_received, jvm_origin, test_file

__all__ = ["parse_junit_xml"]


@report_parser("junit", counts_tests=True)
def parse_junit_xml(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse a JUnit XML report: ``<failure>`` and ``<error>`` fail a test, ``<skipped>`` skips it.

    A collection error (a test module that failed to import) is an ``<error>``
    testcase of its own, so it is counted and reported as a failure too.

    Example:
        >>> report = parse_junit_xml(
        ...     '<testsuite><testcase classname="tests.test_api" name="test_404">'
        ...     '<failure message="assert 500 == 404">tests/test_api.py:13: AssertionError'
        ...     '</failure></testcase></testsuite>')
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('tests.test_api.test_404', 'tests/test_api.py', 13, '404', '500')
    """
    if not text.strip():
        raise ReportError("junit report is empty; expected the XML of `pytest --junitxml=FILE`")
    try:
        root = _document(text)
    except ET.ParseError as exc:
        raise ReportError(f"junit report is not valid XML ({exc}); it starts with "
                          f"{text.strip()[:60]!r}") from exc
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(f"junit report should have <testsuites> or <testsuite> at its root, "
                          f"not <{root.tag}>")
    tests: list[TestCase] = []
    failures: list[TestFailure] = []
    modules = _modules(root, roots)
    for case in root.iter("testcase"):
        problem = case.find("failure")
        problem = problem if problem is not None else case.find("error")
        if problem is not None:
            failures.append(_failure(case, problem, roots, modules.get(case, "")))
            # pytest reports a test module that failed to import as a testcase with this error.
            collection = problem.tag == "error" and problem.get("message") == "collection failure"
            tests.append(TestCase(_name(case), "load_error" if collection else "failed", _declared_file(case, roots)))
        else:
            tests.append(TestCase(_name(case), "skipped" if case.find("skipped") is not None else "passed",
                                  _declared_file(case, roots)))
    return failure_report("junit", tests, failures)


_DECLARATION = re.compile(r"<\?xml[^>]*\?>")


def _document(text: str) -> ET.Element:
    """The report's root; reports put one after another (``cat target/surefire-reports/TEST-*.xml``: one
    document per test class) are read as the ``<testsuites>`` of them all."""
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        if "junk after document element" not in str(exc):
            raise
        joined = ET.fromstring(f"<testsuites>{_DECLARATION.sub('', text)}</testsuites>")
        if any(child.tag not in ("testsuites", "testsuite") for child in joined):
            raise  # not reports one after another: say what was wrong with the first
        return joined


def _name(case: ET.Element) -> str:
    classname, name = case.get("classname") or "", case.get("name") or ""
    return f"{classname}.{name}" if classname else name


def _modules(root: ET.Element, roots: Roots) -> dict[ET.Element, str]:
    """Each testcase's Maven module: the folder of its suite's ``basedir`` property (Surefire writes the
    module's directory there), relative to the workspace; none for the root module or another runner."""
    found: dict[ET.Element, str] = {}
    for suite in root.iter("testsuite"):
        basedir = next((prop.get("value") or "" for prop in suite.iter("property") if prop.get("name") == "basedir"),
                       "")
        folder = relativise(basedir, roots) if basedir else ""
        if folder.startswith("/"):
            continue  # the root module, or a folder outside the workspace
        for case in suite.findall("testcase"):
            found[case] = folder
    return found


def _failure(case: ET.Element, problem: ET.Element, roots: Roots, module: str = "") -> TestFailure:
    stack = problem.text or ""
    # pytest's own "E" lines say more than its message attribute ("collection failure").
    message = _error_lines(stack) or (problem.get("message") or "").strip() or stack.strip()
    file, line = _declared_location(case, roots)
    frame = innermost_frame(stack, roots)
    if frame:
        file, line = frame[0], frame[1]
    expected, received = expected_received(f"{message}\n{stack}")
    if jvm := _jvm_frame(case, stack, module):  # Surefire, Failsafe, Gradle: the test class's own frame
        file, line = jvm
        expected, received = jvm_expected_received(message)
        if origin := jvm_origin(case.get("classname") or "", stack, module):  # thrown in the code the test calls
            message += f" (called from {file}:{line})"
            file, line = origin
    elif panic := RUST_PANIC.search(stack):  # cargo nextest: where the test panicked
        file, line = relativise(panic["file"], roots), int(panic["line"])
    return TestFailure(test=_name(case), message=message,
                       file=file, line=line, expected=expected, received=received, stack=stack,
                       test_id=_pytest_id(case))


def _jvm_frame(case: ET.Element, stack: str, module: str = "") -> tuple[str, int] | None:
    """Where a JVM test failed: the innermost frame of its own class (``at x.FooTest.testBar(FooTest.java:23)``),
    in the source folder Maven and Gradle keep tests in (``src/test/java``, ``src/test/kotlin``)."""
    classname = (case.get("classname") or "").split("$", 1)[0]
    for frame in JVM_FRAME.finditer(stack):
        if classname and frame["cls"].split("$", 1)[0] == classname:
            return test_file(classname, module, frame["file"]), int(frame["line"])
    return None


def _pytest_id(case: ET.Element) -> str | None:
    """pytest's node id of a case it wrote (``tests.test_a.TestB`` + ``test_c`` ->
    ``tests/test_a.py::TestB::test_c``); None for another runner's case."""
    parts = (case.get("classname") or "").split(".")
    classes: list[str] = []
    while len(parts) > 1 and parts[-1][:1].isupper():
        classes.insert(0, parts.pop())
    module = parts[-1]
    if not (module.startswith("test_") or module.endswith("_test")) or " " in "".join(parts):
        return None
    return "::".join(["/".join(parts) + ".py", *classes, case.get("name") or ""])


def _error_lines(stack: str) -> str:
    """pytest's ``E   …`` lines: the error itself, without the traceback around it."""
    return "\n".join(ln[1:].strip() for ln in stack.splitlines() if ln.startswith("E "))


def _declared_file(case: ET.Element, roots: Roots) -> str:
    return _declared_location(case, roots)[0]


def _declared_location(case: ET.Element, roots: Roots) -> tuple[str, int | None]:
    """Where the test is declared: xunit1's file/line, else a path derived from the classname."""
    if case.get("file"):
        # pytest writes the 0-based line of the `def`.
        line = case.get("line")
        return relativise(case.get("file") or "", roots), int(line) + 1 if line else None
    # `tests.test_api.TestStatus` -> tests/test_api.py; a collection error names the module.
    dotted = case.get("classname") or case.get("name") or ""
    parts = dotted.split(".")
    while len(parts) > 1 and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts) + ".py", None
