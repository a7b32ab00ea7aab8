"""Every malformed input: exit 2, error lines naming the file and where, no traceback, nothing changed.

The whole corpus runs in this one process through the real command line (click's runner drives
``sprintflow`` as a user's shell would, minus the interpreter start-up): the behaviour under test,
reading and refusing input, is the same, and 200-odd interpreter starts would cost minutes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from sprintflow.cli import cli

from .corpus import all_cases


def _checksums(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


CASES = all_cases()


def test_the_corpus_covers_every_reader_with_at_least_150_cases():
    assert len(CASES) >= 150
    commands = {case.argv[0] for case in CASES}
    assert commands == {"validate", "evaluate", "run", "score", "status", "report"}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_is_refused_with_a_located_one_line_error(case, tmp_path, monkeypatch):
    for relative, data in case.files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(data)
    before = _checksums(tmp_path)
    evals_before = (tmp_path / ".sprintflow" / "evals").exists()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no flow may start: nothing answers there

    result = CliRunner().invoke(cli, case.argv, catch_exceptions=True)

    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"crashed: {result.exception!r}\n{result.output}"
    errors = result.stderr.splitlines()
    assert result.exit_code == 2, result.output
    assert errors and all(line.startswith("error: ") for line in errors), result.stderr
    assert "Traceback" not in result.output and len(result.stderr) < 4000, result.stderr[:4000]
    named = [line for line in errors if case.named_file in line]
    assert named, f"no error names {case.named_file}: {result.stderr}"
    assert any(case.where in line for line in named), f"no error names {case.where!r}: {result.stderr}"
    assert _checksums(tmp_path) == before, "a refused input changed files"
    assert (tmp_path / ".sprintflow" / "evals").exists() == evals_before, "a refused input was evaluated"
