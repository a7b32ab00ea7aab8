"""The day-level cubes the page embeds: counts per day and per value of every filter, and the filter values.

Sums re-aggregate exactly, so a pass rate or a flip rate the browser recomputes from them is exact. The cubes
are grouped by DuckDB: those over every row and over the evaluations where the rows are, those over sprints and
criteria over the green tables (a row per sprint and per sprint's criterion, already in pandas) scanned in place.
Every figure of a sprint is filed under its first evaluation's engine and executor (:func:`_engine_and_executor`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sprintflow.history.query import EvalTable, sql_literal
from sprintflow.history.sources import History
from sprintflow.reporting import analytics as r
from sprintflow.reporting.analytics.costs import _reported_cost
from sprintflow.reporting.analytics.flakiness import _flips as _flipped_runs
from sprintflow.reporting.analytics.flakiness import _hash_runs, _reruns, _strategy_reruns
from sprintflow.reporting.analytics.periods import _utc_sql
from sprintflow.reporting.analytics.rates import _COUNTS
from sprintflow.reporting.analytics.rows import _first_evaluations_kept

__all__ = [
    "ALL",
    "CONTRACT_OPTIONS",
    "NEVER",
    "OTHER_CONTRACTS",
]

ALL = "(all)"
"""The filter value that keeps everything."""
OTHER_CONTRACTS = "(other contracts)"
CONTRACT_OPTIONS = 150
NEVER = 99
"""The iterations-to-green value of a contract or criterion that never went green."""
UNKNOWN_EXECUTOR = "(unknown)"
"""The executor of evaluations that recorded none."""


def _cat(values: pd.Series | np.ndarray, missing: str | None = None) -> pd.Series:
    """``values`` as a categorical (cheap to group on millions of rows), nulls as ``missing`` when given."""
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(series.dtype, pd.StringDtype):  # text from DuckDB: directly, a fifth of going through objects
        series = series.astype("category")
    elif not isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object).astype("category")
    if missing is not None and series.isna().any():
        if missing not in series.cat.categories:
            series = series.cat.add_categories([missing])
        series = series.fillna(missing)
    return series


def _day(timestamps: pd.Series) -> pd.Series:
    """UTC calendar day as ``YYYY-MM-DD`` text (a categorical: few distinct days)."""
    days = pd.to_datetime(timestamps, utc=True).dt.floor("D")
    codes, uniques = pd.factorize(days, sort=True)
    labels = pd.DatetimeIndex(uniques).strftime("%Y-%m-%d")
    return pd.Series(pd.Categorical.from_codes(codes, categories=labels), index=timestamps.index)


def _day_sql(column: str) -> str:
    """SQL: :func:`_day` of a timestamp column.

    Example:
        >>> _day_sql("timestamp")
        "strftime(date_trunc('day', make_timestamp(epoch_us(timestamp))), '%Y-%m-%d')"
    """
    return f"strftime(date_trunc('day', {_utc_sql(column)}), '%Y-%m-%d')"


def _bucket(contracts: pd.Series, named: set[str]) -> pd.Series:
    """Contract ids, with those not in ``named`` grouped as :data:`OTHER_CONTRACTS` (recoded, not copied)."""
    values = _cat(contracts, OTHER_CONTRACTS)
    kept = pd.Index(sorted(named) + [OTHER_CONTRACTS])
    per_category = kept.get_indexer(values.cat.categories.astype(str))  # a few hundred names to look up
    per_category[per_category < 0] = len(kept) - 1
    return pd.Series(pd.Categorical.from_codes(per_category[values.cat.codes.to_numpy()], categories=kept),
                     index=contracts.index)


def _contract_names(table: EvalTable) -> set[str]:
    """Contracts that can be picked one by one: the most recently evaluated ones. A contract whose id is the
    other contracts' bucket (:data:`OTHER_CONTRACTS`) is never one of them: it is filed in the bucket it names,
    rather than the bucket being listed twice."""
    latest = table.query(f"""
        SELECT contract_id FROM evals
        WHERE kind = 'evaluation' AND contract_id IS NOT NULL AND contract_id <> {sql_literal(OTHER_CONTRACTS)}
        GROUP BY contract_id ORDER BY max(timestamp) DESC NULLS LAST, contract_id LIMIT {CONTRACT_OPTIONS}""")
    return set(latest["contract_id"].astype(str))


@dataclass(frozen=True)
class EvaluationFacts:
    """What the page says of every evaluation: how many, of how many contracts, the engines and executors
    (a missing one under its placeholder) and the first and last day."""

    evaluations: int
    contracts: int
    engines: list[str]
    executors: list[str]
    first_day: str
    last_day: str


def _evaluation_facts(table: EvalTable) -> EvaluationFacts:
    row = table.query(f"""
        SELECT count(*) AS evaluations, count(DISTINCT contract_id) AS contracts,
               list(DISTINCT coalesce(engine, {sql_literal(r.UNKNOWN_ENGINE)})) AS engines,
               list(DISTINCT coalesce(executor, {sql_literal(UNKNOWN_EXECUTOR)})) AS executors,
               coalesce(min({_day_sql("timestamp")}), '') AS first_day,
               coalesce(max({_day_sql("timestamp")}), '') AS last_day
        FROM evals WHERE kind = 'evaluation'""").iloc[0]
    return EvaluationFacts(int(row["evaluations"]), int(row["contracts"]),
                           sorted(str(v) for v in (row["engines"] if row["evaluations"] else [])),
                           sorted(str(v) for v in (row["executors"] if row["evaluations"] else [])),
                           str(row["first_day"]), str(row["last_day"]))


def _sum_by(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Sums of the other columns per combination of ``keys`` that occurs, sorted by the keys.

    Categorical keys are combined into one integer per row and summed with
    numpy: a pandas group-by over six keys costs several times more on
    millions of rows.
    """
    if frame.empty or not all(isinstance(frame[key].dtype, pd.CategoricalDtype) for key in keys):
        table = frame.groupby(keys, sort=True, observed=True).sum().reset_index()
        return table.astype({key: object for key in keys if isinstance(table[key].dtype, pd.CategoricalDtype)})
    codes = [frame[key].cat.codes.to_numpy().astype(np.int64) for key in keys]
    if any((code < 0).any() for code in codes):  # a null key: let pandas drop it, as it always did
        table = frame.groupby(keys, sort=True, observed=True).sum().reset_index()
        return table.astype({key: object for key in keys})
    sizes = [len(frame[key].cat.categories) for key in keys]
    combined = np.ravel_multi_index(codes, sizes)
    groups, inverse = np.unique(combined, return_inverse=True)
    table = pd.DataFrame({key: frame[key].cat.categories.to_numpy(dtype=object)[positions]
                          for key, positions in zip(keys, np.unravel_index(groups, sizes), strict=True)})
    for column in frame.columns.difference(keys, sort=False):
        values = frame[column].to_numpy()
        sums = np.bincount(inverse, weights=values, minlength=len(groups))
        table[column] = sums.astype(values.dtype) if np.issubdtype(values.dtype, np.integer) else sums
    return table


def _attributed(unmatched: str) -> str:
    """SQL: every row of ``evals`` with the page's filter dimensions: ``day`` (a UTC midnight), ``contract``
    (the bucket: ``_named`` lists the contracts picked one by one), ``engine_of_row`` and ``executor_of_row``.

    The engine is recorded on evaluation rows only, so every row takes its evaluation's (the last
    evaluation row with the same eval id and timestamp); a row without one takes ``unmatched``.
    Contracts are bucketed by a join: a list lookup per row costs more than the grouping.
    """
    return f"""
        WITH engines AS (
            SELECT coalesce(eval_id, '') AS eval_key, timestamp,
                   arg_max(coalesce(engine, {sql_literal(r.UNKNOWN_ENGINE)}), _row) AS engine_of_row
            FROM evals WHERE kind = 'evaluation' GROUP BY ALL)
        SELECT e.kind, e.name, e.method, e.result, date_trunc('day', {_utc_sql("e.timestamp")}) AS day,
               {_BUCKET},
               coalesce(g.engine_of_row, {sql_literal(unmatched)}) AS engine_of_row,
               coalesce(e.executor, {sql_literal(UNKNOWN_EXECUTOR)}) AS executor_of_row
        FROM evals e
        LEFT JOIN engines g ON coalesce(e.eval_id, '') = g.eval_key AND e.timestamp IS NOT DISTINCT FROM g.timestamp
        {_bucket_join("e")}"""


def _named(named: set[str]) -> pd.DataFrame:
    """The contracts picked one by one, as the ``_named`` table the cubes' SQL joins (:func:`_bucket_join`)."""
    return pd.DataFrame({"contract": pd.Series(sorted(named), dtype=object)})


def _bucket_join(rows: str) -> str:
    """SQL: ``rows`` (an alias) joined to the contracts picked one by one (``_named``), for :data:`_BUCKET`.

    Example:
        >>> _bucket_join("e")
        'LEFT JOIN _named n ON e.contract_id = n.contract'
    """
    return f"LEFT JOIN _named n ON {rows}.contract_id = n.contract"


_BUCKET = f"coalesce(n.contract, {sql_literal(OTHER_CONTRACTS)}) AS contract"
"""SQL select item: the contract's bucket of a row joined by :func:`_bucket_join`."""


def _options(table: EvalTable, facts: EvaluationFacts, named: set[str]) -> dict[str, list[str]]:
    def distinct(values: pd.Series) -> list[str]:
        return sorted(str(v) for v in pd.unique(values.dropna().astype(object)))

    contracts = sorted(named)
    if len(named) < facts.contracts:
        contracts.append(OTHER_CONTRACTS)
    names = table.query("SELECT DISTINCT kind, name FROM evals WHERE kind IN ('strategy', 'criterion') "
                        "AND name IS NOT NULL")
    return {"contract": contracts, "engine": facts.engines,
            "strategy": distinct(names.loc[names["kind"] == "strategy", "name"]),
            "criterion": distinct(names.loc[names["kind"] == "criterion", "name"]),
            "executor": facts.executors}


def _outcomes(table: EvalTable, named: set[str], unmatched: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Results per day, level (the row's kind), name and filter value; and criterion results per day,
    verification method, criterion and filter value (:func:`_coverage`'s cube), in one pass over the rows."""
    cubes = table.query(f"""
        SELECT strftime(day, '%Y-%m-%d') AS day, level, by_method, method, name, contract, engine, executor,
               passed, failed, skipped
        FROM (SELECT day, kind AS level, grouping(method) = 0 AS by_method, coalesce(method, '(unknown)') AS method,
                     coalesce(name, '') AS name, contract, engine_of_row AS engine, executor_of_row AS executor,
                     {_COUNTS}
              FROM ({_attributed(unmatched)}) WHERE day IS NOT NULL AND kind IS NOT NULL
              GROUP BY GROUPING SETS ((day, kind, name, contract, engine_of_row, executor_of_row),
                                      (day, kind, method, name, contract, engine_of_row, executor_of_row)))""",
                        _named=_named(named))
    keys = ["day", "level", "name", "contract", "engine", "executor"]
    outcomes = cubes[~cubes["by_method"]].drop(columns=["by_method", "method"])
    coverage = cubes[cubes["by_method"] & (cubes["level"] == "criterion")].drop(columns=["by_method", "level"])
    return (outcomes.sort_values(keys, ignore_index=True),
            coverage.sort_values(["day", "method", *keys[2:]], ignore_index=True))


def _engine_and_executor(rows: str) -> str:
    """SQL select items: the ``engine, executor`` of ``rows`` (an alias), a missing one under its placeholder.
    Joined to a sprint's row of :func:`~sprintflow.reporting.analytics.rows._first_evaluations_kept`, what every
    figure of the sprint is filed under.

    Example:
        >>> _engine_and_executor("f")
        "coalesce(f.engine, '(not reported)') AS engine, coalesce(f.executor, '(unknown)') AS executor"
    """
    return (f"coalesce({rows}.engine, {sql_literal(r.UNKNOWN_ENGINE)}) AS engine, "
            f"coalesce({rows}.executor, {sql_literal(UNKNOWN_EXECUTOR)}) AS executor")


def _in_buckets(criteria: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    """:func:`~sprintflow.reporting.analytics.criterion_greens`' rows with their contract's bucket in ``contract``,
    for :func:`_greens` and :func:`_activity` to scan. Bucketed here, where the contract ids are categoricals
    (recoded, not copied): DuckDB would first turn a categorical of a million contract ids into an enumeration,
    seconds."""
    return criteria[["sprint", "criterion", "first_at", "green_at", "iterations_to_green"]].assign(
        contract=_bucket(criteria["contract_id"], named))


def _greens(table: EvalTable, to_green: pd.DataFrame, criteria: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    """Sprints (level ``contract``: a sprint is a contract's run) and criteria (:func:`_in_buckets`) by
    first-evaluation day and iterations to green.

    Grouped by DuckDB, over the green tables where they are: a row per sprint and per sprint's criterion is
    millions of rows on a big history, and pandas took seconds to make their keys categoricals to group.
    """
    sprints = to_green[["sprint", "contract_id", "first_at", "green_at", "iterations_to_green"]]
    rows = f"""
        SELECT 'contract' AS level, '' AS name, sprint, {_BUCKET}, first_at, green_at, iterations_to_green
        FROM _green_sprints s {_bucket_join("s")}
        UNION ALL
        SELECT 'criterion', criterion::VARCHAR, sprint, contract::VARCHAR, first_at, green_at, iterations_to_green
        FROM _green_criteria"""
    return table.query(f"""
        SELECT {_day_sql("g.first_at")} AS day, level, name, contract, {_engine_and_executor("f")},
               coalesce(g.iterations_to_green, {NEVER})::BIGINT AS iterations, count(*) AS items,
               coalesce(fsum(epoch(g.green_at - g.first_at) / 3600), 0) AS hours
        FROM ({rows}) g LEFT JOIN {_first_evaluations_kept(table)} f USING (sprint)
        WHERE g.first_at IS NOT NULL GROUP BY ALL ORDER BY ALL""",
                       _green_sprints=sprints, _green_criteria=criteria, _named=_named(named))


def _activity(table: EvalTable, criteria: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    """Evaluations and their cost per day, with sprints started and criteria (:func:`_in_buckets`) first passing
    that day."""
    keys = "day, contract, engine, executor"
    cost = _reported_cost("e.cost_usd")
    first = _first_evaluations_kept(table)
    return table.query(f"""
        WITH costs AS (
            SELECT {_day_sql("e.timestamp")} AS day, {_BUCKET}, {_engine_and_executor("e")}, count(*) AS evaluations,
                   TRY_CAST(sum(e.tokens) AS BIGINT) AS tokens, coalesce(sum({cost}), 0) AS cost,
                   count({cost}) AS costed, TRY_CAST(sum(e.regressions) AS BIGINT) AS regressions
            FROM evals e {_bucket_join("e")}
            WHERE e.kind = 'evaluation' AND e.timestamp IS NOT NULL GROUP BY ALL),
        started AS (
            SELECT {_day_sql("s.timestamp")} AS day, {_BUCKET}, {_engine_and_executor("s")}, count(*) AS sprints
            FROM {first} s {_bucket_join("s")}
            WHERE s.timestamp IS NOT NULL GROUP BY ALL),
        passed AS (
            SELECT {_day_sql("c.green_at")} AS day, c.contract::VARCHAR AS contract, {_engine_and_executor("f")},
                   count(*) AS criteria_green
            FROM _green_criteria c LEFT JOIN {first} f USING (sprint) WHERE c.green_at IS NOT NULL GROUP BY ALL)
        SELECT {keys}, {", ".join(f"coalesce({column}, 0) AS {column}" for column in (
                   "evaluations", "tokens", "cost", "costed", "regressions", "sprints", "criteria_green"))}
        FROM costs FULL JOIN started USING ({keys}) FULL JOIN passed USING ({keys}) ORDER BY ALL""",
                       _named=_named(named), _green_criteria=criteria)


def _flips(history: History, named: set[str], linked_tests: pd.DataFrame | None) -> pd.DataFrame:
    """Comparisons and flips of consecutive fresh runs on one content hash, per test and per strategy."""
    table = history.table
    tests = r.tests_with_hashes(table, history.tests) if linked_tests is None else linked_tests
    tests = tests[tests["workspace_hash"].notna()]
    tests = pd.DataFrame({
        **{column: tests[column].astype(object) for column in ("workspace_hash", "contract_id", "executor")},
        "name": tests["test"].astype(object), "passed": tests["passed"].astype(bool),
        "timestamp": pd.to_datetime(tests["timestamp"], utc=True),
        "sprint": pd.to_numeric(tests["sprint"], errors="coerce").astype("Int64"),
        "_row": np.arange(len(tests), dtype=np.int64)})
    test_reruns = f"({_reruns('SELECT * FROM _tests')})"
    test_hashes = f"({_hash_runs(test_reruns)})"
    first = _first_evaluations_kept(table)
    test_cube = _flip_cube("test", test_reruns, test_hashes, f"({_flipped_runs(test_reruns, test_hashes)})",
                           ["sprint"], str, first)
    strategy_cube = _flip_cube("strategy", *_strategy_reruns(table), table.sprint_columns(), table.numbered, first)
    return pd.concat([table.query(test_cube, _tests=tests, _named=_named(named)),
                      table.query(strategy_cube, _named=_named(named))], ignore_index=True)


def _flip_cube(level: str, reruns: str, hashes: str, flips: str, sprint: list[str], number: Callable[[str], str],
               first: str) -> str:
    """SQL of one level of :func:`_flips`: the comparisons (each run but the first in time on its (name, hash))
    and flips of ``reruns`` (:func:`~.flakiness._reruns` of rows naming ``name, workspace_hash, passed, timestamp,
    contract_id, executor, _row`` and the ``sprint`` columns, which ``number`` turns into the sprint's number),
    counted on the later run's day, under its sprint's engine (``first``: the table of each sprint's first
    evaluation) and its contract's bucket (``_named``). ``hashes`` and ``flips``: :func:`~.flakiness._hash_runs`
    and :func:`~.flakiness._flips` of ``reruns``; each a table, or SQL in brackets."""
    later = (f"SELECT *, false AS flip FROM {reruns} ANTI JOIN (SELECT first_row AS _row FROM {hashes}) USING (_row) "
             f"UNION ALL BY NAME SELECT *, true AS flip FROM {flips}")
    keys = ", ".join(dict.fromkeys(["name", "contract_id", "executor", *sprint]))
    per_sprint = number(f"""
        SELECT date_trunc('day', {_utc_sql("timestamp")}) AS day, {keys},
               count(*) FILTER (WHERE NOT flip) AS comparisons, count(*) FILTER (WHERE flip) AS flips
        FROM ({later}) WHERE timestamp IS NOT NULL GROUP BY ALL""")
    return f"""
        SELECT strftime(day, '%Y-%m-%d') AS day, level, name, contract, engine, executor, comparisons, flips
        FROM (SELECT day, {sql_literal(level)} AS level, name,
                     {_BUCKET},
                     coalesce(f.engine, {sql_literal(r.UNKNOWN_ENGINE)}) AS engine,
                     coalesce(runs.executor, {sql_literal(UNKNOWN_EXECUTOR)}) AS executor,
                     sum(comparisons)::BIGINT AS comparisons, sum(flips)::BIGINT AS flips
              FROM ({per_sprint}) runs LEFT JOIN {first} f USING (sprint) {_bucket_join("runs")}
              GROUP BY ALL)
        ORDER BY ALL"""


def _most_flipping(cube: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The test rows of the flips cube for the ``limit`` tests that flipped most (sums of sums: the same
    tests as over the runs), with every strategy row."""
    tests = cube["level"] == "test"
    flipping = cube[tests].groupby("name")["flips"].sum().nlargest(limit).index
    return cube[~tests | cube["name"].isin(flipping)].reset_index(drop=True)


def _bugs(bugs: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    frame = pd.DataFrame({
        "day": _day(bugs["updated_at"]), "contract": _bucket(bugs["unit"], named),
        "opened": (bugs["event"] == "open").astype(np.int64),
        "fixed": ((bugs["event"] == "transition") & (bugs["status"] == "fixed")).astype(np.int64),
        "reopened": (bugs["event"] == "reopen").astype(np.int64)})
    return _sum_by(frame, ["day", "contract"])


def _scores(scores: pd.DataFrame) -> pd.DataFrame:
    def number(column: str) -> pd.Series:
        values = scores[column] if column in scores else pd.Series(np.nan, index=scores.index)
        return pd.to_numeric(values, errors="coerce")

    version = scores["prompt_sha256"].fillna("unknown").astype(str).str[:8]
    frame = pd.DataFrame({
        "day": _day(scores["recorded_at"]).astype(object), "skill": scores["skill"].astype(str),
        "prompt_version": version, "label": scores["skill"].astype(str) + " @ " + version,
        "score": number("score"), "epochs": number("epochs").fillna(1).astype(np.int64),
        # One epoch: pass@1, pass@1 and pass^1 are all the score.
        "pass_at_1": number("pass_at_1").fillna(number("score")),
        "pass_at_k": number("pass_at_k").fillna(number("score")), "pass_hat_k": number("score")})
    return frame.sort_values(["day", "label"], kind="stable", ignore_index=True)
