"""The day-level cubes the page embeds: counts per day and per value of every filter, and the filter values.

Sums re-aggregate exactly, so a pass rate or a flip rate the browser recomputes from them is exact. Keys are
categoricals, cheap to group on millions of rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sprintflow.history.sources import History
from sprintflow.reporting import analytics as r

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


def _cat(values: pd.Series | np.ndarray, missing: str | None = None) -> pd.Series:
    """``values`` as a categorical (cheap to group on millions of rows), nulls as ``missing`` when given."""
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if not isinstance(series.dtype, pd.CategoricalDtype):
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


def _bucket(contracts: pd.Series, named: set[str]) -> pd.Series:
    """Contract ids, with those not in ``named`` grouped as :data:`OTHER_CONTRACTS` (recoded, not copied)."""
    values = _cat(contracts, OTHER_CONTRACTS)
    kept = pd.Index(sorted(named) + [OTHER_CONTRACTS])
    per_category = kept.get_indexer(values.cat.categories.astype(str))  # a few hundred names to look up
    per_category[per_category < 0] = len(kept) - 1
    return pd.Series(pd.Categorical.from_codes(per_category[values.cat.codes.to_numpy()], categories=kept),
                     index=contracts.index)


def _evaluation_keys(evals: pd.DataFrame) -> np.ndarray:
    """One integer per evaluation: rows that share an eval id and a timestamp belong to one evaluation."""
    ids = _cat(evals["eval_id"], "").cat.codes.to_numpy().astype(np.int64)
    instants = pd.to_datetime(evals["timestamp"], utc=True).dt.tz_localize(None).to_numpy().view(np.int64)
    stamps = pd.factorize(instants)[0].astype(np.int64)
    return pd.factorize(ids * (int(stamps.max(initial=0)) + 2) + stamps)[0]


def _contract_names(evaluations: pd.DataFrame) -> set[str]:
    """Contracts that can be picked one by one: the most recently evaluated ones."""
    last = evaluations.groupby("contract_id", observed=True)["timestamp"].max().sort_values(ascending=False)
    return set(last.index[:CONTRACT_OPTIONS].astype(str))


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


def _counts(result: pd.Series) -> dict[str, np.ndarray]:
    text = _cat(result, "")
    codes = text.cat.codes.to_numpy()
    categories = list(text.cat.categories)

    def hits(value: str) -> np.ndarray:
        return (codes == categories.index(value)).astype(np.int64) if value in categories \
            else np.zeros(len(codes), dtype=np.int64)

    return {"passed": hits("pass"), "failed": hits("fail"), "skipped": hits("skipped")}


def _row_attributes(evals: pd.DataFrame, evaluations: pd.DataFrame, key: np.ndarray, named: set[str]
                    ) -> pd.DataFrame:
    """Day, contract bucket, engine and executor of every row: the filter dimensions, as categoricals.

    The engine is recorded on evaluation rows only, so every row takes its evaluation's.
    """
    engines = evaluations["engine"]
    per_key = np.full(int(key.max(initial=-1)) + 1, len(engines.cat.categories), dtype=np.int64)
    per_key[evaluations["key"].to_numpy()] = engines.cat.codes.to_numpy()
    categories = [*engines.cat.categories, r.UNKNOWN_ENGINE] if r.UNKNOWN_ENGINE not in engines.cat.categories \
        else [*engines.cat.categories, "(unmatched)"]
    return pd.DataFrame({"day": _day(evals["timestamp"]), "contract": _bucket(evals["contract_id"], named),
                         "engine": pd.Categorical.from_codes(per_key[key], categories=categories),
                         "executor": _cat(evals["executor"], "(unknown)")}, index=evals.index)


def _options(evals: pd.DataFrame, evaluations: pd.DataFrame, named: set[str]) -> dict[str, list[str]]:
    def distinct(values: pd.Series) -> list[str]:
        return sorted(str(v) for v in pd.unique(values.dropna().astype(object)))

    contracts = sorted(named)
    if len(named) < evaluations["contract_id"].nunique():
        contracts.append(OTHER_CONTRACTS)
    return {"contract": contracts, "engine": distinct(evaluations["engine"]),
            "strategy": distinct(evals.loc[evals["kind"] == "strategy", "name"]),
            "criterion": distinct(evals.loc[evals["kind"] == "criterion", "name"]),
            "executor": distinct(evaluations["executor"])}


def _outcomes(evals: pd.DataFrame, attributes: pd.DataFrame) -> pd.DataFrame:
    frame = pd.DataFrame({"level": _cat(evals["kind"]), "name": _cat(evals["name"], ""), **attributes,
                          **_counts(evals["result"])})
    return _sum_by(frame, ["day", "level", "name", "contract", "engine", "executor"])


def _constant(value: str, index: pd.Index) -> pd.Series:
    return pd.Series(pd.Categorical.from_codes(np.zeros(len(index), dtype=np.int64), categories=[value]), index=index)


def _of_sprints(sprints: pd.Series, first: pd.DataFrame, column: str, missing: str) -> pd.Series:
    """``first[column]`` (indexed by sprint number) for each row's sprint, as a categorical.

    Sprint numbers are small integers: looked up through one array, no hashing per row.
    """
    source = _cat(first[column], missing)
    categories = list(source.cat.categories)
    if missing not in categories:
        categories.append(missing)
    numbers = pd.to_numeric(sprints, errors="coerce").fillna(-1).to_numpy().astype(np.int64)
    known = first.index.to_numpy(dtype=np.int64)
    lookup = np.full(max(int(known.max(initial=-1)), int(numbers.max(initial=-1))) + 2,
                     categories.index(missing), dtype=np.int64)
    lookup[known] = source.cat.codes.to_numpy()
    return pd.Series(pd.Categorical.from_codes(lookup[numbers], categories=categories), index=sprints.index)


def _greens(to_green: pd.DataFrame, criteria: pd.DataFrame, first: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    """Sprints (level ``contract``: a sprint is a contract's run) and criteria by first-evaluation day and
    iterations to green."""
    keys = ["day", "level", "name", "contract", "engine", "executor", "iterations"]

    def cube(level: str, names: pd.Series, rows: pd.DataFrame, iterations: pd.Series,
             hours: pd.Series) -> pd.DataFrame:
        frame = pd.DataFrame({
            "day": _day(rows["first_at"]), "level": _constant(level, rows.index), "name": names,
            "contract": _bucket(rows["contract_id"], named),
            "engine": _of_sprints(rows["sprint"], first, "engine", r.UNKNOWN_ENGINE),
            "executor": _of_sprints(rows["sprint"], first, "executor", "(unknown)"),
            "iterations": _cat(iterations.astype("Float64").fillna(NEVER).astype(np.int64)), "items": 1,
            "hours": hours.fillna(0.0).astype(float)})
        return _sum_by(frame, keys)

    contracts = cube("contract", _constant("", to_green.index), to_green, to_green["iterations_to_green"],
                     to_green["hours_to_green"])
    criterion_hours = (criteria["green_at"] - criteria["first_at"]).dt.total_seconds() / 3600
    per_criterion = cube("criterion", _cat(criteria["criterion"], ""), criteria, criteria["iterations_to_green"],
                         criterion_hours)
    return pd.concat([contracts, per_criterion], ignore_index=True)


def _activity(evaluations: pd.DataFrame, criteria: pd.DataFrame, first: pd.DataFrame, named: set[str]
              ) -> pd.DataFrame:
    """Evaluations and their cost per day, with sprints started and criteria first passing that day."""
    keys = ["day", "contract", "engine", "executor"]
    costs = pd.DataFrame({
        **{k: evaluations[k] for k in keys}, "evaluations": 1,
        "tokens": evaluations["tokens"].fillna(0).astype(np.int64),
        "cost": evaluations["cost_usd"].fillna(0.0).astype(float),
        "costed": evaluations["cost_usd"].notna().astype(np.int64),
        "regressions": evaluations["regressions"].fillna(0).astype(np.int64)})
    costs = _sum_by(costs, keys).set_index(keys)
    started = _sum_by(first[keys].assign(sprints=1).reset_index(drop=True), keys).set_index(keys)
    green = criteria.dropna(subset=["green_at"])
    passed = pd.DataFrame({"day": _day(green["green_at"]), "contract": _bucket(green["contract_id"], named),
                           "engine": _of_sprints(green["sprint"], first, "engine", r.UNKNOWN_ENGINE),
                           "executor": _of_sprints(green["sprint"], first, "executor", "(unknown)"),
                           "criteria_green": 1})
    passed = _sum_by(passed, keys).set_index(keys)
    table = costs.join([started, passed], how="outer").fillna(0)
    columns = ["evaluations", "tokens", "costed", "sprints", "criteria_green", "regressions"]
    table[columns] = table[columns].astype(np.int64)
    return table.reset_index()


def _flips(history: History, sprints: np.ndarray, first: pd.DataFrame, named: set[str],
           linked_tests: pd.DataFrame | None) -> pd.DataFrame:
    """Comparisons and flips of consecutive fresh runs on one content hash, per test and per strategy."""
    tests = r.tests_with_hashes(history.evals, history.tests) if linked_tests is None else linked_tests
    tests = tests[tests["workspace_hash"].notna()]
    evals = history.evals
    fresh = ((evals["kind"] == "strategy") & evals["result"].isin(["pass", "fail"])
             & evals["workspace_hash"].notna() & ~evals["cached"].eq(True)).to_numpy()
    strategies = evals.loc[fresh, ["name", "workspace_hash", "result", "timestamp", "contract_id", "executor"]]
    strategies = strategies.assign(sprint=sprints[fresh])
    tests = tests.assign(result=tests["passed"].map({True: "pass", False: "fail"}), name=tests["test"])
    return pd.concat([_flip_cube(level, rows, first, named) for level, rows in (("test", tests),
                                                                               ("strategy", strategies))],
                     ignore_index=True)


def _flip_cube(level: str, rows: pd.DataFrame, first: pd.DataFrame, named: set[str]) -> pd.DataFrame:
    """One level of :func:`_flips`: runs in time order within each (name, hash); a changed outcome is a flip."""
    names = _cat(rows["name"])
    frame = pd.DataFrame({"name": names.cat.codes.to_numpy(), "hash": _cat(rows["workspace_hash"]).cat.codes.to_numpy(),
                          "passed": (rows["result"] == "pass").to_numpy(),
                          "at": pd.to_datetime(rows["timestamp"], utc=True)}, index=rows.index)
    frame = frame[frame.duplicated(["name", "hash"], keep=False)].sort_values(["name", "hash", "at"], kind="stable")
    same = (frame["name"].diff().eq(0) & frame["hash"].diff().eq(0)).to_numpy()
    flipped = frame["passed"].ne(frame["passed"].shift()).to_numpy()
    kept = frame.index[same]
    out = pd.DataFrame({"day": _day(frame.loc[kept, "at"]), "level": _constant(level, kept),
                        "name": names.loc[kept], "contract": _bucket(rows.loc[kept, "contract_id"], named),
                        "engine": _of_sprints(rows.loc[kept, "sprint"], first, "engine", r.UNKNOWN_ENGINE),
                        "executor": _cat(rows.loc[kept, "executor"], "(unknown)"), "comparisons": 1,
                        "flips": flipped[same].astype(np.int64)}, index=kept)
    return _sum_by(out, ["day", "level", "name", "contract", "engine", "executor"])


def _most_flipping(cube: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The test rows of the flips cube for the ``limit`` tests that flipped most (sums of sums: the same
    tests as over the runs), with every strategy row."""
    tests = cube["level"] == "test"
    flipping = cube[tests].groupby("name")["flips"].sum().nlargest(limit).index
    return cube[~tests | cube["name"].isin(flipping)].reset_index(drop=True)


def _coverage(evals: pd.DataFrame, attributes: pd.DataFrame) -> pd.DataFrame:
    is_criterion = (evals["kind"] == "criterion").to_numpy()
    rows = evals.loc[is_criterion]
    frame = pd.DataFrame({"method": _cat(rows["method"], "(unknown)"), "name": _cat(rows["name"], ""),
                          **attributes.loc[is_criterion], **_counts(rows["result"])})
    return _sum_by(frame, ["day", "method", "name", "contract", "engine", "executor"])


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
