"""What the page shows of EvalResult files and journals: each sampled evaluation's excerpt and transcript, and
the latest feedback of each engine in the side-by-side; texts capped, credentials masked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from sprintflow.io.layout import WorkspaceLayout
from sprintflow.io.secrets import mask_secrets

__all__ = [
    "SIDE_BY_SIDE_LIMIT",
    "TEXT_LIMIT",
    "TRANSCRIPT_LIMIT",
    "eval_details",
    "side_by_side_feedback",
]

SIDE_BY_SIDE_LIMIT = 100
"""Contract pairs the page shows side by side, with their feedback (the page says how many it leaves out)."""
TEXT_LIMIT = 1500
"""Characters kept of any one text (a summary, a strategy's output) in a detail."""
TRANSCRIPT_LIMIT = 6000
"""Characters kept of an engine's prompt and of its answer in a detail (the journal keeps 20,000)."""


def _cut(text: Any, limit: int = TEXT_LIMIT) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else f"{text[:limit]} … [{len(text) - limit:,} more characters]"


def eval_details(workspace: Path | str | None, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """EvalResult excerpts for sampled evaluations whose file is still the one recorded (same timestamp).

    Each file is read from the workspace its evaluation ran in (a shared history holds many), else
    from ``workspace``. A file that now holds another evaluation (an older, reused eval id) is not
    shown as this one's.

    Returns:
        ``key -> {summary, feedback[], strategies[{name, result, details, diagnostics[]}],
        criteria[{id, result, evidence, feedback}], regressions[]}``, texts capped; for a sprint's
        iteration also ``generator{prompt, answer, …}`` and ``tester{prompt, answer, …}`` from its journal,
        credentials masked.
    """
    details: dict[str, dict[str, Any]] = {}
    for record in records:
        home = record.get("workspace") or workspace
        if home is None:
            continue
        try:
            path = WorkspaceLayout(Path(home)).eval_file(record["eval_id"])
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign file only costs the detail
            continue
        if not isinstance(doc, dict) or pd.Timestamp(doc.get("timestamp", "")).strftime("%Y-%m-%d %H:%M") \
                != record["at"]:
            continue
        details[record["key"]] = {**_excerpt(doc), **_transcript(Path(home), record)}
    return details


def side_by_side_feedback(pairs: pd.DataFrame, workspace: Path | str | None = None,
                          limit: int | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` (default :data:`SIDE_BY_SIDE_LIMIT`) rows of
    :func:`~sprintflow.reporting.analytics.engine_side_by_side`, each side with its latest evaluation's
    verdict and feedback, read from the EvalResult file it recorded.

    A side whose file is gone (or now holds another evaluation) keeps its verdict and says so.

    Returns:
        ``[{contract_id, a: {engine, sprints, green, first_green, result, eval_id, feedback[], summary,
        found}, b: {…}}]``, newest pair first.
    """
    if pairs.empty:
        return []
    limit = SIDE_BY_SIDE_LIMIT if limit is None else limit
    newest = pairs.assign(_at=pairs[["last_at_a", "last_at_b"]].max(axis=1)).sort_values(
        "_at", ascending=False, kind="stable").head(limit)
    rows = []
    for row in newest.to_dict("records"):
        sides = {side: _side(row, side, workspace) for side in "ab"}
        rows.append({"contract_id": str(row["contract_id"]), **sides})
    return rows


def _side(row: dict[str, Any], side: str, workspace: Path | str | None) -> dict[str, Any]:
    eval_id, home = row[f"last_eval_id_{side}"], row[f"last_workspace_{side}"]
    out: dict[str, Any] = {"engine": str(row[f"engine_{side}"]), "sprints": int(row[f"sprints_{side}"]),
                           "green": int(row[f"green_{side}"]), "first_green": bool(row[f"first_green_{side}"]),
                           "result": str(row[f"last_result_{side}"]), "eval_id": str(eval_id), "found": False,
                           "summary": "", "feedback": []}
    home = home if isinstance(home, str) and home else workspace
    if home is None or not isinstance(eval_id, str):
        return out
    minute = "%Y-%m-%d %H:%M"
    try:
        doc = json.loads(WorkspaceLayout(Path(home)).eval_file(eval_id).read_text(encoding="utf-8"))
        # The file must still hold this evaluation (the same test as eval_details).
        same = pd.Timestamp(doc.get("timestamp", "")).strftime(minute) == pd.Timestamp(row[f"last_at_{side}"]
                                                                                        ).strftime(minute)
    except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign file only costs the feedback
        return out
    if not same:
        return out
    excerpt = _excerpt(doc)
    return {**out, "found": True, "summary": excerpt["summary"], "feedback": excerpt["feedback"][:10]}


def _masked(text: Any, limit: int = TRANSCRIPT_LIMIT) -> str:
    return _cut(mask_secrets(text if isinstance(text, str) else ""), limit)


def _transcript(workspace: Path, record: dict[str, Any]) -> dict[str, Any]:
    """The sprint iteration's engine steps, from its journal: the generator's prompt and answer, the
    tester's; masked and cut. Only the journal of the same sprint run (its pin) is this evaluation's:
    a later sprint of the contract writes the same iteration's journal anew."""
    if not record.get("sprint_run"):
        return {}
    layout = WorkspaceLayout(workspace)
    try:
        entry = json.loads(layout.journal_file(record["contract_id"], record["iteration"]).read_text(encoding="utf-8"))
    except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign journal only costs the transcript
        return {}
    if not isinstance(entry, dict) or entry.get("pinId") != record["sprint_run"]:
        return {}
    generator = {"ok": entry.get("ok"), "reason": _masked(entry.get("reason"), 300),
                 "prompt": _masked(entry.get("prompt")), "answer": _masked(entry.get("raw")),
                 "stderr": _masked(entry.get("stderr"), 1500), "cost": entry.get("costUsd"),
                 "tokens": [entry.get("inputTokens"), entry.get("outputTokens")]}
    out: dict[str, Any] = {"generator": generator}
    tester = entry.get("tester")
    if isinstance(tester, dict) and isinstance(tester.get("runId"), str):
        folder = layout.runs_dir / tester["runId"]

        def text(name: str) -> str:
            try:
                return (folder / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return ""

        out["tester"] = {"mode": tester.get("mode"), "run": tester["runId"], "summary": tester.get("summary"),
                         "prompt": _masked(text("prompt.txt")), "answer": _masked(text("engine.txt"))}
    return out


def _excerpt(doc: dict[str, Any]) -> dict[str, Any]:
    def items(values: Any, limit: int = 20) -> list[dict[str, Any]]:
        return [v for v in values[:limit] if isinstance(v, dict)] if isinstance(values, list) else []

    return {
        "summary": _cut(doc.get("summary")),
        "feedback": [{"priority": f.get("priority"), "category": f.get("category"), "file": f.get("file"),
                      "line": f.get("line"), "description": _cut(f.get("description"), 600),
                      "expected": _cut(f.get("expected"), 300)} for f in items(doc.get("generatorFeedback"))],
        "strategies": [{"name": s.get("strategy"), "result": s.get("result"), "details": _cut(s.get("details"), 600),
                        "diagnostics": [{"file": d.get("file"), "line": d.get("line"), "tool": d.get("tool"),
                                         "message": _cut(d.get("message"), 300), "hint": d.get("hint")}
                                        for d in items(s.get("diagnostics"), 10)]}
                       for s in items(doc.get("strategyResults"))],
        "criteria": [{"id": c.get("criterionId"), "result": c.get("result"), "evidence": _cut(c.get("evidence"), 300),
                      "feedback": _cut(c.get("feedback"), 300)} for c in items(doc.get("criteriaResults"), 40)],
        "regressions": [_cut(g.get("description"), 300) for g in items(doc.get("regressions"))],
    }
