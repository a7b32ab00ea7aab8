"""A skill's cases file (``evals/<skill>/cases.jsonl``): each line parsed, the file checked, the cases streamed.

``scan_cases`` checks every line in one streamed pass before any engine is called, each problem
named by file and line (bad input is a ``DocumentError``, exit 2, never a failed case);
``iter_cases`` streams the cases again while they are scored. The cases file is only ever opened
for reading.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from sprintflow.errors import DocumentError, Problem
from sprintflow.io.documents import loads_json
from sprintflow.schemas.scoring import ComparatorConfig, EvalCase

__all__ = ["iter_cases", "parse_case_line", "scan_cases"]

MAX_PROBLEMS = 50


def parse_case_line(raw: bytes, number: int, file: str,
                    comparator: ComparatorConfig | None = None, skill: str = "") -> EvalCase:
    """Parse one line of a cases file into an ``EvalCase``; every problem names ``file:number``.

    Raises:
        DocumentError: the line is not JSON, not an object, or lacks a usable
            ``id``, ``input`` or ``expected`` (or ``expected`` names none of the
            fields the comparator checks).

    Example:
        >>> parse_case_line(b'{"id": 1, "input": "diff", "expected": {"escalate": true}}', 1, "c.jsonl").id
        1
    """
    where = f"{file}:{number}"
    try:
        # Without its newline, so a truncated line's error points at its column, not "line 2".
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
        data = loads_json(text)
    except UnicodeDecodeError as exc:
        raise DocumentError([Problem(where, None, f"not UTF-8: {exc.reason} at byte {exc.start}")]) from None
    except ValueError as exc:
        raise DocumentError([Problem(where, None, str(exc).replace("at line 1 column", "at column"))]) from None
    if not isinstance(data, dict):
        raise DocumentError([Problem(where, None, "a case must be a JSON object with id, input and expected")])
    problems = []
    case_id = data.get("id")
    if "id" not in data:
        problems.append(Problem(where, "id", "missing"))
    elif isinstance(case_id, bool) or not isinstance(case_id, (str, int)) or case_id == "":
        problems.append(Problem(where, "id", "must be a non-empty string or an integer"))
    if "input" not in data:
        problems.append(Problem(where, "input", "missing"))
    expected = data.get("expected")
    if "expected" not in data:
        problems.append(Problem(where, "expected", "missing: a case needs the expected answer fields"))
    elif not isinstance(expected, dict) or not expected:
        problems.append(Problem(where, "expected", "must be a JSON object naming at least one field"))
    elif comparator is not None and not comparator.fields_for(expected):
        problems.append(Problem(where, "expected", f"names none of the fields {skill or 'the skill'} "
                                                   f"compares ({', '.join(comparator.fields)})"))
    if problems:
        raise DocumentError(problems)
    # Checked above: both keys are present and usable.
    return EvalCase(id=data["id"], input=data["input"], expected=data["expected"], line=number)


def _case_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    # "rb": read-only, and bytes so the hash sees exactly what is on disk.
    with path.open("rb") as handle:
        yield from enumerate(handle, start=1)


def scan_cases(path: Path, comparator: ComparatorConfig | None = None, shown: str | None = None,
               *, skill: str = "") -> tuple[int, str]:
    """Check every line of a cases file in one streamed pass; return (case count, sha256).

    Collects every problem (up to 50) rather than stopping at the first, and
    reports duplicate ids with both line numbers.

    Raises:
        DocumentError: any malformed line, duplicate id, or a file without cases.

    Example:
        >>> scan_cases(Path("examples/scoring/evals/triage/cases.jsonl"))[0]
        8
    """
    shown = shown or str(path)
    digest = hashlib.sha256()
    seen: dict[str, int] = {}
    problems: list[Problem] = []
    extra = total = 0
    try:
        for number, raw in _case_lines(path):
            digest.update(raw)
            if not raw.strip():
                continue
            try:
                case = parse_case_line(raw, number, shown, comparator, skill)
            except DocumentError as exc:
                found = exc.problems
            else:
                key = str(case.id)
                if key in seen:
                    found = [Problem(f"{shown}:{number}", "id",
                                     f"duplicate id {case.id!r} (first on line {seen[key]})")]
                else:
                    seen[key] = number
                    total += 1
                    continue
            room = MAX_PROBLEMS - len(problems)
            problems.extend(found[:room])
            extra += max(0, len(found) - room)
    except OSError as exc:
        raise DocumentError([Problem(shown, None, f"cannot read the cases: {exc}")]) from None
    if extra:
        problems.append(Problem(shown, None, f"... and {extra} more problems"))
    if problems:
        raise DocumentError(problems)
    if not total:
        raise DocumentError([Problem(shown, None, "no cases: the file has no case lines")])
    return total, digest.hexdigest()


def iter_cases(path: Path, *, expect_sha256: str | None = None, shown: str | None = None) -> Iterator[EvalCase]:
    """Stream the cases of a file, one line at a time, in file order.

    With ``expect_sha256`` (from ``scan_cases``), a file that changed since it was
    checked raises at the end instead of yielding a report for a different case set.

    Example:
        >>> [case.id for case in iter_cases(Path("examples/scoring/evals/triage/cases.jsonl"))][:2]
        ['pr-101', 'pr-102']
    """
    shown = shown or str(path)
    digest = hashlib.sha256()
    for number, raw in _case_lines(path):
        digest.update(raw)
        if raw.strip():
            yield parse_case_line(raw, number, shown)
    if expect_sha256 is not None and digest.hexdigest() != expect_sha256:
        raise DocumentError([Problem(shown, None, "the cases file changed while it was being scored")])
