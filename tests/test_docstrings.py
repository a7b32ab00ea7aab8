"""Every docstring example runs: each module's ``Example:`` blocks are doctests, run from the repository root."""

from __future__ import annotations

import doctest
import importlib
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The source folders and the package names they map onto (pyproject's package-dir).
FOLDERS = {"sprintflow": "sprintflow", "flows": "sprintflow.flows", "tasks": "sprintflow.tasks",
           "schemas": "sprintflow.schemas", "deployments": "sprintflow.deployments"}
SKIP = {"sprintflow.__main__"}  # running it is running the CLI


def _modules() -> list[str]:
    names = []
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            name = ".".join([package, *parts])
            if name not in SKIP:
                names.append(name)
    return names


def _tree_state() -> str:
    """What git sees of the checkout: examples may read it, never change it."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True)
    return status.stdout if status.returncode == 0 else ""


@pytest.mark.parametrize("name", _modules())
def test_examples_run(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    before = _tree_state()
    for test in finder.find(module, name, globs=vars(module).copy()):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples fail in {name}"
    assert _tree_state() == before, f"the examples of {name} changed the checkout"
