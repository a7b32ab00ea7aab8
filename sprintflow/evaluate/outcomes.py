"""A pass means the tests ran, could fail, and are the tests the baseline had.

Three rules, applied to what a test runner reported (a unit-test strategy, a custom criterion
such as a held-out eval):

* **The runner can still say fail.** The canary that must fail failed and the one that must pass
  passed (:mod:`.canary`); a canary the baseline's run collected that is now missing, passing or
  skipped means the runner was compromised from inside, and nothing it says counts.
* **Only a test that ran and passed counts.** Every test that ran at the baseline (passed or
  failed there) must have run and passed now: skipped, xfailed, deselected, missing or unable
  to load fails it, by name. Without names (a runner's plain output) the number of tests that
  ran may not drop. Tests skipped at the baseline stay skips.
* **A held-out eval passes only when every test of it passed**: anything skipped, or none at all,
  is a fail.
* **A report file has a second witness.** A runner that writes its verdict to a file (pytest's
  ``--junitxml``, jest's and vitest's JSON) writes it from the process the code under test runs in,
  and anything that process starts can change the file after the runner wrote it, before the run
  ends. What the runner printed cannot be taken back: its console output, read with its own text
  parser, is the second witness. A test the console says failed while the report says none did, or
  a failing canary the console showed on the baseline and no longer shows (its output silenced from
  inside), means the runner was compromised.

The baseline's side is its *reference*: the same checks run once on the baseline tree when a
sprint's contract starts (:class:`Reference`).

Example:
    >>> from sprintflow.parsers import ParsedReport, TestCase, TestCounts
    >>> baseline = Reference(tests={"t.test_add": "failed", "t.test_zero": "passed"}, ran=2)
    >>> now = ParsedReport(counts=TestCounts(2, 1, 0, 1),
    ...                    tests=[TestCase("t.test_add", "skipped"), TestCase("t.test_zero", "passed")])
    >>> judge_outcomes(now, None, baseline).problems
    ['t.test_add ran at the baseline and was skipped now']
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from sprintflow.errors import ReportError
from sprintflow.parsers import ParsedReport, TestCounts, parse_report
from sprintflow.schemas import Diagnostic, Outcome, StrategyConfig, StrategyResult
from sprintflow.schemas.journal import SuppressionRecord

from .canary import Canary

__all__ = ["Outcomes", "Reference", "baseline_test_files", "console_of", "fail_suppressed", "judge_outcomes",
           "reference_of"]

RAN = ("passed", "failed")
SHOWN = 5
"""Tests named in a verdict's details; the rest are counted."""


@dataclass(frozen=True)
class Reference:
    """What one check said on the baseline: its tests and how they ended, canaries aside."""

    tests: dict[str, str] = field(default_factory=dict)
    ran: int = 0
    """Tests that ran (passed or failed), counted."""
    canaries: tuple[str, ...] = ()
    """The test files whose failing canary failed there: theirs must fail in every later run."""
    files: tuple[str, ...] = ()
    """The files the runner collected tests from, as its report says: tests, whatever their names
    (the judge protects them as it protects files named like tests, :func:`baseline_test_files`)."""
    printed: tuple[str, ...] = ()
    """The test files whose failing canary the runner's console output showed failing there (a run whose
    verdict is a report file, :func:`console_of`): theirs must show in every later run's output."""

    def to_json(self) -> str:
        return json.dumps({"tests": self.tests, "ran": self.ran, "canaries": list(self.canaries),
                           "files": list(self.files), "printed": list(self.printed)})

    @classmethod
    def from_json(cls, text: str) -> Reference:
        data = json.loads(text)
        return cls(dict(data["tests"]), int(data["ran"]), tuple(data["canaries"]),
                   tuple(str(f) for f in data.get("files", ())), tuple(str(f) for f in data.get("printed", ())))


@dataclass(frozen=True)
class Outcomes:
    """What the rules found, and the report with the canaries taken out."""

    report: ParsedReport
    problems: list[str] = field(default_factory=list)
    """One sentence per test that does not count (the check fails)."""
    compromised: str | None = None
    """Why the runner cannot be believed (the check fails, critically)."""
    canary_failed: bool = False
    """The failing canary failed, as it must: the runner's own exit code says so too."""
    canary_exit: int = 1
    """The exit code the runner gives for that failure (cargo's test binaries: 101)."""

    def failed_for_canary_alone(self, exit_code: int | None) -> bool:
        """The runner failed for the judge's failing canary and nothing else: the code's exit is 0."""
        return self.canary_failed and exit_code == self.canary_exit and not self.report.failures


def _canary_statuses(report: ParsedReport, canary: Canary, predicate) -> dict[str, str]:
    """Canary test file -> how its canary (the one ``predicate`` picks) ended, as the report says."""
    found: dict[str, str] = {}
    for name, status in [*((c.name, c.status) for c in report.tests), *((f.test, "failed") for f in report.failures)]:
        if predicate(name) and (where := canary.file_of(name)) is not None:
            found.setdefault(where, status)
    return found


def _anonymous(name: str) -> bool:
    """A placeholder a parser made to match a runner's totals (``(passed test 3)``): it names no test."""
    return name.startswith("(") and name.endswith(")")


def _without_canaries(report: ParsedReport, canary: Canary) -> ParsedReport:
    tests = [case for case in report.tests if not canary.is_canary(case.name)]
    uncounted = 0
    if not any(canary.must_pass(c.name) for c in report.tests):
        # A runner's plain output names only failures: each passing canary is one of its unnamed passes
        # (a placeholder the parser made for it, or only a number in the totals: cargo test -q).
        for _ in _canary_statuses(report, canary, canary.must_fail):
            unnamed = next((i for i, c in enumerate(tests) if c.status == "passed" and _anonymous(c.name)), None)
            if unnamed is None:
                uncounted += 1
            else:
                del tests[unnamed]
    removed = list(report.tests)
    for case in tests:
        removed.remove(case)
    failures = [f for f in report.failures if not canary.is_canary(f.test)]
    diagnostics = [d for d in report.diagnostics
                   if not canary.is_canary(f"{d.message} {d.file or ''} {d.code or ''}")]
    counts = report.counts
    if counts is not None:
        statuses = [case.status for case in removed] + ["passed"] * uncounted
        passed, skipped = statuses.count("passed"), statuses.count("skipped")
        failed = len(statuses) - passed - skipped
        counts = TestCounts(max(0, counts.total - len(statuses)), max(0, counts.passed - passed),
                            max(0, counts.failed - failed), max(0, counts.skipped - skipped))
    return replace(report, tests=tests, failures=failures, diagnostics=diagnostics, counts=counts)


def _canary_problem(report: ParsedReport, canary: Canary, expected: tuple[str, ...],
                    exit_code: int | None = None) -> tuple[str | None, bool]:
    """Why the canaries say the runner was compromised (None: they behaved), and whether a failing one
    failed. ``expected``: the files whose failing canary failed on the baseline; ``exit_code``: the run's."""
    failing = _canary_statuses(report, canary, canary.must_fail)
    passing = _canary_statuses(report, canary, canary.must_pass)
    for where, status in sorted(failing.items()):
        if status != "failed":
            return (f"the test that must fail (a canary the judge planted in {where}) {_ended(status)}: the "
                    "runner passes what cannot pass, so nothing it reports counts"), False
    # A runner that stops at its first failing binary never reached the failing canary when a real test
    # failed first; Maven, told to run every module's tests whatever they say (its failing canary then
    # exits 0), stops only for what is no test's (a module that does not compile): either run fails on
    # its own, and says nothing of the canaries after where it stopped.
    stopped = canary.stops_at_failure and (any(not canary.is_canary(f.test) for f in report.failures)
                                           or exit_code not in (None, 0, canary.failed_exit))
    for where in expected:
        if where not in failing and not stopped:
            return (f"the test that must fail (a canary the judge planted in {where}) did not run, where it ran "
                    "on the baseline: the runner's tests were changed from inside"), False
        if where in passing and passing[where] != "passed":
            return f"the test that must pass (a canary the judge planted in {where}) {_ended(passing[where])}", True
    return None, bool(failing)


def _ended(status: str) -> str:
    return {"passed": "passed", "skipped": "was skipped", "load_error": "could not load"}.get(status, status)


_CONSOLE = {"pytest": "pytest", "vitest": "vitest-text", "jest": "jest-text"}
"""The text parser of each runner's own console output."""


def console_of(runner: str | None, report_path: str | None, stdout: str, stderr: str) -> ParsedReport | None:
    """The runner's console output, read with its own text parser, when its verdict comes from a report
    file (``report_path``): the report's second witness. None when the verdict is the console itself, or
    the runner printed nothing its parser reads (vitest with only its JSON reporter). Both streams are read
    as one: vitest prints its failures' blocks to stderr, jest all of its results.

    Example:
        >>> printed = "=== short test summary info ===\\nFAILED t.py::test_add - assert 0 == 4\\n1 failed in 0.10s"
        >>> console_of("pytest", "r.xml", printed, "").failures[0].test
        't.py::test_add'
        >>> console_of("pytest", None, "1 failed in 0.1s", ""), console_of("vitest", "r.json", "", "")
        (None, None)
    """
    if not report_path or runner not in _CONSOLE:
        return None
    try:
        return parse_report(_CONSOLE[runner], "\n".join(text for text in (stdout, stderr) if text))
    except ReportError:
        return None


def _failing_canaries(report: ParsedReport, canary: Canary) -> tuple[str, ...]:
    """The test files whose failing canary failed, as ``report`` says."""
    return tuple(sorted(where for where, status in _canary_statuses(report, canary, canary.must_fail).items()
                        if status == "failed"))


def _witnesses_disagree(report: ParsedReport, console: ParsedReport | None, canary: Canary | None,
                        printed: tuple[str, ...]) -> str | None:
    """Why the runner's console and its report file cannot both be true (None: they agree); ``report``
    without its canaries, ``printed`` the files whose failing canary the baseline's console showed."""
    shown = _failing_canaries(console, canary) if console is not None and canary is not None else ()
    for where in printed:
        if where not in shown:
            return (f"its output no longer shows the test that must fail (a canary the judge planted in {where}) "
                    "failing, as it did on the baseline: what the runner prints was silenced from inside")
    if console is None:
        return None
    # Nothing in a canary tells the two apart: output forged in their place names the wrong one as often.
    passing = _canary_statuses(console, canary, canary.must_pass) if canary is not None else {}
    forged = next((where for where, status in sorted(passing.items()) if status == "failed"), None)
    if forged is not None:
        return (f"it printed that the test that must pass (a canary the judge planted in {forged}) failed, and "
                "its report says it passed: what the runner prints was forged from inside")
    failed = [f.test for f in console.failures if not (canary and canary.is_canary(f.test))]
    if failed and not report.failures:
        return (f"it printed that {', '.join(failed[:SHOWN])} failed, and the report it wrote says no test "
                "failed: the report was changed after the runner wrote it")
    return None


def judge_outcomes(report: ParsedReport, canary: Canary | None, reference: Reference | None,
                   held_out: bool = False, exit_code: int | None = None,
                   console: ParsedReport | None = None) -> Outcomes:
    """The rules of the module docstring, on one run's report (``exit_code``: the run's; ``console``: its
    console output when the report is a file, :func:`console_of`)."""
    compromised, canary_failed = None, False
    if canary is not None:
        compromised, canary_failed = _canary_problem(report, canary, reference.canaries if reference else (),
                                                     exit_code)
        report = _without_canaries(report, canary)
    compromised = compromised or _witnesses_disagree(report, console, canary, reference.printed if reference else ())
    problems = _against_baseline(report, reference) if reference is not None else []
    if held_out:
        problems += _held_out_problems(report)
    return Outcomes(report, problems, compromised, canary_failed, canary.failed_exit if canary else 1)


def _against_baseline(report: ParsedReport, reference: Reference) -> list[str]:
    now = {case.name: case.status for case in report.tests if not _anonymous(case.name)}
    problems = []
    if now:
        for name, status in sorted(reference.tests.items()):
            if _anonymous(name):
                continue
            if status in RAN and now.get(name) != "passed" and now.get(name) != "failed":
                problems.append(f"{name} ran at the baseline and "
                                + ("is missing now" if name not in now else f"{_ended(now[name])} now"))
    counts = report.counts
    if counts is not None and reference.ran and counts.passed + counts.failed < reference.ran and not problems:
        problems.append(f"{counts.passed + counts.failed} tests ran, {reference.ran} ran at the baseline")
    if len(problems) > SHOWN:
        problems = [*problems[:SHOWN], f"and {len(problems) - SHOWN} more tests that ran at the baseline"]
    return problems


def _held_out_problems(report: ParsedReport) -> list[str]:
    counts = report.counts
    if counts is None:
        return []
    if counts.total == 0:
        return ["no held-out test ran"]
    if counts.skipped or counts.total > counts.passed + counts.failed:
        return [f"{counts.total - counts.passed - counts.failed} held-out test(s) did not run (skipped, xfailed "
                "or deselected): a held-out eval passes only when every test of it passed"]
    return []


def reference_of(report: ParsedReport | None, canary: Canary | None,
                 console: ParsedReport | None = None) -> Reference:
    """What the baseline's run of a check said (canaries taken out, and whether one was collected;
    ``console``: its console output when the report is a file)."""
    if report is None:
        return Reference()
    failed = _failing_canaries(report, canary) if canary is not None else ()
    printed = _failing_canaries(console, canary) if canary is not None and console is not None else ()
    if canary is not None:
        report = _without_canaries(report, canary)
    counts = report.counts
    ran = counts.passed + counts.failed if counts else sum(case.status in RAN for case in report.tests)
    files = tuple(sorted({case.file for case in report.tests if case.file}))
    return Reference({case.name: case.status for case in report.tests}, ran, failed, files, printed)


def baseline_test_files(folder: Path) -> tuple[str, ...]:
    """Every file the baseline's test runs (the references in ``folder``) collected tests from.

    A reference that cannot be read adds nothing: files named like tests are protected anyway.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "unit-test-0.json").write_text(Reference(files=("checks/calc_checks.py",)).to_json())
        >>> _ = (folder / "criterion-sc-1.json").write_text("{not json")
        >>> baseline_test_files(folder)
        ('checks/calc_checks.py',)
    """
    found: set[str] = set()
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            found.update(Reference.from_json(path.read_text(encoding="utf-8")).files)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return tuple(sorted(found))


def fail_suppressed(strategies: list[StrategyConfig], results: list[StrategyResult],
                    suppressions: list[SuppressionRecord]) -> tuple[list[StrategyResult], list[str]]:
    """A line the change added that silences a checker fails that checker's strategy, at the line.

    Returns the results and, for a checker no strategy runs, a sentence for the blocking issues.

    Example:
        >>> from sprintflow.schemas import parse_strategy
        >>> lint = parse_strategy({"type": "lint"})
        >>> ok = StrategyResult(strategy="lint", required=True, result=Outcome.passed, details="clean")
        >>> silenced = SuppressionRecord(file="src/a.py", line=3, kind="noqa", checker="lint", text="import os  # noqa")
        >>> results, unclaimed = fail_suppressed([lint], [ok], [silenced])
        >>> results[0].result.value, results[0].diagnostics[0].line, unclaimed
        ('fail', 3, [])
    """
    out, unclaimed = list(results), []
    for checker in dict.fromkeys(s.checker for s in suppressions):
        found = [s for s in suppressions if s.checker == checker]
        index = next((i for i, config in enumerate(strategies) if config.type.value == checker), None)
        lines = "; ".join(f"{s.file}:{s.line} ({s.kind})" for s in found[:SHOWN])
        if index is None:
            unclaimed.append(f"The change silences {checker} instead of fixing what it finds: {lines}")
            continue
        diagnostics = [Diagnostic(tool=checker, severity="error", file=s.file, line=s.line, code=s.kind,
                                  message=f"`{s.text}` silences {checker} ({s.kind}): fix what it finds instead, "
                                          "or the contract must allow this kind in allowedSuppressions")
                       for s in found]
        result = out[index]
        out[index] = result.model_copy(update={
            "result": Outcome.failed, "diagnostics": [*diagnostics, *result.diagnostics],
            "error_count": (result.error_count or 0) + len(found),
            "details": f"The change silences {checker} instead of fixing what it finds: {lines}. "
                       f"What {result.strategy} reported: {result.details}"})
    return out, unclaimed
