"""Every command reports errors one way, with the exit code of the error's kind."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sprintflow.errors import (
    ConfigError,
    DocumentError,
    EngineError,
    ExecutorUnavailable,
    InputError,
    ReportError,
    TestRunCrashed,
    TransitionError,
)


def sprintflow(*args: str, cwd=None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sprintflow", *args], capture_output=True, text=True,
                          cwd=cwd, env={**os.environ, **env}, timeout=120)


def test_exit_codes_follow_the_kind_of_error():
    assert {cls.exit_code for cls in (InputError, ConfigError, DocumentError, TransitionError, EngineError)} == {2}
    assert {cls.exit_code for cls in (ExecutorUnavailable, ReportError, TestRunCrashed)} == {3}
    assert not issubclass(ReportError, InputError) and not issubclass(TestRunCrashed, InputError)


def test_usage_and_input_errors_print_one_error_line_each_and_exit_2(tmp_path):
    usage = sprintflow("evaluate", str(tmp_path))
    assert usage.returncode == 2 and usage.stderr.startswith("error: Missing option '--contract'"), usage.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    invalid = sprintflow("validate", str(bad), str(tmp_path / "missing.json"))
    assert invalid.returncode == 2
    assert invalid.stderr.splitlines() == [f"error: {bad}: invalid JSON at line 1 column 2: Expecting "
                                           "property name enclosed in double quotes",
                                           f"error: {tmp_path / 'missing.json'}: file not found"]
    assert "Traceback" not in invalid.stderr


def test_under_github_actions_errors_are_annotations(tmp_path):
    run = sprintflow("validate", str(tmp_path / "missing.json"), GITHUB_ACTIONS="true")
    assert run.returncode == 2 and run.stderr == f"::error::{tmp_path / 'missing.json'}: file not found\n"


def test_an_unreachable_docker_engine_is_no_verdict_exit_3_before_any_server_starts(workspace_factory):
    workspace = workspace_factory("python-api")
    contract = next((workspace / ".sprintflow" / "contracts").glob("*.json"))
    run = sprintflow("evaluate", str(workspace), "--contract", str(contract), "--executor", "docker",
                     DOCKER_HOST="unix:///nonexistent/docker.sock", PREFECT_API_URL="")
    assert run.returncode == 3, run.stderr
    assert "error: --executor docker: no Docker engine answers" in run.stderr
    assert "temporary" not in run.stderr and "Traceback" not in run.stderr
    assert not (workspace / ".sprintflow" / "evals").exists()


def test_a_configured_server_that_does_not_answer_is_exit_3_in_one_line(workspace_factory):
    workspace = workspace_factory("python-api")
    contract = next((workspace / ".sprintflow" / "contracts").glob("*.json"))
    run = sprintflow("evaluate", str(workspace), "--contract", str(contract), "--executor", "local",
                     PREFECT_API_URL="http://127.0.0.1:9/api")
    assert run.returncode == 3, run.stderr
    assert run.stderr.splitlines() == ["error: the Prefect server at http://127.0.0.1:9/api (PREFECT_API_URL) does "
                                       "not answer: start it, or unset PREFECT_API_URL to let sprintflow start its own"]
    assert not (workspace / ".sprintflow" / "evals").exists()


def test_commands_whose_containment_cannot_be_built_are_no_verdict_exit_3_never_uncontained(workspace_factory,
                                                                                             prefect_api_url):
    """A machine where the view cannot be built (here a Docker socket path that is a folder, which /dev/null
    cannot cover) must neither blame the code nor run its commands uncontained: a probe that once took such
    a failure for "no namespaces here" ran every command on the bare host."""
    workspace = workspace_factory("python-api")
    contract = next((workspace / ".sprintflow" / "contracts").glob("*.json"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as socket:  # outside /tmp, which the view replaces
        (Path(socket) / "ran").mkdir()
        run = sprintflow("evaluate", str(workspace), "--contract", str(contract), "--executor", "local",
                         "--no-cache", DOCKER_HOST=f"unix://{socket}/ran", PREFECT_API_URL=prefect_api_url)
    assert run.returncode == 3, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]  # Prefect may log after it
    assert len(errors) == 1 and errors[0].startswith("error: `"), run.stderr
    assert f"never ran: its containment could not be built: mount  /dev/null on {socket}/ran: Not a directory" \
        in errors[0], errors
    assert "Failed: NoVerdict" in run.stderr
    assert not (workspace / ".sprintflow" / "evals").exists()


def test_a_crashed_test_run_is_no_verdict_exit_3(tmp_path):
    report = tmp_path / "vitest.json"
    report.write_text(json.dumps({"testResults": []}))
    run = sprintflow("testrun", "parse", str(report), "--format", "vitest")
    assert run.returncode == 3 and json.loads(run.stdout)["next_action"] == "retry_tester"
    assert run.stderr.startswith(f"error: {report}: the vitest report lists no test")


def test_every_command_says_its_exit_codes_in_its_help():
    # Walks the real command tree, so a command added without its exit codes fails here.
    import click

    from sprintflow.cli import cli

    def leaves(command: click.Command, path: tuple[str, ...]):
        if isinstance(command, click.Group):
            context = click.Context(command)
            for name in command.list_commands(context):
                yield from leaves(command.get_command(context, name), (*path, name))
        if not isinstance(command, click.Group) or command.invoke_without_command:
            yield path, command

    missing = [" ".join(path) for path, command in leaves(cli, ()) if path
               and "exit codes" not in (command.help or "").lower()]
    assert missing == []
