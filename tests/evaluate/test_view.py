"""The evaluation view: each strategy in its own layer over the judged tree; what it wrote is its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sprintflow.evaluate.view import EvaluationView, open_view, overlay_unavailable
from sprintflow.io.hashing import file_hashes
from sprintflow.judge.tree import owned_scratch


def _tree(root: Path) -> dict[str, str]:
    return file_hashes(root, frozenset())  # everything, caches and outputs included


@pytest.mark.parametrize("overlays", [True, False], ids=["overlays", "copies"])
def test_layers_see_the_tree_and_keep_what_they_write(tmp_path, overlays):
    """Overlay layers (as root), or copies of the tree where overlays cannot be mounted: the same answers."""
    assert overlay_unavailable() is None, overlay_unavailable()
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("x = 1\n")
    (tmp_path / "README").write_text("r")
    before = _tree(tmp_path)
    view = open_view(tmp_path) if overlays else EvaluationView(tmp_path, owned_scratch("view-"), overlays=False)
    try:
        with view.layer("0-build") as root:
            (root / "dist").mkdir()
            (root / "dist/app.js").write_text("built")
        with view.layer("1-lint") as root:
            (root / "src/app.py").write_text("x = 2\n")  # an autofix
            (root / "README").unlink()
            (root / ".ruff_cache").mkdir()
            (root / ".ruff_cache/x").write_text("cache")
            (root / "src/other.py").write_text("x = 1\n")
        with view.layer("2-api", below=["0-build"]) as root:
            assert (root / "dist/app.js").read_text() == "built"  # the build's output, stacked
            assert (root / "src/app.py").read_text() == "x = 1\n"  # not the lint layer's write
        assert view.changed_sources("0-build", expected=["dist"]) == []
        assert view.changed_sources("1-lint") == ["README", "src/app.py", "src/other.py"]
        assert view.changed_sources("2-api") == []
    finally:
        view.close()
    assert _tree(tmp_path) == before
    assert not view.root.exists()


@pytest.mark.parametrize("overlays", [True, False], ids=["overlays", "copies"])
def test_a_layer_mounted_again_starts_from_nothing(tmp_path, overlays):
    # A check run again whole after its failing tests ran alone mounts its layer a second time.
    (tmp_path / "app.py").write_text("x = 1\n")
    view = open_view(tmp_path) if overlays else EvaluationView(tmp_path, owned_scratch("view-"), overlays=False)
    try:
        with view.layer("2-unit-test") as root:
            (root / "app.py").write_text("x = 2\n")
            (root / "written").write_text("first run")
        assert view.changed_sources("2-unit-test") == ["app.py", "written"]
        with view.layer("2-unit-test") as root:
            assert (root / "app.py").read_text() == "x = 1\n" and not (root / "written").exists()
        assert view.changed_sources("2-unit-test") == []
    finally:
        view.close()


def test_a_strategy_that_modifies_sources_fails_naming_them_and_the_workspace_is_unchanged(prefect_harness, tmp_path):
    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.orchestration.runs import run_flow

    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src/app.py").write_text("import os\n\n\ndef f():\n    return 1\n")
    (workspace / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "0"\n\n[tool.ruff]\nfix = true\n')
    (workspace / "sprintflow.toml").write_text(
        '[[evaluator.strategies]]\ntype = "build"\ncommand = "python3 -m compileall -q src"\n\n'
        '[[evaluator.strategies]]\ntype = "lint"\ncommand = "sed -i s/os/sys/ src/app.py; '
        'python3 -m ruff check --no-cache src"\n')
    contract = workspace / "contract.json"
    contract.write_text(json.dumps({
        "contractId": "sprint-s-1", "specId": "s", "sprintNumber": 1, "title": "t", "description": "d",
        "status": "proposed", "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        "generatorNotes": "", "evaluatorNotes": "", "estimatedDuration": "small",
        "successCriteria": [{"criterionId": "sc-1-1", "description": "It compiles.", "verificationMethod": "build",
                             "required": True},
                            {"criterionId": "sc-1-2", "description": "Lint is clean.", "verificationMethod": "lint",
                             "required": True}]}))
    before = {rel: digest for rel, digest in _tree(workspace).items() if not rel.startswith(".sprintflow")}
    result = run_flow(evaluate_flow, str(workspace), str(contract), executor="local", use_cache=False)
    lint = next(s for s in result.strategy_results if s.strategy == "lint")
    # ruff is told not to fix (its F401 is a finding); the writer before it still modifies the source.
    assert lint.result.value == "fail" and "modified sources while checking them: src/app.py" in lint.details
    assert [(d.file, d.line, d.code) for d in lint.diagnostics] == [("src/app.py", 1, "F401")]
    after = {rel: digest for rel, digest in _tree(workspace).items() if not rel.startswith(".sprintflow")}
    assert after == before  # no __pycache__ from the build either: every write stayed in its layer


def test_the_layers_a_killed_evaluation_left_mounted_are_reclaimed_by_the_next(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from sprintflow.judge.tree import reclaim_scratch

    (tmp_path / "app.py").write_text("x = 1\n")
    # An evaluation that holds a mounted layer when it is SIGKILLed: nothing of ours runs after that.
    owner = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from pathlib import Path; from sprintflow.evaluate.view import open_view; "
        f"view = open_view(Path({str(tmp_path)!r})); cm = view.layer('build'); merged = cm.__enter__(); "
        "print(view.root, flush=True); time.sleep(300)")], stdout=subprocess.PIPE, text=True)
    root = Path(owner.stdout.readline().strip())
    assert os.path.ismount(root / "build" / "merged")
    alive = reclaim_scratch(root.parent.parent)
    assert root not in alive and root.is_dir()  # a live evaluation's view is never touched
    owner.send_signal(signal.SIGKILL)
    owner.wait()

    assert root in reclaim_scratch(root.parent.parent)
    assert not root.exists() and not os.path.ismount(root / "build" / "merged")


def test_a_probe_mount_left_by_a_process_killed_while_probing_is_reclaimed(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    from sprintflow.judge.tree import reclaim_scratch

    # The probe holds its mount when the process is SIGKILLed (its unmount never comes).
    owner = subprocess.Popen([sys.executable, "-c", (
        "import time; import sprintflow.evaluate.view as view; "
        "view._unmount = lambda merged: (print(merged, flush=True), time.sleep(300)); view.overlay_unavailable()")],
        stdout=subprocess.PIPE, text=True)
    merged = Path(owner.stdout.readline().strip())
    probe = merged.parent
    assert os.path.ismount(merged) and probe not in reclaim_scratch(probe.parent.parent)  # its owner still lives
    owner.send_signal(signal.SIGKILL)
    owner.wait()

    assert probe in reclaim_scratch(probe.parent.parent)
    assert not probe.exists() and not os.path.ismount(merged)
