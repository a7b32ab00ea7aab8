"""One case's exchange with the engine: the prompt it is sent, and its answer judged field by field.

The prompt is the skill prompt, then ``## Pre-fetched PR context``, then the case input. The
answer's fields that the comparator checks must match the expected ones in kind as well as value,
apart from the comparator's case-insensitive fields and numeric tolerances.
"""

from __future__ import annotations

import json
from typing import Any

from sprintflow.schemas.scoring import ComparatorConfig

__all__ = ["CONTEXT_HEADING", "build_prompt", "compare_answer"]

CONTEXT_HEADING = "## Pre-fetched PR context"


def build_prompt(skill_prompt: str, case_input: Any) -> str:
    """The text sent to the engine: the skill prompt, the context heading, the case input.

    A non-string input is rendered as indented JSON.

    Example:
        >>> build_prompt("Triage this PR.", "diff --git a/x b/x")
        'Triage this PR.\\n\\n## Pre-fetched PR context\\n\\ndiff --git a/x b/x\\n'
    """
    body = case_input if isinstance(case_input, str) else json.dumps(case_input, indent=2, ensure_ascii=False)
    return f"{skill_prompt.rstrip()}\n\n{CONTEXT_HEADING}\n\n{body.strip()}\n"


def _json_equal(a: Any, b: Any) -> bool:
    # Python says True == 1 and 1 == 1.0; JSON answers must match in kind as well.
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and a == b


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _field_equal(name: str, expected: Any, actual: Any, comparator: ComparatorConfig) -> bool:
    if name in comparator.case_insensitive and isinstance(expected, str) and isinstance(actual, str):
        return expected.casefold() == actual.casefold()
    if name in comparator.tolerance and _is_number(expected) and _is_number(actual):
        # The epsilon absorbs float rounding so 0.3 within 0.1 of 0.2 passes as written.
        return abs(expected - actual) <= comparator.tolerance[name] + 1e-12
    return _json_equal(expected, actual)


def compare_answer(expected: dict[str, Any], answer: dict[str, Any],
                   comparator: ComparatorConfig) -> tuple[dict[str, Any], list[str]]:
    """Compare the comparator's fields; return (the answer's values, one message per mismatch).

    Example:
        >>> compare_answer({"risk": "high"}, {"risk": "low", "why": "…"}, ComparatorConfig(fields=["risk"]))
        ({'risk': 'low'}, ['risk: expected "high", got "low"'])
    """
    actual: dict[str, Any] = {}
    mismatches: list[str] = []
    for name in comparator.fields_for(expected):
        if name not in answer:
            mismatches.append(f"{name}: missing from the answer")
            continue
        actual[name] = answer[name]
        if not _field_equal(name, expected[name], answer[name], comparator):
            mismatches.append(f"{name}: expected {_show(expected[name])}, got {_show(answer[name])}")
    return actual, mismatches


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
