"""The drill-down sample: the newest evaluations of each day and result, with their strategy and criterion results."""

from __future__ import annotations

from typing import Any

import pandas as pd

from sprintflow.history.query import EvalTable
from sprintflow.reporting.explore.cubes import NEVER

__all__ = [
    "SAMPLE_LIMIT",
    "SAMPLE_PER_DAY",
]

SAMPLE_PER_DAY = 12
SAMPLE_LIMIT = 4000


def _flow_run_page() -> str | None:
    """Where the Prefect UI shows a flow run (``…/runs/flow-run/<id>``), when a server is configured."""
    from sprintflow.orchestration.api import configured_api_url

    api = configured_api_url()
    if not api:
        return None
    ui = api.rstrip("/").removesuffix("/api")
    return f"{ui}/runs/flow-run/"


def _sample(table: EvalTable, evaluations: pd.DataFrame, to_green: pd.DataFrame,
            flow_runs: str | None = None) -> list[dict[str, Any]]:
    """The newest evaluations of each day and result, with their strategy and criterion results."""
    picked = evaluations.sort_values("timestamp", ascending=False, kind="stable")
    picked = picked.groupby(["day", "result"], observed=True, sort=False).head(SAMPLE_PER_DAY).head(SAMPLE_LIMIT)
    picked = picked.astype({"day": object, "contract": object, "engine": object, "executor": object})
    rows = pd.DataFrame({"_row": picked["_row"].to_numpy()})
    ids = table.query("SELECT _row, eval_id, run_id, workspace_hash, workspace, sprint_run FROM evals "
                      "WHERE _row IN (SELECT _row FROM _rows)", _rows=rows).set_index("_row")
    picked = picked.assign(**{column: picked["_row"].map(ids[column]) for column in ids.columns})
    # Rows that share an eval id and a timestamp belong to one evaluation.
    keys = pd.DataFrame({"eval_key": picked["eval_id"].astype(object).fillna("").astype(str).to_numpy(),
                         "timestamp": pd.to_datetime(picked["timestamp"], utc=True).to_numpy(),
                         "position": range(len(picked))})
    parts = table.query("""
        SELECT p.position, e.kind, e.name, e.result FROM evals e
        JOIN _picked p ON coalesce(e.eval_id, '') = p.eval_key AND e.timestamp IS NOT DISTINCT FROM p.timestamp
        WHERE e.kind IS DISTINCT FROM 'evaluation' ORDER BY e._row""", _picked=keys)
    results: list[dict[str, dict[str, str]]] = [{"strategy": {}, "criterion": {}} for _ in range(len(picked))]
    for position, kind, name, result in zip(*(parts[c].tolist() for c in parts.columns), strict=True):
        results[position]["strategy" if kind == "strategy" else "criterion"][str(name)] = str(result)
    green_at = to_green.set_index("sprint")["iterations_to_green"]
    records = []
    for row, parts_of in zip(picked.itertuples(index=False), results, strict=True):
        green = green_at.get(int(row.sprint))
        records.append({
            # A row without an eval id (a history written by hand, or damaged) is still shown: JSON has no NaN.
            "key": f"{'' if pd.isna(row.eval_id) else row.eval_id}@{row.timestamp.isoformat()}",
            "eval_id": None if pd.isna(row.eval_id) else str(row.eval_id),
            "at": row.timestamp.strftime("%Y-%m-%d %H:%M"), "day": str(row.day), "contract": str(row.contract),
            "contract_id": str(row.contract_id), "iteration": int(row.iteration), "result": str(row.result),
            "workspace": None if pd.isna(row.workspace) else str(row.workspace),
            "sprint_run": None if pd.isna(row.sprint_run) else str(row.sprint_run),
            "flow_run": f"{flow_runs}{row.run_id}" if flow_runs and not pd.isna(row.run_id) else None,
            "engine": str(row.engine), "executor": str(row.executor),
            "hash": None if pd.isna(row.workspace_hash) else str(row.workspace_hash)[:12],
            "strategies": parts_of["strategy"], "criteria": parts_of["criterion"],
            "green_after": NEVER if green is None or pd.isna(green) else int(green),
            "tokens": None if pd.isna(row.tokens) else int(row.tokens),
            "cost": None if pd.isna(row.cost_usd) else round(float(row.cost_usd), 4),
        })
    return records
