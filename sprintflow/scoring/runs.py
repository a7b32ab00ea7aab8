"""Score a skill prompt against its held-out cases: ask the engine about each case, on a bounded pool.

The logic of ``sprintflow score`` as plain functions; ``flows/score.py`` runs
the same functions as Prefect tasks. One run goes:

1. ``prepare_run`` (:mod:`sprintflow.scoring.prepare`) checks everything before
   any engine is called: the skill name, the prompt, the comparator and every
   line of the cases file (streamed; each problem named by file and line). Bad
   input is a ``DocumentError`` / ``InputError`` (exit 2), never a failed case.
2. ``score_cases`` streams the cases again and runs them on a bounded thread
   pool; each ``score_case`` builds the prompt (skill prompt, then
   ``## Pre-fetched PR context``, then the case input), calls the engine, finds
   the answer's JSON and compares the skill's fields
   (:mod:`sprintflow.scoring.answers`). A mismatch, an unparseable answer, a
   non-zero exit or a timeout is a failed case with its reason and the raw
   answer kept. Only an engine that could not even start raises
   (``InfrastructureError``): the machinery failed, not the skill.
3. ``build_report`` (:mod:`sprintflow.scoring.report`) orders results as the
   file does, so identical engine answers give an identical report apart from
   its ``timing`` section; ``persist_report`` writes it and appends a history row.

With ``epochs=K`` every case runs K times (inspect_ai's epochs: the standard
answer to an engine that answers differently from one call to the next);
``merge_epochs`` (:mod:`sprintflow.scoring.epochs`) folds the K verdicts of each
case into one, with the pass@k figures defined there. ``score_skill`` and
``compare_prompts`` are the whole run without Prefect.

The cases file is only ever opened for reading.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sprintflow.engines import engine_env, extract_json, run_engine
from sprintflow.errors import InfrastructureError, InputError
from sprintflow.schemas._base import utc_now
from sprintflow.schemas.scoring import CaseResult, CompareReport, EvalCase, ScoreReport
from sprintflow.scoring.answers import build_prompt, compare_answer
from sprintflow.scoring.cases import iter_cases
from sprintflow.scoring.comparison import compare_reports
from sprintflow.scoring.epochs import merge_epochs
from sprintflow.scoring.prepare import ScoreRun, with_prompt
from sprintflow.scoring.report import build_report, persist_compare_report, persist_report

__all__ = ["MAX_EPOCHS", "compare_prompts", "score_case", "score_cases", "score_epochs", "score_skill"]

RAW_LIMIT = 8000
"""Characters of a failed case's raw answer kept in the report (head and tail)."""
MAX_EPOCHS = 100
"""The most times ``--epochs`` runs each case."""


# --------------------------------------------------------------------------- one case


def _cap(text: str, limit: int = RAW_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters dropped ...]\n{text[-half:]}"


def score_case(run: ScoreRun, case: EvalCase, env: Mapping[str, str] | None = None) -> CaseResult:
    """Ask the engine about one case and judge its answer; a bad answer is a failed case.

    Raises:
        InfrastructureError: the engine process could not be started at all.
    """
    fields = run.comparator.fields_for(case.expected)
    expected = {name: case.expected[name] for name in fields}
    reply = run_engine(run.engine, build_prompt(run.prompt, case.input), cwd=run.root,
                       timeout=run.timeout, env=env)
    if reply.could_not_start:
        raise InfrastructureError(f"case {case.id!r}: the engine could not start: {reply.reason}")
    usage: dict[str, Any] = {"duration_s": reply.duration_s, "input_tokens": reply.input_tokens,
                             "output_tokens": reply.output_tokens, "cost_usd": reply.cost_usd}
    if not reply.ok:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=None, reason=reply.reason,
                          raw=_cap(reply.raw), **usage)
    answer = extract_json(reply.text, prefer=fields)
    if answer is None:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=None,
                          reason="unparseable answer: no JSON object found", raw=_cap(reply.raw), **usage)
    actual, mismatches = compare_answer(case.expected, answer, run.comparator)
    if mismatches:
        return CaseResult(id=case.id, passed=False, expected=expected, actual=actual,
                          reason="; ".join(mismatches), raw=_cap(reply.raw), **usage)
    return CaseResult(id=case.id, passed=True, expected=expected, actual=actual, **usage)


# --------------------------------------------------------------------------- many cases


def score_cases(run: ScoreRun, cases: Iterable[EvalCase] | None = None, *, concurrency: int = 8,
                env: Mapping[str, str] | None = None) -> list[CaseResult]:
    """Score ``cases`` (default: streamed from the run's file) with at most ``concurrency`` engines at once.

    Results come back in case order. Cases are read as the pool frees up, so a
    huge file is never held in memory at once, only its results.

    Raises:
        InfrastructureError: an engine could not start; the remaining cases are cancelled.
    """
    return score_epochs(run, cases, concurrency=concurrency, env=env)[0]


def score_epochs(run: ScoreRun, cases: Iterable[EvalCase] | None = None, *, epochs: int = 1,
                 concurrency: int = 8, env: Mapping[str, str] | None = None) -> list[list[CaseResult]]:
    """Score every case ``epochs`` times; results per epoch, each in case order.

    The K calls of one case are queued together, so a case's epochs run side by
    side and the file is still read once, one line at a time.

    Raises:
        InputError: ``epochs`` is not between 1 and 100.
        InfrastructureError: an engine could not start; the remaining cases are cancelled.
    """
    if not 1 <= epochs <= MAX_EPOCHS:
        raise InputError(f"--epochs must be between 1 and {MAX_EPOCHS}, got {epochs}")
    if cases is None:
        cases = iter_cases(run.cases_path, expect_sha256=run.cases_sha256, shown=run.cases_file)
    results = _run_jobs(((run, case) for case in cases for _ in range(epochs)), concurrency, env)
    return [results[epoch::epochs] for epoch in range(epochs)]


def _run_jobs(jobs: Iterable[tuple[ScoreRun, EvalCase]], concurrency: int,
              env: Mapping[str, str] | None) -> list[CaseResult]:
    if concurrency < 1:
        raise InputError(f"concurrency must be at least 1, got {concurrency}")
    env = engine_env() if env is None else env  # copied once, not once per case
    results: dict[int, CaseResult] = {}
    failures: list[BaseException] = []
    # Enough queued work to keep every worker busy, never the whole file. A semaphore
    # released by the worker costs O(1) per case, unlike wait() over every pending future.
    slots = threading.BoundedSemaphore(concurrency * 4)

    def work(index: int, run: ScoreRun, case: EvalCase) -> None:
        try:
            results[index] = score_case(run, case, env)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread below
            failures.append(exc)
        finally:
            slots.release()

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sprintflow-score")
    submitted = 0
    try:
        for index, (run, case) in enumerate(jobs):
            slots.acquire()
            if failures:
                break
            pool.submit(work, index, run, case)
            submitted += 1
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)  # bad input or Ctrl-C: stop queued cases
        raise
    # Queued cases still run; only a failure cancels what has not started.
    pool.shutdown(wait=True, cancel_futures=bool(failures))
    if failures:
        raise failures[0]
    return [results[index] for index in range(submitted)]


# --------------------------------------------------------------------------- without Prefect


def score_skill(run: ScoreRun, *, concurrency: int = 8, persist: bool = True,
                env: Mapping[str, str] | None = None, epochs: int = 1) -> ScoreReport:
    """Score a prepared run without Prefect: the CLI's default path when no server is configured.

    Example:
        >>> from sprintflow.scoring.prepare import prepare_run
        >>> run = prepare_run("triage", root="examples/scoring", engine="python3 stub_engine.py")
        >>> report = score_skill(run, epochs=3, persist=False)
        >>> report.passed, report.total, report.epochs
        (8, 8, 3)
    """
    started_at, clock = utc_now(), time.monotonic()
    results = merge_epochs(score_epochs(run, epochs=epochs, concurrency=concurrency, env=env))
    report = build_report(run, results, started_at=started_at, duration_s=time.monotonic() - clock,
                          concurrency=concurrency)
    if persist:
        persist_report(report, run.root)
    return report


def compare_prompts(run_a: ScoreRun, prompt_b: Path | str, *, concurrency: int = 8, persist: bool = True,
                    env: Mapping[str, str] | None = None) -> tuple[CompareReport, ScoreReport, ScoreReport]:
    """Score two prompt versions on the same cases in one pool and compare them.

    ``run_a`` is prepared with prompt A; B replaces only the prompt. Each case
    line is read once and sent to both.
    """
    run_b = with_prompt(run_a, prompt_b)
    started_at, clock = utc_now(), time.monotonic()
    cases = iter_cases(run_a.cases_path, expect_sha256=run_a.cases_sha256, shown=run_a.cases_file)
    results = _run_jobs(((run, case) for case in cases for run in (run_a, run_b)), concurrency, env)
    duration = time.monotonic() - clock
    a = build_report(run_a, results[0::2], started_at=started_at, duration_s=duration, concurrency=concurrency)
    b = build_report(run_b, results[1::2], started_at=started_at, duration_s=duration, concurrency=concurrency)
    comparison = compare_reports(a, b, timing=a.timing.model_copy(update={"cases": {}}) if a.timing else None)
    if persist:
        persist_compare_report(comparison, a, b, run_a.root)
    return comparison, a, b
