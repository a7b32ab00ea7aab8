"""Maven's own output (``mvn test``, ``mvn -q verify``, ``mvn -B compile`` …) and plain ``javac``'s.

What a Maven build prints that locates a fault:

- the compiler (maven-compiler-plugin): ``[ERROR] /abs/src/main/java/x/Foo.java:[12,5] cannot find symbol``,
  with javac's ``symbol:``/``location:`` lines below (bare in the ``COMPILATION ERROR`` block, under
  ``[ERROR]`` again in the closing ``Failed to execute goal`` block, which repeats every error);
  kotlin-maven-plugin's ``[ERROR] /abs/Foo.kt: (12, 5) message`` (1.x) or ``file:///abs/Foo.kt:12:5 message``
  (2.x), repeated as ``Foo.kt:[12,5]`` in that block;
- Surefire and Failsafe: a block per failing test (``[ERROR] x.FooTest.testBar -- Time elapsed: … <<<
  FAILURE!``, or ``[ERROR] testBar(x.FooTest)  Time elapsed: …`` before Surefire 3) with its stack trace,
  then the ``Results:`` summary, ``[ERROR] Failures:`` / ``[ERROR] Errors:`` with one line per test
  (``  FooTest.testBar:23 expected:<1> but was:<2>``: the class's simple name, the line in the test file,
  the message) and the totals, ``Tests run: N, Failures: F, Errors: E, Skipped: S``;
- Checkstyle (maven-checkstyle-plugin): ``[ERROR] src/main/java/x/Foo.java:[12,5] (naming) MemberName: …``;
- SpotBugs (spotbugs-maven-plugin): ``[ERROR] Medium: … [x.Foo] At Foo.java:[line 12] BUG_CODE``, placed in
  ``src/main/java/<package>/``. Both plugins name files relative to their module, and are read so.

Plain ``javac`` prints ``Foo.java:12: error: cannot find symbol``, the source line, a caret under the
column, and the same ``symbol:`` lines; this parser reads that too (``javac`` commands use it).

A failing test is named ``package.Class.method``, as Surefire's XML report names it (JUnit XML:
``classname`` + ``name``), so a test reads the same from both. Its location is the test's source,
``src/test/java/<package>/<Class>.java`` (``src/test/kotlin/<package>/<File>.kt`` when its stack trace
names a Kotlin file) in the module that ran it: the closing ``Please refer to
/abs/module/target/surefire-reports`` line of that module (``See …`` since Surefire 3.5) says which (a
multi-module build with ``-fae`` prints one per failing module, in build order). The summary line gives
the line: of the frames Surefire lists (``testX:76->Steps.run:30->lambda$testX$2:77``), the innermost one
in the test class itself (the stack trace's, for a ``@Nested`` class's test, where the summary has none).

A compile failure is told apart from failing tests: its findings come from ``javac`` (the tests never
ran, so no counts are claimed), while a test run's come from ``surefire`` with counts from the totals;
passing tests are not named in Maven's output, so they are counted as unnamed ones.

A test that got an exception thrown by the project's own code (the root cause's innermost frame above the
test's, of the test's project and not test code: :func:`jvm_origin`) is placed where it was thrown,
``src/main/java/<package>/<File>.java`` of the test's module, and its message says which test line called it
(``(called from src/test/java/x/FooTest.java:30)``), as Go's panics are; an assertion stays at the test's line.
Checkstyle's own audit lines (``/abs/module/src/…/Foo.java:12:5: message [Check]``, with ``consoleOutput``)
name the module's folder that the plugin's summary line leaves out: a finding both print is one, placed so.

The XML reports (``target/surefire-reports/TEST-*.xml``, one file per test class) name every test: the
``junit`` format reads one of them (or several put one after another, ``cat …/TEST-*.xml``; each suite's
``basedir`` property says its module), but a strategy reads one report and the command writes many, so
for ``mvn`` commands this output is read instead: it covers every module and every class at once, and it
is the only one that explains a compile failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from sprintflow.schemas.evaluation import Diagnostic

from ._common import (
    ParsedReport,
    Roots,
    TestCase,
    TestFailure,
    TestStatus,
    _root_list,
    failure_report,
    relativise,
    report_parser,
    text_lines,
)

__all__ = ["JVM_FRAME", "jvm_expected_received", "jvm_origin", "parse_maven", "test_file"]

_LEVEL = re.compile(r"^\[(?P<level>ERROR|WARNING|WARN|INFO|DEBUG)\] ?")
_SOURCE = r"(?P<file>[^\s\[:][^\[:]*?\.(?:java|kts?|groovy|scala))"
# maven-compiler-plugin and Checkstyle: `Foo.java:[12,5] message` (Checkstyle may leave out the column).
_LOCATED = re.compile(_SOURCE + r":\[(?P<line>\d+)(?:,(?P<col>\d+))?\] (?P<message>.+)$")
# kotlin-maven-plugin: `file:///abs/Foo.kt:12:5 message` (2.x), `/abs/Foo.kt: (12, 5) message` (1.x).
_KOTLIN = re.compile(r"^(?P<file>(?:file://)?/?[^\s:][^:]*?\.kts?)(?::(?P<line>\d+):(?P<col>\d+)|: \((?P<line1>\d+), "
                     r"(?P<col1>\d+)\)) (?P<message>.+)$")
_CHECKSTYLE = re.compile(r"^\((?P<category>[\w.]+)\) (?P<check>\w+): (?P<message>.+)$")
# Checkstyle's own audit line (the plugin's `consoleOutput`): `/abs/module/src/…/Foo.java:12:5: message [Check]`,
# the one shape that names the module's folder; the plugin's summary line below it names the file in the module.
_AUDIT = re.compile(r"^(?P<file>/[^:]+?\.java):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<message>.+) \[(?P<check>\w+)\]$")
_JAVAC_CODE = re.compile(r"^\[(?P<code>[\w-]+)\] ")
_JAVAC = re.compile(_SOURCE + r":(?P<line>\d+): (?P<severity>error|warning): (?P<message>.+)$")
_CARET = re.compile(r"^(?P<pad>\s*)\^\s*$")
_SPOTBUGS = re.compile(r"^(?P<rank>High|Medium|Low): (?P<message>.+) \[(?P<cls>[\w.$]+)\] (?:At|In) "
                       r"(?P<file>[\w$]+\.java)(?::\[lines? (?P<line>\d+)(?:-\d+)?\])? (?P<code>[A-Z][A-Z0-9_]+)$")
# Surefire 3: `x.FooTest.testBar -- Time elapsed: 0.01 s <<< FAILURE!`; 2.x: `testBar(x.FooTest)  Time …`.
_BLOCK = re.compile(r"^(?:(?P<method>[^\s(]*)\((?P<cls>[\w.$]+)\)|(?P<name>\S+?))(?: --|\s) ?\s*Time elapsed: "
                    r".*<<< (?:FAILURE|ERROR)!$")
_CLASS_RUN = re.compile(r"^Tests run: \d+, .*<<< (?:FAILURE|ERROR)! -+ in (?P<cls>[\w.$]+)$")
_TOTALS = re.compile(r"^Tests run: (?P<run>\d+), Failures: (?P<failures>\d+), Errors: (?P<errors>\d+), "
                     r"Skipped: (?P<skipped>\d+)(?:, Flakes: \d+)?$")
_SECTION = re.compile(r"^(?P<kind>Failures|Errors|Flakes): ?$")
# `  FooTest.testBar:23 msg`, `  FooTest.testX:76->Steps.run:30->lambda$testX$2:77 msg`, `  Run 2: …`.
_ENTRY = re.compile(r"^\s+(?:Run \d+: )?(?P<cls>[\w$]+)\.(?P<method>[^\s:>]+?)(?::(?P<line>\d+))?"
                    r"(?P<chain>->\S*)?(?:\s+(?P<message>.*))?$")
# A rerun group's head (`x.FooTest.testBar`; TestNG's `x.FooTest.(x.FooTest)`): the class's package.
_GROUP = re.compile(r"^(?P<cls>[\w.$]+)\.(?P<method>[^\s.(]*)(?:\([\w.$]*\))?$")
_HOP = re.compile(r"^(?:(?P<cls>[\w$]+)\.)?(?P<method>[^\s:]+):(?P<line>\d+)$")
_PROJECT = re.compile(r"^--- [\w.-]+:[\w.-]+:\S+ \([^)]*\) @ (?P<artifact>[\w.-]+) ---$")
_FAILED_ON = re.compile(r"^Failed to execute goal .* on project (?P<artifact>[\w.-]+): (?P<why>.*)$")
# `Please refer to /abs/target/surefire-reports for …` (Surefire before 3.5), `See /abs/target/… for the
# individual test results.` (3.5).
_REPORTS_DIR = re.compile(r"^(?:Please refer to|See) (?P<dir>\S+?)/target/(?:surefire|failsafe)-reports for ")
JVM_FRAME = re.compile(r"^\s+at (?:[\w.-]+/)?(?P<cls>[\w.$]+)\.[^.(\s]+\((?P<file>[\w$]+\.(?:java|kt)):(?P<line>\d+)\)",
                       re.MULTILINE)
"""A JVM stack frame (``at x.FooTest.testBar(FooTest.java:23)``), for Maven's output and Surefire's XML."""
_EXPECTED = re.compile(r"expected:? ?(?:<(?P<e1>.*?)>|\[(?P<e2>.*?)\]),? but (?:was|found):? ?"
                       r"(?:<(?P<r1>.*)>|\[(?P<r2>.*)\])")
# AssertJ: `expected: "Gerbil"` and ` but was: "Hamster"` on lines of their own.
_ASSERTJ = re.compile(r"^expected: (?P<e>.+)\n\s*but was: (?P<r>.+)$", re.MULTILINE)

_MAX_UNNAMED = 100_000
Severity = Literal["error", "warning"]


@dataclass
class _Entry:
    """One failing test as the ``Results:`` summary names it."""

    cls: str
    method: str
    line: int | None
    message: str
    section: int


@dataclass
class _Block:
    """One failing test's block before the summary: its full class name and stack trace."""

    cls: str
    method: str
    section: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Scan:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    entries: list[_Entry] = field(default_factory=list)
    blocks: list[_Block] = field(default_factory=list)
    packages: dict[tuple[int, str], str] = field(default_factory=dict)
    """(summary section, simple class name) -> full class name; two modules may each have a FooTest."""
    totals: list[tuple[int, int, int, int]] = field(default_factory=list)
    section_artifacts: list[str | None] = field(default_factory=list)
    module_dirs: dict[str, str] = field(default_factory=dict)
    ordered_dirs: list[str] = field(default_factory=list)
    goal_failures: list[str] = field(default_factory=list)


@report_parser("maven", counts_tests=True)
def parse_maven(text: str, roots: Roots = ()) -> ParsedReport:
    """Parse what Maven (or ``javac`` alone) printed.

    Example:
        >>> report = parse_maven(
        ...     "[ERROR] /w/src/main/java/x/Foo.java:[12,5] cannot find symbol\\n"
        ...     "[ERROR]   symbol:   variable y\\n[ERROR] -> [Help 1]\\n", ["/w"])
        >>> d = report.diagnostics[0]
        >>> d.tool, d.file, d.line, d.column, d.message, report.counts
        ('javac', 'src/main/java/x/Foo.java', 12, 5, 'cannot find symbol\\nsymbol:   variable y', None)
        >>> report = parse_maven(
        ...     "[ERROR] x.FooTest.testBar -- Time elapsed: 0.01 s <<< FAILURE!\\n"
        ...     "org.junit.ComparisonFailure: expected:<1> but was:<2>\\n\\n[ERROR] Failures: \\n"
        ...     "[ERROR]   FooTest.testBar:23 expected:<1> but was:<2>\\n[INFO] \\n"
        ...     "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 1\\n")
        >>> f = report.failures[0]
        >>> f.test, f.file, f.line, f.expected, f.received
        ('x.FooTest.testBar', 'src/test/java/x/FooTest.java', 23, '1', '2')
        >>> report.counts
        TestCounts(total=3, passed=1, failed=1, skipped=1)
    """
    scan = _scan(text_lines(text), roots)
    failures = _failures(scan, roots)
    diagnostics = _unique(scan.diagnostics)
    if not diagnostics and not failures and not scan.totals:
        # A build that failed before compiling or testing (a plugin that cannot run, a missing
        # dependency): what Maven says of the failed goal is the only explanation there is.
        diagnostics = [Diagnostic(tool="maven", message=why) for why in dict.fromkeys(scan.goal_failures)]
    if not failures and not scan.totals:
        return ParsedReport(diagnostics=diagnostics)
    report = failure_report("surefire", _tests(failures, scan.totals), failures)
    report.diagnostics = diagnostics + report.diagnostics
    return report


def _scan(lines: list[str], roots: Roots) -> _Scan:
    """One pass over the output: findings, summary entries, failing tests' blocks, totals, modules."""
    scan = _Scan()
    current: Diagnostic | None = None  # a finding whose message may go on in the lines below
    javac: list[str] | None = None  # plain javac's lines after a finding: source, caret, notes
    block: _Block | None = None
    section: str | None = None
    artifact: str | None = None
    failed_on: str | None = None
    reason = False  # in the lines that say why a goal failed
    entry_open = False  # after a summary entry, whose message may go on below it
    in_class = ""  # the class whose failing tests' blocks follow (`Tests run: … <<< FAILURE! -- in x.FooTest`)
    for raw in lines:
        level = _LEVEL.match(raw)
        line = raw[level.end():] if level else raw
        severity: Severity = "warning" if level and level["level"] in ("WARNING", "WARN", "INFO") else "error"
        if javac is not None and current is not None and not level and (not javac or raw[:1].isspace() or
                                                                          _CARET.match(raw)):
            javac.append(raw)
            current = _with_javac_lines(current, javac)
            scan.diagnostics[-1] = current
            continue
        javac = None
        if current is not None and re.match(r"^\s+[a-z][\w ]*:", line) and section is None:
            current = current.model_copy(update={"message": f"{current.message}\n{line.strip()}"})
            scan.diagnostics[-1] = current
            continue
        current = None
        reason = reason and bool(level and line.strip()) and not line.startswith("-> [Help")
        if block is not None and not level:
            # AssertJ's message has a blank line in it (`AssertionFailedError: `, ``, `expected: "x"`): a blank
            # line ends the block only after its stack frames began (or a message of 20 lines without any).
            if line.strip() or (len(block.lines) < 20 and not any(JVM_FRAME.match(text) for text in block.lines)):
                block.lines.append(line)
                continue
            block = None
        if entry_open and not level and line.strip() and section:
            scan.entries[-1].message += f"\n{line.strip()}"  # a message of several lines (AssertJ's)
            continue
        entry_open = False
        if found := _finding(line, severity, roots):
            scan.diagnostics.append(found)
            current, section = found, None
        elif not level and (plain := _JAVAC.match(line)):
            current = Diagnostic(tool="javac", message=plain["message"], file=relativise(plain["file"], roots),
                                 line=int(plain["line"]), code=_code(plain["message"]),
                                 severity="error" if plain["severity"] == "error" else "warning")
            scan.diagnostics.append(current)
            javac = []
        elif level and (head := _BLOCK.match(line)):
            block = _block(head, len(scan.totals))
            if in_class.startswith(f"{block.cls}$"):
                # JUnit 5's `@Nested` class: Surefire's block names the outer class, its class line the
                # nested one, which `-Dtest=` must name (the outer one selects none of its tests).
                block.cls = in_class
            scan.blocks.append(block)
            section = None
        elif level and (run := _CLASS_RUN.match(line)):
            _learn_package(scan, run["cls"])
            in_class = run["cls"]
        elif level and (totals := _TOTALS.match(line)):
            scan.totals.append((int(totals["run"]), int(totals["failures"]), int(totals["errors"]),
                                int(totals["skipped"])))
            scan.section_artifacts.append(artifact)
            section = None
        elif level and (kind := _SECTION.match(line)):
            section = kind["kind"]
        elif level and section and (entry := _ENTRY.match(line)) and not line.strip().endswith(": PASS"):
            if section != "Flakes":  # a flaky test passed in the end
                scan.entries.append(_entry(entry, len(scan.totals)))
                entry_open = True
        elif level and section and (group := _GROUP.match(line.strip())):
            _learn_package(scan, group["cls"])
        elif level and (project := _PROJECT.match(line)):
            artifact, section = project["artifact"], None
        elif level and (failed := _FAILED_ON.match(line)):
            failed_on = failed["artifact"]
            scan.goal_failures.append(line.strip())
            reason = True
        elif reason and level and line.strip() and not _REPORTS_DIR.match(line) and \
                not line.startswith(("-> [Help", "Please refer", "See dump files")):
            scan.goal_failures[-1] += f"\n{line.strip()}"  # the goal's reason (an enforcer rule's message)
            continue
        elif level and (reports := _REPORTS_DIR.match(line)):
            folder = relativise(reports["dir"], roots)
            folder = "" if folder.startswith("/") and folder.rstrip("/") in \
                [root.rstrip("/") for root in _root_list(roots)] else folder  # the root module
            scan.ordered_dirs.append(folder)
            if failed_on:
                scan.module_dirs[failed_on] = folder
    return scan


def _finding(line: str, severity: Severity, roots: Roots) -> Diagnostic | None:
    """A located compiler, Checkstyle or SpotBugs finding on a Maven log line."""
    if located := _LOCATED.match(line):
        file = relativise(located["file"], roots)
        column = int(located["col"]) if located["col"] else None
        if check := _CHECKSTYLE.match(located["message"]):
            return Diagnostic(tool="checkstyle", message=check["message"], file=file, line=int(located["line"]),
                              column=column, code=check["check"], severity=severity)
        # The failed goal's block repeats Kotlin's errors in the compiler plugin's shape.
        tool = "kotlinc" if file.endswith((".kt", ".kts")) else "javac"
        return Diagnostic(tool=tool, message=located["message"], file=file, line=int(located["line"]),
                          column=column, code=_code(located["message"]), severity=severity)
    if audit := _AUDIT.match(line):
        return Diagnostic(tool="checkstyle", message=audit["message"], file=relativise(audit["file"], roots),
                          line=int(audit["line"]), column=int(audit["col"]) if audit["col"] else None,
                          code=audit["check"], severity=severity)
    if kotlin := _KOTLIN.match(line):
        return Diagnostic(tool="kotlinc", message=kotlin["message"], file=relativise(kotlin["file"], roots),
                          line=int(kotlin["line"] or kotlin["line1"]), column=int(kotlin["col"] or kotlin["col1"]),
                          severity=severity)
    if bug := _SPOTBUGS.match(line):
        package = bug["cls"].rpartition(".")[0].replace(".", "/")
        file = f"src/main/java/{package}/{bug['file']}" if package else f"src/main/java/{bug['file']}"
        return Diagnostic(tool="spotbugs", message=f"{bug['rank']}: {bug['message']}", file=file,
                          line=int(bug["line"]) if bug["line"] else None, code=bug["code"], severity=severity)
    return None


def _code(message: str) -> str | None:
    """javac's lint category (``[deprecation] …``, ``[unchecked] …``) as the finding's code."""
    code = _JAVAC_CODE.match(message)
    return code["code"] if code else None


def _with_javac_lines(found: Diagnostic, after: list[str]) -> Diagnostic:
    """Plain javac's finding with the caret's column and the notes below it (not the source line)."""
    column = found.column
    notes: list[str] = []
    for i, text in enumerate(after):
        caret = _CARET.match(text)
        if caret and i <= 1:
            column = len(caret["pad"].expandtabs(8)) + 1
        elif i > 0 and not caret:
            notes.append(text.strip())
    message = found.message.split("\n", 1)[0]
    return found.model_copy(update={"column": column, "message": "\n".join([message, *notes])})


def _block(head: re.Match[str], section: int) -> _Block:
    if head["cls"]:
        return _Block(cls=head["cls"], method=head["method"] or "", section=section)
    name = head["name"] or ""
    # `x.FooTest.testBar`, or with parameters `x.FooTest.testP(int)[1]`: the class is up to the method.
    base = name.split("(", 1)[0]
    cls, _, method = base.rpartition(".")
    return _Block(cls=cls or base, method=name[len(cls) + 1:] if cls else "", section=section)


def _learn_package(scan: _Scan, full: str, section: int | None = None) -> None:
    simple = full.rpartition(".")[2]
    scan.packages.setdefault((len(scan.totals) if section is None else section, simple), full)


def _entry(entry: re.Match[str], section: int) -> _Entry:
    """A summary line: the test, the innermost line in its own class, the message."""
    cls, line = entry["cls"], int(entry["line"]) if entry["line"] else None
    for hop in (entry["chain"] or "").split("->")[1:]:
        step = _HOP.match(hop)
        if step and step["cls"] in (None, cls):
            line = int(step["line"])
    message = (entry["message"] or "").strip().removeprefix("» ").strip()
    return _Entry(cls=cls, method=entry["method"], line=line, message=message, section=section)


def _failures(scan: _Scan, roots: Roots) -> list[TestFailure]:
    """The failing tests: the summary's entries, with the blocks' full names and messages; blocks alone
    when there is no summary (the build stopped before printing it)."""
    for known in scan.blocks:
        _learn_package(scan, known.cls, known.section)
    by_method: dict[tuple[int, str], list[_Block]] = {}
    for known in scan.blocks:
        by_method.setdefault((known.section, known.method), []).append(known)
    anywhere: dict[str, str] = {}
    for (_, simple), full_name in scan.packages.items():
        anywhere.setdefault(simple, full_name)
    found: dict[str, TestFailure] = {}
    for entry in scan.entries:
        full = _full_class(entry.cls, entry.section, scan.packages, anywhere)
        block = next((b for b in by_method.get((entry.section, entry.method), [])
                      if b.cls.rpartition(".")[2].split("$", 1)[0] in (entry.cls, full.rpartition(".")[2])), None)
        if block is not None:
            full = block.cls
        stack = "\n".join(block.lines) if block else ""
        message = _exception(block) or entry.message or "the test failed"
        expected, received = jvm_expected_received(f"{entry.message}\n{message}")
        name = f"{full}.{entry.method}"
        placed = "." in full  # the package is known
        frame = _own_frame(block)
        module = _module(scan, entry.section)
        # Surefire gives no line when the test's frame is in a nested class (JUnit 5's `@Nested`).
        file = test_file(full, module, frame[0] if frame else None)
        line = entry.line if entry.line is not None else frame[1] if frame else None
        if placed and block is not None and (origin := jvm_origin(full, stack, module)):
            message += f" (called from {file}:{line})" if line else f" (called from {file})"
            file, line = origin
        found.setdefault(name, TestFailure(
            test=name, message=message, file=file if placed else None,
            line=line if placed else None, expected=expected, received=received, stack=stack or None))
    if not scan.entries:
        for block in scan.blocks:
            if not block.method:
                continue
            message = _exception(block) or "the test failed"
            frame = _own_frame(block)
            expected, received = jvm_expected_received(message)
            module = _module(scan, block.section)
            file = test_file(block.cls, module, frame[0] if frame else None)
            line = frame[1] if frame else None
            if origin := jvm_origin(block.cls, "\n".join(block.lines), module):
                message += f" (called from {file}:{line})" if line else f" (called from {file})"
                file, line = origin
            found.setdefault(f"{block.cls}.{block.method}", TestFailure(
                test=f"{block.cls}.{block.method}", message=message, file=file, line=line,
                expected=expected, received=received, stack="\n".join(block.lines) or None))
    return list(found.values())


def _full_class(simple: str, section: int, packages: dict[tuple[int, str], str], anywhere: dict[str, str]) -> str:
    """The full name of a class the summary names by its simple name: as its own module's output
    names it, else as any module's does."""
    for name in (simple, simple.split("$", 1)[0]):
        if (section, name) in packages:
            return packages[(section, name)]
    return anywhere.get(simple, simple)


def _module(scan: _Scan, section: int) -> str:
    """The folder of the module whose summary (the ``section``-th totals line) named a test."""
    artifact = scan.section_artifacts[section] if section < len(scan.section_artifacts) else None
    if artifact is not None and artifact in scan.module_dirs:
        return scan.module_dirs[artifact]
    failing = [i for i, (_, failures, errors, _) in enumerate(scan.totals) if failures + errors]
    if section in failing and failing.index(section) < len(scan.ordered_dirs):
        return scan.ordered_dirs[failing.index(section)]
    return scan.ordered_dirs[0] if len(scan.ordered_dirs) == 1 else ""


def test_file(full: str, module: str, source: str | None = None) -> str:
    """``x.y.FooTest$Inner`` in module ``core`` -> ``core/src/test/java/x/y/FooTest.java``; a Kotlin
    test (its stack names ``FooTest.kt``) lies in ``src/test/kotlin``."""
    package, _, outer = full.split("$", 1)[0].rpartition(".")
    folder = "kotlin" if source and source.endswith(".kt") else "java"
    name = source if source else f"{outer}.java"
    path = "/".join(part for part in (module, "src/test", folder, package.replace(".", "/"), name) if part)
    return path


# Test code by its name: `FooTest`, `FooTests`, `TestFoo`, `FooTestCase`, `FooIT`, `AbstractFooTest`.
_TEST_CLASS = re.compile(r"^Test[A-Z0-9_]|Tests?$|TestCase$|IT$")


def jvm_origin(cls: str, stack: str, module: str = "") -> tuple[str, int] | None:
    """Where the project's own code threw what a test got: in the root cause first (the last ``Caused by:``
    of a trace: MockMvc wraps what a controller threw in a ``ServletException``), the innermost frame above
    the test's own of a class of the test's project (three leading package names shared, or the test's
    whole package when it has fewer) that is not test code, placed in ``<module>/src/main/java``
    (``src/main/kotlin`` for a ``.kt`` file). None when the test's own frame comes first (an assertion
    failed in the test, a library threw) or the trace is trimmed to the test's frames.

    Example:
        >>> jvm_origin("x.y.z.FooTest", "java.lang.IllegalStateException: boom\\n"
        ...            "\\tat x.y.z.impl.Foo.run(Foo.java:12)\\n\\tat x.y.z.FooTest.testRun(FooTest.java:30)")
        ('src/main/java/x/y/z/impl/Foo.java', 12)
    """
    outer = cls.split("$", 1)[0]
    shared = outer.rpartition(".")[0].split(".")[:3]
    for section in reversed(re.split(r"^Caused by: ", stack, flags=re.MULTILINE)):
        for frame in JVM_FRAME.finditer(section):
            name = frame["cls"].split("$", 1)[0]
            if name == outer:
                return None
            parts = name.split(".")
            if parts[:len(shared)] != shared or len(parts) <= len(shared) or _TEST_CLASS.search(parts[-1]):
                continue
            folder = "kotlin" if frame["file"].endswith(".kt") else "java"
            return "/".join(part for part in (module, "src/main", folder, *parts[:-1], frame["file"]) if part), \
                int(frame["line"])
    return None


def _exception(block: _Block | None) -> str:
    """The exception a block shows, without its stack frames (``java.lang.IllegalStateException: boom``)."""
    if block is None:
        return ""
    message: list[str] = []
    for text in block.lines:
        if re.match(r"^\s+at |^\s+\.\.\. \d+ more|^Caused by: ", text):
            break
        message.append(text)
    return "\n".join(text.rstrip() for text in message if text.strip()).strip()


def _own_frame(block: _Block | None) -> tuple[str, int] | None:
    """The innermost frame of the test's own class in its stack trace: its source file's name (a
    Kotlin file need not be named after its class) and line."""
    if block is None:
        return None
    outer = block.cls.split("$", 1)[0]
    for text in block.lines:
        frame = JVM_FRAME.match(text)
        if frame and frame["cls"].split("$", 1)[0] == outer:
            return frame["file"], int(frame["line"])
    return None


def jvm_expected_received(message: str) -> tuple[str | None, str | None]:
    """JUnit 4 (``expected:<1> but was:<2>``), JUnit 5 (``expected: <1> but was: <2>``), TestNG
    (``expected [1] but found [2]``) and AssertJ (``expected: "a"`` above `` but was: "b"``) assertion messages."""
    match = _EXPECTED.search(message)
    if match is None:
        assertj = _ASSERTJ.search(message)
        if assertj is None:
            return None, None
        return _unquoted(assertj["e"].strip()), _unquoted(assertj["r"].strip())
    expected = match["e1"] if match["e1"] is not None else match["e2"]
    received = match["r1"] if match["r1"] is not None else match["r2"]
    return expected, received


def _unquoted(value: str) -> str:
    """AssertJ shows a string as Java would write it: ``"Gerbil"`` is ``Gerbil``."""
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _tests(failures: list[TestFailure], totals: list[tuple[int, int, int, int]]) -> list[TestCase]:
    """The named failing tests, and unnamed ones to match Maven's totals."""
    tests = [TestCase(f.test, "failed", f.file) for f in failures]
    run = sum(t[0] for t in totals)
    failed = sum(t[1] + t[2] for t in totals)
    skipped = sum(t[3] for t in totals)
    missing: list[tuple[TestStatus, int]] = [("failed", failed - len(failures)), ("skipped", skipped),
                                             ("passed", run - failed - skipped)]
    for status, count in missing:
        # Totals come from the output, perhaps the tested code's own: never millions of placeholders.
        tests += [TestCase(f"({status} test {i + 1})", status) for i in range(max(0, min(count, _MAX_UNNAMED)))]
    return tests


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Maven repeats every compiler error in its closing block; each finding once. A Checkstyle finding
    the audit printed too is kept as the audit names it: by its path from the root, not the module."""
    audited: dict[tuple[object, ...], str] = {}
    for d in diagnostics:
        place = (d.line, d.column, d.code)
        if d.tool == "checkstyle" and d.file and len(d.file) > len(audited.get(place, "")):
            audited[place] = d.file
    seen: dict[tuple[object, ...], Diagnostic] = {}
    for d in diagnostics:
        full = audited.get((d.line, d.column, d.code)) if d.tool == "checkstyle" else None
        if full and d.file and full != d.file and full.endswith(f"/{d.file}"):
            d = d.model_copy(update={"file": full})
        key = (d.tool, d.file, d.line, d.column, d.message.split("\n", 1)[0])
        kept = seen.get(key)
        if kept is None or len(d.message) > len(kept.message):
            seen[key] = d if kept is None else kept.model_copy(update={"message": d.message})
    return list(seen.values())
