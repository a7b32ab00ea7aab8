"""One tester step (:func:`run_tester_step`): the engine in its sandbox, then its tests on the judged tree."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from sprintflow.engines import engine_env, run_engine
from sprintflow.errors import EngineUnavailable, InputError
from sprintflow.evaluate.canary import runner_of
from sprintflow.evaluate.mutation import MutationJob, measure
from sprintflow.io.containment import Bind, Containment
from sprintflow.io.files import atomic_write_text
from sprintflow.io.process import CommandResult
from sprintflow.judge.tree import JudgedTree, WorkspaceStore, remove_tree
from sprintflow.sandbox.executors import CommandSpec, Executor
from sprintflow.schemas import ProjectConfig, SprintContract, TesterConfig
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.testrun import TestRun
from sprintflow.sprint.guard import Snapshot, outside_scope
from sprintflow.testruns.bugs import sync_bugs
from sprintflow.testruns.testrun import build_test_run, record_test_run

from .prompt import TESTER_MODES, tester_prompt, tester_settings
from .record import EngineSummary, TesterStep, new_tester_run_id
from .self_checks import self_check

__all__ = ["run_tester_step"]

RAW_KEPT = 20_000
"""Characters of the engine's stdout and of its stderr kept in the run folder's ``engine.txt``."""


def run_tester_step(workspace: Path, contract: SprintContract, project: ProjectConfig, mode: str,
                    engine: str, executor: Executor, *, run_id: str | None = None,
                    previous_run: TestRun | None = None,
                    judged: Callable[[], JudgedTree] | None = None) -> TesterStep:
    """Run the tester engine in its sandbox, then its tests; judge, record, self-check.

    Args:
        workspace: the project under test.
        contract: the contract whose criteria and status codes the tests cover.
        project: the project config (``[tester]``, ``engines.timeout``).
        mode: ``test``, ``retry`` or ``resume``.
        engine: the tester's engine command (:func:`~sprintflow.sprint.tester.prompt.tester_engine`).
        executor: where the test command runs.
        run_id: the run to write (a resumed step passes its own); default a fresh one.
        previous_run: the tester's last run, shown to the engine in retry and resume.
        judged: builds the tree the tests run on once the engine wrote them (a sprint's judged
            tree); default the workspace's files as they are then, judged as a whole.

    Returns:
        The step; an engine that fails is recorded in ``engine``, never raised.

    Raises:
        InputError: an unknown mode.
    """
    if mode not in TESTER_MODES:
        raise InputError(f"unknown tester mode {mode!r}: use {', '.join(TESTER_MODES)}")
    settings = tester_settings(project)
    run_id = run_id or new_tester_run_id(workspace)
    command = _command(settings)
    snapshot = Snapshot(workspace, outside_scope(_sandbox(settings, run_id)))
    prompt = tester_prompt(contract, mode, settings.tests_dir, previous_run, run_id=run_id,
                           command=command, timeout=settings.timeout)
    contain = Containment(binds=(Bind(str(workspace), str(workspace), writable=True),))
    reply = run_engine(engine, prompt, cwd=workspace, timeout=project.engines.timeout, contain=contain,
                       env=engine_env({"SPRINTFLOW_TESTER_MODE": mode, "SPRINTFLOW_RUN_ID": run_id,
                                       "SPRINTFLOW_TESTS_DIR": settings.tests_dir,
                                       "SPRINTFLOW_CONTRACT_ID": contract.contract_id}))
    restored = snapshot.restore()
    if reply.could_not_start:  # nothing was asked of it: no tests to judge, and the step runs again next time
        raise EngineUnavailable(f"the tester {reply.reason}")
    tree = judged() if judged is not None else _workspace_tree(workspace)
    try:
        test_run, outcome, mutation = _run_tests(tree, settings, command, executor, contract, run_id)
    finally:
        remove_tree(tree)
    sync = sync_bugs(workspace, test_run, unit=contract.contract_id, run_id=run_id)
    folder = record_test_run(workspace, run_id, sync.test_run, outcome.stdout, outcome.stderr)
    # The engine's answer is kept, so a failed or odd tester step can be read afterwards.
    atomic_write_text(folder / "engine.txt", f"{reply.raw[-RAW_KEPT:]}\n--- stderr ---\n"
                                             f"{reply.stderr[-RAW_KEPT:]}")
    atomic_write_text(folder / "prompt.txt", prompt[:RAW_KEPT])
    return TesterStep(mode=mode, test_run=sync.test_run, engine=EngineSummary.of(reply),
                      restored=restored, mutation=mutation,
                      self_check=self_check(sync.test_run, contract, workspace, settings.tests_dir),
                      bugs_opened=sync.bugs_opened, bugs_transitioned=sync.bugs_transitioned)


def _sandbox(settings: TesterConfig, run_id: str) -> list[str]:
    """What the tester may write: its tests, its run folder, and the report its command writes
    (the engine may run the tests itself, as the seed's workflow does)."""
    return [settings.tests_dir, f".sprintflow/runs/{run_id}", *([settings.report] if settings.report else [])]


def _command(settings: TesterConfig) -> str:
    return (settings.command.replace("{testsDir}", shlex.quote(settings.tests_dir))
            .replace("{report}", shlex.quote(settings.report or "")))


def _workspace_tree(workspace: Path) -> JudgedTree:
    store = WorkspaceStore(workspace)
    snapshot = store.scan()
    return store.materialize(snapshot.manifest, snapshot.dependencies)


def _run_tests(tree: JudgedTree, settings: TesterConfig, command: str, executor: Executor,
               contract: SprintContract, run_id: str) -> tuple[TestRun, CommandResult, MutationResult | None]:
    """The tester's tests, in a layer of their own over the judged tree; their report read from that layer.
    When they passed in a sprint, the mutation check grades them (another layer: its kill rate)."""
    from sprintflow.evaluate.view import open_view

    runner = executor.for_tree(tree)
    view = open_view(tree.root)
    mutation = None
    try:
        with view.layer("tester") as root:
            report = root / settings.report if settings.report else None
            if report is not None:
                report.unlink(missing_ok=True)  # a stale report must never judge this run
                report.parent.mkdir(parents=True, exist_ok=True)
            outcome = runner.run(root, CommandSpec(command=command, timeout=settings.timeout))
            text = outcome.stdout if report is None else _read_report(root, settings.report or "")
        test_runner = runner_of(settings.format, command)
        if outcome.exit_code == 0 and tree.pin_id and settings.mutation.enabled and test_runner:
            with view.layer("tester-mutation") as root:
                mutation = measure(MutationJob(settings.mutation, tree.root, tree.workspace, tree.pin_id),
                                   test_runner, root, runner, [command], outcome.duration_s)
    finally:
        view.close()
    if outcome.error:
        outcome.stderr = f"{outcome.stderr}\n{outcome.error}".strip()
    run = build_test_run(text, settings.format, run_id=run_id, stdout=outcome.stdout,
                         stderr=outcome.stderr, exit_code=outcome.exit_code,
                         timed_out=outcome.timed_out, duration_ms=round(outcome.duration_s * 1000),
                         contract=contract, language=settings.language,
                         roots=[runner.workspace_path(tree.root), str(root), str(tree.workspace)])
    return run, outcome, mutation


def _read_report(root: Path, report: str) -> str | None:
    from sprintflow.errors import OutsideWorkspace
    from sprintflow.io.confine import read_confined

    try:
        return read_confined(root, report, 64 << 20).decode("utf-8", errors="replace")
    except (OSError, OutsideWorkspace):
        return None
