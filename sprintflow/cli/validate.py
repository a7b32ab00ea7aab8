"""sprintflow validate FILE...: check documents against their schemas and the seed's rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sprintflow.errors import DocumentError, Problem
from sprintflow.schemas.validation import KINDS, detect_kind, duplicate_id_problems, parse_json_file, validate_data


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(sorted(KINDS)), help="Document kind (default: detected from its keys).")
def validate(files: tuple[Path, ...], kind: str | None) -> None:
    """Validate sprintflow documents: contracts, plan specs, eval results, configs.

    Configs are read as sprintflow reads them: sprintflow.toml, a pyproject.toml's
    [tool.sprintflow], or the parts of agent-bober's bober.config.json it judges by.

    Prints every problem as `file: json/path: message`. Contracts are also checked
    against the seed's rules (id formats, a build and a functional criterion, no
    vague wording) and their dependsOn against the other contracts given (known ids,
    no dependency cycle).

    Exit codes: 0 all valid, 2 any invalid.
    """
    from sprintflow.evaluate.config import BOBER_CONFIG, config_problems

    loaded: list[tuple[Path, Any]] = []
    problems: list[Problem] = []
    for path in files:
        if path.suffix == ".toml" or path.name == BOBER_CONFIG:  # configs, read as sprintflow reads them
            found = config_problems(path)
            problems.extend(found)
            if not found:
                click.echo(f"{path}: valid config")
            continue
        try:
            loaded.append((path, parse_json_file(path)))
        except DocumentError as exc:
            problems.extend(exc.problems)
    contract_ids = {str(data.get("contractId")) for _, data in loaded if isinstance(data, dict)}
    problems += duplicate_id_problems({str(path): data for path, data in loaded
                                       if (kind or detect_kind(data)) == "contract"})
    valid: list[tuple[Path, str, Any]] = []
    for path, data in loaded:
        doc_kind = kind or detect_kind(data)
        if doc_kind is None:
            problems.append(Problem(str(path), "$", "cannot tell the document kind; pass --kind"))
            continue
        known = contract_ids if len(files) > 1 else None
        found = validate_data(data, doc_kind, str(path), known)
        problems.extend(found)
        if not found:
            valid.append((path, doc_kind, data))
    cycles = _cycle_problems({str(path): data for path, doc_kind, data in valid if doc_kind == "contract"})
    problems.extend(cycles)
    for path, doc_kind, _ in valid:
        if not any(p.file == str(path) for p in cycles):
            click.echo(f"{path}: valid {doc_kind}")
    if problems:
        raise DocumentError(problems)


def _cycle_problems(contracts: dict[str, dict]) -> list[Problem]:
    """Dependency cycles among the valid contracts given, found by the sprint's own ``dependency_order``."""
    from sprintflow.schemas import SprintContract
    from sprintflow.sprint.contracts import dependency_order

    files = {data["contractId"]: file for file, data in contracts.items()}
    models = {data["contractId"]: SprintContract.model_validate(data) for data in contracts.values()}
    # Only contracts whose dependencies are all here can be ordered (the others are already reported).
    while missing := [cid for cid, c in models.items() if not set(c.depends_on) <= models.keys()]:
        for cid in missing:
            del models[cid]
    try:
        dependency_order(models)
    except DocumentError as exc:
        return [Problem(files[p.file], p.path, p.message) for p in exc.problems]
    return []
