"""The README's first command, as a new user runs it: the main job on the bundled example."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_demo_command_runs_the_sprint_and_shows_its_feedback(docker_ready):
    readme = (ROOT / "README.md").read_text()
    assert "bash scripts/demo.sh" in readme  # the command this test runs is the one the README gives
    done = subprocess.run(["bash", "scripts/demo.sh"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Feedback the generator got after iteration 1 of contract 1:" in done.stdout
    assert "FAILED" in done.stdout and "sprintflow run exited 0" in done.stdout
    # Failed strategies are logged as Prefect's failed task runs; nothing else may be an error.
    assert "Traceback" not in done.stderr and "failed to process item" not in done.stderr, done.stderr[-3000:]
