"""Lay out the sprint demo's workspace: the python-api example in its broken state,
plus a second contract (which depends on the first) and its held-out eval.

Usage: python3 prepare.py DEST   (DEST must not exist)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "python-api"


def prepare(dest: Path) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(
        "dist", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "evals", "cache", "reports", "runs"))
    subprocess.run(["patch", "-s", "-p1", "-d", str(dest), "-i", str(EXAMPLE / "broken.patch")], check=True)
    shutil.copytree(HERE / "contracts", dest / ".sprintflow" / "contracts", dirs_exist_ok=True)
    shutil.copytree(HERE / "evals", dest / "evals")
    return dest


if __name__ == "__main__":
    if len(sys.argv) != 2 or Path(sys.argv[1]).exists():
        sys.exit("usage: python3 prepare.py DEST (a path that does not exist yet)")
    print(prepare(Path(sys.argv[1])))
