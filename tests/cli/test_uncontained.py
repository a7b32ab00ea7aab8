"""A host where commands cannot be contained runs them, and says so wherever operators look."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from sprintflow.evaluate.formats import eval_markdown
from sprintflow.schemas import EvalResult


def _path_without_util_linux(folder: Path) -> str:
    """A PATH with every program of the machine's but util-linux's unshare and setpriv: a real host
    where containment is unavailable."""
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            if entry.name not in ("unshare", "setpriv") and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry.path)
    return str(folder)


def test_an_evaluation_without_containment_says_so_in_its_log_and_its_result(workspace_factory, tmp_path,
                                                                               prefect_api_url):
    workspace = workspace_factory("python-api")
    contract = next((workspace / ".sprintflow" / "contracts").glob("*.json"))
    path = _path_without_util_linux(tmp_path / "bin")
    assert shutil.which("unshare", path=path) is None and shutil.which("python3", path=path)
    run = subprocess.run([sys.executable, "-m", "sprintflow", "evaluate", str(workspace), "--contract", str(contract),
                          "--executor", "local", "--json"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PATH": path, "PREFECT_API_URL": prefect_api_url})
    assert run.returncode == 0, run.stderr  # the code is fine: where it ran is said, not judged
    why = "util-linux's unshare and setpriv are not installed"
    assert f"WARNING: commands run UNCONTAINED on this host ({why})" in run.stderr
    result = json.loads(run.stdout)
    assert result["executor"]["uncontained"] == why
    stored = next((workspace / ".sprintflow" / "evals").glob("*.json"))
    assert json.loads(stored.read_text())["executor"]["uncontained"] == why
    page = eval_markdown(EvalResult.model_validate_json(stored.read_text()))  # the flow run's artifact
    assert f"**Ran uncontained** ({why})" in page
