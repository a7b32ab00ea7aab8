"""Two prompts paired over the same cases: the exact McNemar test and the comparison it decides.

``compare_prompts`` (:mod:`sprintflow.scoring.runs`) scores both prompts; ``compare_reports``
pairs their reports case by case.
"""

from __future__ import annotations

import math

from sprintflow.errors import InputError
from sprintflow.schemas.scoring import (
    CaseDifference,
    CompareReport,
    McNemarResult,
    PromptScore,
    ScoreReport,
    ScoreTiming,
    Verdict,
)

__all__ = ["compare_reports", "mcnemar_exact"]


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test (p = 0.5) on the discordant pairs.

    ``only_a`` cases passed with prompt A alone, ``only_b`` with B alone;
    cases both passed or both failed carry no information about which is better.

    Example:
        >>> round(mcnemar_exact(1, 9), 4)
        0.0215
        >>> mcnemar_exact(0, 0)
        1.0
    """
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1))
    # Exact integers until the one division, so large case sets do not lose precision.
    return min(1.0, 2 * tail / 2 ** n)


def compare_reports(a: ScoreReport, b: ScoreReport, *, alpha: float = 0.05,
                    timing: ScoreTiming | None = None) -> CompareReport:
    """Pair two reports over the same cases: per-case differences and the McNemar verdict.
    """
    if [c.id for c in a.cases] != [c.id for c in b.cases]:
        raise InputError("the two reports do not cover the same cases in the same order")
    differences = [
        CaseDifference(id=ca.id, a=ca.passed, b=cb.passed, expected=ca.expected, actual_a=ca.actual,
                       actual_b=cb.actual, reason_a=ca.reason, reason_b=cb.reason)
        for ca, cb in zip(a.cases, b.cases, strict=True) if ca.passed != cb.passed
    ]
    only_a = sum(1 for d in differences if d.a)
    only_b = len(differences) - only_a
    p_value = mcnemar_exact(only_a, only_b)
    verdict: Verdict
    if p_value < alpha and only_b > only_a:
        verdict = "b-better"
    elif p_value < alpha and only_a > only_b:
        verdict = "a-better"
    else:
        verdict = "no-significant-difference"
    both_passed = sum(1 for ca, cb in zip(a.cases, b.cases, strict=True) if ca.passed and cb.passed)
    return CompareReport(
        skill=a.skill, total=a.total,
        a=PromptScore(prompt_file=a.prompt_file, prompt_sha256=a.prompt_sha256, passed=a.passed,
                      failed=a.failed, score=a.score),
        b=PromptScore(prompt_file=b.prompt_file, prompt_sha256=b.prompt_sha256, passed=b.passed,
                      failed=b.failed, score=b.score),
        both_passed=both_passed, both_failed=a.total - both_passed - len(differences),
        mcnemar=McNemarResult(only_a_passed=only_a, only_b_passed=only_b, p_value=p_value, alpha=alpha,
                              verdict=verdict),
        differences=differences, engine=a.engine, cases_file=a.cases_file, cases_sha256=a.cases_sha256,
        timing=timing,
    )
