"""sprintflow bugs list|show|transition: the bug lifecycle in ``.sprintflow/bugs.ndjson``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from sprintflow.errors import InputError
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.testruns.bugs import (
    TRANSITIONS,
    Bug,
    BugFold,
    bug_history,
    fold_bugs,
    list_bugs,
    transition_bug,
)

__all__ = ["bugs"]

_STATUSES = click.Choice(list(TRANSITIONS))


def _common(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options every bugs command takes: where the workspace is, and JSON output."""
    command = click.option("--json", "as_json", is_flag=True,
                           help="Print JSON instead of text.")(command)
    return click.option("--workspace", type=click.Path(path_type=Path, file_okay=False),
                        default=Path("."), show_default=True,
                        help="Workspace whose .sprintflow/bugs.ndjson to use.")(command)


@click.group()
def bugs() -> None:
    """Bugs the tester opened for failing tests: list them, show one, move one along.

    Statuses go open -> fixing -> fixed (open -> fixed too); fixed -> open is a reopen.
    """


@bugs.command("list")
@click.option("--unit", help="Only this unit's bugs.")
@click.option("--status", "statuses", type=_STATUSES, multiple=True,
              help="Only bugs in this status (repeatable).")
@_common
def list_command(workspace: Path, as_json: bool, unit: str | None,
                 statuses: tuple[str, ...]) -> None:
    """List the current state of every bug, oldest first.

    Exit codes: 0 listed, 2 no such workspace, or a ledger that is not a regular file.
    """
    found = list_bugs(_fold(workspace), unit=unit, statuses=statuses or None)
    if as_json:
        _echo_json([bug.model_dump(mode="json") for bug in found])
        return
    if not found:
        click.echo("no bugs")
    for bug in found:
        click.echo(f"{bug.id}  {bug.status:<6}  {bug.severity:<8}  {bug.unit}  {bug.test_name}")


@bugs.command("show")
@click.argument("bug_id")
@_common
def show(workspace: Path, as_json: bool, bug_id: str) -> None:
    """Show one bug's current state and its history.

    Exit codes: 0 shown, 2 no such bug or workspace, or a ledger that is not a regular file.
    """
    bug = _fold(workspace).bugs.get(bug_id)
    if bug is None:
        raise InputError(f"no bug {bug_id!r} in {WorkspaceLayout(workspace).bugs_file}")
    history = bug_history(WorkspaceLayout(workspace).bugs_file, bug_id)
    if as_json:
        _echo_json({**bug.model_dump(mode="json"), "history": history})
        return
    _echo_text(bug)
    click.echo("history:")
    for record in history:
        click.echo(f"  {record.get('updated_at')}  {record.get('event')}  "
                   f"{record.get('from_status') or '-'} -> {record.get('status')}"
                   f"  by {record.get('by') or '-'}")


@bugs.command("transition")
@click.argument("bug_id")
@click.option("--to", "to", type=_STATUSES, required=True, help="The new status.")
@click.option("--by", default="cli", show_default=True, help="Who makes the change.")
@click.option("--fix-ref", "fix_refs", multiple=True,
              help="A run or commit that fixed it (repeatable).")
@_common
def transition(workspace: Path, as_json: bool, bug_id: str, to: str, by: str,
               fix_refs: tuple[str, ...]) -> None:
    """Move a bug to a new status; an illegal move exits 2 and writes nothing.

    Exit codes: 0 moved, 2 an illegal move, no such bug or workspace, or a bad option (nothing written).
    """
    bug = transition_bug(WorkspaceLayout(workspace).bugs_file, bug_id, to, by=by, fix_refs=fix_refs)
    if as_json:
        _echo_json(bug.model_dump(mode="json"))
    else:
        click.echo(f"{bug.id}: {bug.from_status} -> {bug.status}")


def _fold(workspace: Path) -> BugFold:
    """The fold of the workspace's bugs; unreadable lines are warned about, never fatal."""
    fold = fold_bugs(WorkspaceLayout(workspace).bugs_file)
    for problem in fold.problems:
        click.echo(f"warning: {problem}", err=True)
    return fold


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _echo_text(bug: Bug) -> None:
    for name, value in bug.model_dump(mode="json").items():
        if value not in (None, [], ""):
            click.echo(f"{name}: {', '.join(value) if isinstance(value, list) else value}")
