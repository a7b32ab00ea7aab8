"""Ways to show an EvalResult: terminal text, markdown and table artifacts, GitHub, JUnit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from sprintflow.schemas import Category, EvalResult, GeneratorFeedback, Outcome, Priority, Score

__all__ = ["annotation_level", "artifact_description", "artifact_key", "eval_markdown", "eval_table", "inferred_lines",
           "format_seconds", "github_annotations", "junit_xml", "verdict_line"]

_MARK = {Outcome.passed: "✅ pass", Outcome.failed: "❌ fail", Outcome.skipped: "⏭ skipped"}


def artifact_key(contract_id: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return "eval-" + re.sub(r"[^a-z0-9-]+", "-", contract_id.lower()).strip("-")


def verdict_line(result: EvalResult) -> str:
    """The one line that says how an evaluation ended: PASS or FAIL first, then the contract.

    Example:
        >>> verdict_line(_EMPTY)
        'PASS x (iteration 1): '
    """
    return f"{result.overall_result.upper()} {result.contract_id} (iteration {result.iteration}): {result.summary}"


def artifact_description(result: EvalResult) -> str:
    """An artifact's description: the verdict and contract lead, so a card preview cut short still shows them.

    Example:
        >>> artifact_description(_EMPTY)
        '**PASS** · x · iteration 1 · 0/0 required criteria'
    """
    s = result.score
    return (f"**{result.overall_result.upper()}** · {result.contract_id} · iteration {result.iteration} · "
            f"{s.required_passed}/{s.required_total} required criteria")


def format_seconds(milliseconds: int | None) -> str:
    """A duration for people: ``850 ms``, ``12.3 s``, ``2 min 05 s``; empty when unknown.

    Example:
        >>> [format_seconds(v) for v in (None, 850, 12_345, 125_000)]
        ['', '850 ms', '12.3 s', '2 min 05 s']
    """
    if milliseconds is None:
        return ""
    if milliseconds < 1000:
        return f"{milliseconds} ms"
    if milliseconds < 60_000:
        return f"{milliseconds / 1000:.1f} s"
    minutes, seconds = divmod(round(milliseconds / 1000), 60)
    return f"{minutes} min {seconds:02d} s"


def _cell(text: str | None, limit: int = 160) -> str:
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


HELD_OUT = "(a held-out eval: its evidence is kept in the EvalResult file only)"
"""What the artifacts show of a held-out eval's evidence: the Prefect API is within the generator's reach."""


def eval_markdown(result: EvalResult) -> str:
    """A markdown page: verdict, score, strategies, criteria, then the feedback to act on."""
    s = result.score
    lines = [
        f"# {result.eval_id}: {result.overall_result.upper()}",
        "",
        result.summary,
        "",
        *([f"**Ran uncontained** ({result.executor.uncontained}): the code under test could reach the "
           "workspace and the rest of the machine.", ""] if result.executor and result.executor.uncontained else []),
        f"**Criteria** {s.criteria_passed}/{s.criteria_total} passed · **required** "
        f"{s.required_passed}/{s.required_total} · skipped {s.criteria_skipped}",
        "",
        "## Strategies",
        "| strategy | required | result | errors | time | details |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.strategy_results:
        took = format_seconds(r.duration_ms) + (" (cached)" if r.cached else "")
        lines.append(f"| {r.strategy} | {'yes' if r.required else 'no'} | {_MARK[r.result]} | "
                     f"{'' if r.error_count is None else r.error_count} | {took} | {_cell(r.details)} |")
    if result.inferred:
        lines += ["", "Inferred from the project (the configuration left them open):"]
        lines += [f"- {line}" for line in inferred_lines(result)]
    lines += ["", "## Criteria", "| criterion | required | result | evidence |", "|---|---|---|---|"]
    for c in result.criteria_results:
        lines.append(f"| {c.criterion_id} | {'yes' if c.required else 'no'} | {_MARK[c.result]} | "
                     f"{_cell(HELD_OUT if c.held_out else c.evidence)} |")
    if result.regressions:
        lines += ["", "## Regressions"] + [f"- **{r.severity}** {r.description}" for r in result.regressions]
    if result.generator_feedback:
        lines += ["", "## Feedback for the generator"]
        for item in result.generator_feedback:
            where = (f" `{item.file}:{item.line}`" if item.file and item.line
                     else (f" `{item.file}`" if item.file else ""))
            lines.append(f"- **{item.priority.value}** ({item.category.value}){where}: {_cell(item.description, 400)}"
                         f" — expected: {_cell(item.expected, 300)}")
    return "\n".join(lines) + "\n"


def inferred_lines(result: EvalResult) -> list[str]:
    """One line per strategy or command the project's files decided, with the file that said so.

    Example:
        >>> from sprintflow.schemas import InferredCommand, StrategyType
        >>> inferred = InferredCommand(strategy=StrategyType.build, command="npm run build",
        ...                            source="package.json scripts.build")
        >>> inferred_lines(EvalResult.model_construct(inferred=[inferred]))
        ['build: `npm run build` (from package.json scripts.build)']
    """
    return [f"{i.strategy.value}: `{i.command}` (from {i.source})" for i in result.inferred]


def eval_table(result: EvalResult) -> list[dict[str, str]]:
    """One row per strategy and criterion, for a Prefect table artifact: text made for reading.

    Times read ``12.3 s``, counts are whole numbers, a reused result says ``cached``
    and empty cells stay empty (the UI would print ``null``).

    Example:
        >>> eval_table(_EMPTY)
        []
    """
    rows = [{"kind": "strategy", "name": r.strategy, "required": "yes" if r.required else "no",
             "result": _MARK[r.result], "errors": "" if r.error_count is None else f"{r.error_count:,}",
             "time": format_seconds(r.duration_ms), "cached": "cached" if r.cached else "",
             "details": _cell(r.details, 120)}
            for r in result.strategy_results]
    rows += [{"kind": "criterion", "name": c.criterion_id, "required": "yes" if c.required else "no",
              "result": _MARK[c.result], "errors": "", "time": "", "cached": "",
              "details": _cell(HELD_OUT if c.held_out else c.evidence, 120)}
             for c in result.criteria_results]
    return rows


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_level(item: GeneratorFeedback, result: EvalResult) -> str:
    """``error`` for what fails the evaluation, ``warning`` for what does not.

    An item is an error when it is critical or high, when it is located at an
    error a failed strategy reported (a failing ruff error is an error whatever
    its priority), or when it is an environment failure; notes and non-blocking
    findings are warnings.

    Example:
        >>> from sprintflow.schemas import Category, Priority
        >>> annotation_level(GeneratorFeedback(priority=Priority.low, category=Category.quality,
        ...                                    description="d", expected="e"), _EMPTY)
        'warning'
    """
    if item.priority in (Priority.critical, Priority.high) or item.category is Category.environment:
        return "error"
    failed_errors = {(d.file, d.line) for s in result.strategy_results if s.result is Outcome.failed
                     for d in s.diagnostics if d.severity == "error" and d.file}
    return "error" if (item.file, item.line) in failed_errors else "warning"


def github_annotations(result: EvalResult) -> str:
    """``::error file=…,line=…::`` workflow commands, one per feedback item (see :func:`annotation_level`)."""
    lines = []
    for item in result.generator_feedback:
        level = annotation_level(item, result)
        props = []
        if item.file:
            props.append(f"file={item.file}")
            if item.line:
                props.append(f"line={item.line}")
        props.append(f"title={item.priority.value} {item.category.value}")
        message = f"{item.description} Expected: {item.expected}"
        lines.append(f"::{level} {','.join(props)}::{_escape_annotation(message)}")
    summary_level = "notice" if result.overall_result == "pass" else "error"
    lines.append(f"::{summary_level} title={result.eval_id}::{_escape_annotation(result.summary)}")
    return "\n".join(lines) + "\n"


def junit_xml(result: EvalResult) -> str:
    """JUnit XML: one suite for strategies, one for criteria, with totals and times.

    Each suite and the root carry ``tests``, ``failures``, ``errors``, ``skipped``
    and ``time`` (seconds); a strategy reused from an identical earlier run is
    marked with a ``cached`` property and says so in its output, its time being
    the original run's.

    Example:
        >>> root = ET.fromstring(junit_xml(_EMPTY))
        >>> root.get("tests"), root.get("failures"), root.get("time")
        ('0', '0', '0.000')
    """
    root = ET.Element("testsuites", name=result.eval_id)
    suites = {
        "strategies": [_Case(r.strategy, r.result, r.details, r.output, (r.duration_ms or 0) / 1000, r.cached)
                       for r in result.strategy_results],
        "criteria": [_Case(c.criterion_id, c.result, c.evidence, c.feedback, 0.0, False)
                     for c in result.criteria_results],
    }
    for name, cases in suites.items():
        suite = ET.SubElement(root, "testsuite", {"name": f"{result.contract_id}.{name}", **_totals(cases)})
        for case in cases:
            element = ET.SubElement(suite, "testcase", classname=f"{result.contract_id}.{name}",
                                    name=case.name, time=f"{case.seconds:.3f}")
            if case.cached:
                properties = ET.SubElement(element, "properties")
                ET.SubElement(properties, "property", name="cached", value="true")
            if case.outcome is Outcome.failed:
                ET.SubElement(element, "failure", message=case.message[:500]).text = case.text
            elif case.outcome is Outcome.skipped:
                ET.SubElement(element, "skipped", message=case.message[:500])
            if case.cached:
                ET.SubElement(element, "system-out").text = ("cached: reused from an identical earlier run "
                                                            "(same workspace content and configuration)")
    all_cases = [case for cases in suites.values() for case in cases]
    root.attrib.update(_totals(all_cases))
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


@dataclass(frozen=True)
class _Case:
    name: str
    outcome: Outcome
    message: str
    text: str
    seconds: float
    cached: bool


def _totals(cases: list[_Case]) -> dict[str, str]:
    return {"tests": str(len(cases)), "failures": str(sum(c.outcome is Outcome.failed for c in cases)),
            "errors": "0", "skipped": str(sum(c.outcome is Outcome.skipped for c in cases)),
            "time": f"{sum(c.seconds for c in cases):.3f}"}


# An evaluation with nothing in it, for the examples above.
_EMPTY = EvalResult(eval_id="eval-x-1", contract_id="x", spec_id="s", timestamp="2026-01-01T00:00:00Z",
                    iteration=1, overall_result="pass", summary="",
                    score=Score(criteria_total=0, criteria_passed=0, criteria_failed=0, criteria_skipped=0,
                                required_passed=0, required_failed=0, required_total=0))
