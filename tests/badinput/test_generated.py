"""Generated malformed documents (:mod:`.generated`) through the real command line, in this process.

One test function per family, each drawing a few hundred cases (1,000+ in all): every one must
end with exit 2, ``error:`` lines only, one of them naming the file and where, no traceback, and
the workspace as it was. Hypothesis shrinks a failure to the smallest document that shows it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sprintflow.cli import cli

from .corpus import CONTRACT_PATH, _json
from .generated import BASES, Mutant, config_mutants, mutants, toml_document
from .test_corpus import _checksums

CASES_PER_FAMILY = 260
GENERATED = settings(max_examples=CASES_PER_FAMILY, deadline=None, database=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True)
def _no_server(monkeypatch):
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")  # no flow may start: nothing answers there


def _refused(files: dict[str, bytes], argv: list[str], named: str, where: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for relative, data in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(data)
        before = _checksums(root)
        cwd = os.getcwd()
        os.chdir(root)
        try:
            result = CliRunner().invoke(cli, argv, catch_exceptions=True)
        finally:
            os.chdir(cwd)
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            f"crashed: {result.exception!r}\n{result.output}"
        errors = result.stderr.splitlines()
        assert result.exit_code == 2, (result.exit_code, result.output)
        assert errors and all(line.startswith("error: ") for line in errors), result.stderr
        assert "Traceback" not in result.output and len(result.stderr) < 4000, result.stderr[:4000]
        located = [line for line in errors if named in line and where in line]
        assert located, f"no error names {named} and {where!r}: {result.stderr}"
        assert _checksums(root) == before, "a refused input changed files"


@GENERATED
@given(mutant=mutants("contract"), command=st.sampled_from(["validate", "evaluate", "status"]))
def test_generated_contracts_are_refused(mutant: Mutant, command: str):
    argv = {"validate": ["validate", "--kind", "contract", CONTRACT_PATH],
            "evaluate": ["evaluate", ".", "--contract", CONTRACT_PATH, "--executor", "local"],
            "status": ["status", "."]}[command]
    _refused({CONTRACT_PATH: mutant.data, "sprintflow.toml": b""}, argv, CONTRACT_PATH, mutant.where)


@GENERATED
@given(mutant=mutants("eval-result"), command=st.sampled_from(["validate", "report"]))
def test_generated_eval_results_are_refused(mutant: Mutant, command: str):
    path = ".sprintflow/evals/eval-sprint-spec-20260115-todo-api-1-1.json"
    argv = ["validate", "--kind", "eval-result", path] if command == "validate" else ["report", ".", "--no-flow"]
    _refused({path: mutant.data}, argv, path, mutant.where)


@GENERATED
@given(mutant=mutants("plan-spec"))
def test_generated_plan_specs_are_refused(mutant: Mutant):
    _refused({"plan.json": mutant.data}, ["validate", "--kind", "plan-spec", "plan.json"], "plan.json", mutant.where)


@GENERATED
@given(mutant=config_mutants(), command=st.sampled_from(["validate", "evaluate", "run"]))
def test_generated_configs_are_refused(mutant: Mutant, command: str):
    argv = {"validate": ["validate", "sprintflow.toml"],
            "evaluate": ["evaluate", ".", "--contract", CONTRACT_PATH, "--executor", "local"],
            "run": ["run", ".", "--executor", "local", "--engine", "true"]}[command]
    _refused({"sprintflow.toml": mutant.data, CONTRACT_PATH: _json(BASES["contract"])}, argv, "sprintflow.toml",
             mutant.where)


def test_the_generated_config_base_is_valid_as_written():
    """The TOML writer is faithful: the unbroken config, written by it, is valid (so a refusal is the mutation's)."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "sprintflow.toml").write_bytes(toml_document(BASES["config"]))
        result = CliRunner().invoke(cli, ["validate", str(Path(folder) / "sprintflow.toml")])
    assert result.exit_code == 0, result.output
