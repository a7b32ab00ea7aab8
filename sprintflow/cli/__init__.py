"""The ``sprintflow`` command line: one module per command under ``sprintflow.cli``.

Commands are imported lazily so ``sprintflow --help`` and quick commands do not
pay for importing Prefect. Any ``SprintflowError`` becomes a one-line message
on stderr and exit code 2; exit 1 always means "the code under test failed".
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from sprintflow.errors import SprintflowError

__all__ = ["main", "EXIT_OK", "EXIT_FAILED", "EXIT_ERROR"]

EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2

# command name -> "module:attribute"; a module that is not there is not listed.
COMMANDS = {
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
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n, target in COMMANDS.items()
                if importlib.util.find_spec(target.split(":")[0]) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.list_commands(ctx):
            return None
        module, attribute = COMMANDS[name].split(":")
        return getattr(importlib.import_module(module), attribute)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SprintflowError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_ERROR)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sprintflow")
def cli() -> None:
    """Planner -> generator -> evaluator sprints for AI coding agents, as Prefect flows.

    Exit codes: 0 pass, 1 the code under test failed, 2 usage, config or input error.
    """


def main() -> None:
    # click's own usage errors exit 2 as well, which matches our convention.
    sys.exit(cli.main(standalone_mode=True))
