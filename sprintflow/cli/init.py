"""sprintflow init [WORKSPACE]: a project's first sprintflow.toml, contract and .sprintflow/.gitignore."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from sprintflow.project.init import PlannedFile


@click.command()
@click.argument("workspace", type=click.Path(path_type=Path), default=".")
@click.option("--dry-run", is_flag=True, help="Print what would be written; write nothing.")
def init(workspace: Path, dry_run: bool) -> None:
    """Write the project's first sprintflow files, from what the project has.

    \b
    sprintflow.toml                    the strategies the project can run: package.json scripts (run
                                       with the package manager of its lockfile), pyproject's tools
                                       ([tool.pytest], [tool.ruff], [tool.mypy]), requirements,
                                       go.mod, Cargo.toml, pom.xml; each names the file it came from
    .sprintflow/contracts/…-1.json     a first contract, one criterion per strategy
    .sprintflow/.gitignore             keeps the run's state (lock, cache, results, history) out of git

    A file already there is kept, so a second run changes nothing; a configuration the
    project has (sprintflow.toml, [tool.sprintflow], bober.config.json) is used as it is.
    Then: sprintflow evaluate WORKSPACE --contract .sprintflow/contracts/<id>.json

    \b
    Exit codes: 0 written (or nothing to do), 2 the workspace or one of its files cannot be
    used (the message names it; nothing is written).
    """
    from sprintflow.project.init import plan_init

    _show(plan_init(workspace), workspace, dry_run)


@click.group()
def contract() -> None:
    """Contracts beyond the first (`sprintflow init` writes that one)."""


@contract.command("new")
@click.argument("title")
@click.option("--workspace", "-w", type=click.Path(path_type=Path), default=".", show_default=True,
              help="The project.")
@click.option("--spec", "spec_id", default=None,
              help="The plan (specId) the contract belongs to (default: the one of the existing contracts).")
@click.option("--dry-run", is_flag=True, help="Print the contract; write nothing.")
def new(title: str, workspace: Path, spec_id: str | None, dry_run: bool) -> None:
    """Write the next contract, titled TITLE: the next free id (sprint-<specId>-<n>), one criterion per
    strategy of the configuration, status proposed. Edit its description and criteria before a run.

    \b
    Exit codes: 0 written, 2 an unusable title or workspace, or contracts that cannot be read
    (the message names the file; nothing is written).
    """
    from sprintflow.project.init import plan_contract

    _show([plan_contract(workspace, title, spec_id)], workspace, dry_run)


def _show(planned: list[PlannedFile], workspace: Path, dry_run: bool) -> None:
    """Print what is (or would be) written and kept; write it unless ``dry_run``."""
    from sprintflow.project.init import write_planned

    for item in planned:
        where = _shown(item.path, workspace)
        if item.exists:
            click.echo(f"kept {where} (already there)")
        elif dry_run:
            click.echo(f"would write {where}:")
            click.echo(item.text.rstrip("\n"))
    if dry_run:
        return
    for path in write_planned(planned):
        click.echo(f"wrote {_shown(path, workspace)}")


def _shown(path: Path, workspace: Path) -> str:
    try:
        return str(workspace / path.relative_to(workspace))
    except ValueError:
        return str(path)
