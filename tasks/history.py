"""The history dataset: every evaluation as tidy rows in Parquet, plus importers for the other logs.

Layout of a history folder (``.sprintflow/history/`` of the workspace, or
``SPRINTFLOW_HISTORY`` so many workspaces and deployments can share one)::

    <history>/evals/part-<utc stamp>-<uuid>.parquet   one small file per evaluation
    <history>/evals/part-…-compacted.parquet          many small files merged into one
    <history>/scores.ndjson                           the scorer's rows (its own file)

Writers never share a file: each :func:`append_rows` call writes a new file
atomically (temp file, fsync, rename) under a unique name, so concurrent
evaluations never collide. When more than :data:`COMPACT_AFTER` files pile up,
the writer that notices merges them into one (under a non-blocking lock: one
compactor at a time, nobody waits). The merged file names its sources in its
Parquet metadata, so a reader that sees both ignores the sources; a source that
vanishes while being read makes the reader list the folder again.

Bug events (``.sprintflow/bugs.ndjson``), score rows and test runs
(``.sprintflow/runs/<runId>/result.json``) are read from the workspace at report
time by :func:`load_history`, and so are EvalResult files that no history row
records yet (written before history existed).

Example:
    >>> record_evaluation("examples/python-api", result, content_hash=plan.content_hash,
    ...                   executor="docker", image="sprintflow-sandbox:latest", run_id="f3c…")
    >>> load_history("examples/python-api").evals.groupby("kind").size()
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from sprintflow.errors import InputError, WorkspaceError
from sprintflow.schemas import EvalResult, SprintContract
from sprintflow.settings import get_settings

from .process import run_command
from .store import _fsync_dir, read_ndjson, sprintflow_dir

__all__ = [
    "BUG_COLUMNS",
    "COMPACT_AFTER",
    "EVALS",
    "EVAL_SCHEMA",
    "SCORE_COLUMNS",
    "TESTRUN_COLUMNS",
    "History",
    "append_rows",
    "bug_rows",
    "compact",
    "eval_file_rows",
    "eval_rows",
    "git_sha",
    "history_dir",
    "load_history",
    "parse_since",
    "read_table",
    "record_evaluation",
    "score_rows",
    "testrun_rows",
    "write_atomically",
    "write_parquet",
]

EVALS = "evals"
"""The table every evaluation appends to."""

COMPACT_AFTER = 64
"""A table with more small files than this is merged into one by the next writer."""

_UTC_MS = pa.timestamp("ms", tz="UTC")

EVAL_SCHEMA = pa.schema([
    ("kind", pa.string()),          # evaluation | strategy | criterion
    ("workspace", pa.string()),     # absolute path of the workspace evaluated
    ("run_id", pa.string()),        # the Prefect flow run (or other run) that evaluated
    ("eval_id", pa.string()),
    ("spec_id", pa.string()),
    ("contract_id", pa.string()),
    ("iteration", pa.int32()),
    ("name", pa.string()),          # strategy name or criterion id; null on evaluation rows
    ("method", pa.string()),        # criterion verification method, when the contract is known
    ("required", pa.bool_()),
    ("result", pa.string()),        # pass | fail | skipped
    ("error_count", pa.int32()),
    ("cached", pa.bool_()),
    ("duration_ms", pa.int64()),
    ("regressions", pa.int32()),    # evaluation rows: regressions found against the previous one
    ("timestamp", _UTC_MS),         # the EvalResult's timestamp
    ("recorded_at", _UTC_MS),
    ("workspace_hash", pa.string()),
    ("git_sha", pa.string()),
    ("executor", pa.string()),
    ("image", pa.string()),
    ("engine", pa.string()),
    ("tokens", pa.int64()),         # evaluation rows, when the engines reported them
    ("cost_usd", pa.float64()),
])
"""Columns of the ``evals`` table (documented in the README's "History and reports")."""

_SCHEMAS = {EVALS: EVAL_SCHEMA}
_COMPACTED_FROM = b"sprintflow.compacted_from"

BUG_COLUMNS = ["bug_id", "event", "status", "from_status", "unit", "test_name", "severity",
               "reopen_count", "created_at", "updated_at"]
SCORE_COLUMNS = ["recorded_at", "skill", "prompt_file", "prompt_sha256", "cases_sha256", "score",
                 "passed", "failed", "total", "engine", "git_sha", "duration_s", "input_tokens",
                 "output_tokens", "cost_usd"]
TESTRUN_COLUMNS = ["run_id", "recorded_at", "total", "passed", "failed", "skipped", "crashed",
                    "duration_ms", "acceptance_coverage", "contract_coverage", "next_action"]


def history_dir(workspace: Path | str) -> Path:
    """Where the history lives: ``SPRINTFLOW_HISTORY`` when set, else ``<workspace>/.sprintflow/history``.

    Example:
        >>> history_dir("examples/python-api")
        PosixPath('examples/python-api/.sprintflow/history')
    """
    return get_settings().history or sprintflow_dir(workspace) / "history"


def _timestamp(text: str | None) -> datetime | None:
    if not text:
        return None
    stamp = datetime.fromisoformat(text)
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def eval_rows(eval_result: EvalResult, *, workspace_hash: str | None, git_sha: str | None,
              executor: str | None, image: str | None, run_id: str | None,
              engine: str | None = None, tokens: int | None = None, cost: float | None = None,
              workspace: str | None = None, methods: Mapping[str, str] | None = None,
              duration_ms: int | None = None) -> list[dict[str, Any]]:
    """Tidy rows for one EvalResult: one ``evaluation`` row, then one per strategy and per criterion.

    Args:
        eval_result: the evaluation.
        workspace_hash: content hash of the workspace evaluated (the flakiness key).
        git_sha: the workspace's HEAD, when it is a git repository.
        executor: ``docker`` or ``local``.
        image: the sandbox image, for Docker.
        run_id: the Prefect flow run id (or any id of the run that evaluated).
        engine, tokens, cost: the engine and what it reported, when known.
        workspace: the workspace path, to tell workspaces apart in a shared history.
        methods: criterion id -> verification method, from the contract.
        duration_ms: the evaluation's wall time, when known.

    Example:
        >>> rows = eval_rows(result, workspace_hash="3f9a…", git_sha=None, executor="local",
        ...                  image=None, run_id="r1")
        >>> [r["kind"] for r in rows][:2]
        ['evaluation', 'strategy']
    """
    methods = methods or {}
    base = {
        "workspace": workspace, "run_id": run_id, "eval_id": eval_result.eval_id,
        "spec_id": eval_result.spec_id, "contract_id": eval_result.contract_id,
        "iteration": eval_result.iteration, "timestamp": _timestamp(eval_result.timestamp),
        "recorded_at": datetime.now(UTC), "workspace_hash": workspace_hash, "git_sha": git_sha,
        "executor": executor, "image": image,
    }
    rows = [{**base, "kind": "evaluation", "result": eval_result.overall_result,
             "required": True, "duration_ms": duration_ms, "regressions": len(eval_result.regressions),
             "engine": engine, "tokens": tokens, "cost_usd": cost}]
    rows += [{**base, "kind": "strategy", "name": s.strategy, "required": s.required,
              "result": s.result.value, "error_count": s.error_count, "cached": s.cached,
              "duration_ms": s.duration_ms} for s in eval_result.strategy_results]
    rows += [{**base, "kind": "criterion", "name": c.criterion_id, "required": c.required,
              "result": c.result.value, "method": methods.get(c.criterion_id)}
             for c in eval_result.criteria_results]
    return rows


def _new_part_name(suffix: str = "") -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"part-{stamp}-{uuid.uuid4().hex[:12]}{suffix}.parquet"


def write_atomically(path: Path | str, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(handle)`` on a temp file beside ``path``, fsync, then rename it to ``path``.

    Example:
        >>> write_atomically("out/t.csv", lambda handle: pyarrow.csv.write_csv(table, handle))
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with tmp.open("wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_parquet(table: pa.Table, path: Path | str) -> None:
    """Write ``table`` to ``path`` atomically (zstd-compressed Parquet).

    Example:
        >>> write_parquet(pa.table({"a": [1]}), "out/a.parquet")
    """
    write_atomically(path, lambda handle: pq.write_table(table, handle, compression="zstd"))


def _as_table(table_name: str, rows: list[dict[str, Any]] | pd.DataFrame) -> pa.Table:
    schema = _SCHEMAS.get(table_name)
    if isinstance(rows, pd.DataFrame):
        if schema is None:
            return pa.Table.from_pandas(rows, preserve_index=False)
        columns = {name: rows[name] if name in rows else pd.Series([None] * len(rows), dtype=object)
                   for name in schema.names}
        return pa.Table.from_pandas(pd.DataFrame(columns), schema=schema, preserve_index=False)
    if schema is None:
        return pa.Table.from_pylist(rows)
    return pa.Table.from_pylist([{name: row.get(name) for name in schema.names} for row in rows],
                                schema=schema)


def append_rows(directory: Path | str, table_name: str, rows: list[dict[str, Any]] | pd.DataFrame,
                *, compact_after: int = COMPACT_AFTER) -> Path | None:
    """Write ``rows`` (dicts or a DataFrame) as a new Parquet file of ``<directory>/<table_name>/``.

    Compacts the table when more than ``compact_after`` files pile up.

    The ``evals`` table has a fixed schema (:data:`EVAL_SCHEMA`); other tables
    take the types of their rows. Returns the new file, or None for no rows.

    Example:
        >>> append_rows(history_dir("."), EVALS, eval_rows(result, ...)).name
        'part-20260513T103100123456Z-1f2e3d4c5b6a.parquet'
    """
    if len(rows) == 0:
        return None
    folder = Path(directory) / table_name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _new_part_name()
    write_parquet(_as_table(table_name, rows), path)
    if len(_parts(folder)) > compact_after:
        compact(directory, table_name, min_files=compact_after + 1)
    return path


def _parts(folder: Path) -> list[Path]:
    # Temp files start with a dot, so a half-written file is never listed.
    return sorted(folder.glob("part-*.parquet"))


def compact(directory: Path | str, table_name: str, *, min_files: int = 2) -> Path | None:
    """Merge the table's files into one when there are at least ``min_files``; None when nothing was done.

    One compactor at a time (a non-blocking lock: a busy compactor means there
    is no need for a second one). The merged file is written atomically and
    names its sources in its metadata before they are removed, so a reader in
    between never counts a row twice.

    Example:
        >>> compact(history_dir("."), EVALS).name
        'part-20260513T103100123456Z-1f2e3d4c5b6a-compacted.parquet'
    """
    folder = Path(directory) / table_name
    if not folder.is_dir():
        return None
    with _try_lock(folder / ".compact.lock") as locked:
        sources = _parts(folder)
        if not locked or len(sources) < min_files:
            return None
        merged = _concat([pq.read_table(path) for path in sources])
        metadata = dict(merged.schema.metadata or {})
        metadata[_COMPACTED_FROM] = json.dumps([p.name for p in sources]).encode()
        target = folder / _new_part_name("-compacted")
        write_parquet(merged.replace_schema_metadata(metadata), target)
        for path in sources:
            path.unlink(missing_ok=True)
        _fsync_dir(folder)
        return target


@contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    """Hold an exclusive flock on ``path`` when the value is True; never wait for one."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
        else:
            yield True
    finally:
        os.close(fd)  # closing releases the lock


def _concat(tables: list[pa.Table]) -> pa.Table:
    # Files written by older versions may lack newer columns: promote, never fail.
    return pa.concat_tables(tables, promote_options="default")


def _read_consistent(folder: Path, columns: list[str] | None, attempts: int = 5,
                     dictionary: list[str] | None = None) -> list[pa.Table]:
    """Every file's rows once, even while a compaction merges and removes files."""
    for _ in range(attempts):
        tables: dict[str, pa.Table] = {}
        superseded: set[str] = set()
        try:
            for path in _parts(folder):
                table = pq.read_table(path, columns=columns, read_dictionary=dictionary)
                sources = pq.read_schema(path).metadata or {}
                superseded.update(json.loads(sources.get(_COMPACTED_FROM, b"[]")))
                tables[path.name] = table
        except FileNotFoundError:
            continue  # compacted away under us: its rows are in a newer file; list again
        return [table for name, table in tables.items() if name not in superseded]
    raise WorkspaceError(f"{folder}: files kept vanishing while being read (compaction loop?)")


def read_table(directory: Path | str, table_name: str, since: datetime | str | None = None,
               *, columns: list[str] | None = None, time_column: str = "timestamp") -> pd.DataFrame:
    """All rows of a table as a DataFrame; with ``since``, only rows whose ``time_column`` is at or after it.

    Text columns of a table with a known schema come back as categoricals with
    sorted categories: a million rows repeat few distinct values, and filtering
    or grouping integer codes is much cheaper than copying strings. An empty or
    missing table gives an empty frame with the table's columns.

    Example:
        >>> read_table(history_dir("."), EVALS, since="2026-05-01").result.value_counts()
    """
    folder = Path(directory) / table_name
    schema = _SCHEMAS.get(table_name)
    text = [f.name for f in schema if f.type == pa.string() and (columns is None or f.name in columns)] \
        if schema is not None else None
    tables = _read_consistent(folder, columns, dictionary=text) if folder.is_dir() else []
    if not tables:
        empty = schema.empty_table() if schema is not None else pa.table({})
        return empty.select(columns).to_pandas() if columns else empty.to_pandas()
    table = _concat(tables)
    if since is not None and time_column in table.column_names:
        bound = pa.scalar(parse_since(since), type=table.schema.field(time_column).type)
        table = table.filter(pc.greater_equal(table[time_column], bound))
    return _sorted_categories(table.to_pandas())


def _sorted_categories(frame: pd.DataFrame) -> pd.DataFrame:
    # Parquet dictionaries keep first-seen order; sorting and grouping should follow the text.
    for column in frame.columns[frame.dtypes == "category"]:
        values = frame[column].cat
        order = values.categories.argsort()
        rank = np.full(len(order) + 1, -1, dtype=np.int32)  # the last slot maps code -1 (null) to itself
        rank[order] = np.arange(len(order), dtype=np.int32)
        # Recode by rank: no string hashing, unlike reorder_categories.
        frame[column] = pd.Categorical.from_codes(rank[values.codes.to_numpy()],
                                                  categories=values.categories[order])
    return frame


def parse_since(since: datetime | str) -> datetime:
    """A ``--since`` bound as an aware UTC datetime: a date, or a date and time (UTC unless it says).

    Raises:
        InputError: the text is not a date.

    Example:
        >>> parse_since("2026-05-01")
        datetime.datetime(2026, 5, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    try:
        stamp = pd.Timestamp(since)
    except ValueError:
        stamp = pd.NaT
    if stamp is pd.NaT:
        raise InputError(f"--since {since!r}: expected a date like 2026-05-01 or 2026-05-01T12:00Z")
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")).to_pydatetime()


def git_sha(workspace: Path | str) -> str | None:
    """The workspace's ``HEAD`` commit, or None outside a git repository.

    Example:
        >>> git_sha(".")[:7]
        'de3122a'
    """
    result = run_command(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=workspace, timeout=10)
    return (result.stdout.strip() or None) if result.ok else None


def _criterion_methods(workspace: Path, contract_id: str) -> dict[str, str]:
    path = sprintflow_dir(workspace) / "contracts" / f"{contract_id}.json"
    try:
        contract = SprintContract.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return {}  # a missing or foreign contract only costs the method column
    return {c.criterion_id: c.verification_method.value for c in contract.success_criteria}


def record_evaluation(workspace: Path | str, eval_result: EvalResult, *, content_hash: str | None,
                      executor: str | None, image: str | None, run_id: str | None,
                      engine: str | None = None, tokens: int | None = None, cost: float | None = None,
                      duration_ms: int | None = None) -> Path | None:
    """Append one evaluation's rows to the history (the one call the evaluate flow makes).

    Looks up the git sha and the criteria's verification methods (from
    ``.sprintflow/contracts/<contractId>.json``) itself.

    Example:
        >>> record_evaluation(plan.workspace, result, content_hash=plan.content_hash,
        ...                   executor="docker", image="sprintflow-sandbox:latest", run_id="f3c…")
    """
    workspace = Path(workspace).resolve()
    rows = eval_rows(eval_result, workspace_hash=content_hash, git_sha=git_sha(workspace),
                     executor=executor, image=image, run_id=run_id, engine=engine, tokens=tokens,
                     cost=cost, workspace=str(workspace), duration_ms=duration_ms,
                     methods=_criterion_methods(workspace, eval_result.contract_id))
    return append_rows(history_dir(workspace), EVALS, rows)


# --------------------------------------------------------------------------- importers


def _frame(records: Iterable[dict[str, Any]], columns: list[str], times: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(list(records), columns=columns)
    for column in times:
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


def _ndjson_records(path: Path, problems: list[str]) -> Iterable[dict[str, Any]]:
    for line in read_ndjson(path):
        if line.error:
            problems.append(line.error)
        else:
            yield line.record  # type: ignore[misc]


def bug_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per line of ``.sprintflow/bugs.ndjson`` (open, transition, reopen events).

    Torn or invalid lines are skipped and described in ``problems``.

    Example:
        >>> bug_rows(".").groupby("event").size()
    """
    problems = [] if problems is None else problems
    records = ({**r, "bug_id": r.get("id")} for r in
               _ndjson_records(sprintflow_dir(workspace) / "bugs.ndjson", problems))
    return _frame(records, BUG_COLUMNS, ["created_at", "updated_at"])


def score_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per scoring run, from the scorer's ``.sprintflow/history/scores.ndjson``.

    Example:
        >>> score_rows(".")[["skill", "score"]].tail(1)
    """
    problems = [] if problems is None else problems
    # The scorer writes camelCase (ScoreHistoryRow); the history speaks snake_case.
    renames = {"recordedAt": "recorded_at", "promptFile": "prompt_file",
               "promptSha256": "prompt_sha256", "casesSha256": "cases_sha256", "gitSha": "git_sha",
               "durationS": "duration_s", "inputTokens": "input_tokens",
               "outputTokens": "output_tokens", "costUsd": "cost_usd"}
    path = sprintflow_dir(workspace) / "history" / "scores.ndjson"
    records = ({renames.get(k, k): v for k, v in r.items()} for r in _ndjson_records(path, problems)
               if r.get("kind", "score") == "score")
    return _frame(records, SCORE_COLUMNS, ["recorded_at"])


def testrun_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per test run in ``.sprintflow/runs/<runId>/result.json`` (recorded_at = file time).

    Example:
        >>> testrun_rows(".")[["run_id", "failed", "crashed"]]
    """
    problems = [] if problems is None else problems
    records = []
    for path in sorted((sprintflow_dir(workspace) / "runs").glob("*/result.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            summary = doc.get("summary") or {}
            records.append({**{k: doc.get(k) for k in TESTRUN_COLUMNS}, **summary,
                            "recorded_at": datetime.fromtimestamp(path.stat().st_mtime, UTC)})
        except (OSError, ValueError, AttributeError) as exc:
            problems.append(f"{path}: unreadable test run: {exc}")
    frame = pd.DataFrame.from_records(records, columns=TESTRUN_COLUMNS)
    frame["recorded_at"] = pd.to_datetime(frame["recorded_at"], utc=True)
    return frame


def eval_file_rows(workspace: Path | str, known_ids: Iterable[str] = (),
                   problems: list[str] | None = None) -> pd.DataFrame:
    """Rows for ``.sprintflow/evals/*.json`` files whose eval id is not in ``known_ids``.

    Evaluations written before the history existed (or by another tool) still
    count; what the file does not say (hash, executor) stays empty.

    Example:
        >>> eval_file_rows(".", known_ids=set(history.evals.eval_id)).eval_id.nunique()
    """
    problems = [] if problems is None else problems
    workspace = Path(workspace).resolve()
    known = set(known_ids)
    rows: list[dict[str, Any]] = []
    for path in sorted((sprintflow_dir(workspace) / "evals").glob("*.json")):
        if path.stem in known:
            continue
        try:
            result = EvalResult.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as exc:
            problems.append(f"{path}: not an EvalResult: {str(exc).splitlines()[0]}")
            continue
        rows += eval_rows(result, workspace_hash=None, git_sha=None, executor=None, image=None,
                          run_id=None, workspace=str(workspace),
                          methods=_criterion_methods(workspace, result.contract_id))
    return _as_table(EVALS, rows).to_pandas()


@dataclass
class History:
    """Everything the reports read, as DataFrames."""

    evals: pd.DataFrame
    """The ``evals`` table (:data:`EVAL_SCHEMA`), plus unrecorded EvalResult files."""
    bugs: pd.DataFrame = field(default_factory=lambda: _frame([], BUG_COLUMNS, ["created_at", "updated_at"]))
    scores: pd.DataFrame = field(default_factory=lambda: _frame([], SCORE_COLUMNS, ["recorded_at"]))
    testruns: pd.DataFrame = field(default_factory=lambda: _frame([], TESTRUN_COLUMNS, ["recorded_at"]))
    problems: list[str] = field(default_factory=list)
    """Lines or files that could not be read (skipped, never fatal)."""


def _after(frame: pd.DataFrame, column: str, since: datetime | str | None) -> pd.DataFrame:
    return frame if since is None or frame.empty else frame[frame[column] >= pd.Timestamp(parse_since(since))]


def load_history(workspace: Path | str, since: datetime | str | None = None,
                 directory: Path | str | None = None, columns: list[str] | None = None) -> History:
    """The workspace's history: Parquet rows, unrecorded eval files, bugs, scores and test runs.

    Args:
        workspace: the workspace whose logs are read (bugs, scores, runs, eval files).
        since: keep only what happened at or after this date or time (UTC unless given).
        directory: the history folder (default: :func:`history_dir`).
        columns: the ``evals`` columns to load (default all); fewer columns, less memory.

    Example:
        >>> history = load_history(".", since="2026-05-01")
        >>> len(history.evals), len(history.bugs), history.problems
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    directory = Path(directory) if directory is not None else history_dir(workspace)
    problems: list[str] = []
    wanted = None if columns is None else list(dict.fromkeys(["eval_id", "timestamp", *columns]))
    evals = read_table(directory, EVALS, since=since, columns=wanted)
    files = eval_file_rows(workspace, known_ids=evals["eval_id"].unique(), problems=problems)
    if not files.empty:
        files = _after(files, "timestamp", since)
        evals = pd.concat([evals, files if wanted is None else files[wanted]], ignore_index=True)
    return History(
        evals=evals,
        bugs=_after(bug_rows(workspace, problems), "updated_at", since),
        scores=_after(score_rows(workspace, problems), "recorded_at", since),
        testruns=_after(testrun_rows(workspace, problems), "recorded_at", since),
        problems=problems,
    )
