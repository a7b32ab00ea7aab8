"""Turn one test runner invocation into a :class:`TestRun` (tester-agent-spec.md's result.json).

The run is judged the way the seed does, but failing closed: a runner that
timed out, wrote no report, wrote one we cannot read, ran no test, or could only
report test files that failed to load has *crashed* — the tester acts next
(``retry_tester``), not the coder. Real test failures get a hint each
(:func:`~sprintflow.testruns.hints.build_hint`) and send the coder back
(``retry_coder``); a clean run is ``done``.

Coverage follows the seed's two rules. A test names the success criterion it
checks in its title (``it("[sc-1-3] empty title -> 400")``):
``acceptance_coverage`` is the share of the contract's criteria named by at
least one test. ``contract_coverage`` is the share of the HTTP status codes the
contract declares (in its criteria descriptions, or as an api-check
``expectedStatus``) that appear in some test title. Both are ``None`` when the
contract declares nothing to cover.

Example:
    >>> run = build_test_run(None, "vitest", run_id="run-1", stderr="SyntaxError: x",
    ...                      exit_code=1)
    >>> run.crashed, run.next_action
    (True, 'retry_tester')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from sprintflow.errors import ReportError
from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.parsers import ParsedReport, Roots, TestFailure, parse_report
from sprintflow.schemas.contract import SprintContract
from sprintflow.schemas.testrun import TestFailureEntry, TestRun, TestSummary
from sprintflow.testruns.hints import Language, build_hint

__all__ = [
    "TEST_REPORT_FORMATS",
    "build_test_run",
    "declared_status_codes",
    "judge_test_run",
    "new_run_id",
    "read_test_report",
    "record_test_run",
]

TEST_REPORT_FORMATS = ("vitest", "jest", "junit")
"""Report formats of test runners :func:`build_test_run` reads."""

TAIL_CHARS = 4000
"""How much of the runner's output ``stdout_tail`` keeps."""

_CRITERION_TAG = re.compile(r"\[(sc-\d+-\d+)\]", re.IGNORECASE)
# A status code in prose: "returns 201", "→ 201 | 400", "status 404", "返 400" — but not the
# 200 of "200+ characters" or "more than 200 characters".
_STATUS_IN_PROSE = re.compile(
    r"(?:\b(?:returns?|returning|answers?|answering|responds?(?:\s+with)?|status(?:\s+code)?"
    r"|HTTP)\b|→|->|=>|返回?)\s*(?:with\s+)?(?:an?\s+)?"
    r"(?P<codes>[1-5]\d\d(?:\s*(?:\||/|,|or|and|或)\s*[1-5]\d\d)*)(?![\d+])", re.IGNORECASE)
_STATUS_IN_TITLE = re.compile(r"(?<![\d.])[1-5]\d\d(?![\d+])")


def new_run_id(now: datetime | None = None) -> str:
    """A run id in the seed's form, to the second: ``run-20260513-103115``.

    Example:
        >>> new_run_id(datetime(2026, 5, 13, 10, 31, 15))
        'run-20260513-103115'
    """
    return f"run-{(now or datetime.now(UTC)):%Y%m%d-%H%M%S}"


def build_test_run(report_text: str | None, fmt: str, *, run_id: str, stdout: str = "",
                   stderr: str = "", exit_code: int | None = None, timed_out: bool = False,
                   duration_ms: int = 0, contract: SprintContract | Mapping[str, Any] | None = None,
                   language: Language = "en", roots: Roots = ()) -> TestRun:
    """Parse a test runner's report and judge the run (see :func:`judge_test_run`).

    Args:
        report_text: the report file's text; ``None`` when the runner wrote none.
        fmt: ``vitest``, ``jest`` or ``junit``.
        roots: workspace roots as the runner saw them, stripped from paths.
        run_id, stdout, stderr, exit_code, timed_out, duration_ms, contract, language:
            as for :func:`judge_test_run`.

    Returns:
        The TestRun; never raises for a bad report (that is a crashed run).

    Example:
        >>> run = build_test_run('{"testResults": []}', "jest", run_id="run-1", exit_code=1)
        >>> run.crash_reason
        'the jest report lists no test: nothing was collected or the runner stopped early'
    """
    if fmt not in TEST_REPORT_FORMATS:
        raise ReportError(f"unknown test report format {fmt!r}; "
                          f"known: {', '.join(TEST_REPORT_FORMATS)}")
    report, unreadable = read_test_report(report_text, fmt, exit_code, roots)
    return judge_test_run(report, fmt, run_id=run_id, unreadable=unreadable, stdout=stdout, stderr=stderr,
                          exit_code=exit_code, timed_out=timed_out, duration_ms=duration_ms,
                          contract=contract, language=language)


def read_test_report(text: str | None, fmt: str, exit_code: int | None,
                     roots: Roots = ()) -> tuple[ParsedReport | None, str | None]:
    """The parsed report, or None and why there is none (no report written, or not readable).

    Example:
        >>> read_test_report(None, "vitest", 1)
        (None, 'no vitest report was written (exit code 1): the runner crashed before reporting')
    """
    if text is None or not text.strip():
        code = "unknown" if exit_code is None else exit_code
        return None, f"no {fmt} report was written (exit code {code}): the runner crashed before reporting"
    try:
        return parse_report(fmt, text, roots), None
    except ReportError as exc:
        return None, f"invalid {fmt} report: {exc}"


def judge_test_run(report: ParsedReport | None, fmt: str, *, run_id: str, unreadable: str | None = None,
                   stdout: str = "", stderr: str = "", exit_code: int | None = None,
                   timed_out: bool = False, duration_ms: int = 0,
                   contract: SprintContract | Mapping[str, Any] | None = None,
                   language: Language = "en") -> TestRun:
    """Judge one test run from its parsed report (parsed once, by the caller) and what the runner did.

    Args:
        report: the parsed report, ``None`` when there is none.
        fmt: the report's format, for the messages.
        run_id: the run's id (see :func:`new_run_id`).
        unreadable: why there is no report, when ``report`` is None.
        stdout: what the runner printed; its end is kept in ``stdout_tail``.
        stderr: what it printed on stderr; kept last in the tail, where a crash shows.
        exit_code: the runner's exit code, ``None`` when unknown (a report read alone).
        timed_out: the runner hit its deadline and was killed.
        duration_ms: wall time of the run.
        contract: the sprint contract (model or camelCase JSON), for coverage.
        language: language of the hints, ``en`` or ``zh``.

    Example:
        >>> from sprintflow.parsers import parse_report
        >>> report = parse_report("junit", '<testsuite><testcase classname="t" name="ok"/></testsuite>')
        >>> judge_test_run(report, "junit", run_id="run-1", exit_code=0).next_action
        'done'
    """
    tail = _tail(stdout, stderr)
    timeout = (f"the {fmt} run hit its deadline after {duration_ms} ms and was killed; "
               f"look for a test that never ends" if timed_out else None)
    if report is None:
        return TestRun(run_id=run_id, crashed=True, crash_reason=timeout or unreadable, stdout_tail=tail,
                       next_action="retry_tester", duration_ms=duration_ms)
    counts = report.counts
    assert counts is not None  # every test runner parser fills them
    reason = timeout or _crash_in_report(report, fmt, exit_code)
    names = [test.name for test in report.tests]
    criteria, uncovered_criteria = _criteria_coverage(contract, names)
    codes, uncovered_codes = _status_coverage(contract, names)
    return TestRun(
        run_id=run_id,
        summary=TestSummary(total=counts.total, passed=counts.passed, failed=counts.failed,
                            skipped=counts.skipped),
        failures=[_entry(f, language) for f in report.failures],
        crashed=reason is not None, crash_reason=reason, stdout_tail=tail,
        next_action=_next_action(reason, counts.failed),
        acceptance_coverage=criteria, uncovered_criteria=uncovered_criteria,
        contract_coverage=codes, uncovered_status_codes=uncovered_codes,
        passed_tests=[test.name for test in report.tests if test.status == "passed"],
        duration_ms=duration_ms)


def _crash_in_report(report: ParsedReport, fmt: str, exit_code: int | None) -> str | None:
    """Why a readable report still means the runner, not the code, failed (or ``None``)."""
    counts = report.counts
    assert counts is not None
    if counts.total == 0:
        return (f"the {fmt} report lists no test: nothing was collected or the runner "
                f"stopped early")
    unloadable = {t.name for t in report.tests if t.status == "load_error"}
    if counts.passed == 0 and report.failures and all(f.test in unloadable
                                                      for f in report.failures):
        first = report.failures[0]
        why = first.message.splitlines()[0] if first.message else "no message"
        files = ", ".join(sorted({f.file or f.test for f in report.failures}))
        return f"{fmt} could not load {files}: {why}"
    if exit_code not in (None, 0) and counts.failed == 0:
        return (f"{fmt} exited with code {exit_code} although its report shows no failing "
                f"test; see stdout_tail")
    return None


def _entry(failure: TestFailure, language: Language) -> TestFailureEntry:
    return TestFailureEntry(test=failure.test, expected=_value(failure.expected),
                            got=_value(failure.received), stack=failure.stack or failure.message,
                            hint=build_hint(failure, language), file=failure.file,
                            line=failure.line)


def _value(text: str | None) -> Any:
    """A number stays a number in result.json (the seed writes ``"got": 500``)."""
    if text is not None and re.fullmatch(r"-?\d{1,15}", text.strip()):
        return int(text)
    return text


def _next_action(crash_reason: str | None, failed: int) -> Literal["retry_coder", "retry_tester", "done"]:
    if crash_reason is not None:
        return "retry_tester"
    return "retry_coder" if failed else "done"


def _tail(stdout: str, stderr: str) -> str:
    text = "\n".join(part.rstrip("\n") for part in (stdout, stderr) if part.strip())
    return text[-TAIL_CHARS:]


def _contract_data(contract: SprintContract | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if contract is None:
        return {}
    return contract.to_dict() if isinstance(contract, SprintContract) else contract


def _criteria_coverage(contract: SprintContract | Mapping[str, Any] | None,
                       test_names: Iterable[str]) -> tuple[float | None, list[str]]:
    criteria = [str(c["criterionId"])
                for c in _contract_data(contract).get("successCriteria") or []
                if isinstance(c, Mapping) and c.get("criterionId")]
    tagged = {tag.lower() for name in test_names for tag in _CRITERION_TAG.findall(name)}
    uncovered = [c for c in criteria if c.lower() not in tagged]
    return _share(len(criteria), len(uncovered)), uncovered


def _status_coverage(contract: SprintContract | Mapping[str, Any] | None,
                     test_names: Iterable[str]) -> tuple[float | None, list[int]]:
    declared = declared_status_codes(_contract_data(contract))
    named = {int(code) for name in test_names for code in _STATUS_IN_TITLE.findall(name)}
    uncovered = [code for code in declared if code not in named]
    return _share(len(declared), len(uncovered)), uncovered


def _share(declared: int, uncovered: int) -> float | None:
    return round((declared - uncovered) / declared, 4) if declared else None


def declared_status_codes(contract: Mapping[str, Any]) -> list[int]:
    """The HTTP status codes a contract (camelCase JSON) promises, sorted.

    Read from the success criteria's descriptions ("returns 201", "→ 201 | 400")
    and from any ``expectedStatus`` an api-check endpoint in the contract declares.

    Example:
        >>> declared_status_codes({"successCriteria": [
        ...     {"description": "POST /todos with a blank title returns 400"},
        ...     {"description": "a 200+ character title is refused → 400 | 413"}]})
        [400, 413]
    """
    codes: set[int] = set()
    for criterion in contract.get("successCriteria") or []:
        if isinstance(criterion, Mapping):
            for match in _STATUS_IN_PROSE.finditer(str(criterion.get("description") or "")):
                codes.update(int(code) for code in re.findall(r"[1-5]\d\d", match["codes"]))
    codes.update(_expected_statuses(contract))
    return sorted(codes)


def _expected_statuses(data: Any) -> Iterator[int]:
    """Every ``expectedStatus`` anywhere in the document (api-check endpoints, in any nesting)."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            if key in ("expectedStatus", "expected_status") and isinstance(value, int):
                yield value
            else:
                yield from _expected_statuses(value)
    elif isinstance(data, list):
        for item in data:
            yield from _expected_statuses(item)


def record_test_run(workspace: Path | str, run_id: str, test_run: TestRun, stdout: str,
                    stderr: str) -> Path:
    """Write ``.sprintflow/runs/<runId>/{stdout.txt,stderr.txt,result.json}``, each atomically.

    ``result.json`` is written last, so its presence means the run's folder is complete.

    Raises:
        InputError: ``run_id`` is not a plain file name (it would escape ``runs/``).

    Example:
        >>> import tempfile
        >>> run = build_test_run(None, "junit", run_id="run-20260513-103115", exit_code=2)
        >>> folder = record_test_run(tempfile.mkdtemp(), run.run_id, run, "collected 0 items", "")
        >>> folder.name, sorted(p.name for p in folder.iterdir())
        ('run-20260513-103115', ['result.json', 'stderr.txt', 'stdout.txt'])
    """
    folder = WorkspaceLayout(Path(workspace)).run_dir(run_id)
    atomic_write_text(folder / "stdout.txt", stdout)
    atomic_write_text(folder / "stderr.txt", stderr)
    atomic_write_text(folder / "result.json", test_run.to_json())
    return folder
