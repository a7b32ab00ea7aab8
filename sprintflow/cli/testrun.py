"""sprintflow testrun parse REPORT: a test runner's report as the tester seed's result.json."""

from __future__ import annotations

from pathlib import Path

import click

from sprintflow.cli import exit_with_verdict
from sprintflow.errors import InputError, TestRunCrashed
from sprintflow.io.confine import NotRegular, open_regular
from sprintflow.schemas.contract import SprintContract
from sprintflow.schemas.validation import load_document
from sprintflow.testruns.testrun import TEST_REPORT_FORMATS, build_test_run, new_run_id

MAX_REPORT_BYTES = 64 << 20
"""A report larger than this is read only up to here."""

__all__ = ["testrun"]


@click.group()
def testrun() -> None:
    """Unit-test runs: judge a runner's report the way the tester agent does."""


@testrun.command("parse")
@click.argument("report", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(TEST_REPORT_FORMATS), required=True,
              help="The runner that wrote REPORT.")
@click.option("--contract", type=click.Path(path_type=Path),
              help="Sprint contract JSON, for acceptance and status-code coverage.")
@click.option("--lang", "language", type=click.Choice(["en", "zh"]), default="en",
              show_default=True, help="Language of the hints.")
@click.option("--run-id", help="Run id to record (default: run-<UTC date>-<time>).")
@click.option("--root", "roots", multiple=True,
              help="Workspace root as the runner saw it, stripped from paths (repeatable).")
def parse(report: Path, fmt: str, contract: Path | None, language: str, run_id: str | None,
          roots: tuple[str, ...]) -> None:
    """Print REPORT as a TestRun JSON: summary, failures with hints, next_action, coverage.

    Exit codes: 0 all tests passed, 1 tests failed (retry_coder), 2 the report
    file is missing or unreadable, 3 the report shows a crashed run (retry_tester).
    """
    text = _read(report)
    loaded = load_document(contract, SprintContract) if contract else None
    run = build_test_run(text, fmt, run_id=run_id or new_run_id(), contract=loaded,
                         language=language, roots=roots)  # type: ignore[arg-type]
    click.echo(run.to_json(), nl=False)
    if run.crashed:
        raise TestRunCrashed(f"{report}: {run.crash_reason}")
    exit_with_verdict(run.ok)


def _read(report: Path) -> str:
    try:
        with open_regular(report) as handle:
            return handle.read(MAX_REPORT_BYTES + 1)[:MAX_REPORT_BYTES].decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{report}: no such report file") from None
    except NotRegular as exc:
        raise InputError(f"cannot read the report {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{report}: cannot read the report: {exc}") from None
