"""Where everything lives: the one object that knows every path under ``.sprintflow/``.

No other module builds a path into a workspace's state. Ids that become file
names (contract, spec, eval, run, skill) are checked against :data:`SAFE_NAME`
here, so a document cannot steer a write outside its folder.

::

    <workspace>/.sprintflow/
        .gitignore                       written with the folder: everything but specs and contracts stays out of git
        specs/<specId>.json              PlanSpecs; specs/rejected/ keeps refused planner answers
        contracts/<contractId>.json      SprintContracts
        evals/<evalId>.json              EvalResults
        runs/<runId>/                    TestRuns (result.json, stdout.txt, stderr.txt, engine.txt)
        runs/sprint/<contractId>/iteration-<n>.json    the sprint's iteration journal
        bugs.ndjson                      bug events, append-only
        pin.json                         the judge of the sprint that is running (its config), fixed at its start
        lock                             held by the one sprint or evaluation working on the workspace
        scores/<skill>/<stamp>.json      score reports
        cache/strategies/<key>.json      reusable strategy results
        report/                          the default folder of `sprintflow report`
        history/                         the history (or $SPRINTFLOW_HISTORY, shared by many workspaces):
            evals/part-*.parquet         evaluation rows
            scores.ndjson                scorer rows

Example:
    >>> layout = WorkspaceLayout(Path("/work/app"))
    >>> layout.eval_file("eval-sprint-spec-1-2")
    PosixPath('/work/app/.sprintflow/evals/eval-sprint-spec-1-2.json')
    >>> layout.contract_file("../../etc/passwd")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sprintflow.errors.InputError: contract id '../../etc/passwd' cannot be a file name: ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sprintflow.errors import InputError
from sprintflow.settings import get_settings

__all__ = ["MAX_NAME", "SAFE_NAME", "STATE_DIR", "STATE_GITIGNORE", "WorkspaceLayout", "safe_name"]

STATE_DIR = ".sprintflow"
STATE_GITIGNORE = """\
# Written by sprintflow with this folder. The lock, caches, results, runs, reports and history are
# sprintflow's own and change on every run; the plans and contracts are yours to commit.
*
!.gitignore
!specs/
!specs/*.json
!contracts/
!contracts/*.json
"""
"""``.sprintflow/.gitignore``: so ``git add -A`` commits the contracts and nothing of a run's state."""
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
"""What an id must look like to become a file name: no separators, no leading dot, no ``..``.

Written without look-arounds, so the documents' JSON Schemas and pydantic use it as it is."""
MAX_NAME = 200


def safe_name(kind: str, value: str) -> str:
    """``value`` when it is a safe file name, else an ``InputError`` naming ``kind``.

    Example:
        >>> safe_name("run id", "run-20260513-103115")
        'run-20260513-103115'
    """
    if not SAFE_NAME.fullmatch(value) or len(value) > MAX_NAME:
        raise InputError(f"{kind} {value!r} cannot be a file name: use letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit, at most 200 characters")
    return value


@dataclass(frozen=True)
class WorkspaceLayout:
    """The paths of one workspace's state (``.sprintflow/``) and of its history."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))  # a str is welcome too

    @property
    def state(self) -> Path:
        return self.root / STATE_DIR

    @property
    def gitignore_file(self) -> Path:
        """Written with ``.sprintflow/`` (:func:`sprintflow.io.files.prepare_parent`), whoever creates it."""
        return self.state / ".gitignore"

    # Plans and contracts
    @property
    def specs_dir(self) -> Path:
        return self.state / "specs"

    def spec_file(self, spec_id: str) -> Path:
        return self.specs_dir / f"{safe_name('spec id', spec_id)}.json"

    @property
    def rejected_dir(self) -> Path:
        """Planner answers that failed validation, kept as printed."""
        return self.specs_dir / "rejected"

    @property
    def contracts_dir(self) -> Path:
        return self.state / "contracts"

    def contract_file(self, contract_id: str) -> Path:
        return self.contracts_dir / f"{safe_name('contract id', contract_id)}.json"

    # Evaluations
    @property
    def evals_dir(self) -> Path:
        return self.state / "evals"

    def eval_file(self, eval_id: str) -> Path:
        return self.evals_dir / f"{safe_name('eval id', eval_id)}.json"

    def strategy_cache_file(self, key: str) -> Path:
        return self.state / "cache" / "strategies" / f"{safe_name('cache key', key)}.json"

    # Test runs, the sprint journal, bugs
    @property
    def runs_dir(self) -> Path:
        return self.state / "runs"

    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / safe_name("run id", run_id)

    def journal_file(self, contract_id: str, iteration: int) -> Path:
        """The record that an iteration's generator (and tester) step finished."""
        return self.runs_dir / "sprint" / safe_name("contract id", contract_id) / f"iteration-{iteration}.json"

    @property
    def bugs_file(self) -> Path:
        return self.state / "bugs.ndjson"

    # The judge of a running sprint, and who works on the workspace
    @property
    def pin_file(self) -> Path:
        """The configuration a running sprint is judged by, fixed when it started."""
        return self.state / "pin.json"

    @property
    def lock_file(self) -> Path:
        """Held by the one sprint or evaluation working on the workspace."""
        return self.state / "lock"

    # Scoring and reports
    def scores_dir(self, skill: str) -> Path:
        return self.state / "scores" / safe_name("skill", skill)

    @property
    def report_dir(self) -> Path:
        """Where ``sprintflow report`` writes when no folder is given."""
        return self.state / "report"

    # History: shared by many workspaces when SPRINTFLOW_HISTORY says so
    @property
    def history_dir(self) -> Path:
        return get_settings().history or self.state / "history"

    @property
    def scores_file(self) -> Path:
        """The scorer's history rows, beside the evaluation rows."""
        return self.history_dir / "scores.ndjson"
