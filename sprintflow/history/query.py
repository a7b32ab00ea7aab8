"""SQL over the history's Parquet files (DuckDB): an aggregation reads only the columns it names.

A question over millions of rows ("pass rate by strategy by week") need not load them into
pandas: :class:`EvalTable` is the ``evals`` table in DuckDB, over the Parquet files themselves
(or over a DataFrame, for rows already in memory), and hands back only the small answers as
DataFrames; :func:`history_query` runs one SQL statement over a history folder. Only the files a
reader counts are queried (:func:`~sprintflow.history.dataset.live_parts`: a compacted file's
sources are left out), and a file written before a column existed reads that column as null.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from sprintflow.errors import InputError

from .dataset import EVAL_SCHEMA, EVALS, live_parts, parse_since
from .sprints import SPRINT_KEYS

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

__all__ = ["EvalTable", "Evals", "frame_query", "history_query", "sql_literal"]

_MEMORY_LIMIT = "1GB"
"""What DuckDB may hold at once (hash tables, sorts); past it, it spills to a temporary folder."""
_FILE_ROWS = 1 << 40
"""Row order across files: a file's index times this, plus its row number (files hold far fewer rows)."""


def _sql_type(kind: pa.DataType) -> str:
    if pa.types.is_timestamp(kind):
        return "TIMESTAMPTZ"
    return {pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.bool_(): "BOOLEAN",
            pa.float64(): "DOUBLE"}[kind]


_TYPES = {field.name: _sql_type(field.type) for field in EVAL_SCHEMA}


def _name(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _connect() -> duckdb.DuckDBPyConnection:
    import duckdb  # here: an evaluation, which writes the history and queries none, never pays its import

    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")  # timestamps come back in UTC, as the Parquet files hold them
    # DuckDB takes 80 % of the machine's memory by default and fails where a process is given less; within
    # this it spills to disk (a temporary folder, not the current one), and the report's frames get the rest.
    connection.execute(f"SET memory_limit = '{_MEMORY_LIMIT}'; SET temp_directory = "
                       f"{sql_literal(str(Path(tempfile.gettempdir()) / f'sprintflow-duckdb-{os.getpid()}'))}")
    try:  # no progress bar on the report's terminal (in Jupyter, DuckDB refuses the setting without ipywidgets)
        connection.execute("SET enable_progress_bar = false")
    except duckdb.Error:
        pass
    return connection


class EvalTable:
    """The ``evals`` rows in DuckDB, as the view ``evals``: every :data:`EVAL_SCHEMA` column (those the
    source lacks read as null), the source's other columns, and ``_row``, the rows' order.

    Build it with :meth:`over_files` (the history's Parquet files: a query reads only the columns it
    names) or :meth:`of` (a DataFrame, scanned in place). :meth:`query` answers SQL as a DataFrame;
    :meth:`rows` gives the rows of one kind, numbered by sprint.

    Example:
        >>> import pandas as pd
        >>> table = EvalTable.of(pd.DataFrame({"kind": ["evaluation", "strategy"], "contract_id": "c",
        ...                                    "result": ["pass", "fail"]}))
        >>> table.query("SELECT count(*) AS n FROM evals WHERE result = 'pass'")["n"].item()
        1
        >>> table.rows("evaluation", ["contract_id", "sprint"]).to_dict("records")
        [{'contract_id': 'c', 'sprint': 0}]
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, columns: Iterable[str]) -> None:
        self._connection = connection
        self.columns = list(columns)
        """The columns the source has (a schema column it lacks still reads as null)."""
        self._numbered = False
        self._kept: set[str] = set()

    def __contains__(self, column: object) -> bool:
        return column in self.columns

    @classmethod
    def of(cls, evals: pd.DataFrame | EvalTable) -> EvalTable:
        """``evals`` itself when it is a table already, else a table over the DataFrame (not copied)."""
        if isinstance(evals, EvalTable):
            return evals
        import numpy as np

        connection = _connect()
        connection.register("_source", evals.assign(_row=np.arange(len(evals), dtype=np.int64)))
        connection.execute(f"CREATE VIEW evals AS SELECT {_select(list(evals.columns))}, _row FROM _source")
        return cls(connection, [str(column) for column in evals.columns])

    @classmethod
    def over_files(cls, directory: Path | str, *, since: datetime | str | None = None,
                   columns: list[str] | None = None, extra: pd.DataFrame | None = None,
                   problems: list[str] | None = None) -> EvalTable:
        """The ``evals`` table of the history in ``directory`` (and the rows of ``extra`` after its files).

        ``since`` keeps rows whose timestamp is at or after it; ``columns`` names the columns the table
        has (default: every schema column); files that are not Parquet are skipped and noted in ``problems``.
        """
        files = [str(path) for path in live_parts(directory, EVALS, problems)] \
            if Path(directory, EVALS).is_dir() else []
        connection = _connect()
        wanted = list(EVAL_SCHEMA.names) if columns is None else list(columns)
        sources = []
        if files:
            present = [str(name) for name in connection.read_parquet(files, union_by_name=True).columns]
            # BIGINT: DuckDB's file_index is unsigned, and its product a HUGEINT, which reaches pandas as Python
            # Decimals (slow, and a frame of them sent back to DuckDB is typed by its first values).
            sources.append(f"SELECT {_select(present)}, file_index::BIGINT * {_FILE_ROWS} + file_row_number AS _row "
                           "FROM read_parquet($files, union_by_name = true)")
        if extra is not None and len(extra):
            connection.register("_extra", extra.reset_index(drop=True).rename_axis("_position").reset_index())
            sources.append(f"SELECT {_select([str(c) for c in extra.columns])}, "
                           f"{len(files)} * {_FILE_ROWS} + _position AS _row FROM _extra")
        if not sources:
            sources.append(f"SELECT {_select([])}, 0::BIGINT AS _row WHERE false")
        where = ""
        if since is not None:  # a literal: a view takes no parameters, and this text is ours
            where = f" WHERE timestamp >= '{parse_since(since).isoformat()}'::TIMESTAMPTZ"
        union = " UNION ALL BY NAME ".join(f"({source})" for source in sources)
        statement = f"CREATE VIEW evals AS SELECT * FROM ({union}){where}"
        if files:  # the file list as a literal too, for the same reason
            statement = statement.replace("$files", "[" + ", ".join(sql_literal(f) for f in files) + "]")
        connection.execute(statement)
        return cls(connection, wanted)

    def query(self, sql: str, params: dict[str, Any] | None = None, *, categorical: bool = False,
              **frames: pd.DataFrame) -> pd.DataFrame:
        """The answer to ``sql`` (over the view ``evals``; ``$name`` placeholders filled from ``params``; each
        of ``frames`` scanned in place under its keyword's name).

        ``categorical`` gives text columns as categoricals: for answers that pandas sorts, filters and
        groups further (moving integer codes costs a fraction of moving Arrow strings).

        Raises:
            InputError: DuckDB refused the SQL (its first line says why).
        """
        return self._answer(sql, params, frames, categorical)

    def _answer(self, sql: str, params: dict[str, Any] | None, frames: dict[str, pd.DataFrame],
                categorical: bool = False) -> pd.DataFrame:
        import duckdb

        try:
            for name, frame in frames.items():
                self._connection.register(name, frame)
            # Through Arrow: DuckDB's own DataFrame conversion takes twice as long on text columns.
            answer = self._connection.sql(sql, params=params or None).to_arrow_table()
            return _as_recorded(answer).to_pandas(strings_to_categorical=categorical)
        except duckdb.OutOfMemoryException:
            raise  # the machine's limit, not the query's fault (:class:`~sprintflow.errors.OutOfMemory`)
        except duckdb.Error as exc:
            raise InputError(f"history query: {str(exc).splitlines()[0]}") from None
        finally:
            for name in frames:
                self._connection.unregister(name)

    def kept(self, name: str, sql: str) -> str:
        """``name``: a temporary table of ``sql``'s rows, made on first use, for several questions that
        start from the same costly rows (the same ``name`` must always mean the same ``sql``)."""
        if name not in self._kept:
            self._connection.execute(f"CREATE TEMP TABLE {_name(name)} AS {sql}")
            self._kept.add(name)
        return _name(name)

    def sprinted(self) -> str:
        """SQL for the rows with their sprint number in ``sprint`` (a view name), numbering sprints once.

        Sprints (:data:`SPRINT_KEYS`) are numbered in order of first appearance, as
        :func:`~sprintflow.history.sprints.sprint_ids` numbers them; a source that carries ``sprint``
        keeps its own.
        """
        if "sprint" in self.columns:
            return "evals"
        if not self._numbered:
            keys = ", ".join(SPRINT_KEYS)
            join = " AND ".join(f"e.{key} IS NOT DISTINCT FROM s.{key}" for key in SPRINT_KEYS)
            self._connection.execute(
                f"CREATE TEMP TABLE _sprints AS SELECT {keys}, "
                f"(row_number() OVER (ORDER BY min(_row)) - 1)::BIGINT AS sprint FROM evals GROUP BY {keys}; "
                f"CREATE VIEW sprinted AS SELECT e.*, s.sprint FROM evals e LEFT JOIN _sprints s ON {join}")
            self._numbered = True
        return "sprinted"

    def sprint_columns(self) -> list[str]:
        """The columns that tell a row's sprint: ``sprint`` where the source carries it, else the sprint's keys
        (:data:`SPRINT_KEYS`), for :meth:`numbered` to number."""
        return ["sprint"] if "sprint" in self.columns else list(SPRINT_KEYS)

    def numbered(self, sql: str) -> str:
        """SQL for the rows of ``sql`` (selecting :meth:`sprint_columns`) with their sprint number in ``sprint``.

        The numbers are joined onto these rows alone: a query that keeps a few of many rows joins only those
        (:meth:`sprinted` joins every row of the table).
        """
        if "sprint" in self.columns:
            return sql
        self.sprinted()  # the sprints numbered once
        join = " AND ".join(f"r.{key} IS NOT DISTINCT FROM s.{key}" for key in SPRINT_KEYS)
        return f"SELECT r.*, s.sprint FROM ({sql}) r LEFT JOIN _sprints s ON {join}"

    def rows(self, kind: str, columns: list[str], where: str | None = None) -> pd.DataFrame:
        """The rows of one ``kind`` (and the SQL condition ``where``) with ``columns``, in the table's order
        (``sprint``: the sprint's number; ``_row``: the row's place). A column the table lacks reads as empty.
        """
        source = self.sprinted() if "sprint" in columns else "evals"
        condition = "kind = $kind" + (f" AND ({where})" if where else "")
        return self._answer(f"SELECT {self._select(columns)} FROM {source} WHERE {condition} ORDER BY _row",
                            {"kind": kind}, {}, categorical=True)

    def _select(self, columns: list[str]) -> str:
        known = set(_TYPES) | set(self.columns) | {"sprint", "_row"}
        return ", ".join(_name(c) if c in known else f"NULL AS {_name(c)}" for c in columns)


Evals: TypeAlias = "pd.DataFrame | EvalTable"
"""What the analytics read: the ``evals`` rows as a DataFrame, or as a DuckDB table over the files."""


def frame_query(sql: str, **frames: pd.DataFrame) -> pd.DataFrame:
    """The answer to ``sql`` over DataFrames, each scanned in place under its keyword's name.

    Example:
        >>> import pandas as pd
        >>> frame_query("SELECT count(*) AS n FROM numbers WHERE n > 1", numbers=pd.DataFrame({"n": [1, 2]}))
           n
        0  1
    """
    connection = _connect()
    try:
        for name, frame in frames.items():
            connection.register(name, frame)
        return connection.sql(sql).to_arrow_table().to_pandas()
    finally:
        connection.close()


def _as_recorded(table: pa.Table) -> pa.Table:
    """``table`` with its instants (UTC timestamps) in milliseconds, as the history records them, wherever that
    loses nothing: DuckDB answers in microseconds, and the report's exports would print three more digits.

    Example:
        >>> stamps = pa.array([1_000], pa.timestamp("us", tz="UTC")), pa.array([1_001], pa.timestamp("us", tz="UTC"))
        >>> [str(column.type) for column in _as_recorded(pa.table({"a": stamps[0], "b": stamps[1]})).columns]
        ['timestamp[ms, tz=UTC]', 'timestamp[us, tz=UTC]']
    """
    for index, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type) and field.type.unit == "us" and field.type.tz is not None:
            try:  # a safe cast refuses to drop a microsecond
                table = table.set_column(index, field.name, table.column(index).cast(pa.timestamp("ms", field.type.tz)))
            except pa.ArrowInvalid:
                pass
    return table


def sql_literal(text: str) -> str:
    """``text`` as an SQL string literal, for SQL that takes no parameters (a view, a file list).

    Example:
        >>> sql_literal("it's")
        "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def _select(present: list[str]) -> str:
    """Every schema column, typed (null where ``present`` lacks it), then ``present``'s other columns."""
    typed = [f"CAST({_name(name) if name in present else 'NULL'} AS {kind}) AS {_name(name)}"
             for name, kind in _TYPES.items()]
    others = [_name(name) for name in present if name not in _TYPES and name != "_row"]
    return ", ".join(typed + others)


def history_query(directory: Path | str, sql: str, params: dict[str, Any] | None = None) -> pd.DataFrame:
    """Run ``sql`` over the history in ``directory``, where the view ``evals`` is its ``evals`` table.

    ``params`` fill ``$name`` placeholders. An empty or missing history is an empty ``evals`` with
    every column, so a query always runs.

    Raises:
        InputError: DuckDB refused the SQL (its first line says why).

    Example:
        >>> import tempfile
        >>> from sprintflow.history.dataset import append_rows
        >>> folder = tempfile.mkdtemp()
        >>> _ = append_rows(folder, EVALS, [{"kind": "strategy", "name": "lint", "result": "pass"},
        ...                                 {"kind": "strategy", "name": "lint", "result": "fail"}])
        >>> history_query(folder, "SELECT name, count(*) FILTER (WHERE result = 'pass') AS passed, "
        ...               "count(*) AS runs FROM evals GROUP BY name").to_dict("records")
        [{'name': 'lint', 'passed': 1, 'runs': 2}]
    """
    return EvalTable.over_files(directory).query(sql, params)
