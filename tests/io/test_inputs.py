"""One rule for the paths people give, in the CLI and in deployment runs (sprintflow.io.inputs)."""

from __future__ import annotations

import pytest

from sprintflow.errors import InputError, WorkspaceError
from sprintflow.io.inputs import resolve_input, resolve_output


@pytest.fixture
def here(tmp_path, monkeypatch):
    """The current folder, with a workspace ``app`` inside it."""
    (tmp_path / "app" / ".sprintflow" / "contracts").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_relative_contract_is_found_in_the_workspace_or_else_in_the_current_folder(here):
    (here / "app" / ".sprintflow" / "contracts" / "c.json").write_text("{}")
    (here / "elsewhere.json").write_text("{}")
    inside = resolve_input(here / "app", ".sprintflow/contracts/c.json", "contract")
    assert inside == here / "app" / ".sprintflow" / "contracts" / "c.json"
    # The shell's way works too: relative to where the command runs.
    assert resolve_input(here / "app", "app/.sprintflow/contracts/c.json", "contract").resolve() == inside
    assert resolve_input(here / "app", "elsewhere.json", "contract") == here / "elsewhere.json"
    assert resolve_input(here / "app", here / "elsewhere.json", "contract") == here / "elsewhere.json"


def test_the_same_file_from_both_places_is_fine_two_different_ones_are_refused(here, monkeypatch):
    (here / "app" / "c.json").write_text("{}")
    monkeypatch.chdir(here / "app")  # the workspace is the current folder: one file, two names
    assert resolve_input(here / "app", "c.json", "contract") == here / "app" / "c.json"
    monkeypatch.chdir(here)
    (here / "c.json").write_text("{}")
    with pytest.raises(InputError, match=r"contract c.json is ambiguous: both .*app/c.json \(in the workspace\) "
                                         r"and .*/c.json \(in the current folder\) exist"):
        resolve_input(here / "app", "c.json", "contract")


def test_missing_paths_name_both_places_and_a_missing_workspace_is_said_first(here):
    with pytest.raises(InputError, match=r"contracts folder todo not found: neither .*app/todo \(in the "
                                         r"workspace\) nor .*/todo \(in the current folder\) exists"):
        resolve_input(here / "app", "todo", "contracts folder")
    with pytest.raises(WorkspaceError, match="workspace .*nowhere does not exist"):
        resolve_input(here / "nowhere", "c.json", "contract")


def test_an_output_folder_is_relative_to_the_current_folder(here):
    assert resolve_output("out/report") == here / "out" / "report"
    assert resolve_output(None) is None
