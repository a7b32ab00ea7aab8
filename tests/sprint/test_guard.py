"""The guard: judge inputs restored from copies kept in memory; harness files and tests; what code reaches."""

from __future__ import annotations

import json
from pathlib import Path

from sprintflow.schemas import ProjectConfig, SprintContract
from sprintflow.sprint.guard import Guard


def _contract(files: list[str]) -> SprintContract:
    return SprintContract.model_validate({
        "contractId": "sprint-s-1", "specId": "s", "sprintNumber": 1, "title": "t", "description": "d",
        "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        "successCriteria": [{"criterionId": "sc-1-1", "description": "builds",
                             "verificationMethod": "build", "required": True}],
        "generatorNotes": "", "evaluatorNotes": "", "estimatedFiles": files,
        "estimatedDuration": "small"})


def _workspace(root: Path) -> Path:
    for rel, text in {"src/app.py": "def f():\n    return 1\n", "tests/test_app.py": "def test_f():\n    pass\n",
                      "package.json": json.dumps({"scripts": {"test": "vitest run"}, "dependencies": {}}),
                      "evals/held.py": "SECRET = 1\n", ".sprintflow/contracts/c.json": "{}"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_harness_and_test_changes_are_undone_and_described(tmp_path):
    workspace = _workspace(tmp_path)
    guard = Guard(workspace, ProjectConfig(), _contract(["src/app.py"]))
    (workspace / "conftest.py").write_text("import pytest\n")
    (workspace / "package.json").write_text(json.dumps({"scripts": {"test": "exit 0"}, "dependencies": {"a": "1"}}))
    (workspace / "tests/test_app.py").unlink()
    (workspace / "tests/test_new.py").write_text("def test_more():\n    pass\n")  # new tests are welcome
    (workspace / "src/app.py").write_text("import _pytest\n\n\ndef f():\n    return 2\n")
    report = guard.check_and_restore()
    assert report.harness == ["conftest.py (created)", "package.json (scripts changed)"]
    assert report.tests == ["tests/test_app.py (deleted)"]
    assert report.reaches == ["src/app.py:1 reaches into pytest's internals"]
    assert not (workspace / "conftest.py").exists()
    assert json.loads((workspace / "package.json").read_text())["scripts"]["test"] == "vitest run"
    assert (workspace / "tests/test_app.py").exists() and (workspace / "tests/test_new.py").exists()


def test_a_harness_file_the_contract_names_is_kept_with_its_diff(tmp_path):
    workspace = _workspace(tmp_path)
    guard = Guard(workspace, ProjectConfig(), _contract(["package.json"]))
    (workspace / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run --coverage"}}))
    report = guard.check_and_restore()
    assert report.harness == [] and "--coverage" in report.reviewed["package.json"]
    assert "--coverage" in (workspace / "package.json").read_text()


def test_hidden_paths_are_the_state_the_held_out_evals_and_the_tester_tests(tmp_path):
    workspace = _workspace(tmp_path)
    (workspace / "tests/sprintflow").mkdir()
    guard = Guard(workspace, ProjectConfig(), _contract([]), also=("tests/sprintflow",))
    assert sorted(Path(p).relative_to(workspace.resolve()).as_posix() for p in guard.hidden()) == \
        [".sprintflow", "evals", "tests/sprintflow"]


def test_the_reference_copies_are_not_on_disk(tmp_path):
    import tempfile

    workspace = _workspace(tmp_path)
    before = set(Path(tempfile.gettempdir()).iterdir())
    guard = Guard(workspace, ProjectConfig(), _contract([]))
    created = set(Path(tempfile.gettempdir()).iterdir()) - before
    (workspace / "evals/held.py").write_text("SECRET = 2\n")
    assert guard.check_and_restore().tampered == ["evals/held.py"]
    assert (workspace / "evals/held.py").read_text() == "SECRET = 1\n"
    assert not [p for p in created if "sprintflow" in p.name]
