"""The evaluate flow: every strategy in its executor, criteria judged, one EvalResult.

Thin orchestration over ``sprintflow.tasks``: strategies run concurrently as
coarse tasks (build first for api-check and playwright, which need its output),
all of them run even when one fails, and results come back in the seed's order.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run
from prefect.states import State
from prefect.utilities.annotations import allow_failure

from sprintflow.evaluate.cache import cached_result
from sprintflow.evaluate.config import load_project_config
from sprintflow.evaluate.criteria import judge_by_strategy
from sprintflow.evaluate.formats import artifact_description, artifact_key, eval_markdown, eval_table, verdict_line
from sprintflow.evaluate.outcomes import fail_suppressed
from sprintflow.evaluate.plan import EvaluationPlan, plan_evaluation
from sprintflow.evaluate.result import assemble_eval_result, load_previous_eval, write_eval_result
from sprintflow.evaluate.steps import reused_criterion, reused_result
from sprintflow.evaluate.strategies import STRATEGIES
from sprintflow.evaluate.view import open_view, overlay_unavailable
from sprintflow.history.records import record_evaluation
from sprintflow.io.files import store_or_note
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.io.locks import workspace_lock
from sprintflow.judge.tree import JudgedTree, WorkspaceStore, changed_since, remove_tree, stat_picture
from sprintflow.orchestration.runs import (
    BLOCKED,
    CONTRACT_FAILED,
    ends_in_error_states,
    flow,
    task_value,
    verdict_state,
)
from sprintflow.sandbox.executors import Executor, resolve_executor
from sprintflow.sandbox.prepare import with_project_sandbox
from sprintflow.schemas import (
    CriterionResult,
    EvalResult,
    ProjectConfig,
    StrategyResult,
    StrategyType,
    VerificationMethod,
)
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.journal import SuppressionRecord
from sprintflow.sprint.findings import environment_blocker
from sprintflow.tasks.evaluate import judge_manual_criterion_task, run_custom_criterion_task, run_strategy_task

__all__ = ["evaluate_flow", "reference_flow"]


Answer: TypeAlias = "StrategyResult | CriterionResult | PrefectFuture[Any]"
"""A reused result, answered in the flow, or the future of the task run that judges."""


def _submit_strategies(plan: EvaluationPlan, use_cache: bool) -> list[Answer]:
    """Submit all strategies at once; api-check and playwright wait for build (first in order).

    A strategy whose result on identical content and config is stored is answered here, with no
    task run: it costs the server nothing, and the flow's artifact and the EvalResult say ``cached``.
    The others run on the build's output, so a cached build runs again when one of them must run;
    and after a failed build too (``allow_failure``: its task run ends Failed when the build fails).
    """
    hits = [use_cache and cached_result(plan, s) is not None for s in plan.strategies]
    rebuild = any(STRATEGIES[s.type].needs_build for s, hit in zip(plan.strategies, hits, strict=True) if not hit)
    answers: list[Answer] = []
    builds: list[Any] = []
    for strategy, hit in zip(plan.strategies, hits, strict=True):
        is_build = strategy.type is StrategyType.build
        reused = reused_result(plan, strategy) if hit and not (is_build and rebuild) else None
        if reused is not None:  # a build's output is seeded before what runs on it is submitted
            answers.append(reused)
            continue
        wait_for = builds if STRATEGIES[strategy.type].needs_build else []
        future = run_strategy_task.submit(plan, strategy, use_cache and not (is_build and rebuild),
                                          wait_for=wait_for, return_state=False)
        if is_build:
            builds.append(allow_failure(future))
        answers.append(future)
    return answers


def _answered(answer: Answer) -> Any:
    return task_value(answer) if isinstance(answer, PrefectFuture) else answer


def _judge_criteria(plan: EvaluationPlan, strategies: list[StrategyResult],
                    use_cache: bool) -> list[CriterionResult]:
    by_type = {s.type.value: r for s, r in zip(plan.strategies, strategies, strict=True)}
    pending: dict[str, Answer] = {}
    for c in plan.contract.success_criteria:
        if c.verification_method is VerificationMethod.custom:
            reused = reused_criterion(plan, c.criterion_id) if use_cache else None
            pending[c.criterion_id] = reused or run_custom_criterion_task.submit(plan, c.criterion_id, use_cache)
        elif c.verification_method is VerificationMethod.manual:
            pending[c.criterion_id] = judge_manual_criterion_task.submit(plan, c.criterion_id)
    results = []
    for criterion in plan.contract.success_criteria:
        method = criterion.verification_method
        if criterion.criterion_id in pending:
            results.append(_answered(pending[criterion.criterion_id]))
        else:
            results.append(judge_by_strategy(criterion, by_type.get(method.value)))
    return results


@flow(name="evaluate", log_prints=True)
@ends_in_error_states
def evaluate_flow(workspace: str, contract: str, executor: str | None = None, use_cache: bool = True,
                  iteration: int | None = None, blocking_issues: list[str] | None = None,
                  notes: list[str] | None = None, usage: dict[str, Any] | None = None,
                  config: dict[str, Any] | None = None, tree: dict[str, Any] | None = None,
                  suppressions: list[dict[str, Any]] | None = None,
                  references: str | None = None,
                  tester_mutation: dict[str, Any] | None = None,
                  touched: list[str] | None = None) -> State[EvalResult]:
    """Evaluate ``workspace`` against the contract file and write the EvalResult.

    The run ends Completed when the contract passed, else Failed: ``ContractFailed`` when the
    code failed it, ``Blocked`` when a required strategy's environment broke (see
    :mod:`sprintflow.orchestration.runs`); each state carries the EvalResult (``run_flow`` returns it).

    Args:
        workspace: folder of the project under test.
        contract: path of the SprintContract JSON file.
        executor: auto (Docker when an engine answers, else local), docker or local; default the
            config's ``executor.kind``.
        use_cache: reuse strategy results of identical content and config.
        iteration: the iteration number (default: one past the contract's history).
        blocking_issues: problems found outside the strategies (a generator that failed or
            touched protected files); each becomes a critical feedback item and fails the result.
        notes: observations that do not block (files changed outside estimatedFiles).
        usage: the generator step's ``engine``, ``tokens`` and ``cost``, for the history rows.
        config: the sprint's pinned configuration (default: the workspace's, read now).
        tree: the judged tree a sprint built (baseline plus the judged change); default: the
            judge builds one from the workspace as it is now.
        suppressions: lines the sprint's change added that silence a checker
            (``SuppressionRecord``); each fails that checker's strategy at its line.
        references: the folder of what the test-running checks said on the sprint's baseline
            (:func:`reference_flow`): a test that ran there must run and pass now.
        tester_mutation: the sprint's tester step graded by the mutation check (``MutationResult``),
            recorded with the result: the tester's kill rate.
        touched: the files the sprint's change touched; feedback on them comes first.
    """
    started = time.monotonic()
    with workspace_lock(workspace):
        project = ProjectConfig.model_validate(config) if config else load_project_config(workspace)
        judged = JudgedTree.from_dict(tree) if tree else _snapshot(Path(workspace))
        try:
            # The project's own runtime and dependencies, before any strategy runs (Docker only); its
            # progress goes to the run's log, never to stdout, which may carry a --json document.
            runner = with_project_sandbox(resolve_executor(executor, project.executor), judged.root,
                                          progress=get_run_logger().info)
            plan = plan_evaluation(Path(workspace), Path(contract), runner, judged, iteration, project)
            plan = replace(plan, references=Path(references) if references else None)
            print(f"Evaluating {plan.contract.contract_id} (iteration {plan.iteration}) of {plan.workspace} "
                  f"with {runner.describe()}: {', '.join(s.name for s in plan.strategies)}")
            if runner.uncontained:
                get_run_logger().warning(f"WARNING: commands run UNCONTAINED on this host ({runner.uncontained}): "
                                         "the code under test can reach the workspace and the machine")
            before = stat_picture(plan.workspace)
            silenced = [SuppressionRecord.model_validate(s) for s in suppressions or []]
            strategies, criteria, unclaimed = _judge_in_view(plan, use_cache, silenced)
            blocking_issues = [*(blocking_issues or []), *unclaimed]
            touched = changed_since(plan.workspace, before)
            if touched:
                blocking_issues = [*(blocking_issues or []), "The workspace changed while it was judged, though "
                                   "nothing judged runs there (each strategy sees only the judged tree): "
                                   f"{', '.join(touched[:20])}"]
            result = assemble_eval_result(plan, strategies, criteria, load_previous_eval(plan),
                                          blocking_issues=blocking_issues or [], notes=notes or [],
                                          touched=touched or [])
            if tester_mutation:
                result = result.model_copy(update={"tester_mutation": MutationResult.model_validate(tester_mutation)})
            return _record(plan, result, runner, started, usage)
        finally:
            if not tree:
                remove_tree(judged)


@flow(name="reference", log_prints=True)
def reference_flow(workspace: str, contract: str, tree: dict[str, Any], references: str,
                   executor: str | None = None, config: dict[str, Any] | None = None) -> None:
    """Run the contract's test-running checks (unit-test strategies, custom criteria) once on a sprint's
    baseline tree, canaries planted, and keep what ran there in ``references``: every later evaluation
    of the sprint holds its tests to that (:mod:`sprintflow.evaluate.outcomes`). Nothing is recorded
    as a result: the baseline is not the generator's work."""
    project = ProjectConfig.model_validate(config) if config else load_project_config(workspace)
    judged = JudgedTree.from_dict(tree)
    runner = with_project_sandbox(resolve_executor(executor, project.executor), judged.root,
                                  progress=get_run_logger().info)
    plan = plan_evaluation(Path(workspace), Path(contract), runner, judged, None, project)
    customs = [c for c in plan.contract.success_criteria if c.verification_method is VerificationMethod.custom]
    plan = replace(plan, strategies=[s for s in plan.strategies if s.type is StrategyType.unit_test],
                   contract=plan.contract.model_copy(update={"success_criteria": customs}),
                   references=Path(references), recording=True)
    Path(references).mkdir(parents=True, exist_ok=True)
    print(f"Running the baseline's tests of {plan.contract.contract_id} once, to know what ran there: "
          f"{', '.join(s.name for s in plan.strategies) or 'no unit-test strategy'}; "
          f"{len(customs)} custom criteria")
    _judge_in_view(plan, False, [])


def _snapshot(workspace: Path) -> JudgedTree:
    """The judged tree of a workspace as it is now (an evaluation outside a sprint)."""
    store = WorkspaceStore(workspace)
    snapshot = store.scan()
    return store.materialize(snapshot.manifest, snapshot.dependencies)


def _judge_in_view(plan: EvaluationPlan, use_cache: bool, silenced: list[SuppressionRecord]
                   ) -> tuple[list[StrategyResult], list[CriterionResult], list[str]]:
    """Strategies and criteria, each in its own layer of the evaluation view over the judged tree; a
    strategy whose checker the change silenced fails before its criteria are judged. The third
    value: the silenced checkers no strategy runs, for the blocking issues."""
    view = open_view(plan.tree.root)
    if not view.overlays:
        print(f"note: each strategy runs in a copy of the judged tree, not in an overlay layer "
              f"({overlay_unavailable()})")
    try:
        plan = replace(plan, view=view)
        strategies = [_answered(answer) for answer in _submit_strategies(plan, use_cache)]  # every future resolved
        strategies, unclaimed = fail_suppressed(plan.strategies, strategies, silenced)
        criteria = _judge_criteria(plan, strategies, use_cache)
    finally:
        view.close()
    return strategies, criteria, unclaimed


def _record(plan: EvaluationPlan, result: EvalResult, runner: Executor, started: float,
            usage: dict[str, Any] | None) -> State[EvalResult]:
    """Write the EvalResult and its history rows; show it on the flow run; end in the verdict's state.

    A disk that refuses a write loses that write, never the verdict: what was not
    stored is named, and the state and exit code are still the verdict's.
    """
    layout = WorkspaceLayout(plan.workspace)
    unstored: list[str] = []
    path = store_or_note(f"the EvalResult {layout.eval_file(result.eval_id)}",
                         lambda: write_eval_result(plan.workspace, result), unstored)
    store_or_note(f"its history rows in {layout.history_dir}", lambda: record_evaluation(
        plan.workspace, result, content_hash=plan.content_hash, executor=runner.kind, image=runner.image,
        run_id=str(flow_run.id) if flow_run.id else None,
        duration_ms=round((time.monotonic() - started) * 1000), contract=plan.contract, **(usage or {})), unstored)
    for item in unstored:
        get_run_logger().warning(f"not stored: {item}")
    key = artifact_key(result.contract_id)
    description = artifact_description(result)
    create_markdown_artifact(eval_markdown(result), key=key, description=description)
    create_table_artifact(eval_table(result), key=f"{key}-table", description=description)
    line = verdict_line(result)
    print(f"{line} ({path or 'not stored'})")
    blocker = environment_blocker(result, plan.source)
    if blocker:
        return verdict_state(result, BLOCKED, f"{result.contract_id} is blocked by its environment: {blocker}"[:1000])
    return verdict_state(result, None if result.overall_result == "pass" else CONTRACT_FAILED, line[:1000])
