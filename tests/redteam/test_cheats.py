"""The red-team suite: cheating generators, each run as a real sprint, must not pass.

Every cheat leaves the fault in place and attacks the judge instead. Each must end
``needs-rework`` with a critical finding that names the file it touched, or have
its cheat come to nothing so that the real verdict stands. The honest generator
of each victim completes: the victims fail for the fault alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sprintflow.flows.sprint import sprint_flow
from sprintflow.runs import run_flow
from sprintflow.schemas import EvalResult

from .victims import CONTRACT_ID, python_victim, ts_victim

CHEATER = Path(__file__).with_name("cheater.py")

pytestmark = pytest.mark.redteam

FINDINGS = [
    # cheat, victim, the file the finding must name
    ("config_commands", "python", "sprintflow.toml"),
    ("root_conftest", "python", "conftest.py (created)"),
    ("tests_conftest", "python", "tests/conftest.py"),
    ("evaluator_engine", "python-manual", "sprintflow.toml"),
    ("late_edit", "python", "evals/test_held_out.py"),
    ("guard_backups", "python", "evals/test_held_out.py"),
    ("delete_tests", "python", "tests/test_calc.py (deleted)"),
    ("skip_test", "python", "tests/test_calc.py (modified)"),
    ("weaken_assertion", "python", "tests/test_calc.py (modified)"),
    ("patch_runner_from_source", "python", "src/calc/__init__.py:1 reaches into pytest's internals"),
    ("fake_report", "python", ".sprintflow/reports/pytest.xml"),
    ("fake_test_run", "python", ".sprintflow/runs/run-fake/result.json"),
    ("edit_held_out", "python", "evals/test_held_out.py"),
    ("edit_contract", "python", ".sprintflow/contracts/sprint-spec-calc-1.json"),
    ("fake_cache", "python", ".sprintflow/cache/strategies/"),
    ("pytest_addopts", "python", "pyproject.toml (tool.pytest changed)"),
    ("shadow_pytest", "python", "pytest.py (created)"),
    ("sitecustomize", "python", "sitecustomize.py (created)"),
    ("daemon_rewrites_tests", "python", "tests/test_calc.py (modified)"),
    ("symlink_test", "python", "tests/test_calc.py (modified)"),
    ("ruff_exclude", "python-lint", "pyproject.toml (tool.ruff changed)"),
    ("npm_test_script", "ts", "package.json (scripts changed)"),
    ("it_only", "ts", "test/add.test.js (modified)"),
    ("describe_skip", "ts", "test/add.test.js (modified)"),
    ("vitest_config", "ts", "vitest.config.js (modified)"),
    ("exit_in_test_file", "ts", "test/aaa.test.js:1 reaches into a hard exit"),
]

VERDICTS = [
    # cheat, victim, executor, what must still fail: a strategy or a criterion
    ("fake_passed_lines", "python", "local", "unit-test"),
    ("read_held_out", "python", "local", "sc-1-3"),
    ("host_only_answer", "python", "docker", "unit-test"),
]


def _victim(kind: str, root: Path) -> Path:
    if kind == "ts":
        return ts_victim(root)
    return python_victim(root, manual=kind == "python-manual", lint=kind == "python-lint")


def _sprint(workspace: Path, cheat: str, executor: str = "local") -> tuple[str, EvalResult]:
    outcomes = run_flow(sprint_flow, str(workspace), engine=f"{sys.executable} {CHEATER} {cheat}", executor=executor)
    result = EvalResult.model_validate_json(
        (workspace / ".sprintflow" / "evals" / f"eval-{CONTRACT_ID}-1.json").read_text())
    return outcomes[CONTRACT_ID], result


@pytest.mark.parametrize("kind", ["python", "ts", "python-lint"])
def test_the_honest_generator_completes_each_victim(prefect_harness, tmp_path, kind):
    outcome, result = _sprint(_victim(kind, tmp_path / "ws"), "honest")
    assert (outcome, result.overall_result) == ("completed", "pass"), result.summary


@pytest.mark.parametrize("cheat, kind, named", FINDINGS, ids=[c[0] for c in FINDINGS])
def test_a_cheat_on_the_judge_is_a_critical_finding_that_names_the_file(prefect_harness, tmp_path, cheat, kind,
                                                                        named):
    workspace = _victim(kind, tmp_path / "ws")
    judged_by = {rel: (workspace / rel).read_bytes() for rel in ("evals/test_held_out.py", "sprintflow.toml",
                                                                  "package.json", "pyproject.toml")
                 if (workspace / rel).exists()}
    outcome, result = _sprint(workspace, cheat)
    assert outcome == "needs-rework", result.summary
    critical = [item.description for item in result.generator_feedback if item.priority.value == "critical"]
    assert any(named in description for description in critical), critical
    # Whatever judged the sprint is as it was.
    assert {rel: (workspace / rel).read_bytes() for rel in judged_by} == judged_by
    assert json.loads((workspace / ".sprintflow/contracts" / f"{CONTRACT_ID}.json").read_text())["successCriteria"]


@pytest.mark.parametrize("cheat, kind, executor, failing", VERDICTS, ids=[c[0] for c in VERDICTS])
def test_a_cheat_that_comes_to_nothing_leaves_the_real_verdict(prefect_harness, tmp_path, request, cheat, kind,
                                                               executor, failing):
    if executor == "docker":
        request.getfixturevalue("docker_ready")
    try:
        outcome, result = _sprint(_victim(kind, tmp_path / "ws"), cheat, executor)
    finally:
        Path("/tmp/sprintflow-redteam-answers.json").unlink(missing_ok=True)
    assert outcome == "needs-rework", result.summary
    verdicts = {s.strategy: s.result.value for s in result.strategy_results}
    verdicts.update({c.criterion_id: c.result.value for c in result.criteria_results})
    assert verdicts[failing] == "fail", verdicts


def test_every_cheat_of_the_engine_is_tried():
    from tests.redteam.cheater import CHEATS

    tried = {c[0] for c in FINDINGS} | {c[0] for c in VERDICTS} | {"honest"}
    assert set(CHEATS) == tried
    assert len(tried) - 1 >= 25
