"""What the interactive report embeds: small day-level cubes, and a bounded sample of evaluations.

The page filters by date, contract, engine, strategy, criterion and executor,
and recomputes every chart and table in the browser. It cannot carry millions
of rows, so the history is aggregated here first: each cube holds counts per
day and per value of every filter (sums re-aggregate exactly, so a pass rate
or a flip rate recomputed from them in the browser is exact), and only a
bounded sample of evaluations travels whole, for the drill-down.

Bounds that keep the page small (a few MB on a 2-million-row history):

* contracts: the :data:`CONTRACT_OPTIONS` most recently evaluated ones can be
  picked one by one; the rest are grouped as :data:`OTHER_CONTRACTS`;
* evaluations listed when a point or bar is clicked: at most
  :data:`SAMPLE_PER_DAY` per day and result (the latest), :data:`SAMPLE_LIMIT`
  in all; the page says how many it shows of how many;
* EvalResult details (summary, feedback, diagnostics) for the latest
  :data:`DETAIL_LIMIT` of those, read from ``.sprintflow/evals/``;
* flaky tests: the :data:`TEST_LIMIT` tests with the most flips.

Every function is pure pandas over the :class:`~sprintflow.history.sources.History`
frames, except :func:`eval_details`, which reads the EvalResult files it names.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sprintflow.history.sources import History
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.io.secrets import mask_secrets
from sprintflow.reporting import analytics as r

__all__ = [
    "ALL",
    "CONTRACT_OPTIONS",
    "DETAIL_LIMIT",
    "OTHER_CONTRACTS",
    "SAMPLE_LIMIT",
    "SAMPLE_PER_DAY",
    "SIDE_BY_SIDE_LIMIT",
    "TEST_LIMIT",
    "PageData",
    "build_page_data",
    "eval_details",
]

ALL = "(all)"
"""The filter value that keeps everything."""
OTHER_CONTRACTS = "(other contracts)"
CONTRACT_OPTIONS = 150
SAMPLE_PER_DAY = 12
SAMPLE_LIMIT = 4000
DETAIL_LIMIT = 400
TEST_LIMIT = 300
SIDE_BY_SIDE_LIMIT = 100
"""Contract pairs the page shows side by side, with their feedback (the page says how many it leaves out)."""
TEXT_LIMIT = 1500
"""Characters kept of any one text (a summary, a strategy's output) in a detail."""
TRANSCRIPT_LIMIT = 6000
"""Characters kept of an engine's prompt and of its answer in a detail (the journal keeps 20,000)."""
NEVER = 99
"""The iterations-to-green value of a contract or criterion that never went green."""


@dataclass
class PageData:
    """The cubes and samples one page embeds, with the filter options."""

    outcomes: pd.DataFrame
    """``day, level, name, contract, engine, executor, passed, failed, skipped``; level is evaluation,
    strategy or criterion; name the strategy or criterion (empty for evaluations)."""
    greens: pd.DataFrame
    """``day, level, name, contract, engine, executor, iterations, items, hours``: contracts (level
    ``contract``) and criteria (level ``criterion``) by the day they were first evaluated and the
    iteration they first passed at (:data:`NEVER` when they never did); hours summed over the green ones."""
    activity: pd.DataFrame
    """``day, contract, engine, executor, evaluations, tokens, cost, costed, sprints, criteria_green,
    regressions``: per day, evaluations and what they cost, sprints started, criteria first passing."""
    flips: pd.DataFrame
    """``day, level, name, contract, engine, executor, comparisons, flips``: re-runs on an unchanged
    content hash, per test (level ``test``) and per strategy (level ``strategy``), on the later run's day."""
    coverage: pd.DataFrame
    """``day, method, name, contract, engine, executor, passed, failed, skipped``: criterion results by
    verification method (``name``: the criterion id)."""
    bugs: pd.DataFrame
    """``day, contract, opened, fixed, reopened``: bug events by day and unit."""
    scores: pd.DataFrame
    """``day, skill, prompt_version, label, score, epochs, pass_at_1, pass_at_k, pass_hat_k``: one row per
    scoring run."""
    evaluations: list[dict[str, Any]]
    """The drill-down sample, newest first (see the module docstring for the bounds)."""
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """EvalResult excerpts by evaluation key, for the newest sampled evaluations."""
    options: dict[str, list[str]] = field(default_factory=dict)
    """Filter values: contract, engine, strategy, criterion, executor."""
    first_day: str = ""
    last_day: str = ""
    totals: dict[str, int] = field(default_factory=dict)
    """Evaluations, contracts, contracts named in the filter, evaluations sampled and detailed, contract pairs,
    tests re-run on one content hash and the tests the flaky-test view keeps of them."""
    side_by_side: list[dict[str, Any]] = field(default_factory=list)
    """The newest :data:`SIDE_BY_SIDE_LIMIT` contract pairs of
    :func:`~sprintflow.reporting.analytics.engine_side_by_side`, each side with its latest feedback."""
    pairs: list[dict[str, Any]] = field(default_factory=list)
    """:func:`~sprintflow.reporting.analytics.engine_pairs`: the paired test per pair of engines."""


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


def build_page_data(history: History, *, workspace: Path | str | None = None,
                    to_green: pd.DataFrame | None = None, criterion_greens: pd.DataFrame | None = None,
                    side_by_side: pd.DataFrame | None = None, linked_tests: pd.DataFrame | None = None) -> PageData:
    """Aggregate ``history`` into what the interactive page embeds.

    Args:
        history: the loaded history (``evals`` with at least the
            :data:`~sprintflow.reporting.analytics.REPORT_COLUMNS`).
        workspace: where to read EvalResult files of sampled evaluations that name no workspace of their own
            (each recorded evaluation is read from the workspace it ran in).
        to_green, criterion_greens: :func:`~sprintflow.reporting.analytics.time_to_green` and
            :func:`~sprintflow.reporting.analytics.criterion_greens` of the same history, when the caller
            has them already (they are the costly part); ``side_by_side``:
            :func:`~sprintflow.reporting.analytics.engine_side_by_side`'s and ``linked_tests``
            :func:`~sprintflow.reporting.analytics.tests_with_hashes`', likewise.
    """
    evals = history.evals
    to_green = r.time_to_green(evals) if to_green is None else to_green
    criterion_greens = r.criterion_greens(evals) if criterion_greens is None else criterion_greens
    key = _evaluation_keys(evals)
    is_eval = (evals["kind"] == "evaluation").to_numpy()
    columns = ["eval_id", "workspace", "contract_id", "sprint_run", "run_id", "iteration", "result", "timestamp",
               "engine", "executor", "workspace_hash", "tokens", "cost_usd", "regressions"]
    evaluations = evals.loc[is_eval, [c for c in columns if c in evals.columns]].copy()
    evaluations = evaluations.assign(**{c: None for c in columns if c not in evaluations.columns})
    sprints = evals["sprint"].to_numpy() if "sprint" in evals.columns else r.sprint_ids(evals)
    evaluations["key"] = key[is_eval]
    evaluations["sprint"] = sprints[is_eval]
    evaluations["engine"] = _cat(evaluations["engine"], r.UNKNOWN_ENGINE)
    evaluations["executor"] = _cat(evaluations["executor"], "(unknown)")
    evaluations["day"] = _day(evaluations["timestamp"])
    named = _contract_names(evaluations)
    evaluations["contract"] = _bucket(evaluations["contract_id"], named)
    # Each sprint's first evaluation: the engine and executor every figure of the sprint is filed under.
    first = evaluations.sort_values(["timestamp", "iteration"], kind="stable").drop_duplicates("sprint")
    first = first.set_index("sprint")
    attributes = _row_attributes(evals, evaluations, key, named)
    data = PageData(
        outcomes=_outcomes(evals, attributes),
        greens=_greens(to_green, criterion_greens, first, named),
        activity=_activity(evaluations, criterion_greens, first, named),
        flips=_flips(history, sprints, first, named, linked_tests),  # every re-run test; cut to TEST_LIMIT below
        coverage=_coverage(evals, attributes),
        bugs=_bugs(history.bugs, named),
        scores=_scores(history.scores),
        evaluations=[],
        options=_options(evals, evaluations, named),
    )
    days = evaluations["day"].astype(object).dropna()
    data.first_day, data.last_day = (str(days.min()), str(days.max())) if len(days) else ("", "")
    data.evaluations = _sample(evals, evaluations, key, to_green, _flow_run_page())
    data.details = eval_details(workspace, data.evaluations[:DETAIL_LIMIT])
    pairs = r.engine_side_by_side(evals, to_green=to_green) if side_by_side is None else side_by_side
    data.side_by_side = side_by_side_feedback(pairs, workspace)
    data.pairs = records(r.engine_pairs(pairs))
    retested = int(data.flips.loc[data.flips["level"] == "test", "name"].nunique()) if len(data.flips) else 0
    if retested > TEST_LIMIT:
        data.flips = _most_flipping(data.flips, TEST_LIMIT)
    data.totals = {"evaluations": len(evaluations), "contracts": int(evaluations["contract_id"].nunique()),
                   "named contracts": len(named), "sampled evaluations": len(data.evaluations),
                   "detailed evaluations": min(len(data.evaluations), DETAIL_LIMIT),
                   "contract pairs": len(pairs), "re-run tests": retested,
                   "tests shown": min(retested, TEST_LIMIT)}
    return data


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


# --------------------------------------------------------------------------- the drill-down sample


def _flow_run_page() -> str | None:
    """Where the Prefect UI shows a flow run (``…/runs/flow-run/<id>``), when a server is configured."""
    from sprintflow.orchestration.api import configured_api_url

    api = configured_api_url()
    if not api:
        return None
    ui = api.rstrip("/").removesuffix("/api")
    return f"{ui}/runs/flow-run/"


def _sample(evals: pd.DataFrame, evaluations: pd.DataFrame, key: np.ndarray, to_green: pd.DataFrame,
            flow_runs: str | None = None) -> list[dict[str, Any]]:
    """The newest evaluations of each day and result, with their strategy and criterion results."""
    picked = evaluations.sort_values("timestamp", ascending=False, kind="stable")
    picked = picked.groupby(["day", "result"], observed=True, sort=False).head(SAMPLE_PER_DAY).head(SAMPLE_LIMIT)
    picked = picked.astype({"day": object, "contract": object, "engine": object, "executor": object})
    wanted = np.isin(key, picked["key"].to_numpy())
    parts = evals.loc[wanted & (evals["kind"] != "evaluation").to_numpy(), ["kind", "name", "result"]]
    parts = parts.assign(key=key[wanted & (evals["kind"] != "evaluation").to_numpy()])
    results: dict[int, dict[str, dict[str, str]]] = {}
    for row in parts.itertuples(index=False):
        entry = results.setdefault(int(row.key), {"strategy": {}, "criterion": {}})
        entry["strategy" if row.kind == "strategy" else "criterion"][str(row.name)] = str(row.result)
    green_at = to_green.set_index("sprint")["iterations_to_green"]
    records = []
    for row in picked.itertuples(index=False):
        parts_of = results.get(int(row.key), {"strategy": {}, "criterion": {}})
        green = green_at.get(int(row.sprint))
        records.append({
            "key": f"{row.eval_id}@{row.timestamp.isoformat()}", "eval_id": row.eval_id,
            "at": row.timestamp.strftime("%Y-%m-%d %H:%M"), "day": str(row.day), "contract": str(row.contract),
            "contract_id": str(row.contract_id), "iteration": int(row.iteration), "result": str(row.result),
            "workspace": None if pd.isna(row.workspace) else str(row.workspace),
            "sprint_run": None if pd.isna(row.sprint_run) else str(row.sprint_run),
            "flow_run": f"{flow_runs}{row.run_id}" if flow_runs and not pd.isna(row.run_id) else None,
            "engine": str(row.engine), "executor": str(row.executor),
            "hash": None if pd.isna(row.workspace_hash) else str(row.workspace_hash)[:12],
            "strategies": parts_of["strategy"], "criteria": parts_of["criterion"],
            "green_after": NEVER if green is None or pd.isna(green) else int(green),
            "tokens": None if pd.isna(row.tokens) else int(row.tokens),
            "cost": None if pd.isna(row.cost_usd) else round(float(row.cost_usd), 4),
        })
    return records


def _cut(text: Any, limit: int = TEXT_LIMIT) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else f"{text[:limit]} … [{len(text) - limit:,} more characters]"


def eval_details(workspace: Path | str | None, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """EvalResult excerpts for sampled evaluations whose file is still the one recorded (same timestamp).

    Each file is read from the workspace its evaluation ran in (a shared history holds many), else
    from ``workspace``. A file that now holds another evaluation (an older, reused eval id) is not
    shown as this one's.

    Returns:
        ``key -> {summary, feedback[], strategies[{name, result, details, diagnostics[]}],
        criteria[{id, result, evidence, feedback}], regressions[]}``, texts capped; for a sprint's
        iteration also ``generator{prompt, answer, …}`` and ``tester{prompt, answer, …}`` from its journal,
        credentials masked.
    """
    details: dict[str, dict[str, Any]] = {}
    for record in records:
        home = record.get("workspace") or workspace
        if home is None:
            continue
        try:
            path = WorkspaceLayout(Path(home)).eval_file(record["eval_id"])
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign file only costs the detail
            continue
        if not isinstance(doc, dict) or pd.Timestamp(doc.get("timestamp", "")).strftime("%Y-%m-%d %H:%M") \
                != record["at"]:
            continue
        details[record["key"]] = {**_excerpt(doc), **_transcript(Path(home), record)}
    return details


def side_by_side_feedback(pairs: pd.DataFrame, workspace: Path | str | None = None,
                          limit: int | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` (default :data:`SIDE_BY_SIDE_LIMIT`) rows of
    :func:`~sprintflow.reporting.analytics.engine_side_by_side`, each side with its latest evaluation's
    verdict and feedback, read from the EvalResult file it recorded.

    A side whose file is gone (or now holds another evaluation) keeps its verdict and says so.

    Returns:
        ``[{contract_id, a: {engine, sprints, green, first_green, result, eval_id, feedback[], summary,
        found}, b: {…}}]``, newest pair first.
    """
    if pairs.empty:
        return []
    limit = SIDE_BY_SIDE_LIMIT if limit is None else limit
    newest = pairs.assign(_at=pairs[["last_at_a", "last_at_b"]].max(axis=1)).sort_values(
        "_at", ascending=False, kind="stable").head(limit)
    rows = []
    for row in newest.to_dict("records"):
        sides = {side: _side(row, side, workspace) for side in "ab"}
        rows.append({"contract_id": str(row["contract_id"]), **sides})
    return rows


def _side(row: dict[str, Any], side: str, workspace: Path | str | None) -> dict[str, Any]:
    eval_id, home = row[f"last_eval_id_{side}"], row[f"last_workspace_{side}"]
    out: dict[str, Any] = {"engine": str(row[f"engine_{side}"]), "sprints": int(row[f"sprints_{side}"]),
                           "green": int(row[f"green_{side}"]), "first_green": bool(row[f"first_green_{side}"]),
                           "result": str(row[f"last_result_{side}"]), "eval_id": str(eval_id), "found": False,
                           "summary": "", "feedback": []}
    home = home if isinstance(home, str) and home else workspace
    if home is None or not isinstance(eval_id, str):
        return out
    minute = "%Y-%m-%d %H:%M"
    try:
        doc = json.loads(WorkspaceLayout(Path(home)).eval_file(eval_id).read_text(encoding="utf-8"))
        # The file must still hold this evaluation (the same test as eval_details).
        same = pd.Timestamp(doc.get("timestamp", "")).strftime(minute) == pd.Timestamp(row[f"last_at_{side}"]
                                                                                        ).strftime(minute)
    except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign file only costs the feedback
        return out
    if not same:
        return out
    excerpt = _excerpt(doc)
    return {**out, "found": True, "summary": excerpt["summary"], "feedback": excerpt["feedback"][:10]}


def _masked(text: Any, limit: int = TRANSCRIPT_LIMIT) -> str:
    return _cut(mask_secrets(text if isinstance(text, str) else ""), limit)


def _transcript(workspace: Path, record: dict[str, Any]) -> dict[str, Any]:
    """The sprint iteration's engine steps, from its journal: the generator's prompt and answer, the
    tester's; masked and cut. Only the journal of the same sprint run (its pin) is this evaluation's:
    a later sprint of the contract writes the same iteration's journal anew."""
    if not record.get("sprint_run"):
        return {}
    layout = WorkspaceLayout(workspace)
    try:
        entry = json.loads(layout.journal_file(record["contract_id"], record["iteration"]).read_text(encoding="utf-8"))
    except (OSError, ValueError, Exception):  # noqa: BLE001 - a missing or foreign journal only costs the transcript
        return {}
    if not isinstance(entry, dict) or entry.get("pinId") != record["sprint_run"]:
        return {}
    generator = {"ok": entry.get("ok"), "reason": _masked(entry.get("reason"), 300),
                 "prompt": _masked(entry.get("prompt")), "answer": _masked(entry.get("raw")),
                 "stderr": _masked(entry.get("stderr"), 1500), "cost": entry.get("costUsd"),
                 "tokens": [entry.get("inputTokens"), entry.get("outputTokens")]}
    out: dict[str, Any] = {"generator": generator}
    tester = entry.get("tester")
    if isinstance(tester, dict) and isinstance(tester.get("runId"), str):
        folder = layout.runs_dir / tester["runId"]

        def text(name: str) -> str:
            try:
                return (folder / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return ""

        out["tester"] = {"mode": tester.get("mode"), "run": tester["runId"], "summary": tester.get("summary"),
                         "prompt": _masked(text("prompt.txt")), "answer": _masked(text("engine.txt"))}
    return out


def _excerpt(doc: dict[str, Any]) -> dict[str, Any]:
    def items(values: Any, limit: int = 20) -> list[dict[str, Any]]:
        return [v for v in values[:limit] if isinstance(v, dict)] if isinstance(values, list) else []

    return {
        "summary": _cut(doc.get("summary")),
        "feedback": [{"priority": f.get("priority"), "category": f.get("category"), "file": f.get("file"),
                      "line": f.get("line"), "description": _cut(f.get("description"), 600),
                      "expected": _cut(f.get("expected"), 300)} for f in items(doc.get("generatorFeedback"))],
        "strategies": [{"name": s.get("strategy"), "result": s.get("result"), "details": _cut(s.get("details"), 600),
                        "diagnostics": [{"file": d.get("file"), "line": d.get("line"), "tool": d.get("tool"),
                                         "message": _cut(d.get("message"), 300), "hint": d.get("hint")}
                                        for d in items(s.get("diagnostics"), 10)]}
                       for s in items(doc.get("strategyResults"))],
        "criteria": [{"id": c.get("criterionId"), "result": c.get("result"), "evidence": _cut(c.get("evidence"), 300),
                      "feedback": _cut(c.get("feedback"), 300)} for c in items(doc.get("criteriaResults"), 40)],
        "regressions": [_cut(g.get("description"), 300) for g in items(doc.get("regressions"))],
    }


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as compact JSON-ready dicts: NaN as None, floats to 6 decimals, numpy scalars as Python values.

    Example:
        >>> records(pd.DataFrame({"day": ["2026-01-05"], "rate": [1 / 3], "runs": [3], "cost": [float("nan")]}))
        [{'day': '2026-01-05', 'rate': 0.333333, 'runs': 3, 'cost': None}]
    """
    # Column by column, then zipped: a frame's own to_dict on object columns costs seconds per cube.
    columns = []
    for name in frame.columns:
        column = frame[name]
        values = column.round(6) if pd.api.types.is_float_dtype(column.dtype) else column
        columns.append(values.astype(object).where(column.notna(), None).tolist())
    names = [str(name) for name in frame.columns]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
