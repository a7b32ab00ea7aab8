"""The drill-down sample: the newest evaluations of each day and result, with their strategy and criterion results."""

from __future__ import annotations

from typing import Any

import pandas as pd

from sprintflow.history.query import EvalTable
from sprintflow.reporting.explore.cubes import _BUCKET, NEVER, _bucket_join, _day_sql, _engine_and_executor, _named

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


def _sample(table: EvalTable, named: set[str], to_green: pd.DataFrame,
            flow_runs: str | None = None) -> list[dict[str, Any]]:
    """The newest evaluations of each day and result, with their strategy and criterion results.

    Picked in SQL (the newest first, ties in recorded order), and only the picked rows' columns are read.
    """
    newest = f"""
        SELECT _row FROM (
            SELECT _row, timestamp,
                   row_number() OVER (PARTITION BY {_day_sql("timestamp")}, result ORDER BY timestamp DESC, _row) AS n
            FROM evals WHERE kind = 'evaluation' AND timestamp IS NOT NULL AND result IS NOT NULL)
        WHERE n <= {SAMPLE_PER_DAY} ORDER BY timestamp DESC, _row LIMIT {SAMPLE_LIMIT}"""
    columns = ["eval_id", "timestamp", "contract_id", "iteration", "result", "workspace", "sprint_run", "run_id",
               "workspace_hash", "tokens", "cost_usd", *(["sprint"] if "sprint" in table.columns else [])]
    rows = f"""
        SELECT e._row, {", ".join(f"e.{column}" for column in columns)}, {_day_sql("e.timestamp")} AS day,
               {_BUCKET}, {_engine_and_executor("e")}
        FROM evals e {_bucket_join("e")}
        WHERE e.kind = 'evaluation' AND e._row IN ({newest})"""
    picked = table.query(f"SELECT * FROM ({table.numbered(rows)}) ORDER BY timestamp DESC, _row",
                         _named=_named(named))
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
