"""The ``sprintflow`` command line: one module per command in this package.

Commands are imported lazily so ``sprintflow --help`` and quick commands do not
pay for importing Prefect. Exit codes come from one place: a verdict ends a
command with :func:`exit_with_verdict` (0 pass, 1 the code under test failed);
any ``SprintflowError`` is printed by :func:`print_error` and ends it with the
error's own ``exit_code`` (2 bad input, 3 no verdict; see :mod:`sprintflow.errors`).
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import os
import sys
from typing import Any, NoReturn

import click

from sprintflow.errors import OutOfMemory, SprintflowError

__all__ = ["EXIT_FAILED", "EXIT_NO_VERDICT", "EXIT_OK", "exit_with_verdict", "main", "print_error", "run_flow_here"]

EXIT_OK, EXIT_FAILED, EXIT_NO_VERDICT = 0, 1, 3

# command name -> "module:attribute"; a module that is not there is not listed.
COMMANDS = {
    "init": "sprintflow.cli.init:init",
    "contract": "sprintflow.cli.init:contract",
    "validate": "sprintflow.cli.validate:validate",
    "evaluate": "sprintflow.cli.evaluate:evaluate",
    "sandbox": "sprintflow.cli.sandbox:sandbox",
    "plan": "sprintflow.cli.plan:plan",
    "run": "sprintflow.cli.run:run",
    "status": "sprintflow.cli.status:status",
    "score": "sprintflow.cli.score:score",
    "testrun": "sprintflow.cli.testrun:testrun",
    "bugs": "sprintflow.cli.bugs:bugs",
    "report": "sprintflow.cli.report:report",
    "serve": "sprintflow.cli.serve:serve",
    "server": "sprintflow.cli.server:server",
    "worker": "sprintflow.cli.worker:worker",
    "settings": "sprintflow.cli.settings:settings",
}


# flow name -> "module:attribute" of the flows a command runs in this process.
FLOWS = {
    "evaluate": "sprintflow.flows.evaluate:evaluate_flow",
    "sprint": "sprintflow.flows.sprint:sprint_flow",
}


_flow_ran = False
"""Whether this process ran a flow: then it ends without the interpreter's teardown (:func:`_end`)."""
_ran_out_of_memory = False
"""Whether a command ran out of memory: then it ends without any teardown, where a library left short
(DuckDB's, Arrow's threads) can crash after the one-line error (:func:`_end`)."""


def run_flow_here(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run one of sprintflow's flows in this process against a Prefect server; returns what it judged.

    The server is the configured one, else a reusable background server
    (:func:`sprintflow.orchestration.server.ensure_prefect_api`); the run's URL is printed on
    stderr. Call it after every check of the command's input: a bad input
    should cost no server.
    """
    from sprintflow.orchestration.server import ensure_prefect_api

    ensure_prefect_api(announce=lambda line: click.echo(line, err=True))
    module, attribute = FLOWS[name].split(":")
    flow = getattr(importlib.import_module(module), attribute)
    from sprintflow.orchestration.runs import flow_run_url, flow_state, outcome_label, state_value

    global _flow_ran
    _flow_ran = True
    state = flow_state(flow, *args, **kwargs)
    url = flow_run_url(state.state_details.flow_run_id)
    if url:
        click.echo(f"sprintflow: flow run {url} ({outcome_label(state)})", err=True)
    return state_value(state)


def _end(code: int) -> NoReturn:
    """End the process with ``code``; after a flow ran, without the interpreter's teardown.

    Tearing down Prefect's event-loop threads and a heap of models takes about 0.5 s
    at exit, a quarter of a cached ``sprintflow evaluate``, and keeps nothing: every
    file sprintflow writes is already atomic and fsynced. Prefect's logs and events
    are sent and the exit handlers run first. Out of memory, it ends at once, without the exit
    handlers either.
    """
    if _ran_out_of_memory:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    if _flow_ran:
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        APILogWorker.drain_all(timeout=10)
        EventsWorker.drain_all(timeout=10)
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def exit_with_verdict(passed: bool) -> NoReturn:
    """End the command with the verdict: 0 when the code under test passed, else 1."""
    raise SystemExit(EXIT_OK if passed else EXIT_FAILED)


def print_error(error: SprintflowError | str) -> None:
    """Print an error on stderr, one line per problem: ``error: …``.

    Under GitHub Actions (``GITHUB_ACTIONS=true``) the lines are ``::error::…``
    workflow commands instead, so each problem is annotated in the run.
    """
    prefix = "::error::" if os.environ.get("GITHUB_ACTIONS") == "true" else "error: "
    for line in str(error).splitlines() or ["error"]:
        click.echo(f"{prefix}{line}", err=True)


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n, target in COMMANDS.items()
                if importlib.util.find_spec(target.split(":")[0]) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.list_commands(ctx):
            return None
        module, attribute = COMMANDS[name].split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SprintflowError as exc:
            print_error(exc)
            ctx.exit(exc.exit_code)
        except Exception as exc:  # running out of memory is the machine's limit, not a bug: no traceback
            if (out := OutOfMemory.of(exc)) is None:
                raise
            global _ran_out_of_memory
            _ran_out_of_memory = True
            print_error(out)
            ctx.exit(out.exit_code)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sprintflow")
def cli() -> None:
    """Planner -> generator -> evaluator sprints for AI coding agents, as Prefect flows.

    \b
    Exit codes of every command:
      0  pass
      1  the code under test failed
      2  usage, config or input error (the message names the file, line or JSON path)
      3  no verdict: the environment failed (no Docker engine, an engine that cannot run,
         out of memory) or a test run crashed before it could judge anything
    """


def main() -> None:
    """The console script: usage errors print in the same style as every other error, and exit 2."""
    try:
        code = cli.main(standalone_mode=False)
    except click.UsageError as exc:
        print_error(exc.format_message())
        command = exc.ctx.command_path if exc.ctx else "sprintflow"
        click.echo(f"Try '{command} --help' for help.", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        print_error(exc.format_message())
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(130)
    except SystemExit as exc:  # a command's verdict (exit_with_verdict)
        if exc.code is not None and not isinstance(exc.code, int):
            click.echo(exc.code, err=True)
        _end(exc.code if isinstance(exc.code, int) else EXIT_FAILED if exc.code is not None else EXIT_OK)
    _end(code if isinstance(code, int) else EXIT_OK)
