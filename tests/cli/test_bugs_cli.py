import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from sprintflow.cli import cli
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.testruns.bugs import open_bug


def bugs(*args):
    return CliRunner().invoke(cli, ["bugs", *args], catch_exceptions=False)


@pytest.fixture
def workspace(tmp_path):
    path = WorkspaceLayout(tmp_path).bugs_file
    open_bug(path, unit="todo-be", test_name="缺 body title → 400", run_id="run-1", got=500)
    open_bug(path, unit="todo-fe", test_name="shows the list", run_id="run-1")
    return tmp_path


def test_list_shows_every_bug_and_filters(workspace):
    result = bugs("list", "--workspace", str(workspace))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and "open    high      todo-be  缺 body title → 400" in lines[0]
    only = bugs("list", "--workspace", str(workspace), "--unit", "todo-fe", "--json")
    assert [b["test_name"] for b in json.loads(only.stdout)] == ["shows the list"]
    assert bugs("list", "--workspace", str(workspace), "--status", "fixed").stdout == "no bugs\n"


def test_transition_then_show_the_history(workspace):
    bug_id = json.loads(bugs("list", "--workspace", str(workspace), "--json").stdout)[0]["id"]
    moved = bugs("transition", bug_id, "--to", "fixing", "--by", "coder", "--workspace", str(workspace))
    assert moved.exit_code == 0 and moved.stdout == f"{bug_id}: open -> fixing\n"
    fixed = bugs("transition", bug_id, "--to", "fixed", "--fix-ref", "run-2", "--json",
                 "--workspace", str(workspace))
    assert json.loads(fixed.stdout)["fix_refs"] == ["run-2"]
    shown = json.loads(bugs("show", bug_id, "--json", "--workspace", str(workspace)).stdout)
    assert shown["status"] == "fixed"
    assert [(h["status"], h["by"]) for h in shown["history"]] == [
        ("open", "tester"), ("fixing", "coder"), ("fixed", "cli")]
    text = bugs("show", bug_id, "--workspace", str(workspace)).stdout
    assert f"id: {bug_id}" in text and "transition  fixing -> fixed  by cli" in text


def test_illegal_transition_and_unknown_bug_exit_2_without_a_traceback(workspace):
    bug_id = json.loads(bugs("list", "--workspace", str(workspace), "--json").stdout)[0]["id"]
    before = WorkspaceLayout(workspace).bugs_file.read_bytes()
    illegal = subprocess.run([sys.executable, "-m", "sprintflow", "bugs", "transition", bug_id,
                              "--to", "open", "--workspace", str(workspace)],
                             capture_output=True, text=True, check=False)
    assert illegal.returncode == 2
    assert illegal.stderr == (f"error: {bug_id}: cannot go from open to open "
                              f"(from open only to: fixed, fixing)\n")
    assert WorkspaceLayout(workspace).bugs_file.read_bytes() == before
    unknown = bugs("show", "bug-nope", "--workspace", str(workspace))
    assert unknown.exit_code == 2 and "no bug 'bug-nope'" in unknown.stderr


def test_a_torn_line_is_a_warning_not_an_error(workspace):
    with WorkspaceLayout(workspace).bugs_file.open("a") as handle:
        handle.write('{"id": "bug-')
    result = bugs("list", "--workspace", str(workspace))
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 2
    assert "warning:" in result.stderr and "torn line" in result.stderr


def test_an_empty_workspace_has_no_bugs(tmp_path):
    assert bugs("list", "--workspace", str(tmp_path), "--json").stdout == "[]\n"
