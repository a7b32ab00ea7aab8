"""Score a skill as a Prefect flow: the same logic as ``tasks.scoring``, with retries and artifacts.

Cases run as batch tasks, not one task per case: Prefect costs ~5 ms per task
run, which at 1,000 cases would double the wall time of 50 ms engines. A batch
runs its cases one after the other, and at most ``concurrency`` batches run at
once, so at most ``concurrency`` engines run at a time. Only an
``InfrastructureError`` (an engine that could not start) is retried, and then
only its batch; a wrong answer is a verdict, never retried.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from sprintflow.errors import InputError
from sprintflow.orchestration.runs import flow
from sprintflow.schemas._base import utc_now
from sprintflow.schemas.scoring import CaseResult, CompareReport, EvalCase, ScoreReport
from sprintflow.scoring.cases import iter_cases
from sprintflow.scoring.comparison import compare_reports
from sprintflow.scoring.epochs import merge_epochs
from sprintflow.scoring.prepare import DEFAULT_CASE_TIMEOUT, ScoreRun, prepare_run, with_prompt
from sprintflow.scoring.report import build_report
from sprintflow.scoring.runs import MAX_EPOCHS
from sprintflow.tasks.score import publish_comparison, publish_report, score_batch

__all__ = ["MAX_CONCURRENCY", "compare_flow", "score_flow"]

MAX_CONCURRENCY = 256


def _batch_size(total_jobs: int, concurrency: int) -> int:
    # About two batches per worker: each task run costs the API server CPU (measured at
    # 1,000 cases: 63 batches 2.2 s, 32 batches 1.3 s) and two still even out the tail.
    # The cap keeps a retried batch cheap.
    return max(1, min(50, -(-total_jobs // (concurrency * 2))))


def _threads() -> TaskRunner[PrefectFuture[Any]]:
    # Prefect types @flow's task_runner as TaskRunner[PrefectFuture[Any]] with an invariant
    # parameter, so no concrete runner matches it (PrefectHQ/prefect#16938).
    return ThreadPoolTaskRunner(max_workers=MAX_CONCURRENCY)  # type: ignore[return-value]


def _batches(jobs: Iterator[EvalCase], size: int) -> Iterator[list[EvalCase]]:
    while batch := list(islice(jobs, size)):
        yield batch


def _run_batches(runs: list[ScoreRun], concurrency: int) -> list[list[CaseResult]]:
    """Results per run, in case order; at most ``concurrency`` batch tasks in flight.

    The same run listed K times is K epochs: every batch is submitted once per entry.
    """
    first = runs[0]
    size = _batch_size(first.total * len(runs), concurrency)
    results: dict[tuple[int, int], list[CaseResult]] = {}
    in_flight: dict[PrefectFuture, tuple[int, int]] = {}

    def collect() -> None:
        done = next(as_completed(list(in_flight)))
        results[in_flight.pop(done)] = done.result()

    cases = iter_cases(first.cases_path, expect_sha256=first.cases_sha256, shown=first.cases_file)
    try:
        for number, batch in enumerate(_batches(cases, size)):
            for index, run in enumerate(runs):
                while len(in_flight) >= concurrency:
                    collect()
                # quote(): Prefect would otherwise walk every case of every batch looking
                # for futures (measured: 0.5 s of CPU per 1,000 cases). Prefect unwraps it
                # before the call, but its typed task signatures do not accept one.
                future = score_batch.submit(quote(run), quote(batch))  # type: ignore[call-overload]
                in_flight[future] = (index, number)
        while in_flight:
            collect()
    finally:
        # Resolve every future even when one failed: Prefect loses unresolved ones.
        for future in in_flight:
            future.wait()
    batch_count = len(results) // len(runs)
    return [[result for number in range(batch_count) for result in results[(index, number)]]
            for index in range(len(runs))]


@flow(name="score-skill", task_runner=_threads(), log_prints=False)
def score_flow(skill: str, root: str = ".", cases: str | None = None, prompt: str | None = None,
               engine: str | None = None, concurrency: int = 8, timeout: float = DEFAULT_CASE_TIMEOUT,
               persist: bool = True, epochs: int = 1) -> ScoreReport:
    """Score ``skill``'s prompt on its held-out cases; persist, publish an artifact, append history.

    Parameters are plain strings and numbers so a deployment (e.g. nightly
    scoring) can set them from the UI. Bad input fails the run before any engine call.
    ``epochs`` runs every case that many times (see ``merge_epochs``).
    """
    concurrency = max(1, min(concurrency, MAX_CONCURRENCY))
    if not 1 <= epochs <= MAX_EPOCHS:
        raise InputError(f"epochs must be between 1 and {MAX_EPOCHS}, got {epochs}")
    run = prepare_run(skill, root=root, cases=cases, prompt=prompt, engine=engine, timeout=timeout)
    started_at, clock = utc_now(), time.monotonic()
    results = merge_epochs(_run_batches([run] * epochs, concurrency))
    report = build_report(run, results, started_at=started_at, duration_s=time.monotonic() - clock,
                          concurrency=concurrency, mode="flow")
    # quote() and its ignore: as in _run_batches.
    publish_report(quote(report), str(Path(root)), persist)  # type: ignore[call-overload]
    return report


@flow(name="score-compare", task_runner=_threads(), log_prints=False)
def compare_flow(skill: str, prompt_a: str, prompt_b: str, root: str = ".", cases: str | None = None,
                 engine: str | None = None, concurrency: int = 8, timeout: float = DEFAULT_CASE_TIMEOUT,
                 persist: bool = True) -> CompareReport:
    """Score two prompt versions on the same cases and test whether B is really better (McNemar).
    """
    concurrency = max(1, min(concurrency, MAX_CONCURRENCY))
    run_a = prepare_run(skill, root=root, cases=cases, prompt=prompt_a, engine=engine, timeout=timeout)
    run_b = with_prompt(run_a, prompt_b)
    started_at, clock = utc_now(), time.monotonic()
    results_a, results_b = _run_batches([run_a, run_b], concurrency)
    duration = time.monotonic() - clock
    a = build_report(run_a, results_a, started_at=started_at, duration_s=duration, concurrency=concurrency,
                     mode="flow")
    b = build_report(run_b, results_b, started_at=started_at, duration_s=duration, concurrency=concurrency,
                     mode="flow")
    comparison = compare_reports(a, b, timing=a.timing.model_copy(update={"cases": {}}) if a.timing else None)
    # quote() and its ignore: as in _run_batches.
    publish_comparison(quote(comparison), quote(a), quote(b), str(Path(root)), persist)  # type: ignore[call-overload]
    return comparison
