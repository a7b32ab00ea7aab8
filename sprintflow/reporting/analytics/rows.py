"""The history rows every analytics function reads: the ``evals`` columns, the rows of one kind, engine names."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from sprintflow.history.query import Evals, EvalTable

__all__ = [
    "REPORT_COLUMNS",
    "UNKNOWN_ENGINE",
]

REPORT_COLUMNS = ["kind", "workspace", "sprint_run", "run_id", "eval_id", "spec_id", "contract_id", "iteration", "name",
                  "method", "required", "result",
                  "cached", "regressions", "timestamp", "workspace_hash", "tokens", "cost_usd", "engine",
                  "executor", "test_run", "mutants", "kill_rate", "tester_kill_rate"]
"""The ``evals`` columns these functions read: load only these for a big history."""

IN_TIME = "{'at': timestamp, 'iteration': iteration, 'row': _row}"
"""SQL: a row's place in time, to order by or to take a group's first or last row by (``arg_min_null``): the
earliest timestamp, then the lowest iteration, then the first recorded; nulls last, as pandas sorts them."""


def _of_one_row(pick: str, columns: Iterable[str] | Mapping[str, str], place: str) -> str:
    """SQL select items: ``columns`` (output name -> SQL, or names) as they are in one row of each group, the row
    ``pick`` (``arg_min_null``, ``arg_max_null`` …) chooses by ``place``.

    One aggregate of a struct whatever the number of columns (DuckDB computes an aggregate written several times
    once): an aggregate per column compares the places again for each, and with :data:`IN_TIME`'s struct places
    that was most of the query (a 21 M-row history's first evaluations: 2.2 s, now 1.0 s).

    Example:
        >>> _of_one_row("arg_min_null", ["result"], "_row")
        "(arg_min_null({'result': result}, _row)).result AS result"
        >>> _of_one_row("arg_max_null", {"last_at": "timestamp"}, "_row")
        "(arg_max_null({'last_at': timestamp}, _row)).last_at AS last_at"
    """
    named = dict(columns) if isinstance(columns, Mapping) else {column: column for column in columns}
    struct = "{" + ", ".join(f"'{name}': {sql}" for name, sql in named.items()) + "}"
    chosen = f"{pick}({struct}, {place})"
    return ", ".join(f"({chosen}).{name} AS {name}" for name in named)


UNKNOWN_ENGINE = "(not reported)"
"""The engine of evaluations whose generator step named none (evaluated by hand, or before it was recorded)."""


def _kind(evals: Evals, kind: str, *columns: str, where: str | None = None) -> pd.DataFrame:
    # DuckDB reads only these columns of these rows (from the Parquet files, when the table is over them).
    # A column the rows lack (a history written before it existed) reads as empty; "sprint" is numbered
    # over the whole table (:func:`sprint_ids`) unless the rows carry it.
    return EvalTable.of(evals).rows(kind, list(columns), where)


def _of_kind(evals: Evals, kind: str, select: str) -> tuple[str, EvalTable]:
    """SQL for the rows of one kind (``select``: the columns, as SQL), and the table it runs over."""
    return f"SELECT {select} FROM evals WHERE kind = '{kind}'", EvalTable.of(evals)


def _span(evals: Evals, kind: str | None = None) -> pd.Series:
    """The first and the last timestamp of the rows (of one kind): what :func:`auto_freq` needs."""
    where = f"WHERE kind = '{kind}'" if kind else ""
    ends = EvalTable.of(evals).query(f"SELECT min(timestamp) AS t FROM evals {where} "
                                     f"UNION ALL SELECT max(timestamp) FROM evals {where}")
    return ends["t"].dropna()


def _first_evaluations(evals: Evals) -> pd.DataFrame:
    """Each sprint's first evaluation (earliest timestamp, then lowest iteration, then first recorded):
    ``sprint, result, timestamp, engine, executor, contract_id``, in that order of time.

    Found once per table, in SQL (several tables start from it): pandas gets a row per sprint, not per evaluation.
    """
    source = EvalTable.of(evals)
    return source.query(f"SELECT * FROM {_first_evaluations_kept(source)}")


def _first_evaluations_kept(source: EvalTable) -> str:
    """The temporary table of :func:`_first_evaluations`' rows, for SQL that starts from them."""
    columns = ("result", "timestamp", "engine", "executor", "contract_id")
    return source.kept("first_evaluations", f"""
        SELECT sprint, {_of_one_row("arg_min_null", columns, "place")}
        FROM (SELECT sprint, {", ".join(columns)}, {IN_TIME} AS place FROM {source.sprinted()}
              WHERE kind = 'evaluation')
        GROUP BY sprint ORDER BY min(place)""")


def _engine_names(values: pd.Series) -> pd.Series:
    named = values.astype(object)
    return named.where(named.notna(), UNKNOWN_ENGINE)
