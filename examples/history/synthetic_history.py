"""A realistic synthetic history: the one generator behind the notebooks' tests, the demo and the benchmark.

An agent that gets better over the weeks: first-pass yield and the share of
contracts that go green rise; typecheck and unit-test fail most; ``playwright``
(not required) is flaky, and so, a little, is ``unit-test``: nightly re-runs
of unchanged content (same workspace hash) sometimes disagree. A fifth of the
criteria are ``manual`` and mostly skipped; a few custom criteria never pass.
Two engines share the work: ``claude`` and the cheaper ``codex``, which takes
more contracts that never go green. Unit-test runs name their tests; two
tests flip on unchanged content (``test_websocket_reconnect`` more than
``test_export_times_out``). Bugs open, get fixed (sometimes reopened); two
skills are scored weekly with a new prompt version half-way, and the last
weeks are scored over three epochs.

Every sprint runs in time order (iteration 2 after iteration 1), under its own sprint run,
with the Docker or the local executor; every evaluation has its own id and, in a demo workspace,
its own EvalResult file, so the report's drill-down opens it. The history says it is synthetic
(:data:`SYNTHETIC_NOTE` in its folder), and the report and notebooks say so wherever they show it.

Vectorised with numpy, so a million strategy rows take a few seconds. From the command line::

    python examples/history/synthetic_history.py WORKSPACE [--evaluations 2000] [--seed 7]

Example:
    >>> workspace = demo_workspace()          # a temporary folder with .sprintflow/…
    >>> load_history(workspace).evals.kind.value_counts()
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sprintflow.history.dataset import EVALS, append_rows
from sprintflow.history.sources import SYNTHETIC_NOTE
from sprintflow.io.files import atomic_write_text
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.schemas import EvalResult

__all__ = [
    "DEMO_VARIABLE",
    "ENGINES",
    "FLAKY_TESTS",
    "NoWorkspace",
    "STRATEGIES",
    "WORKSPACE_VARIABLE",
    "demo_workspace",
    "main",
    "synthetic_bugs",
    "synthetic_evals",
    "synthetic_scores",
    "synthetic_testruns",
    "synthetic_unit_test_runs",
    "workspace_or_demo",
    "write_demo_history",
    "write_eval_results",
    "write_test_runs",
]

START = datetime(2026, 1, 5, tzinfo=UTC)  # a Monday: weeks line up with pandas' W-SUN periods
STRATEGIES = ["build", "typecheck", "lint", "unit-test", "playwright"]
_REQUIRED = np.array([True, True, True, True, False])
_FAIL_WHEN_RED = np.array([0.10, 0.35, 0.25, 0.60])  # required strategies, in a failing evaluation
_FLIP_ON_RERUN = np.array([0.0, 0.0, 0.0, 0.05, 0.35])  # same content, different outcome
_METHODS = np.array(["unit-test", "api-check", "typecheck", "manual", "playwright", "custom"])
_METHOD_WEIGHTS = np.array([0.3, 0.2, 0.1, 0.2, 0.1, 0.1])
_CRITERIA_PER_CONTRACT = 4
ENGINES = {"claude": 6e-6, "codex": 4e-6}
"""Engine command -> USD per token."""
TESTS = [f"tests/test_api.py::test_{name}" for name in (
    "create_todo", "list_todos", "update_todo", "delete_todo", "rejects_empty_title", "auth_required")]
FLAKY_TESTS = {"tests/test_api.py::test_websocket_reconnect": 0.3, "tests/test_api.py::test_export_times_out": 0.12}
"""Test name -> chance it fails on any run, whatever the content."""


def _hex(rng: np.random.Generator, n: int, chars: int) -> np.ndarray:
    raw = rng.integers(0, 256, size=(n, chars // 2), dtype=np.uint8)
    return np.array([row.tobytes().hex() for row in raw], dtype=object)


def _contracts(rng: np.random.Generator, evaluations: int, weeks: int) -> pd.DataFrame:
    """Contracts until ``evaluations`` base evaluations: start time, iterations, green or not."""
    n = max(1, int(evaluations / 2.2) + 1)
    frac = np.sort(rng.random(n))  # position in the period: later contracts do better
    first_pass = rng.random(n) < 0.25 + 0.40 * frac
    green = first_pass | (rng.random(n) < 0.60 + 0.30 * frac)
    iterations = np.where(first_pass, 1, np.where(green, np.minimum(2 + rng.geometric(0.5, n) - 1, 5), 5))
    keep = min(n, int(np.searchsorted(np.cumsum(iterations), evaluations)) + 1)
    span = frac[:keep] / frac[keep - 1]  # the kept contracts fill the whole period
    return pd.DataFrame({
        "contract": np.arange(keep), "frac": frac[:keep], "green": green[:keep], "iterations": iterations[:keep],
        "start": pd.Timestamp(START) + pd.to_timedelta(span * (weeks * 7 - 1) * 86400, unit="s"),
    })


def _evaluations(rng: np.random.Generator, contracts: pd.DataFrame) -> pd.DataFrame:
    index = np.repeat(contracts.index.to_numpy(), contracts.iterations.to_numpy())
    evals = contracts.loc[index].reset_index(drop=True)
    evals["iteration"] = evals.groupby("contract").cumcount() + 1
    evals["passed"] = evals.green & (evals.iteration == evals.iterations)
    # Each iteration starts after the one before: the gaps add up within a contract's sprint.
    gaps = pd.Series(rng.uniform(10, 90, len(evals))).groupby(evals["contract"]).cumsum()
    evals["timestamp"] = (evals.start + pd.to_timedelta(gaps, unit="min")).dt.floor("s")
    evals["workspace_hash"] = _hex(rng, len(evals), 64)
    evals["rerun"] = False
    return evals


def _outcomes(rng: np.random.Generator, passed: np.ndarray) -> np.ndarray:
    """pass=1 / fail=0 / skipped=2 per (evaluation, strategy); a red evaluation has a red required one."""
    n = len(passed)
    required = rng.random((n, 4)) >= _FAIL_WHEN_RED
    none_failed = required.all(axis=1)
    required[none_failed, 3] = False  # fail closed: something required failed in a red evaluation
    required[passed] = True
    e2e = np.where(rng.random(n) < 0.05, 2, (rng.random(n) < np.where(passed, 0.85, 0.5)).astype(int))
    return np.column_stack([required.astype(int), e2e])


def _reruns(rng: np.random.Generator, evals: pd.DataFrame, outcomes: np.ndarray, share: float
            ) -> tuple[pd.DataFrame, np.ndarray]:
    """Nightly re-evaluations of unchanged content: same hash, a flaky strategy may flip."""
    picked = np.flatnonzero(rng.random(len(evals)) < share)
    again = evals.iloc[picked].copy()
    again["timestamp"] += pd.Timedelta(hours=20)
    again["rerun"] = True
    flipped = outcomes[picked].copy()
    flip = (rng.random(flipped.shape) < _FLIP_ON_RERUN) & (flipped != 2)
    flipped[flip] = 1 - flipped[flip]
    again["passed"] = (flipped[:, _REQUIRED] == 1).all(axis=1)
    return again, flipped


def _criteria(rng: np.random.Generator, contracts: pd.DataFrame) -> pd.DataFrame:
    n = len(contracts) * _CRITERIA_PER_CONTRACT
    method = rng.choice(_METHODS, size=n, p=_METHOD_WEIGHTS)
    return pd.DataFrame({
        "contract": np.repeat(contracts.contract.to_numpy(), _CRITERIA_PER_CONTRACT),
        "name": [f"sc-1-{i % _CRITERIA_PER_CONTRACT + 1}" for i in range(n)],
        "method": method,
        "required": method != "manual",
        "broken": (method == "custom") & (rng.random(n) < 0.3),  # a check that never passes
    })


def _criterion_results(rng: np.random.Generator, evals: pd.DataFrame, criteria: pd.DataFrame) -> pd.DataFrame:
    rows = evals[["eval_row", "contract", "passed"]].merge(criteria, on="contract")
    luck = rng.random(len(rows))
    automatic = np.where(rows.passed | (luck < 0.5), "pass", "fail")
    manual = np.where(luck < 0.8, "skipped", "pass")
    rows["result"] = np.where(rows.method == "manual", manual,
                              np.where(rows.broken & ~rows.required, "fail", automatic))
    rows["required"] = rows.required & ~rows.broken
    return rows


def synthetic_evals(evaluations: int = 2000, *, seed: int = 7, weeks: int = 26,
                    rerun_share: float = 0.05, workspace: str = "/demo/todo-app") -> pd.DataFrame:
    """The ``evals`` table of about ``evaluations`` evaluations (plus re-runs), in :data:`EVAL_SCHEMA` columns.

    Each evaluation has one row per strategy (:data:`STRATEGIES`) and four criterion rows.

    Example:
        >>> frame = synthetic_evals(200_000)     # ~1,000,000 strategy rows
        >>> frame.kind.value_counts()["strategy"] >= 1_000_000
        True
    """
    rng = np.random.default_rng(seed)
    contracts = _contracts(rng, evaluations, weeks)
    evals = _evaluations(rng, contracts)
    outcomes = _outcomes(rng, evals.passed.to_numpy())
    again, flipped = _reruns(rng, evals, outcomes, rerun_share)
    evals = pd.concat([evals, again], ignore_index=True)
    outcomes = np.vstack([outcomes, flipped])
    evals["eval_row"] = np.arange(len(evals))
    evals["spec_id"] = "spec-" + (evals.contract // 5).astype(str)
    evals["contract_id"] = "sprint-" + evals.spec_id + "-" + (evals.contract % 5 + 1).astype(str)
    evals["run_id"] = _hex(rng, len(evals), 32)
    evals["git_sha"] = _hex(rng, len(evals), 40)
    # One id per evaluation, as the evaluator writes them: the iteration, then a stamp of its own.
    evals["eval_id"] = ("eval-" + evals.contract_id + "-" + evals.iteration.astype(str) + "-"
                        + evals.timestamp.dt.strftime("%Y%m%dT%H%M%S") + "-" + evals.run_id.str[:6])
    evals["engine"] = _engines(seed, contracts).to_numpy()[evals.contract.to_numpy()]
    others = np.random.default_rng(seed + 3)  # its own stream: the other columns do not move
    pins = _hex(others, len(contracts), 16)
    evals["sprint_run"] = "pin-" + pins[evals.contract.to_numpy()]
    local = others.random(len(contracts)) < 0.3  # a third of the sprints ran with the local executor
    evals["executor"] = np.where(local, "local", "docker")[evals.contract.to_numpy()]
    strategies = _strategy_rows(rng, evals, outcomes)
    criteria = _criterion_results(rng, evals, _criteria(rng, contracts))
    frame = pd.concat([_evaluation_rows(rng, evals), strategies, _with_eval(criteria, evals, "criterion")],
                      ignore_index=True)
    frame["workspace"] = workspace
    frame["image"] = frame["executor"].map({"docker": "sprintflow-sandbox:latest"})  # none for local
    frame["recorded_at"] = frame["timestamp"]
    return frame


def _engines(seed: int, contracts: pd.DataFrame) -> pd.Series:
    """One engine per contract; codex gets more of the contracts that never go green."""
    rng = np.random.default_rng(seed + 1)  # its own stream: the other columns do not move
    codex = rng.random(len(contracts)) < np.where(contracts.green, 0.35, 0.7)
    return pd.Series(np.where(codex, "codex", "claude"), index=contracts.contract)


def _with_eval(rows: pd.DataFrame, evals: pd.DataFrame, kind: str) -> pd.DataFrame:
    columns = ["eval_id", "spec_id", "contract_id", "iteration", "timestamp", "workspace_hash", "run_id",
               "git_sha", "sprint_run", "executor"]
    out = evals[columns].take(rows.eval_row.to_numpy()).reset_index(drop=True)
    out["kind"] = kind
    for column in ("name", "method", "required", "result", "error_count", "cached", "duration_ms"):
        if column in rows:
            out[column] = rows[column].to_numpy()
    return out


def _evaluation_rows(rng: np.random.Generator, evals: pd.DataFrame) -> pd.DataFrame:
    out = _with_eval(evals.assign(result=np.where(evals.passed, "pass", "fail"), required=True), evals,
                     "evaluation")
    tokens = rng.lognormal(10.5, 0.6, len(evals)).astype(np.int64)
    out["tokens"] = tokens
    out["engine"] = evals["engine"].to_numpy()
    out["cost_usd"] = tokens * out["engine"].map(ENGINES).to_numpy()
    out["duration_ms"] = rng.lognormal(11, 0.5, len(evals)).astype(np.int64)
    out["regressions"] = ((~evals.passed) & (evals.iteration > 1) & (rng.random(len(evals)) < 0.2)).astype(int)
    return out


def _strategy_rows(rng: np.random.Generator, evals: pd.DataFrame, outcomes: np.ndarray) -> pd.DataFrame:
    n, k = outcomes.shape
    results = np.array(["fail", "pass", "skipped"])[outcomes.ravel()]
    rows = pd.DataFrame({
        "eval_row": np.repeat(evals.eval_row.to_numpy(), k),
        "name": np.tile(STRATEGIES, n),
        "required": np.tile(_REQUIRED, n),
        "result": results,
        "cached": False,
        "duration_ms": (rng.lognormal(9, 0.8, n * k)).astype(np.int64),
        "error_count": np.where(results == "fail", rng.integers(1, 12, n * k), 0),
    })
    return _with_eval(rows, evals, "strategy")


def synthetic_bugs(count: int = 120, *, seed: int = 7, weeks: int = 26) -> list[dict]:
    """Bug events as ``bugs.ndjson`` lines: opened, mostly fixed, a tenth reopened and fixed again.

    Example:
        >>> {line["event"] for line in synthetic_bugs(50)}
        {'open', 'transition', 'reopen'}
    """
    rng = np.random.default_rng(seed)
    lines: list[dict[str, Any]] = []  # one event's fields: text, numbers, datetimes
    for n in range(count):
        opened = START + timedelta(seconds=float(rng.uniform(0, weeks * 7 * 86400)))
        bug = {"id": f"bug-{opened:%Y%m%d-%H%M}-{n:04x}", "unit": "todo-api", "run_id": f"run-{n}",
               "test_name": f"test case {n}", "created_at": opened, "severity": "medium",
               "reopen_count": 0}
        lines.append({**bug, "status": "open", "event": "open", "updated_at": opened})
        at = opened
        for reopened in range(2):
            if rng.random() > (0.85 if reopened == 0 else 0.9):
                break
            at += timedelta(hours=float(rng.lognormal(3, 1)))
            lines.append({**bug, "status": "fixed", "event": "transition", "from_status": "open",
                          "updated_at": at, "reopen_count": reopened})
            if rng.random() > 0.1:
                break
            at += timedelta(days=float(rng.uniform(1, 10)))
            lines.append({**bug, "status": "open", "event": "reopen", "from_status": "fixed",
                          "reopened": True, "updated_at": at, "reopen_count": reopened + 1})
    lines.sort(key=lambda line: line["updated_at"])
    return [{k: _iso(v) for k, v in line.items()} for line in lines]


def _iso(value: object) -> object:
    return value.isoformat().replace("+00:00", "Z") if isinstance(value, datetime) else value


def synthetic_scores(*, seed: int = 7, weeks: int = 26) -> list[dict]:
    """Weekly ``scores.ndjson`` rows (camelCase, as the scorer writes) for two skills; prompt v2 half-way.

    Example:
        >>> sorted({row["skill"] for row in synthetic_scores()})
        ['summarize', 'triage']
    """
    rng = np.random.default_rng(seed)
    rows = []
    for skill, base in (("triage", 0.70), ("summarize", 0.62)):
        for week in range(weeks):
            version = "v1" if week < weeks // 2 else "v2"
            total = 40
            passed = int(rng.binomial(total, min(0.98, base + (0.12 if version == "v2" else 0.0))))
            row = {"kind": "score", "recordedAt": _iso(START + timedelta(weeks=week, hours=2)),
                   "skill": skill, "total": total, "passed": passed, "failed": total - passed,
                   "score": passed / total, "promptFile": f"prompts/{skill}.md",
                   "promptSha256": hashlib.sha256(f"{skill}-{version}".encode()).hexdigest(),
                   "casesSha256": "c" * 64, "engine": "stub", "durationS": 30.0,
                   "inputTokens": 50_000, "outputTokens": 4_000, "costUsd": 0.21}
            if week >= weeks - 4:
                row.update(_epochs(rng, total, passed))
            rows.append(row)
    return rows


def _epochs(rng: np.random.Generator, total: int, passed: int, epochs: int = 3) -> dict:
    """A score row of a run over several epochs: ``passed`` cases passed every epoch, a few only some."""
    flaky = min(int(rng.integers(1, 5)), total - passed)
    sometimes = rng.integers(1, epochs, size=flaky)  # epochs passed by each flaky case
    per_epoch = [(passed + int((sometimes > e).sum())) / total for e in range(epochs)]
    return {"epochs": epochs, "passAt1": (passed * epochs + int(sometimes.sum())) / (total * epochs),
            "passAtK": (passed + flaky) / total, "passHatK": passed / total, "epochScores": per_epoch,
            "flakyIds": [f"case-{n}" for n in range(flaky)]}


def synthetic_testruns(count: int = 30, *, seed: int = 7, weeks: int = 26) -> list[tuple[datetime, dict]]:
    """``(time, result.json)`` pairs of test runs: more tests and fewer failures over time.

    Example:
        >>> when, run = synthetic_testruns(1)[0]
        >>> sorted(run["summary"])
        ['failed', 'passed', 'skipped', 'total']
    """
    rng = np.random.default_rng(seed)
    runs = []
    for n in range(count):
        frac = n / max(1, count - 1)
        total = 20 + int(30 * frac)
        failed = int(rng.binomial(total, 0.3 * (1 - frac)))
        crashed = bool(rng.random() < 0.05)
        runs.append((START + timedelta(weeks=weeks * frac), {
            "run_id": f"run-{n:03d}", "summary": {"total": total, "passed": total - failed,
                                                  "failed": failed, "skipped": 0},
            "crashed": crashed, "next_action": "retry_tester" if crashed else
            ("retry_coder" if failed else "done"), "acceptance_coverage": round(0.5 + 0.5 * frac, 2),
            "duration_ms": int(rng.uniform(2_000, 9_000))}))
    return runs


def synthetic_unit_test_runs(frame: pd.DataFrame, count: int = 240, *, seed: int = 7
                             ) -> tuple[pd.DataFrame, list[tuple[datetime, dict]]]:
    """TestRuns of the unit-test strategy, linked to ``frame``'s rows the way the evaluator links them.

    Re-runs of unchanged content (same hash) are picked first, so flaky tests
    show. A run agrees with its strategy row: a passing unit-test run has no
    failure; a failing one fails the tests broken on that content (the same on
    every run of a hash) and the flaky tests that happened to fail.

    Returns:
        ``frame`` with ``test_run`` set on the linked strategy rows, and ``(time, result.json)``
        pairs, one per linked run.

    Example:
        >>> frame, runs = synthetic_unit_test_runs(synthetic_evals(300), count=20)
        >>> frame.test_run.notna().sum() == len(runs) == 20
        True
    """
    rng = np.random.default_rng(seed + 2)
    unit = frame.index[(frame.kind == "strategy") & (frame.name == "unit-test") & frame.result.isin(["pass", "fail"])]
    repeated = frame.loc[unit].duplicated("workspace_hash", keep=False).to_numpy()
    order = np.concatenate([unit[repeated], rng.permutation(unit[~repeated])])[:count]
    frame = frame.copy()
    frame["test_run"] = None
    runs = []
    for n, index in enumerate(order):
        row = frame.loc[index]
        run_id = f"run-{row.timestamp:%Y%m%d-%H%M%S}-{n:05d}"
        frame.loc[index, "test_run"] = run_id
        failed = _failed_tests(rng, str(row.workspace_hash)) if row.result == "fail" else []
        doc = {"run_id": run_id, "summary": {"total": len(TESTS) + len(FLAKY_TESTS),
                                             "passed": len(TESTS) + len(FLAKY_TESTS) - len(failed),
                                             "failed": len(failed), "skipped": 0},
               "failures": [{"test": name, "hint": "Check the assertion against the contract.", "stack": ""}
                            for name in failed],
               "passed_tests": [name for name in [*TESTS, *FLAKY_TESTS] if name not in failed],
               "crashed": False, "next_action": "retry_coder" if failed else "done",
               "duration_ms": int(rng.uniform(2_000, 9_000))}
        runs.append((row.timestamp.to_pydatetime(), doc))
    return frame, runs


def _failed_tests(rng: np.random.Generator, content_hash: str) -> list[str]:
    """A failing run: the tests broken on this content (fixed per hash) and flaky ones that failed now."""
    broken_rng = np.random.default_rng(int(content_hash[:8], 16))
    broken = list(broken_rng.choice(TESTS, size=int(broken_rng.integers(0, 3)), replace=False))
    flaky = [name for name, chance in FLAKY_TESTS.items() if rng.random() < chance]
    if not broken and not flaky:
        flaky = [next(iter(FLAKY_TESTS))]  # the run failed: something in it did
    return broken + flaky


def write_demo_history(workspace: Path | str, evaluations: int = 2000, *, seed: int = 7, files: int = 4) -> Path:
    """Write a synthetic history into ``workspace``: Parquet eval rows in ``files`` parts, bugs, scores, runs.

    Example:
        >>> write_demo_history(tmp_path, evaluations=500)
        PosixPath('…/.sprintflow/history')
    """
    workspace = Path(workspace)
    layout = WorkspaceLayout(workspace)
    directory = layout.history_dir
    frame = synthetic_evals(evaluations, seed=seed, workspace=str(workspace.resolve()))
    frame = frame.sort_values("timestamp", kind="stable", ignore_index=True)
    frame, unit_runs = synthetic_unit_test_runs(frame, count=max(40, evaluations // 8), seed=seed)
    for bounds in np.array_split(np.arange(len(frame)), files):
        append_rows(directory, EVALS, frame.iloc[bounds])
    atomic_write_text(directory / SYNTHETIC_NOTE, f"Synthetic demo history written by "
                      f"examples/history/synthetic_history.py (seed {seed}, {evaluations} evaluations).\n")
    write_eval_results(workspace, frame)
    _write_lines(layout.bugs_file, synthetic_bugs(max(20, evaluations // 20), seed=seed))
    _write_lines(layout.scores_file, synthetic_scores(seed=seed))
    write_test_runs(workspace, [*synthetic_testruns(seed=seed), *unit_runs])
    return directory


def write_eval_results(workspace: Path | str, frame: pd.DataFrame) -> int:
    """Write one EvalResult file (``.sprintflow/evals/<evalId>.json``) per evaluation of ``frame``.

    Each holds the evaluation's strategy and criterion results as the history rows say, with
    feedback on what failed. Returns how many were written. Plain writes, as for the test runs: a
    demo is written again, not recovered, and a durable write of thousands of files costs seconds.
    """
    layout = WorkspaceLayout(Path(workspace))
    layout.evals_dir.mkdir(parents=True, exist_ok=True)
    columns = ["eval_id", "kind", "name", "method", "required", "result", "error_count", "duration_ms"]
    parts: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for part in frame.loc[frame["kind"] != "evaluation", columns].to_dict("records"):
        parts.setdefault(part["eval_id"], {"strategy": [], "criterion": []})[part["kind"]].append(part)
    columns = ["eval_id", "contract_id", "spec_id", "timestamp", "iteration", "result", "executor", "image",
               "workspace_hash", "sprint_run"]
    evaluations = frame.loc[frame["kind"] == "evaluation", columns].to_dict("records")
    for row in evaluations:
        found = parts.get(row["eval_id"], {"strategy": [], "criterion": []})
        result = _eval_result(row, found["strategy"], found["criterion"])
        layout.eval_file(result.eval_id).write_text(result.to_json(), encoding="utf-8")
    return len(evaluations)


def _eval_result(row: dict[str, Any], strategies: list[dict[str, Any]], criteria: list[dict[str, Any]]
                 ) -> EvalResult:
    """The EvalResult the history rows of one evaluation come from (synthetic texts, real shape)."""
    judged = [c for c in criteria if c["result"] != "skipped"]
    failed = [c for c in judged if c["result"] == "fail"]
    required = [c for c in criteria if c["required"]]
    score = {"criteriaTotal": len(criteria), "criteriaPassed": len(judged) - len(failed),
             "criteriaFailed": len(failed), "criteriaSkipped": len(criteria) - len(judged),
             "requiredPassed": sum(c["result"] == "pass" for c in required),
             "requiredFailed": sum(c["result"] == "fail" for c in required), "requiredTotal": len(required)}
    feedback = [{"priority": "high", "category": "bug" if s["name"] == "unit-test" else "quality",
                 "description": f"The {s['name']} strategy failed with {int(s['error_count'] or 0)} errors "
                                "(synthetic).", "expected": f"{s['name']} passes."}
                for s in strategies if s["result"] == "fail"]
    verdict = "PASSED" if row["result"] == "pass" else "FAILED"
    return EvalResult.model_validate({
        "evalId": row["eval_id"], "contractId": row["contract_id"], "specId": row["spec_id"],
        "timestamp": row["timestamp"].strftime("%Y-%m-%dT%H:%M:%SZ"), "iteration": int(row["iteration"]),
        "overallResult": row["result"], "score": score,
        "summary": f"Synthetic demo: sprint {row['contract_id']} iteration {row['iteration']} {verdict}: "
                   f"{score['requiredPassed']} of {score['requiredTotal']} required criteria passed.",
        "strategyResults": [{"strategy": s["name"], "required": bool(s["required"]), "result": s["result"],
                             "errorCount": int(s["error_count"] or 0), "durationMs": int(s["duration_ms"]),
                             "details": f"synthetic {s['name']} run: {s['result']}"} for s in strategies],
        "criteriaResults": [{"criterionId": c["name"], "description": f"Synthetic criterion {c['name']} "
                             f"({c['method']}).", "required": bool(c["required"]), "result": c["result"],
                             "evidence": f"synthetic {c['method']} check: {c['result']}",
                             "feedback": f"{c['name']} failed its {c['method']} check." if c["result"] == "fail"
                             else ""} for c in criteria],
        "generatorFeedback": feedback,
        "executor": {"kind": row["executor"], "image": row["image"] if row["executor"] == "docker" else None,
                     "outputLimit": 1_000_000},
        "judged": {"treeDigest": row["workspace_hash"], "pinId": row["sprint_run"]},
    })


def write_test_runs(workspace: Path | str, runs: list[tuple[datetime, dict]]) -> None:
    """Write each ``(time, result.json)`` pair to ``.sprintflow/runs/<runId>/result.json``, dated ``time``."""
    layout = WorkspaceLayout(Path(workspace))
    for when, run in runs:
        path = layout.run_dir(run["run_id"]) / "result.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(run), encoding="utf-8")
        os.utime(path, (when.timestamp(), when.timestamp()))


def _write_lines(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def demo_workspace(path: Path | str | None = None, evaluations: int = 2000, *, seed: int = 7) -> Path:
    """A workspace folder holding a synthetic history (a new temporary folder when ``path`` is None).

    Example:
        >>> build_report(load_history(demo_workspace())).summary
    """
    workspace = Path(path) if path is not None else Path(tempfile.mkdtemp(prefix="sprintflow-demo-"))
    workspace.mkdir(parents=True, exist_ok=True)
    write_demo_history(workspace, evaluations, seed=seed)
    return workspace


WORKSPACE_VARIABLE = "SPRINTFLOW_WORKSPACE"
DEMO_VARIABLE = "SPRINTFLOW_DEMO"


class NoWorkspace(RuntimeError):
    """Neither a workspace nor the demo was asked for: a notebook must not chart made-up data unasked."""


def workspace_or_demo() -> Path:
    """The workspace a notebook reads: ``$SPRINTFLOW_WORKSPACE``, or a new demo one when ``SPRINTFLOW_DEMO=1``.

    Raises:
        NoWorkspace: neither is set (or the workspace is not a folder); the message says what to set.

    Example:
        >>> os.environ[DEMO_VARIABLE] = "1"
        >>> (workspace_or_demo() / ".sprintflow" / "history").is_dir()
        True
    """
    chosen = os.environ.get(WORKSPACE_VARIABLE)
    if chosen:
        if not Path(chosen).is_dir():
            raise NoWorkspace(f"{WORKSPACE_VARIABLE}={chosen} is not a folder: point it at the workspace whose "
                              ".sprintflow/history/ you want to read")
        return Path(chosen)
    if os.environ.get(DEMO_VARIABLE) == "1":
        workspace = demo_workspace()
        print(f"SYNTHETIC DEMO DATA ({DEMO_VARIABLE}=1): every number and chart below is made up, written by "
              f"examples/history/synthetic_history.py into {workspace}")
        return workspace
    raise NoWorkspace(f"no history to read: set {WORKSPACE_VARIABLE}=/path/to/your/workspace (the folder holding "
                      f".sprintflow/), e.g. `{WORKSPACE_VARIABLE}=$PWD jupyter lab notebooks/`, or set "
                      f"{DEMO_VARIABLE}=1 to explore a synthetic demo history")


def main(argv: list[str] | None = None) -> int:
    """Write a synthetic history into a workspace folder: ``python examples/history/synthetic_history.py WS``."""
    parser = argparse.ArgumentParser(description="Write a realistic synthetic sprintflow history (labelled as "
                                     "synthetic) into WORKSPACE/.sprintflow/, or SPRINTFLOW_HISTORY when set.")
    parser.add_argument("workspace", type=Path, help="the folder to write .sprintflow/ into (created if missing)")
    parser.add_argument("--evaluations", type=int, default=2000, help="evaluations to generate (default 2000)")
    parser.add_argument("--seed", type=int, default=7, help="random seed: the same seed, the same history")
    args = parser.parse_args(argv)
    if args.evaluations < 1:
        parser.error("--evaluations must be at least 1")
    if args.workspace.exists() and not args.workspace.is_dir():
        parser.error(f"{args.workspace} is not a folder")
    directory = demo_workspace(args.workspace, args.evaluations, seed=args.seed)
    layout = WorkspaceLayout(directory)
    print(f"wrote a synthetic history of {args.evaluations:,} evaluations to {layout.history_dir} and their "
          f"EvalResults to {layout.evals_dir}; `sprintflow report {directory}` reports on it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
