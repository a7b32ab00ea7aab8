"""The one-way package graph of ARCHITECTURE.md, enforced by import-linter's layers contract (pyproject)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.test_docstrings import FOLDERS, ROOT


def test_a_layer_imports_only_the_layers_below_it(tmp_path):
    # import-linter reads a package from one folder; the namespace spans several (pyproject's package-dir).
    for folder, package in FOLDERS.items():
        target = tmp_path.joinpath(*package.split("."))
        for source in (ROOT / folder).rglob("*.py"):
            destination = target / source.relative_to(ROOT / folder)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    check = ("import sys; from importlinter.cli import lint_imports; "
             "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")
    done = subprocess.run([sys.executable, "-c", check],
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "1 kept, 0 broken" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]
