"""sprintflow evaluate WORKSPACE --contract FILE: run the evaluate flow and report."""

from __future__ import annotations

from pathlib import Path

import click

from sprintflow.cli import exit_with_verdict
from sprintflow.kinds import ExecutorName

FORMATS = ("text", "json", "github", "junit")


@click.command()
@click.argument("workspace", type=click.Path(path_type=Path))
@click.option("--contract", "contract", required=True, type=click.Path(path_type=Path),
              help="SprintContract JSON file to evaluate against: absolute, or relative to WORKSPACE "
                   "(else to the current folder).")
@click.option("--executor", type=click.Choice([name.value for name in ExecutorName]), default=None,
              help="Where commands run: auto = Docker when an engine answers, else local (with a warning). "
                   "Default: the config's executor.kind (auto).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: readable summary; json: the EvalResult; github: ::error annotations; junit: XML.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--no-cache", is_flag=True, help="Run every strategy even if an identical run is cached.")
@click.option("--iteration", type=click.IntRange(min=1), default=None,
              help="Iteration number (default: one past the contract's iterationHistory).")
def evaluate(workspace: Path, contract: Path, executor: str, fmt: str, as_json: bool, no_cache: bool,
             iteration: int | None) -> None:
    """Evaluate WORKSPACE against a contract: every strategy, every criterion, one EvalResult.

    The EvalResult is written to WORKSPACE/.sprintflow/evals/<evalId>.json and shown
    on the Prefect flow run as a markdown summary and a table; the run's URL is
    printed on stderr. Without a configured Prefect server the first command starts
    one in the background, and later ones reuse it (see `sprintflow server --help`).

    Exit codes: 0 pass, 1 fail, 2 usage, config or input error, 3 no verdict (e.g. no Docker engine).
    """
    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.io.inputs import resolve_input
    from sprintflow.sandbox.executors import resolve_executor

    # Bad input and a missing Docker engine are refused before a flow run (and a server) starts.
    contract = resolve_input(workspace, contract, "contract")
    _, project, _ = load_inputs(workspace, contract)
    runner = resolve_executor(executor, project.executor)
    from sprintflow.cli import run_flow_here
    from sprintflow.io.locks import workspace_lock
    from sprintflow.sandbox.prepare import with_project_sandbox

    # So are a workspace another run holds (in one line; the flow's own lock is this one, held
    # again), a runtime the project declares and we cannot provide, and the sandbox's progress:
    # the flow then finds every layer built.
    with workspace_lock(workspace):
        with_project_sandbox(runner, workspace, progress=lambda line: click.echo(line, err=True))
        # The config read above is the one judged (not read again by the flow).
        result = run_flow_here("evaluate", str(workspace), str(contract), executor=executor,
                               use_cache=not no_cache, iteration=iteration,
                               config=project.to_dict())
    _print(result, "json" if as_json else fmt)
    exit_with_verdict(result.overall_result == "pass")


def _print(result, fmt: str) -> None:
    from sprintflow.evaluate.formats import github_annotations, junit_xml

    if fmt == "json":
        click.echo(result.to_json(), nl=False)
    elif fmt == "github":
        click.echo(github_annotations(result), nl=False)
    elif fmt == "junit":
        click.echo(junit_xml(result), nl=False)
    else:
        _print_text(result)


ITEM_LINES = 12


def _lines(text: str) -> str:
    """An item's text, its long output excerpts shortened to ``ITEM_LINES`` lines (the EvalResult has it all)."""
    lines = text.splitlines()
    if len(lines) <= ITEM_LINES:
        return text
    return "\n".join(lines[:ITEM_LINES]) + f"\n  … {len(lines) - ITEM_LINES} more lines in the EvalResult"


def _print_text(result) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from sprintflow.evaluate.formats import inferred_lines

    console = Console()
    colour = {"pass": "green", "fail": "red", "skipped": "yellow"}
    table = Table(title=f"{result.eval_id}", show_lines=False)
    for column in ("check", "required", "result", "details"):
        table.add_column(column, overflow="fold")
    for r in result.strategy_results:
        cached = " (cached)" if r.cached else ""
        table.add_row(r.strategy, "yes" if r.required else "no",
                      f"[{colour[r.result.value]}]{r.result.value}[/]{cached}", r.details[:200])
    for c in result.criteria_results:
        table.add_row(c.criterion_id, "yes" if c.required else "no",
                      f"[{colour[c.result.value]}]{c.result.value}[/]", c.evidence[:200])
    console.print(table)
    for line in inferred_lines(result):
        console.print(Text(f"inferred from the project: {line}"), highlight=False)
    # Every item is shown: feedback is one item per distinct problem, so none is noise to cut.
    for item in result.generator_feedback:
        where = f"{item.file}:{item.line} " if item.file and item.line else (f"{item.file} " if item.file else "")
        # Text, not markup: tool output quoted in a description may hold brackets.
        console.print(Text.assemble((item.priority.value, "bold"),
                                    f" ({item.category.value}) {where}{_lines(item.description)}"),
                      highlight=False)
    verdict = colour[result.overall_result]
    console.print(f"[bold {verdict}]{result.overall_result.upper()}[/] {result.summary}", highlight=False)
