"""Where the paths people give resolve: one rule for the CLI and for deployment runs.

* The workspace is relative to the current folder: the shell's for a command;
  for a deployment run, the folder ``sprintflow serve`` or the worker started in
  (``SPRINTFLOW_ROOT``), or the checkout when the run names a git repository.
* A file or folder the run reads (a contract, the contracts folder, a scorer's
  cases or prompt) is looked for in the workspace first, then in the current
  folder. When both hold a different one, the path is ambiguous and refused:
  nothing is judged against a file nobody meant.
* A folder the run writes (a report's ``out``) is relative to the current folder.

So ``sprintflow evaluate app --contract .sprintflow/contracts/c.json`` and
``--contract app/.sprintflow/contracts/c.json`` name the same file, and a form
field ``contract: .sprintflow/contracts/c.json`` does too.
"""

from __future__ import annotations

from pathlib import Path

from sprintflow.errors import InputError, WorkspaceError

__all__ = ["resolve_input", "resolve_output"]


def resolve_input(workspace: Path | str, given: Path | str, what: str) -> Path:
    """The path ``given`` names: absolute as it is; relative, in the workspace or else the current folder.

    ``what`` names the path in errors ("contract", "contracts folder", ...).

    Raises:
        WorkspaceError: the workspace is not a folder (said first: it explains the rest).
        InputError: found in neither place, or two different files in both.

    Example:
        >>> import os, tempfile
        >>> ws = Path(tempfile.mkdtemp()); (ws / "c.json").write_text("{}")
        2
        >>> resolve_input(ws, "c.json", "contract") == ws / "c.json"
        True
    """
    if not Path(workspace).is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    path = Path(given).expanduser()
    if path.is_absolute():
        return path
    here = Path.cwd()
    found = [candidate for candidate in (Path(workspace) / path, here / path) if candidate.exists()]
    distinct = {candidate.resolve() for candidate in found}
    if len(distinct) > 1:
        raise InputError(f"{what} {given} is ambiguous: both {found[0]} (in the workspace) and {found[1]} "
                         "(in the current folder) exist; give an absolute path")
    if not found:
        raise InputError(f"{what} {given} not found: neither {Path(workspace) / path} (in the workspace) nor "
                         f"{here / path} (in the current folder) exists")
    return found[0]


def resolve_output(given: Path | str | None) -> Path | None:
    """A folder the run writes: relative to the current folder (None stays None, the caller's default).

    Example:
        >>> resolve_output("/tmp/report")
        PosixPath('/tmp/report')
        >>> resolve_output(None) is None
        True
    """
    if given is None:
        return None
    path = Path(given).expanduser()
    return path if path.is_absolute() else Path.cwd() / path
