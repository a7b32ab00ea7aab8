"""Contracts on disk: loaded and checked together, ordered by their dependencies, updated atomically.

Resumability rests on three atomically written files per iteration, checked in
this order when a run starts again: the contract (``iterationHistory``), the
EvalResult of the iteration, and the journal that says the generator step of
the iteration finished (:mod:`sprintflow.sprint.journal`). Whatever exists is
reused; only what is missing runs.
"""

from __future__ import annotations

import graphlib
from pathlib import Path

from sprintflow.errors import DocumentError, Problem
from sprintflow.io.files import atomic_write_text
from sprintflow.schemas import ContractStatus, EvalResult, IterationRecord, SprintContract, utc_now
from sprintflow.schemas.validation import duplicate_id_problems, parse_json_file, validate_data

__all__ = ["dependency_order", "load_contracts", "record_iteration", "transition", "write_contract"]


def load_contracts(folder: Path) -> dict[str, tuple[Path, SprintContract]]:
    """Every contract in ``folder``, validated together (schema, seed rules, dependsOn, cycles)."""
    if not folder.is_dir():
        raise DocumentError([Problem(str(folder), "", "no contracts folder here "
                                                      "(run `sprintflow init` or `sprintflow plan` first)")])
    raw = {path: parse_json_file(path) for path in sorted(folder.glob("*.json"))}
    if not raw:
        raise DocumentError([Problem(str(folder), "", "no contract files (*.json) found")])
    known = {str(data.get("contractId")) for data in raw.values() if isinstance(data, dict)}
    problems = [p for path, data in raw.items() for p in validate_data(data, "contract", str(path), known)]
    problems += duplicate_id_problems({str(path): data for path, data in raw.items()})
    if problems:
        raise DocumentError(problems)
    contracts = {data["contractId"]: (path, SprintContract.model_validate(data)) for path, data in raw.items()}
    dependency_order({cid: c for cid, (_, c) in contracts.items()})  # raises on a cycle
    return contracts


def dependency_order(contracts: dict[str, SprintContract]) -> list[str]:
    """Contract ids so that every contract comes after what it depends on (ties: sprint number, id).

    Raises:
        DocumentError: the dependencies form a cycle, named in the message.

    Example:
        >>> from sprintflow.schemas import load_document
        >>> path = "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
        >>> first = load_document(path, SprintContract)
        >>> path2 = "examples/sprint-demo/contracts/sprint-spec-20260115-todo-api-2.json"
        >>> second = load_document(path2, SprintContract)
        >>> dependency_order({second.contract_id: second, first.contract_id: first})
        ['sprint-spec-20260115-todo-api-1', 'sprint-spec-20260115-todo-api-2']
    """
    sorter = graphlib.TopologicalSorter({cid: contract.depends_on for cid, contract in contracts.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        loop = list(reversed(exc.args[1][1:]))  # graphlib lists dependencies first, and the start twice
        start = loop.index(min(loop, key=lambda cid: (contracts[cid].sprint_number, cid)))
        cycle = loop[start:] + loop[:start + 1]  # from the earliest sprint, back to it
        raise DocumentError([Problem(cycle[0], "dependsOn", f"dependency cycle: {' -> '.join(cycle)}")]) from None
    # One at a time, the lowest sprint number first, so the order follows the plan where it can.
    order: list[str] = []
    ready: list[str] = []
    while sorter.is_active():
        ready.extend(sorter.get_ready())
        ready.sort(key=lambda cid: (contracts[cid].sprint_number if cid in contracts else 0, cid))
        cid = ready.pop(0)
        if cid in contracts:
            order.append(cid)
        sorter.done(cid)
    return order


def write_contract(path: Path, contract: SprintContract) -> None:
    atomic_write_text(path, contract.to_json())


def record_iteration(contract: SprintContract, result: EvalResult) -> None:
    """Append the iteration to the history (once), point lastEvalId at it."""
    if any(r.iteration == result.iteration for r in contract.iteration_history):
        return
    contract.iteration_history.append(IterationRecord(iteration=result.iteration, eval_id=result.eval_id,
                                                      result=result.overall_result, timestamp=result.timestamp,
                                                      pin_id=result.judged.pin_id if result.judged else None))
    contract.last_eval_id = result.eval_id
    contract.updated_at = utc_now()


def transition(contract: SprintContract, to: ContractStatus) -> bool:
    """Transition unless already there (resume may find the contract mid-change)."""
    if contract.status is to:
        return False
    contract.transition(to)
    return True
