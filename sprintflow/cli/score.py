"""``sprintflow score``: score a skill prompt against its held-out cases.

Imports stay light at module level: the plain path never imports Prefect, so a
quick score costs the engine calls and little else.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import click

from sprintflow.cli import exit_with_verdict

__all__ = ["score"]


@click.command()
@click.argument("skill", required=False)
@click.option("--cases", "cases", type=click.Path(path_type=Path, dir_okay=False),
              help="Cases file (JSON lines). Default: evals/SKILL/cases.jsonl.")
@click.option("--prompt", "prompt", type=click.Path(path_type=Path, dir_okay=False),
              help="Skill prompt. Default: prompts/SKILL.md.")
@click.option("--compare", nargs=2, type=click.Path(path_type=Path, dir_okay=False), default=None,
              metavar="PROMPT_A PROMPT_B",
              help="Score two prompt versions on the same cases; print the differing cases and an exact "
                   "McNemar test of whether B is better than A.")
@click.option("--engine", metavar="CMD",
              help="Engine command line or preset (claude, codex, gemini, aider). Else "
                   "SPRINTFLOW_SCORER_ENGINE, SPRINTFLOW_ENGINE, or engines.scorer in the project config.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Engine calls running at once.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=300.0, show_default=True,
              help="Seconds per engine call; a case that takes longer fails.")
@click.option("--epochs", type=click.IntRange(1, 100), default=1, show_default=True, metavar="K",
              help="Run every case K times. The JSON then adds epochs, passAt1 (mean pass rate of one "
                   "attempt), passAtK (any of K passed) and passHatK (all K passed), overall and per case, "
                   "with each case's stability and epochs; a case passes only when all K passed.")
@click.option("--min-score", type=click.FloatRange(0, 1), default=None,
              help="Exit 0 when the score reaches this, even if some cases fail.")
@click.option("--json", "json_only", is_flag=True,
              help="Machine output only: the JSON object on stdout, no summary on stderr.")
@click.option("--timings", is_flag=True,
              help="Add the run-to-run varying 'timing' section (last) to the printed JSON.")
@click.option("--flow/--no-flow", "use_flow", default=None,
              help="Run as a Prefect flow (batch tasks, retries of infrastructure errors, a table "
                   "artifact). Default: only when a Prefect server is configured (PREFECT_API_URL), "
                   "because without one the first flow starts sprintflow's background server (~10 s; "
                   "later commands reuse it).")
@click.option("--save/--no-save", default=True, show_default=True,
              help="Persist the report under .sprintflow/scores/SKILL/ and append "
                   ".sprintflow/history/scores.ndjson.")
def score(skill: str | None, cases: Path | None, prompt: Path | None, compare: tuple[Path, Path] | None,
          engine: str | None, concurrency: int, timeout: float, epochs: int, min_score: float | None,
          json_only: bool, timings: bool, use_flow: bool | None, save: bool) -> None:
    """Score SKILL's prompt against its held-out cases, from the repository root.

    Each case of evals/SKILL/cases.jsonl ({"id", "input", "expected"}) is sent to
    the engine as prompts/SKILL.md + "## Pre-fetched PR context" + the input;
    the JSON in the answer (bare, fenced or in prose) is compared with
    "expected" on the skill's fields (triage: escalate and risk; else
    evals/SKILL/comparator.json or every expected field).

    Prints one JSON object on stdout: total, passed, failed, score and
    cases[{id, pass, expected, actual, reason}]. The cases file is never written.
    With --epochs K, every case runs K times and the report adds the pass@k
    figures; identical answers still give identical bytes.

    \b
    Exit codes:
      0  every case passed (or the score reached --min-score); --compare: compared
      1  some case failed
      2  hard error (no skill, cases or prompt, a malformed case line, duplicate
         ids, no engine), one "error: file:line: field: message" line per problem
         (::error:: lines under GitHub Actions)
      3  no verdict: an engine that could not even start
    """
    exit_with_verdict(_score(skill, cases, prompt, compare, engine, concurrency, timeout, epochs, min_score,
                             json_only, timings, use_flow, save))


def _score(skill: str | None, cases: Path | None, prompt: Path | None, compare: tuple[Path, Path] | None,
           engine: str | None, concurrency: int, timeout: float, epochs: int, min_score: float | None,
           json_only: bool, timings: bool, use_flow: bool | None, save: bool) -> bool:
    """Score (or compare); True when the command passes."""
    from sprintflow.errors import InputError
    from sprintflow.scoring.prepare import prepare_run, with_prompt
    from sprintflow.scoring.report import persist_report
    from sprintflow.scoring.runs import compare_prompts, score_skill

    if compare and prompt is not None:
        raise InputError("--compare takes both prompt files; do not combine it with --prompt")
    if compare and epochs > 1:
        raise InputError("--compare pairs one answer per case for McNemar's test; do not combine it with --epochs")
    from sprintflow.orchestration.api import prefect_api_configured
    from sprintflow.orchestration.server import ensure_prefect_api

    flow = prefect_api_configured() if use_flow is None else use_flow
    root = Path(".")
    # Validate everything before any engine call or Prefect import, so bad input fails fast.
    run = prepare_run(skill, root=root, cases=cases, prompt=compare[0] if compare else prompt,
                      engine=engine, timeout=timeout)
    if flow:
        if json_only:  # machine output: keep Prefect's per-task INFO lines off stderr too
            os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
        ensure_prefect_api(announce=lambda message: click.echo(message, err=True))
    clock = time.monotonic()
    if compare:
        run_b = with_prompt(run, compare[1])
        if flow:
            from sprintflow.flows.score import compare_flow
            comparison = compare_flow(run.skill, str(run.prompt_path), str(run_b.prompt_path), root=str(root),
                                      cases=str(run.cases_path), engine=run.engine, concurrency=concurrency,
                                      timeout=timeout, persist=save)
        else:
            comparison, _, _ = compare_prompts(run, run_b.prompt_path, concurrency=concurrency,
                                               persist=save)
        click.echo(comparison.to_json(timings=timings), nl=False)
        if not json_only:
            _print_comparison(comparison, time.monotonic() - clock)
        return True
    saved: str | None = None
    if flow:
        from sprintflow.flows.score import score_flow
        report = score_flow(run.skill, root=str(root), cases=str(run.cases_path), prompt=str(run.prompt_path),
                            engine=run.engine, concurrency=concurrency, timeout=timeout, persist=save,
                            epochs=epochs)
        saved = f".sprintflow/scores/{run.skill}/" if save else None
    else:
        report = score_skill(run, concurrency=concurrency, persist=False, epochs=epochs)
        if save:
            saved = persist_report(report, root).as_posix()
    click.echo(report.to_json(timings=timings), nl=False)
    ok = report.failed == 0 or (min_score is not None and report.score >= min_score)
    if not json_only:
        _print_summary(report, min_score, saved, time.monotonic() - clock)
    return ok


def _print_summary(report, min_score: float | None, saved: str | None, seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    from sprintflow.scoring.report import report_rows

    console = Console(stderr=True, highlight=False)
    failed = report_rows(report, failed_only=True)
    if failed:
        table = Table(title=f"{report.skill}: failed cases", title_justify="left")
        columns = ["id", "expected", "actual", "reason"] + (["epochs"] if report.epochs else [])
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in failed[:20]:
            table.add_row(*(row[column] for column in columns))
        console.print(table)
        if len(failed) > 20:
            console.print(f"… and {len(failed) - 20} more failed cases (see the JSON report)")
    threshold = f" (min {min_score:g})" if min_score is not None else ""
    where = f"; report {saved}" if saved else ""
    k = report.epochs
    epochs = (f" in all {k} epochs" if k else "")
    estimators = (f"; pass@1 {report.pass_at_1:.3f}, pass@{k} {report.pass_at_k:.3f}, pass^{k} "
                  f"{report.pass_hat_k:.3f}, {sum(c.stability == 'flaky' for c in report.cases)} flaky"
                  if k else "")
    console.print(f"{report.skill}: {report.passed}/{report.total} passed{epochs}, score {report.score:.3f}"
                  f"{threshold}{estimators} in {seconds:.1f}s{where}", soft_wrap=True)


def _print_comparison(comparison, seconds: float) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True, highlight=False)
    if comparison.differences:
        table = Table(title=f"{comparison.skill}: cases the prompts disagree on", title_justify="left")
        for column in ("id", "A", "B", "reason (the failing side)"):
            table.add_column(column, overflow="fold")
        for diff in comparison.differences[:20]:
            table.add_row(str(diff.id), "pass" if diff.a else "fail", "pass" if diff.b else "fail",
                          diff.reason_b if diff.a else diff.reason_a or "")
        console.print(table)
    test = comparison.mcnemar
    console.print(f"A {comparison.a.prompt_file}: {comparison.a.passed}/{comparison.total}   "
                  f"B {comparison.b.prompt_file}: {comparison.b.passed}/{comparison.total}   "
                  f"McNemar exact p = {test.p_value:.4g} ({test.only_a_passed} only A, "
                  f"{test.only_b_passed} only B) → {test.verdict}   in {seconds:.1f}s", soft_wrap=True)
