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

The baseline's side is its *reference*: the same checks run once on the baseline tree when a
sprint's contract starts (:class:`Reference`).

Example:
    >>> from sprintflow.evaluate.parsers import ParsedReport, TestCase, TestCounts
    >>> baseline = Reference(tests={"t.test_add": "failed", "t.test_zero": "passed"}, ran=2)
    >>> now = ParsedReport(counts=TestCounts(2, 1, 0, 1),
    ...                    tests=[TestCase("t.test_add", "skipped"), TestCase("t.test_zero", "passed")])
    >>> judge_outcomes(now, None, baseline).problems
    ['t.test_add ran at the baseline and was skipped now']
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from .canary import Canary
from .parsers import ParsedReport, TestCounts

__all__ = ["Outcomes", "Reference", "judge_outcomes", "reference_of"]

RAN = ("passed", "failed")
SHOWN = 5
"""Tests named in a verdict's details; the rest are counted."""


@dataclass(frozen=True)
class Reference:
    """What one check said on the baseline: its tests and how they ended, canaries aside."""

    tests: dict[str, str] = field(default_factory=dict)
    ran: int = 0
    """Tests that ran (passed or failed), counted."""
    canary: bool = False
    """The canary was collected: it is expected in every later run."""

    def to_json(self) -> str:
        return json.dumps({"tests": self.tests, "ran": self.ran, "canary": self.canary})

    @classmethod
    def from_json(cls, text: str) -> Reference:
        data = json.loads(text)
        return cls(dict(data["tests"]), int(data["ran"]), bool(data["canary"]))


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


def _status(report: ParsedReport, predicate) -> str | None:
    for case in report.tests:
        if predicate(case.name):
            return case.status
    for failure in report.failures:  # a runner's plain output names only its failures
        if predicate(failure.test):
            return "failed"
    return None


def _anonymous(name: str) -> bool:
    """A placeholder a parser made to match a runner's totals (``(passed test 3)``): it names no test."""
    return name.startswith("(") and name.endswith(")")


def _without_canaries(report: ParsedReport, canary: Canary) -> ParsedReport:
    tests = [case for case in report.tests if not canary.is_canary(case.name)]
    if _status(report, canary.must_fail) and not any(canary.must_pass(c.name) for c in report.tests):
        # A runner's plain output names only failures: the passing canary is one of its unnamed passes.
        unnamed = next((i for i, c in enumerate(tests) if c.status == "passed" and _anonymous(c.name)), None)
        if unnamed is not None:
            del tests[unnamed]
    removed = list(report.tests)
    for case in tests:
        removed.remove(case)
    failures = [f for f in report.failures if not canary.is_canary(f.test)]
    diagnostics = [d for d in report.diagnostics
                   if not canary.is_canary(f"{d.message} {d.file or ''} {d.code or ''}")]
    counts = report.counts
    if counts is not None:
        statuses = [case.status for case in removed]
        passed, skipped = statuses.count("passed"), statuses.count("skipped")
        failed = len(statuses) - passed - skipped
        counts = TestCounts(max(0, counts.total - len(statuses)), max(0, counts.passed - passed),
                            max(0, counts.failed - failed), max(0, counts.skipped - skipped))
    return replace(report, tests=tests, failures=failures, diagnostics=diagnostics, counts=counts)


def _canary_problem(report: ParsedReport, canary: Canary, expected: bool) -> tuple[str | None, bool]:
    """Why the canaries say the runner was compromised (None: they behaved), and whether the
    failing one failed."""
    failing, passing = _status(report, canary.must_fail), _status(report, canary.must_pass)
    if failing is None:
        return (("the test that must fail (a canary the judge planted) did not run: the runner's tests "
                 "were changed from inside") if expected else None), False
    if failing != "failed":
        return (f"the test that must fail (a canary the judge planted) {_ended(failing)}: the runner passes "
                "what cannot pass, so nothing it reports counts"), False
    if passing is not None and passing != "passed":
        return f"the test that must pass (a canary the judge planted) {_ended(passing)}", True
    return None, True


def _ended(status: str) -> str:
    return {"passed": "passed", "skipped": "was skipped", "load_error": "could not load"}.get(status, status)


def judge_outcomes(report: ParsedReport, canary: Canary | None, reference: Reference | None,
                   held_out: bool = False) -> Outcomes:
    """The rules of the module docstring, on one run's report."""
    compromised, canary_failed = None, False
    if canary is not None:
        compromised, canary_failed = _canary_problem(report, canary, reference.canary if reference else False)
        report = _without_canaries(report, canary)
    problems = _against_baseline(report, reference) if reference is not None else []
    if held_out:
        problems += _held_out_problems(report)
    return Outcomes(report, problems, compromised, canary_failed)


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


def reference_of(report: ParsedReport | None, canary: Canary | None) -> Reference:
    """What the baseline's run of a check said (canaries taken out, and whether one was collected)."""
    if report is None:
        return Reference()
    collected = canary is not None and _status(report, canary.must_fail) is not None
    if canary is not None:
        report = _without_canaries(report, canary)
    counts = report.counts
    ran = counts.passed + counts.failed if counts else sum(case.status in RAN for case in report.tests)
    return Reference({case.name: case.status for case in report.tests}, ran, collected)
