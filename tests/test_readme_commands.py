"""The README's commands as a new user runs them: the demo on the bundled example, and every `sprintflow`
command of its tables and code blocks (it exists, with the options the README names; the offline ones run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sprintflow.cli import cli
from sprintflow.orchestration.server import stop_background_server

ROOT = Path(__file__).resolve().parent.parent


def test_the_demo_command_runs_the_sprint_and_shows_its_feedback(docker_ready, tmp_path):
    readme = (ROOT / "README.md").read_text()
    assert "bash scripts/demo.sh" in readme  # the command this test runs is the one the README gives
    # The demo installs sprintflow into the `python3` it finds: the interpreter running these tests, so the
    # suite never repoints another Python's install at this checkout.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    # The demo leaves its background Prefect server running for its user's look at the UI: in a home of
    # its own here, stopped afterwards, so the suite leaves no server behind.
    home = tmp_path / "prefect-home"
    try:
        done = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, capture_output=True, text=True, timeout=1200,
                              env={**os.environ, "PATH": path, "PREFECT_HOME": str(home)})
    finally:
        stop_background_server(home)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Feedback the generator got after iteration 1 of contract 1:" in done.stdout
    assert "FAILED" in done.stdout and "sprintflow run exited 0" in done.stdout
    # Failed strategies are logged as Prefect's failed task runs; nothing else may be an error.
    assert "Traceback" not in done.stderr and "failed to process item" not in done.stderr, done.stderr[-3000:]


# Every `sprintflow …` the README shows, in its tables' first column and its code blocks.
_TABLE_COMMAND = re.compile(r"^\| `(sprintflow [^`]+)`", re.MULTILINE)
_BLOCK = re.compile(r"^```(?:bash|sh)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    commands = _TABLE_COMMAND.findall(readme)
    for block in _BLOCK.findall(readme):
        commands += [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("sprintflow ")]
    return commands


def _subcommand(command: str) -> list[str]:
    """``sprintflow bugs list|show|transition`` -> [["bugs", "list"], …]: the words before any argument."""
    words = []
    for word in command.split()[1:]:
        if not re.fullmatch(r"[a-z][a-z|-]*", word):
            break
        words.append(word)
    return words


def _variants(words: list[str]) -> list[list[str]]:
    if not words:
        return [[]]
    return [[head, *rest] for head in words[0].split("|") for rest in _variants(words[1:])]


# The README's examples that run offline on the bundled example, with its placeholders filled in.
OFFLINE = {
    "sprintflow validate FILE...": ["validate", "examples/python-api/sprintflow.toml",
                                    "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"],
    "sprintflow status [WORKSPACE]": ["status", "examples/python-api", "--json"],
    "sprintflow init --dry-run": ["init", "examples/python-api", "--dry-run"],
    "sprintflow testrun parse REPORT --format vitest\\|jest\\|junit": [
        "testrun", "parse", "tests/fixtures/reports/junit/pytest-9.0.3-pass.xml", "--format", "junit"],
    "sprintflow bugs list\\|show\\|transition": ["bugs", "list", "--workspace", "examples/python-api"],
    "sprintflow report [WORKSPACE] --out DIR": ["report", "examples/python-api", "--out", "{tmp}", "--no-flow"],
}


def test_every_readme_command_exists_with_the_options_it_names(monkeypatch):
    commands = readme_commands()
    assert len(commands) >= 15, commands
    monkeypatch.chdir(ROOT)
    for command in commands:
        options = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", command))
        for words in _variants(_subcommand(command)):
            shown = CliRunner().invoke(cli, [*words, "--help"])
            assert shown.exit_code == 0, (command, shown.output)
            missing = [option for option in options if option.split("/")[0] not in shown.output]
            assert not missing, f"{command!r}: `sprintflow {' '.join(words)} --help` has no {missing}"


def test_the_readme_commands_that_run_offline_exit_as_documented(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert set(OFFLINE) <= set(readme_commands())
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "examples/python-api").rglob("*") if p.is_file()}
    for command, argv in OFFLINE.items():
        done = CliRunner().invoke(cli, [arg.replace("{tmp}", str(tmp_path)) for arg in argv])
        assert done.exit_code == 0, (command, done.output)
    assert (tmp_path / "report.html").is_file()
    after = {p: p.stat().st_mtime_ns for p in (ROOT / "examples/python-api").rglob("*") if p.is_file()}
    assert after == before, "the README's read-only commands changed the bundled example"


def test_the_commands_that_return_more_than_pass_and_fail_list_their_exit_codes():
    for words in (["run"], ["status"], ["evaluate"], ["validate"], ["testrun", "parse"], ["report"], ["score"]):
        shown = CliRunner().invoke(cli, [*words, "--help"])
        assert "Exit codes" in shown.output, words
