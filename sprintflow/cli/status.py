"""sprintflow status [WORKSPACE]: contracts, their status, iterations and last results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


@click.command()
@click.argument("workspace", type=click.Path(path_type=Path), default=".")
@click.option("--contracts", type=click.Path(path_type=Path), default=None,
              help="Folder of contracts: absolute, or relative to WORKSPACE (else to the current folder), "
                   "as for run. Default: WORKSPACE/.sprintflow/contracts.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per contract.")
def status(workspace: Path, contracts: Path | None, as_json: bool) -> None:
    """Show every contract: status, iterations used, the last result and its summary.

    \b
    Exit codes:
      0  shown (whatever the contracts' status)
      2  usage or input error: no such workspace or contracts folder, an invalid contract
    """
    from rich.console import Console
    from rich.table import Table

    from sprintflow.evaluate.result import load_eval
    from sprintflow.io.inputs import resolve_input
    from sprintflow.io.layout import WorkspaceLayout
    from sprintflow.sprint.contracts import dependency_order, load_contracts

    if contracts is not None:
        contracts = resolve_input(workspace, contracts, "contracts folder")
    loaded = load_contracts(contracts or WorkspaceLayout(workspace).contracts_dir)
    rows: list[dict[str, Any]] = []
    for cid in dependency_order({k: c for k, (_, c) in loaded.items()}):
        contract = loaded[cid][1]
        last = contract.iteration_history[-1] if contract.iteration_history else None
        result = load_eval(workspace, cid, last.iteration) if last else None
        rows.append({"contractId": cid, "status": contract.status.value,
                     "iterations": len(contract.iteration_history), "dependsOn": contract.depends_on,
                     "lastResult": last.result if last else None, "lastEvalId": contract.last_eval_id,
                     "summary": result.summary if result else None})
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    table = Table(title=f"contracts in {workspace}")
    for column in ("contract", "status", "iterations", "last", "summary"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(row["contractId"], row["status"], str(row["iterations"]), row["lastResult"] or "",
                      (row["summary"] or "")[:160])
    Console().print(table)
