"""The history dataset: tables of tidy rows in Parquet files that concurrent writers never share.

Layout of a history folder (:attr:`~sprintflow.io.layout.WorkspaceLayout.history_dir`:
``.sprintflow/history/`` of the workspace, or ``SPRINTFLOW_HISTORY`` so many
workspaces and deployments can share one)::

    <history>/evals/part-<utc stamp>-<uuid>.parquet   one small file per evaluation
    <history>/evals/part-…-compacted.parquet          many small files merged into one
    <history>/scores.ndjson                           the scorer's rows (its own file)

Each :func:`append_rows` call writes a new file atomically under a unique
name, so concurrent evaluations never collide. When more than
:data:`COMPACT_AFTER` files pile up, the writer that notices merges them into
one (under a non-blocking lock: one compactor at a time, nobody waits). The
merged file names its sources in its Parquet metadata, so a reader that sees
both ignores the sources; a source that vanishes while being read makes the
reader list the folder again.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from sprintflow.errors import InputError, WorkspaceError

if TYPE_CHECKING:
    import pandas as pd
from sprintflow.io.files import atomic_write, file_lock, fsync_dir

T = TypeVar("T")

__all__ = [
    "COMPACT_AFTER",
    "EVALS",
    "EVAL_SCHEMA",
    "append_rows",
    "as_table",
    "compact",
    "live_parts",
    "parse_since",
    "read_table",
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
    ("sprint_run", pa.string()),    # the sprint run (its pin) the evaluation belongs to; null outside a sprint
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
    ("flaky", pa.bool_()),          # strategy rows: failed, then passed on the same snapshot
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
    ("test_run", pa.string()),      # unit-test strategy rows: the TestRun (runs/<runId>/) it produced
    ("mutants", pa.int32()),        # unit-test strategy rows: mutants of the change that ran to a verdict
    ("kill_rate", pa.float64()),    # unit-test strategy rows: killed / mutants (the tests test the change)
    ("tester_kill_rate", pa.float64()),  # evaluation rows: the tester's tests graded the same way
])
"""Columns of the ``evals`` table (documented in the README's "History and reports")."""

_SCHEMAS = {EVALS: EVAL_SCHEMA}
_COMPACTED_FROM = b"sprintflow.compacted_from"

def _new_part_name(suffix: str = "") -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"part-{stamp}-{uuid.uuid4().hex[:12]}{suffix}.parquet"


def write_parquet(table: pa.Table, path: Path | str) -> None:
    """Write ``table`` to ``path`` atomically (zstd-compressed Parquet).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "a.parquet"
        >>> write_parquet(pa.table({"a": [1, 2]}), path)
        >>> pq.read_table(path).num_rows
        2
    """
    atomic_write(path, lambda handle: pq.write_table(table, handle, compression="zstd"))


def as_table(table_name: str, rows: list[dict[str, Any]] | pd.DataFrame) -> pa.Table:
    schema = _SCHEMAS.get(table_name)
    if not isinstance(rows, list):  # a DataFrame (pandas is imported only where frames are read)
        import pandas as pd

        if schema is None:
            return pa.Table.from_pandas(rows, preserve_index=False)
        # Missing columns share the frame's index: a default one would not align with a slice of a frame.
        columns = {name: rows[name] if name in rows else pd.Series(None, index=rows.index, dtype=object)
                   for name in schema.names}
        return pa.Table.from_pandas(pd.DataFrame(columns), schema=schema, preserve_index=False)
    if schema is None:
        return pa.Table.from_pylist(rows)
    return _typed_table(rows, schema)


def _typed_table(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """``rows`` as a table of ``schema`` (keys it does not name are left out), read by Arrow's JSON reader.

    Not ``pa.Table.from_pylist``: its first call imports pandas (0.25 s), an eighth of
    a cached ``sprintflow evaluate``, which writes one small table and reads none.

    Example:
        >>> table = _typed_table([{"kind": "evaluation", "iteration": 2, "other": 1,
        ...                        "timestamp": datetime(2026, 1, 15, 10, 0, 0, 123456, tzinfo=UTC)}], EVAL_SCHEMA)
        >>> table.schema == EVAL_SCHEMA, table.column("iteration")[0].as_py(), str(table.column("timestamp")[0])
        (True, 2, '2026-01-15 10:00:00.123000+00:00')
    """
    if not rows:
        return schema.empty_table()
    lines = "\n".join(json.dumps({name: _json_value(row.get(name)) for name in schema.names}) for row in rows)
    data = lines.encode()
    # One block, however long the lines: the reader refuses a line longer than its block.
    options = pa_json.ReadOptions(block_size=max(len(data), 1 << 20) + 1)
    return pa_json.read_json(io.BytesIO(data), read_options=options,
                             parse_options=pa_json.ParseOptions(explicit_schema=schema))


def _json_value(value: Any) -> Any:
    """A value as Arrow's JSON reader takes it: times as UTC text in milliseconds (naive ones are UTC)."""
    if isinstance(value, datetime):
        utc = value.astimezone(UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    return value


def append_rows(directory: Path | str, table_name: str, rows: list[dict[str, Any]] | pd.DataFrame,
                *, compact_after: int = COMPACT_AFTER) -> Path | None:
    """Write ``rows`` (dicts or a DataFrame) as a new Parquet file of ``<directory>/<table_name>/``.

    Compacts the table when more than ``compact_after`` files pile up.

    The ``evals`` table has a fixed schema (:data:`EVAL_SCHEMA`); other tables
    take the types of their rows. Returns the new file, or None for no rows.
    """
    if len(rows) == 0:
        return None
    folder = Path(directory) / table_name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / _new_part_name()
    write_parquet(as_table(table_name, rows), path)
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
    """
    folder = Path(directory) / table_name
    if not folder.is_dir():
        return None
    with file_lock(folder / ".compact.lock", wait=False) as locked:
        if not locked or len(_parts(folder)) < min_files:
            return None
        # An unreadable file stays where it is, for someone to look at; readers skip and list it.
        readable = {path: table for path in _parts(folder)
                    if (table := _read_or_note(path, pq.read_table, [])) is not None}
        sources = list(readable)
        if len(sources) < min_files:
            return None
        merged = _concat(list(readable.values()))
        metadata = dict(merged.schema.metadata or {})
        metadata[_COMPACTED_FROM] = json.dumps([p.name for p in sources]).encode()
        target = folder / _new_part_name("-compacted")
        write_parquet(merged.replace_schema_metadata(metadata), target)
        for path in sources:
            path.unlink(missing_ok=True)
        fsync_dir(folder)
        return target


def _concat(tables: list[pa.Table]) -> pa.Table:
    # Files written by older versions may lack newer columns: promote, never fail.
    return pa.concat_tables(tables, promote_options="default")


def _read_or_note(path: Path, read: Callable[[Path], T], problems: list[str] | None) -> T | None:
    """``read(path)``; a file that is not Parquet (torn, overwritten) is None, noted in ``problems``
    (or a WorkspaceError naming it, without a list to note it in). A vanished file is raised as is."""
    try:
        return read(path)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else repr(exc)
        message = f"{path}: not a readable Parquet file ({detail})"
        if problems is None:
            raise WorkspaceError(message) from None
        problems.append(f"{message}: skipped")
        return None


def _read_consistent(folder: Path, columns: list[str] | None, attempts: int = 5,
                     dictionary: list[str] | None = None, problems: list[str] | None = None) -> list[pa.Table]:
    """Every readable file's rows once, even while a compaction merges and removes files."""
    for _ in range(attempts):
        tables: dict[str, pa.Table] = {}
        superseded: set[str] = set()
        skipped: list[str] = []
        try:
            for path in _parts(folder):
                table = _read_or_note(path, lambda p: _read_part(p, columns, dictionary),
                                      skipped if problems is not None else None)
                if table is None:
                    continue
                sources = pq.read_schema(path).metadata or {}
                superseded.update(json.loads(sources.get(_COMPACTED_FROM, b"[]")))
                tables[path.name] = table
        except FileNotFoundError:
            continue  # compacted away under us: its rows are in a newer file; list again
        if problems is not None:
            problems.extend(skipped)
        return [table for name, table in tables.items() if name not in superseded]
    raise WorkspaceError(f"{folder}: files kept vanishing while being read (compaction loop?)")


def live_parts(directory: Path | str, table_name: str, problems: list[str] | None = None) -> list[Path]:
    """The table's files whose rows a reader counts: readable Parquet, not merged into a compacted file.

    For queries that read the files themselves (DuckDB): a compacted file and its sources
    listed together would count the sources' rows twice. A file that is not Parquet is left out
    (and described in ``problems`` when a list is given).
    """
    folder = Path(directory) / table_name
    for _ in range(5):
        skipped: list[str] = []
        try:
            schemas = {path: schema for path in _parts(folder)
                       if (schema := _read_or_note(path, pq.read_schema, skipped)) is not None}
        except FileNotFoundError:
            continue  # compacted away under us: list again
        if problems is not None:
            problems.extend(skipped)
        superseded = {name for schema in schemas.values()
                      for name in json.loads((schema.metadata or {}).get(_COMPACTED_FROM, b"[]"))}
        return [path for path in schemas if path.name not in superseded]
    raise WorkspaceError(f"{folder}: files kept vanishing while being read (compaction loop?)")


def _read_part(path: Path, columns: list[str] | None, dictionary: list[str] | None) -> pa.Table:
    """One file's columns; columns it predates (added to the schema later) come back as nulls."""
    if columns is None:
        return pq.read_table(path, read_dictionary=dictionary)
    present = set(pq.read_schema(path).names)
    table = pq.read_table(path, columns=[c for c in columns if c in present], read_dictionary=dictionary)
    schema = _SCHEMAS.get(path.parent.name)
    for name in columns:
        if name not in present:
            kind = schema.field(name).type if schema is not None and name in schema.names else pa.null()
            if dictionary and name in dictionary:
                kind = pa.dictionary(pa.int32(), kind)
            table = table.append_column(pa.field(name, kind), pa.nulls(len(table), kind))
    return table.select(columns)


def read_table(directory: Path | str, table_name: str, since: datetime | str | None = None,
               *, columns: list[str] | None = None, time_column: str = "timestamp",
               problems: list[str] | None = None) -> pd.DataFrame:
    """All rows of a table as a DataFrame; with ``since``, only rows whose ``time_column`` is at or after it.

    Text columns of a table with a known schema come back as categoricals with
    sorted categories: a million rows repeat few distinct values, and filtering
    or grouping integer codes is much cheaper than copying strings. An empty or
    missing table gives an empty frame with the table's columns. A file that is not
    Parquet is skipped and described in ``problems`` when a list is given, else it is a
    WorkspaceError naming it.
    """
    folder = Path(directory) / table_name
    schema = _SCHEMAS.get(table_name)
    text = [f.name for f in schema if f.type == pa.string() and (columns is None or f.name in columns)] \
        if schema is not None else None
    tables = _read_consistent(folder, columns, dictionary=text, problems=problems) if folder.is_dir() else []
    if not tables:
        empty = schema.empty_table() if schema is not None else pa.table({})
        return empty.select(columns).to_pandas() if columns else empty.to_pandas()
    table = _concat(tables)
    if since is not None and time_column in table.column_names:
        import pyarrow.compute as pc  # here: its import costs every evaluation, which reads no table

        bound = pa.scalar(parse_since(since), type=table.schema.field(time_column).type)
        table = table.filter(pc.greater_equal(table[time_column], bound))
    return _frame(table)


def _frame(table: pa.Table) -> pd.DataFrame:
    """``table`` as a DataFrame, its dictionary columns as categoricals with sorted categories.

    The categoricals are built from Arrow's codes: Arrow's own conversion unifies every file's
    dictionary through Python objects, 0.35 s for the 200,000 run ids of 2 M rows; unified in
    Arrow and recoded here it is a third of that. Parquet dictionaries keep first-seen order;
    sorting and grouping should follow the text.
    """
    table = table.unify_dictionaries()
    plain = [field.name for field in table.schema if not pa.types.is_dictionary(field.type)]
    frame = table.select(plain).to_pandas()
    for index, name in enumerate(table.column_names):
        if name not in plain:
            frame.insert(index, name, _categorical(table.column(index)))
    return frame


def _categorical(column: pa.ChunkedArray) -> pd.Categorical:
    import numpy as np
    import pandas as pd
    import pyarrow.compute as pc

    chunks = column.chunks
    dictionary = chunks[0].dictionary if chunks else pa.array([], pa.string())
    codes = np.concatenate([pc.fill_null(chunk.indices, -1).to_numpy() for chunk in chunks]) if chunks \
        else np.zeros(0, dtype=np.int32)
    order = pc.sort_indices(dictionary)  # in Arrow: a third of sorting 200,000 Python strings
    rank = np.empty(len(order) + 1, dtype=np.int32)  # the last slot maps code -1 (null) to itself
    rank[order.to_numpy()] = np.arange(len(order), dtype=np.int32)
    rank[-1] = -1
    return pd.Categorical.from_codes(rank[codes], categories=pd.Index(dictionary.take(order)), validate=False)


def parse_since(since: datetime | str) -> datetime:
    """A ``--since`` bound as an aware UTC datetime: a date, or a date and time (UTC unless it says).

    Raises:
        InputError: the text is not a date.

    Example:
        >>> parse_since("2026-05-01")
        datetime.datetime(2026, 5, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    import pandas as pd

    try:
        stamp = pd.Timestamp(since)
    except ValueError:
        stamp = pd.NaT
    if stamp is pd.NaT:
        raise InputError(f"--since {since!r}: expected a date like 2026-05-01 or 2026-05-01T12:00Z")
    return (stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")).to_pydatetime()
