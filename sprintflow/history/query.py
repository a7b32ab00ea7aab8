"""SQL over the history's Parquet files (DuckDB): an aggregation reads only the columns it names.

A notebook question over millions of rows ("pass rate by strategy by week") need not load them
into pandas: :func:`history_query` runs the SQL over the files themselves, as the view ``evals``,
and returns the small answer as a DataFrame. Only the files a reader counts are queried
(:func:`~sprintflow.history.dataset.live_parts`: a compacted file's sources are left out), and a
file written before a column existed reads that column as null.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sprintflow.errors import InputError

from .dataset import EVAL_SCHEMA, EVALS, live_parts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["history_query"]


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
    import duckdb  # here: an evaluation, which writes the history and queries none, never pays its import

    files = [str(path) for path in live_parts(directory, EVALS)] if Path(directory, EVALS).is_dir() else []
    connection = duckdb.connect()
    try:
        if files:
            connection.read_parquet(files, union_by_name=True).create_view("evals")
        else:
            connection.register("evals", EVAL_SCHEMA.empty_table())
        return connection.execute(sql, params or {}).df()
    except duckdb.Error as exc:
        raise InputError(f"history query: {str(exc).splitlines()[0]}") from None
    finally:
        connection.close()
