"""The drill-down sample: the newest evaluations of each day and result, with their strategy and criterion results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

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


def _sample(evals: pd.DataFrame, evaluations: pd.DataFrame, key: np.ndarray, to_green: pd.DataFrame,
            flow_runs: str | None = None) -> list[dict[str, Any]]:
    """The newest evaluations of each day and result, with their strategy and criterion results."""
    picked = evaluations.sort_values("timestamp", ascending=False, kind="stable")
    picked = picked.groupby(["day", "result"], observed=True, sort=False).head(SAMPLE_PER_DAY).head(SAMPLE_LIMIT)
    picked = picked.astype({"day": object, "contract": object, "engine": object, "executor": object})
    wanted = np.isin(key, picked["key"].to_numpy())
    parts = evals.loc[wanted & (evals["kind"] != "evaluation").to_numpy(), ["kind", "name", "result"]]
    parts = parts.assign(key=key[wanted & (evals["kind"] != "evaluation").to_numpy()])
    results: dict[int, dict[str, dict[str, str]]] = {}
    for row in parts.itertuples(index=False):
        entry = results.setdefault(int(row.key), {"strategy": {}, "criterion": {}})
        entry["strategy" if row.kind == "strategy" else "criterion"][str(row.name)] = str(row.result)
    green_at = to_green.set_index("sprint")["iterations_to_green"]
    records = []
    for row in picked.itertuples(index=False):
        parts_of = results.get(int(row.key), {"strategy": {}, "criterion": {}})
        green = green_at.get(int(row.sprint))
        records.append({
            "key": f"{row.eval_id}@{row.timestamp.isoformat()}", "eval_id": row.eval_id,
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
