"""Ways to show an EvalResult: terminal text, markdown and table artifacts, GitHub, JUnit."""

from __future__ import annotations

import re
from xml.etree import ElementTree as ET

from sprintflow.schemas import EvalResult, Outcome

__all__ = ["artifact_key", "eval_markdown", "eval_table", "github_annotations", "junit_xml"]

_MARK = {Outcome.passed: "✅ pass", Outcome.failed: "❌ fail", Outcome.skipped: "⏭ skipped"}


def artifact_key(contract_id: str) -> str:
    """Prefect artifact keys allow lowercase letters, digits and dashes only."""
    return "eval-" + re.sub(r"[^a-z0-9-]+", "-", contract_id.lower()).strip("-")


def _cell(text: str | None, limit: int = 160) -> str:
    text = (text or "").replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def eval_markdown(result: EvalResult) -> str:
    """A markdown page: verdict, score, strategies, criteria, then the feedback to act on."""
    s = result.score
    lines = [
        f"# {result.eval_id}: {result.overall_result.upper()}",
        "",
        result.summary,
        "",
        f"**Criteria** {s.criteria_passed}/{s.criteria_total} passed · **required** "
        f"{s.required_passed}/{s.required_total} · skipped {s.criteria_skipped}",
        "",
        "## Strategies",
        "| strategy | required | result | errors | time | details |",
        "|---|---|---|---|---|---|",
    ]
    for r in result.strategy_results:
        took = f"{r.duration_ms / 1000:.1f} s" if r.duration_ms is not None else ""
        took += " (cached)" if r.cached else ""
        lines.append(f"| {r.strategy} | {'yes' if r.required else 'no'} | {_MARK[r.result]} | "
                     f"{'' if r.error_count is None else r.error_count} | {took} | {_cell(r.details)} |")
    lines += ["", "## Criteria", "| criterion | required | result | evidence |", "|---|---|---|---|"]
    for c in result.criteria_results:
        lines.append(f"| {c.criterion_id} | {'yes' if c.required else 'no'} | {_MARK[c.result]} | "
                     f"{_cell(c.evidence)} |")
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


def eval_table(result: EvalResult) -> list[dict[str, object]]:
    """One row per strategy and criterion, for a Prefect table artifact."""
    rows: list[dict[str, object]] = [
        {"kind": "strategy", "name": r.strategy, "required": r.required, "result": r.result.value,
         "errors": r.error_count, "duration_ms": r.duration_ms, "cached": r.cached}
        for r in result.strategy_results
    ]
    rows += [{"kind": "criterion", "name": c.criterion_id, "required": c.required, "result": c.result.value,
              "errors": None, "duration_ms": None, "cached": None} for c in result.criteria_results]
    return rows


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(result: EvalResult) -> str:
    """``::error file=…,line=…::`` workflow commands, one per feedback item."""
    lines = []
    for item in result.generator_feedback:
        level = "error" if item.priority.value in ("critical", "high") else "warning"
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
    """JUnit XML: one suite for strategies, one for criteria; skipped and failed marked as such."""
    root = ET.Element("testsuites", name=result.eval_id)
    suites = {
        "strategies": [(r.strategy, r.result, r.details, r.output, (r.duration_ms or 0) / 1000)
                       for r in result.strategy_results],
        "criteria": [(c.criterion_id, c.result, c.evidence, c.feedback, 0.0) for c in result.criteria_results],
    }
    for name, cases in suites.items():
        suite = ET.SubElement(root, "testsuite", name=f"{result.contract_id}.{name}", tests=str(len(cases)),
                              failures=str(sum(c[1] is Outcome.failed for c in cases)),
                              skipped=str(sum(c[1] is Outcome.skipped for c in cases)))
        for case_name, outcome, message, text, seconds in cases:
            case = ET.SubElement(suite, "testcase", classname=f"{result.contract_id}.{name}",
                                 name=case_name, time=f"{seconds:.3f}")
            if outcome is Outcome.failed:
                ET.SubElement(case, "failure", message=message[:500]).text = text
            elif outcome is Outcome.skipped:
                ET.SubElement(case, "skipped", message=message[:500])
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
