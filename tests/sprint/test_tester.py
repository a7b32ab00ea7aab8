"""The tester step for real: scripted tester engines as subprocesses, pytest runs via LocalExecutor."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sprintflow.errors import InputError
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.sandbox.executors import LocalExecutor
from sprintflow.schemas import ProjectConfig, SprintContract
from sprintflow.schemas.journal import EngineCall, TesterJournal
from sprintflow.schemas.testrun import TestFailureEntry, TestRun, TestSummary
from sprintflow.sprint import tester  # its tester_* names would be collected as tests if imported
from sprintflow.sprint.guard import Snapshot, paths_scope
from sprintflow.sprint.tester import load_test_run, next_mode, run_tester_step, self_check
from sprintflow.testruns.bugs import list_bugs
from tests.fixtures.sprint.make_workspace import TESTER, add_todo_contract, make_workspace

TESTS_DIR = "tests/sprintflow"


def _project(timeout: float = 30) -> ProjectConfig:
    # The interpreter running these tests has pytest (a python3 shim on PATH is slower, and might
    # not); plugins of this environment are not the workspace's and cost a second to load.
    command = (f"{sys.executable} -m pytest -q -p no:cacheprovider --disable-plugin-autoload "
               f"--junitxml={{report}} {{testsDir}}")
    return ProjectConfig.model_validate({"tester": {"command": command, "timeout": timeout}})


def _contract(workspace: Path, number: int) -> SprintContract:
    path = workspace / ".sprintflow" / "contracts" / f"sprint-spec-tiny-{number}.json"
    return SprintContract.model_validate_json(path.read_text())


def _step(workspace: Path, number: int, behaviour: str = "normal", mode: str = "test",
          project: ProjectConfig | None = None, **kwargs):
    return run_tester_step(workspace, _contract(workspace, number), project or _project(), mode,
                           f"{sys.executable} {TESTER} {behaviour}", LocalExecutor(), **kwargs)


@pytest.fixture
def tiny(tmp_path) -> Path:
    workspace = make_workspace(tmp_path / "tiny")
    (workspace / "state.txt").write_text("1")  # what the generator's first iteration leaves
    return workspace


@pytest.fixture
def todo(tiny) -> Path:
    add_todo_contract(tiny)
    return tiny


def test_a_failing_criterion_gets_a_hint_and_a_bug_and_the_retry_closes_it(tiny):
    first = _step(tiny, 1)
    run = first.test_run
    assert (run.summary.total, run.summary.failed, run.next_action) == (2, 1, "retry_coder")
    assert run.failures[0].test.endswith("[sc-1-2]") and run.failures[0].hint
    assert run.acceptance_coverage == 1.0 and first.self_check == [] and first.restored == []
    assert first.engine.ok and first.bugs_opened == [run.failures[0].bug_id]
    assert load_test_run(tiny, first.run_id) == run
    assert (tiny / f".sprintflow/runs/{first.run_id}/tester.log").read_text() == "test\n"
    written = (tiny / TESTS_DIR / "test_sprint_spec_tiny_1.py").stat().st_mtime_ns

    (tiny / "state.txt").write_text("2")  # the generator fixed it
    second = _step(tiny, 1, mode="retry", previous_run=run)
    assert second.test_run.ok and second.test_run.next_action == "done"
    assert second.run_id != first.run_id
    assert second.bugs_transitioned == [{"id": first.bugs_opened[0], "from": "open", "to": "fixed"}]
    assert (tiny / TESTS_DIR / "test_sprint_spec_tiny_1.py").stat().st_mtime_ns == written
    assert [b.status for b in list_bugs(WorkspaceLayout(tiny).bugs_file)] == ["fixed"]
    journal = second.journal()
    assert journal.status == "finished" and journal.mode == "retry" and journal.ok


def test_writes_outside_the_sandbox_are_restored_and_reported(tiny):
    held_out = (tiny / "evals/held_out.txt").read_text()
    contract_file = tiny / ".sprintflow/contracts/sprint-spec-tiny-1.json"
    contract_text = contract_file.read_text()
    step = _step(tiny, 1, "outside")
    assert step.restored == [".sprintflow/contracts/sprint-spec-tiny-1.json", "evals/held_out.txt",
                             "notes.md"]
    assert (tiny / "evals/held_out.txt").read_text() == held_out
    assert contract_file.read_text() == contract_text and not (tiny / "notes.md").exists()
    assert (tiny / TESTS_DIR / "test_sprint_spec_tiny_1.py").exists()  # its own folder is kept
    blocking, _ = tester.tester_findings(step.journal(), None, evaluated=True)
    assert blocking == [("The tester wrote outside its sandbox; restored: "
                        ".sprintflow/contracts/sprint-spec-tiny-1.json, evals/held_out.txt, notes.md")]


def test_every_criterion_and_status_code_covered_passes_the_self_checks(todo):
    step = _step(todo, 3)
    assert step.test_run.ok, step.test_run.stdout_tail
    assert (step.test_run.acceptance_coverage, step.test_run.contract_coverage) == (1.0, 1.0)
    assert step.self_check == []


def test_a_missing_criterion_test_and_an_unasserted_4xx_are_self_check_problems(todo):
    step = _step(todo, 3, "lazy")
    assert step.self_check == [
        "sc-3-2 has no test: name it in a test title as [sc-3-2].",
        "Status 400 has no negative case: send the input that must be refused and assert the 400.",
    ]
    _, notes = tester.tester_findings(step.journal(), None, evaluated=True)
    assert notes == [f"Tester self-check: {p}" for p in step.self_check]


def test_whole_module_mocks_are_self_check_problems_but_mocking_a_package_or_one_function_is_not(todo):
    problems = _step(todo, 3, "mock").self_check
    assert problems == [
        ("tests/sprintflow/mocked.test.js:3: mocks the module under test '../../todo.js' as a whole; "
        "mock only external APIs, time or randomness."),
        ("tests/sprintflow/test_mocked.py:22: patches the whole module 'todo'; patch what it calls "
        "outside, not the code under test."),
        ("tests/sprintflow/test_mocked.py:10: replaces modules in sys.modules, which can swap out "
        "the code under test as a whole."),
    ]


def test_a_test_that_reaches_beyond_localhost_is_a_self_check_problem(todo):
    problems = _step(todo, 3, "network").self_check
    assert problems == [("tests/sprintflow/test_network.py:8: reaches api.example.com over the "
                        "network; tests may reach only localhost: stub the call instead.")]


def test_a_run_over_the_time_limit_is_killed_and_crashed(tiny):
    step = _step(tiny, 1, "slow", project=_project(timeout=2))
    run = step.test_run
    assert run.crashed and run.next_action == "retry_tester" and "deadline" in run.crash_reason
    assert step.self_check[0].startswith("Coverage could not be checked: the test run crashed")
    _, notes = tester.tester_findings(step.journal(), None, evaluated=False)
    assert any("crashed" in n and "twice" not in n for n in notes)
    blocking, _ = tester.tester_findings(step.journal(), step.journal(), evaluated=False)
    assert blocking[-1].endswith("(twice in a row)")


def test_a_failing_engine_is_recorded_and_the_existing_tests_still_run(tiny):
    _step(tiny, 1)
    step = _step(tiny, 1, "fail", mode="retry")
    assert not step.engine.ok and "exited with code 1" in step.engine.reason
    engine_text = (tiny / f".sprintflow/runs/{step.run_id}/engine.txt").read_text()
    assert "the scripted tester gives up" in engine_text
    assert step.test_run.summary.total == 2
    assert next_mode(None, step.journal()) == "resume"


def test_failures_become_blocking_issues_only_when_the_evaluator_does_not_run_the_tests(tiny):
    entry = _step(tiny, 1).journal()
    blocking, _ = tester.tester_findings(entry, None, evaluated=False)
    assert len(blocking) == 1 and blocking[0].startswith("The tester's test ")
    assert "[sc-1-2] fails. Hint: " in blocking[0]
    assert tester.tester_findings(entry, None, evaluated=True)[0] == []


def test_an_uninformative_hint_is_a_self_check_problem(tiny):
    run = TestRun(run_id="run-1", summary=TestSummary(total=1, failed=1), next_action="retry_coder",
                  failures=[TestFailureEntry(test="t", hint="expected 401 got 500")])
    assert self_check(run, _contract(tiny, 1), tiny, TESTS_DIR) == [
        ("The failure of 't' has no usable hint ('expected 401 got 500'): say what went wrong and "
        "what to change.")]


def test_modes_follow_the_journal():
    finished = TesterJournal(status="finished", mode="test", run_id="r", engine=EngineCall(ok=True))
    started = TesterJournal(status="started", mode="test", run_id="r")
    assert next_mode(None, None) == "test"
    assert next_mode(None, finished) == "retry"
    assert next_mode(started, finished) == "resume"
    assert next_mode(None, started) == "resume"
    with pytest.raises(InputError, match="unknown tester mode"):
        run_tester_step(Path("."), None, ProjectConfig(), "rewrite", "true", LocalExecutor())


def test_only_a_tester_specific_engine_switches_the_tester_on():
    assert tester.tester_engine(ProjectConfig(), {"SPRINTFLOW_ENGINE": "claude"}) is None
    assert tester.tester_engine(ProjectConfig(), {"SPRINTFLOW_TESTER_ENGINE": "codex"}) == "codex exec -"
    configured = ProjectConfig.model_validate({"engines": {"tester": "python3 t.py"}})
    assert tester.tester_engine(configured, {}) == "python3 t.py"


def test_the_prompt_states_mode_sandbox_coverage_and_previous_failures(todo):
    previous = TestRun(run_id="run-0", summary=TestSummary(total=1, failed=1), next_action="retry_coder",
                       failures=[TestFailureEntry(test="t[sc-3-2]", hint="check the blank title first")])
    prompt = tester.tester_prompt(_contract(todo, 3), "retry", TESTS_DIR, previous, run_id="run-1")
    assert "re-run the existing tests" in prompt
    assert "- tests/sprintflow/**\n- .sprintflow/runs/run-1/**" in prompt
    assert "- sc-3-2 (custom): A blank title is refused → 400." in prompt and "201, 400" in prompt
    assert "- t[sc-3-2]: check the blank title first" in prompt


def test_a_snapshot_puts_back_a_file_that_became_a_folder(tmp_path):
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/held_out.txt").write_text("keep")
    snapshot = Snapshot(tmp_path, paths_scope(["evals"]))
    (tmp_path / "evals/held_out.txt").unlink()
    (tmp_path / "evals/held_out.txt").mkdir()
    (tmp_path / "evals/held_out.txt/x").write_text("y")
    (tmp_path / "evals/new.txt").write_text("n")
    assert snapshot.restore() == ["evals/held_out.txt", "evals/held_out.txt/x", "evals/new.txt"]
    assert json.dumps(sorted(p.name for p in (tmp_path / "evals").iterdir())) == '["held_out.txt"]'
    assert (tmp_path / "evals/held_out.txt").read_text() == "keep"


def test_the_tests_run_under_the_configured_docker_limits(tiny, docker_ready):
    from sprintflow.sandbox.executors import resolve_executor
    from sprintflow.schemas.config import ExecutorConfig

    # The tests run only if the container has the configured limits (cgroup v2 files, else v1).
    limits = ("test \"$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)\""
              " = 268435456 && test \"$(cat /sys/fs/cgroup/pids.max 2>/dev/null || "
              "cat /sys/fs/cgroup/pids/pids.max)\" = 64")
    project = ProjectConfig.model_validate({"tester": {
        "command": f"{limits} && python3 -m pytest -q -p no:cacheprovider --junitxml={{report}} {{testsDir}}",
        "timeout": 120}})
    executor = resolve_executor("docker", ExecutorConfig(memory="256m", pids=64))
    step = run_tester_step(tiny, _contract(tiny, 1), project, "test", f"{sys.executable} {TESTER} normal",
                           executor)
    run = step.test_run
    # The report exists only if the limits held; then the real failure of criterion sc-1-2 shows.
    assert (run.summary.total, run.summary.failed) == (2, 1), run
    assert run.failures[0].test.endswith("[sc-1-2]")
