"""The bug lifecycle in ``<workspace>/.sprintflow/bugs.ndjson`` (tester-agent-spec.md, bug-bridge).

Every line is a whole bug record; the last line of an id is that bug's state,
so the file is an append-only history that any tool can fold. Statuses move
``open -> fixing -> fixed`` (``open -> fixed`` too: the tester may see a test
go green before anyone claimed the bug), and ``fixed -> open`` is a reopen,
counted on the record. Anything else raises :class:`TransitionError`.

A failure already tracked by an ``open`` or ``fixing`` bug with the same dedup
key (``unit:test``, the seed's ``dedupKey``) reuses that bug instead of opening
another; the same failure after its bug was fixed reopens it (a regression).
Read-check-append happens under a lock beside the file, so concurrent writers
never open the same bug twice or move one through an illegal step; each record
is still one locked write (:func:`~sprintflow.io.files.append_ndjson`), and a
torn line is reported by :func:`fold_bugs`, never fatal and never rewritten.

Example:
    >>> import tempfile
    >>> path = WorkspaceLayout(Path(tempfile.mkdtemp())).bugs_file
    >>> opened = open_bug(path, unit="todo-be", test_name="empty title -> 400",
    ...                   run_id="run-20260513-1031", detail="TypeError: ...")
    >>> transition_bug(path, opened.bug.id, "fixed", by="tester", fix_refs=["run-2"]).status
    'fixed'
    >>> [(bug.status, bug.test_name) for bug in list_bugs(path)]
    [('fixed', 'empty title -> 400')]
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from sprintflow.errors import InputError, TransitionError
from sprintflow.io.confine import NotRegular, open_regular
from sprintflow.io.files import append_ndjson, file_lock, read_ndjson
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas._base import utc_now
from sprintflow.schemas.testrun import TestFailureEntry, TestRun

__all__ = [
    "ACTIVE",
    "RUNNER_TEST_NAME",
    "TRANSITIONS",
    "Bug",
    "BugFold",
    "BugOpening",
    "BugStatus",
    "BugSync",
    "bug_history",
    "dedup_key",
    "fold_bugs",
    "guess_severity",
    "list_bugs",
    "open_bug",
    "sync_bugs",
    "transition_bug",
]

BugStatus = Literal["open", "fixing", "fixed"]

TRANSITIONS: dict[str, frozenset[str]] = {
    "open": frozenset({"fixing", "fixed"}),
    "fixing": frozenset({"fixed"}),
    "fixed": frozenset({"open"}),  # a reopen: the test failed again
}
"""Legal status changes: from -> allowed targets."""

ACTIVE = ("open", "fixing")
"""Statuses of a bug someone still has to fix; a failure reuses such a bug."""


class Bug(BaseModel):
    """One bug, as every line of ``bugs.ndjson`` records it (snake_case, like the seed)."""

    # Frozen: folds share these objects with the per-file cache.
    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    """``bug-<YYYYMMDD>-<HHMM>-<4 hex>``, as the seed writes them."""
    status: BugStatus
    source: Literal["unit_test", "unit_test_infra"] | str = "unit_test"
    """``unit_test`` for a failing test, ``unit_test_infra`` for a crashed runner."""
    unit: str = Field(validation_alias=AliasChoices("unit", "unit_id"))
    """The unit under test (the seed's bug_open calls it ``unit_id``; both are read)."""
    run_id: str
    """The run that opened (or last reopened) the bug."""
    test_name: str
    category: str = "unknown"
    """Refined later by a triager; the tester does not know."""
    severity: Literal["critical", "high", "medium", "low"] | str = "medium"
    title: str = ""
    detail: str = ""
    affected_units: list[str] = Field(default_factory=list)
    created_at: str
    updated_at: str
    event: str = "open"
    """What this line records: ``open``, ``transition`` or ``reopen``."""
    from_status: str | None = None
    """The status before this line's transition."""
    by: str | None = None
    """Who made the last change (``tester``, ``coder``, a person)."""
    fix_refs: list[str] = Field(default_factory=list)
    """Runs or commits that fixed it."""
    reopened: bool = False
    reopen_count: int = 0

    @property
    def dedup_key(self) -> str:
        """``unit:test``: the same failure of the same unit is the same bug."""
        return dedup_key(self.unit, self.test_name)


@dataclass
class BugFold:
    """The state of every bug after reading the whole file, and what could not be read."""

    bugs: dict[str, Bug] = field(default_factory=dict)
    """id -> the bug's last record, in order of first appearance."""
    problems: list[str] = field(default_factory=list)
    """One message per torn or invalid line (``file:line: why``); those lines are skipped."""


@dataclass(frozen=True)
class BugOpening:
    """What :func:`open_bug` did: ``opened`` a new bug, ``reused`` an active one, ``reopened`` one."""

    bug: Bug
    action: Literal["opened", "reused", "reopened"]


def dedup_key(unit: str, test_name: str) -> str:
    """The seed's dedup key.

    Example:
        >>> dedup_key("todo-be", "empty title -> 400")
        'todo-be:empty title -> 400'
    """
    return f"{unit}:{test_name}"


def guess_severity(test_name: str, got: Any = None) -> str:
    """The seed's first guess, before a triager looks: a 5xx is high, auth/security critical.

    Example:
        >>> guess_severity("login with a wrong password -> 401", 500), guess_severity("auth", 401)
        ('high', 'critical')
    """
    if re.search(r"\b5\d\d\b", str(got)):
        return "high"
    if "security" in test_name or "auth" in test_name:
        return "critical"
    return "medium"


def fold_bugs(path: Path | str) -> BugFold:
    """Fold ``bugs.ndjson`` into the current state of each bug; never raises for a bad line.

    Reads only what was appended since this process last folded the same file
    (a cursor per file, reset when the file is replaced or shrinks), so writers
    that fold before every append stay linear in the file's growth.
    """
    path = Path(path)
    with _CURSORS_LOCK:
        cursor, torn_tail = _advance(path)
        fold = BugFold(dict(cursor.fold.bugs), list(cursor.fold.problems))
    if torn_tail:
        fold.problems.append(torn_tail)
    return fold


@dataclass
class _Cursor:
    """How far one file has been folded: the bytes and lines consumed."""

    head: bytes = b""
    """The file's first bytes when last read, to notice a different file at the same path."""
    offset: int = 0
    lines: int = 0
    fold: BugFold = field(default_factory=BugFold)


_CURSORS: dict[Path, _Cursor] = {}
_HEAD = 64
_CURSORS_LOCK = threading.Lock()  # Prefect runs tasks in threads of one process


def _advance(path: Path) -> tuple[_Cursor, str | None]:
    """Fold the lines appended since the cursor; a line without its newline yet stays unread.

    Returns the cursor and, when the file ends in such a partial line, a problem
    naming it: a writer crashed mid-line (or is writing right now). It is folded
    once a newline completes it: ``append_ndjson`` starts the next record on a
    fresh line, so a torn record then reads as one invalid line.
    """
    try:
        handle = open_regular(path)
    except NotRegular as exc:
        raise InputError(f"the bug ledger {exc.strerror}") from None
    except FileNotFoundError:
        _CURSORS.pop(path.resolve(), None)
        return _Cursor(), None
    with handle:
        # The first bytes (a random bug id) tell a file replaced at the same path apart,
        # even when the new file reuses the old inode.
        head = handle.read(_HEAD)
        key, cursor = path.resolve(), _CURSORS.get(path.resolve())
        if cursor is None or cursor.head != head[:len(cursor.head)] \
                or os.fstat(handle.fileno()).st_size < cursor.offset:
            cursor = _CURSORS[key] = _Cursor(head=head)
        handle.seek(cursor.offset)
        data = handle.read()
        if len(cursor.head) < _HEAD:
            cursor.head = head
    complete, newline, partial = data.rpartition(b"\n")
    if newline:
        for raw in complete.split(b"\n"):
            cursor.lines += 1
            _fold_line(cursor.fold, path, cursor.lines, raw)
        cursor.offset += len(complete) + 1
    torn = f"{path}:{cursor.lines + 1}: torn line (a writer crashed mid-write)" \
        if partial.strip() else None
    return cursor, torn


def _fold_line(fold: BugFold, path: Path, number: int, raw: bytes) -> None:
    if not raw.strip():
        return
    try:
        bug = Bug.model_validate_json(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        why = "invalid JSON" if error["type"] == "json_invalid" else "not a bug record"
        fold.problems.append(f"{path}:{number}: {why}: {error['loc']}: {error['msg']}")
        return
    fold.bugs[bug.id] = bug


def list_bugs(source: Path | str | BugFold, *, unit: str | None = None,
              statuses: Iterable[str] | None = None) -> list[Bug]:
    """Current bugs, optionally of one unit and in some statuses.

    Args:
        source: the bug file, or a fold of it already made (to keep its problems too).
        unit: only this unit's bugs.
        statuses: only bugs in these statuses (e.g. :data:`ACTIVE`).
    """
    fold = source if isinstance(source, BugFold) else fold_bugs(source)
    wanted = set(statuses) if statuses is not None else None
    return [bug for bug in fold.bugs.values()
            if (unit is None or bug.unit == unit) and (wanted is None or bug.status in wanted)]


def bug_history(path: Path | str, bug_id: str) -> list[dict[str, Any]]:
    """Every record of one bug, oldest first: its open, transitions and reopens."""
    return [line.record for line in read_ndjson(path)
            if line.record is not None and line.record.get("id") == bug_id]


def open_bug(path: Path | str, *, unit: str, test_name: str, run_id: str,
             source: str = "unit_test", title: str | None = None, detail: str = "",
             severity: str | None = None, category: str = "unknown",
             affected_units: list[str] | None = None, got: Any = None,
             by: str = "tester") -> BugOpening:
    """Track a failure: reuse its active bug, reopen its fixed one, or open a new one.

    Args:
        path: the bug file (``WorkspaceLayout.bugs_file``).
        unit: the unit under test.
        test_name: the failing test's full name.
        run_id: the run that saw the failure.
        source: ``unit_test`` or ``unit_test_infra`` (the runner crashed).
        title: one line for people; defaults to the test name.
        detail: the error and stack.
        severity: defaults to :func:`guess_severity` of the test and ``got``.
        category: defaults to ``unknown`` (a triager refines it).
        affected_units: defaults to ``[unit]``.
        got: the received value, for the severity guess.
        by: who reports it.

    Example:
        >>> import tempfile
        >>> path = WorkspaceLayout(Path(tempfile.mkdtemp())).bugs_file
        >>> open_bug(path, unit="todo-be", test_name="t", run_id="run-1").action
        'opened'
        >>> open_bug(path, unit="todo-be", test_name="t", run_id="run-2").action
        'reused'
    """
    with _locked(path):
        bugs = fold_bugs(path).bugs
        same = [bug for bug in bugs.values() if bug.dedup_key == dedup_key(unit, test_name)]
        active = next((bug for bug in reversed(same) if bug.status in ACTIVE), None)
        if active is not None:
            return BugOpening(active, "reused")
        if same:
            # The regression's own error replaces the old one; the fix history stays.
            changes = {"detail": detail or same[-1].detail, "title": title or same[-1].title}
            return BugOpening(_append_transition(path, same[-1], "open", by=by, run_id=run_id,
                                                 fix_refs=None, **changes), "reopened")
        now = utc_now()
        bug = Bug(id=_new_id(bugs), status="open", source=source, unit=unit, run_id=run_id,
                  test_name=test_name, category=category,
                  severity=severity or guess_severity(test_name, got),
                  title=title or test_name, detail=detail,
                  affected_units=affected_units or [unit], created_at=now, updated_at=now,
                  event="open", by=by)
        append_ndjson(path, bug.model_dump(mode="json"))
        return BugOpening(bug, "opened")


def transition_bug(path: Path | str, bug_id: str, to: str, *, by: str | None = None,
                   fix_refs: Iterable[str] = (), run_id: str | None = None) -> Bug:
    """Move a bug to ``to`` and append its new state; an illegal move raises.

    Raises:
        InputError: no bug has this id.
        TransitionError: the state machine does not allow the move.
    """
    with _locked(path):
        bug = fold_bugs(path).bugs.get(bug_id)
        if bug is None:
            raise InputError(f"no bug {bug_id!r} in {path}")
        return _append_transition(path, bug, to, by=by, run_id=run_id, fix_refs=fix_refs)


def _append_transition(path: Path | str, bug: Bug, to: str, *, by: str | None,
                       run_id: str | None, fix_refs: Iterable[str] | None,
                       **changes: Any) -> Bug:
    if to not in TRANSITIONS:
        raise TransitionError(f"{bug.id}: unknown status {to!r}; "
                              f"known: {', '.join(TRANSITIONS)}")
    if to not in TRANSITIONS[bug.status]:
        allowed = ", ".join(sorted(TRANSITIONS[bug.status]))
        raise TransitionError(f"{bug.id}: cannot go from {bug.status} to {to} "
                              f"(from {bug.status} only to: {allowed})")
    reopen = bug.status == "fixed" and to == "open"
    updated = bug.model_copy(update={
        "status": to, "from_status": bug.status, "updated_at": utc_now(), "by": by,
        "event": "reopen" if reopen else "transition", "run_id": run_id or bug.run_id,
        "fix_refs": [*bug.fix_refs, *(r for r in fix_refs or () if r not in bug.fix_refs)],
        "reopened": bug.reopened or reopen, "reopen_count": bug.reopen_count + reopen,
        **changes,
    })
    append_ndjson(path, updated.model_dump(mode="json"))
    return updated


def _new_id(existing: dict[str, Bug]) -> str:
    """``bug-20260513-1031-c9f2``; the suffix is redrawn on the rare clash (we hold the lock)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M")
    for attempt in itertools.count():
        # Past a few thousand bugs in one minute four hex digits run out: widen them.
        candidate = f"bug-{stamp}-{secrets.token_hex(2 if attempt < 20 else 4)}"
        if candidate not in existing:
            return candidate
    raise AssertionError("unreachable")


def _locked(path: Path | str) -> AbstractContextManager[bool]:
    """Exclusive lock for a read-check-append, on a file beside the bug file.

    Not the bug file itself: ``append_ndjson`` locks that one for each write, and
    flock on a second descriptor of the same file from this process would deadlock.
    """
    return file_lock(f"{path}.lock")


@dataclass(frozen=True)
class BugSync:
    """What :func:`sync_bugs` did, in the seed's TesterOutput terms."""

    test_run: TestRun
    """The run with each failure's ``bug_id`` filled in."""
    bugs_opened: list[str]
    bugs_transitioned: list[dict[str, str]]
    """``{"id", "from", "to"}`` for every reopen and every fix."""


RUNNER_TEST_NAME = "<test runner>"
"""The test name of a crash bug when the runner reported no failure to pin it on."""


def sync_bugs(workspace: Path | str, test_run: TestRun, unit: str, run_id: str,
              passing_tests: Iterable[str] | None = None) -> BugSync:
    """Bridge a test run to ``bugs.ndjson`` (the seed's bug-bridge), then return the run with bug ids.

    Each failure reuses, reopens or opens its bug (``unit_test_infra`` when the
    runner crashed). Active bugs of tests that now pass move to ``fixed`` with
    this run as fix reference, and so do the unit's crash bugs once a run no
    longer crashes. Call it before writing ``result.json`` so the ids are in it.

    Args:
        workspace: the workspace holding ``.sprintflow/bugs.ndjson``.
        test_run: the judged run (:func:`~sprintflow.tasks.testrun.build_test_run`).
        unit: the unit under test.
        run_id: this run's id.
        passing_tests: names of the tests that passed; default ``test_run.passed_tests``.
    """
    path = WorkspaceLayout(Path(workspace)).bugs_file
    opened: list[str] = []
    moved: list[dict[str, str]] = []
    failures = [_track_failure(path, entry, unit, run_id, test_run.crashed, opened, moved)
                for entry in test_run.failures]
    if test_run.crashed and not failures:
        crash = open_bug(path, unit=unit, test_name=RUNNER_TEST_NAME, run_id=run_id,
                         source="unit_test_infra",
                         title=f"the test runner crashed: {test_run.crash_reason}",
                         detail=f"{test_run.crash_reason}\n\n{test_run.stdout_tail}")
        _note(crash, opened, moved)
    failing = {entry.test for entry in test_run.failures}
    passing = set(test_run.passed_tests if passing_tests is None else passing_tests)
    for bug in list_bugs(path, unit=unit, statuses=ACTIVE):
        runner_works = not test_run.crashed and bug.source == "unit_test_infra"
        if bug.test_name in passing or (runner_works and bug.test_name not in failing):
            transition_bug(path, bug.id, "fixed", by="tester", fix_refs=[run_id])
            moved.append({"id": bug.id, "from": bug.status, "to": "fixed"})
    return BugSync(test_run.model_copy(update={"failures": failures}), opened, moved)


def _track_failure(path: Path, entry: TestFailureEntry, unit: str, run_id: str, crashed: bool,
                   opened: list[str], moved: list[dict[str, str]]) -> TestFailureEntry:
    summary = (f"expected {entry.expected}, got {entry.got}" if entry.expected is not None
               else next(iter(entry.stack.splitlines()), "failed"))
    opening = open_bug(path, unit=unit, test_name=entry.test, run_id=run_id,
                       source="unit_test_infra" if crashed else "unit_test",
                       title=f"{entry.test}: {summary}", detail=entry.stack, got=entry.got)
    _note(opening, opened, moved)
    return entry.model_copy(update={"bug_id": opening.bug.id})


def _note(opening: BugOpening, opened: list[str], moved: list[dict[str, str]]) -> None:
    if opening.action == "opened":
        opened.append(opening.bug.id)
    elif opening.action == "reopened":
        moved.append({"id": opening.bug.id, "from": "fixed", "to": "open"})
