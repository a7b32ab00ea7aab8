"""The steps of one evaluation that the evaluate flow runs as tasks: one call each.

A strategy step reuses a cached result of identical content and config, or
judges the strategy in its own layer of the evaluation view (it sees the
workspace, and nothing it writes reaches anyone else), fails it if it modified
sources, and then, as a separate step, records what the judge saw: the TestRun
in the workspace's state (``runs/<runId>/``) and the bugs it opens or fixes.
"""

from __future__ import annotations

from dataclasses import replace

from sprintflow.engines import resolve_engine, run_engine
from sprintflow.errors import ConfigError, ReportError
from sprintflow.io.containment import Bind, Containment, containment_unavailable
from sprintflow.io.files import atomic_write_text
from sprintflow.io.process import CommandResult
from sprintflow.parsers import ParsedReport, TestCounts, parse_report
from sprintflow.sandbox.executors import CommandSpec
from sprintflow.schemas import (
    CriterionResult,
    Outcome,
    StrategyConfig,
    StrategyResult,
    StrategyType,
    SuccessCriterion,
    VerificationMethod,
)
from sprintflow.testruns.testrun import record_test_run

from .autofix import without_autofix
from .cache import (
    cached_criterion,
    cached_outputs,
    cached_result,
    finished,
    store_cached_criterion,
    store_cached_result,
)
from .canary import plant, runner_of
from .criteria import is_held_out, judge_by_command, judge_manual, manual_prompt, skipped_manual
from .excerpt import combined_output
from .inference import ReportSpec, infer_report
from .mutation import measure, with_mutation
from .outcomes import console_of, judge_outcomes, reference_of
from .plan import EvaluationPlan
from .reproduction import select_tests, test_runner
from .strategies import Judged, Strategy
from .strategies.base import execute

__all__ = ["custom_criterion_step", "manual_criterion_step", "record_tests", "reused_criterion", "reused_result",
           "strategy_step"]


def reused_result(plan: EvaluationPlan, strategy: StrategyConfig) -> StrategyResult | None:
    """The strategy's stored result on identical content and config, its output (a build's) seeded into
    its layer for what runs on it; None when there is none."""
    hit = cached_result(plan, strategy)
    if hit is not None:
        plan.evaluation_view.seed(plan.layer_of(strategy), cached_outputs(plan, strategy))
    return hit


def strategy_step(plan: EvaluationPlan, strategy: StrategyConfig, use_cache: bool) -> StrategyResult:
    """One strategy's result: reused when identical content and config ran before, else judged and recorded."""
    if use_cache and (hit := reused_result(plan, strategy)) is not None:
        return hit
    layer = plan.layer_of(strategy)
    plugin = plan.plugin(strategy)
    plugin.check()
    judged, changed = _judge_in_layer(plan, strategy, plugin, layer)
    if plan.recording:  # the baseline's run: what ran there is all it is for
        _keep_reference(plan, plan.check_of(strategy), judged)
        return judged.result
    if changed:
        result = _modified_sources(judged.result, changed)
    else:
        judged = _again_if_failed(plan, strategy, plugin, judged)
        tests = judged.reference.files if judged.reference else ()
        result = _mutation_checked(plan, strategy, plugin, record_tests(plan, judged), tests)
    store_cached_result(plan, strategy, result)
    return result


def _mutation_checked(plan: EvaluationPlan, strategy: StrategyConfig, plugin: Strategy,
                      result: StrategyResult, tests: tuple[str, ...]) -> StrategyResult:
    """A passed test run's mutation check (:mod:`.mutation`), in a layer of its own: the judged tree
    without the run's canaries or anything the run wrote. ``tests``: the files the run collected tests from."""
    job = plan.mutation_of(strategy)
    spec, command = plugin.report_spec(plan.source), plugin.command() or ""
    runner = runner_of(spec.format if spec else None, command)
    if job is None or runner is None or result.result is not Outcome.passed:
        return result
    # The judging tests: the strategy's, then the held-out evals (a mutant any of them fails is killed).
    held_out = [c.custom_command for c in plan.contract.success_criteria
                if c.verification_method is VerificationMethod.custom and c.custom_command
                and is_held_out(c.custom_command, plan.project.sprint.held_out)]
    with plan.evaluation_view.layer(f"{plan.layer_of(strategy)}-mutation", below=plan.below(strategy)) as root:
        mutation = measure(job, runner, root, plan.executor, [command, *held_out], (result.duration_ms or 0) / 1000,
                           network=strategy.network, image=strategy.image, tests=tests)
    return with_mutation(result, mutation)


def _keep_reference(plan: EvaluationPlan, check: str, judged: Judged) -> None:
    path = plan.reference_file(check)
    if path is not None and judged.reference is not None:
        atomic_write_text(path, judged.reference.to_json())


def _judge_in_layer(plan: EvaluationPlan, strategy: StrategyConfig, plugin: Strategy,
                    layer: str) -> tuple[Judged, list[str]]:
    """The strategy judged in its own layer of the view, and the sources it changed there."""
    view, cache = plan.evaluation_view, plan.tool_cache(strategy)
    with view.layer(layer, below=plan.below(strategy), seed=cache.seed if cache else None) as root:
        judged = plugin.judge(plan.run_for(strategy, root))
    expected = [*plugin.outputs(plan.source), *judged.planted]
    changed = view.changed_sources(layer, expected=expected)
    if cache is not None and not changed and finished(judged.result):
        cache.keep(view.outputs(layer))  # what a run that ended on its own wrote: the next run starts warm
    return judged, changed


def _again_if_failed(plan: EvaluationPlan, strategy: StrategyConfig, plugin: Strategy, judged: Judged) -> Judged:
    """A failing check runs again on the same snapshot, to tell flaky from broken before the generator is told.

    Not a check that could not run or hit its deadline (that is no verdict to doubt), nor the
    build (others run on its output). Failing, then passing, is flaky: a pass, unless
    ``evaluator.flakyFails``.
    """
    first = judged.result
    if first.result is not Outcome.failed or not finished(first) or strategy.type is StrategyType.build:
        return judged
    verdict = Outcome.failed if plan.project.evaluator.flaky_fails else Outcome.passed
    for attempt in range(1, plan.project.evaluator.rerun_failures + 1):
        layer = f"{plan.layer_of(strategy)}-again-{attempt}"
        selected = _failing_tests_again(plan, strategy, plugin, first, layer)  # a layer mounted again starts anew
        if selected is not None:
            passed, command = selected
            if passed:
                details = (f"Flaky: it failed, then its failing tests passed when run again alone on the same "
                           f"snapshot (run {attempt + 1}: `{command}`). The failed run: {first.details}")
                return replace(judged, result=first.model_copy(
                    update={"result": verdict, "flaky": True, "details": details}))
            continue
        again, changed = _judge_in_layer(plan, strategy, plugin, layer)
        if again.result.result is Outcome.passed and not changed:
            details = (f"Flaky: it failed, then passed when run again on the same snapshot (run {attempt + 1}). "
                       f"The failed run: {first.details}")
            return replace(again, result=again.result.model_copy(
                update={"result": verdict, "flaky": True, "details": details}))
    return judged


def _failing_tests_again(plan: EvaluationPlan, strategy: StrategyConfig, plugin: Strategy,
                         first: StrategyResult, layer: str) -> tuple[bool, str] | None:
    """The failing tests alone, run again in a layer of their own: whether they all passed, and the
    command. None when the runner cannot select them, or the run did not run exactly them (then the
    whole check runs again): what ran is counted, so a selection that missed is never a pass."""
    failing = [d for d in first.diagnostics if d.severity == "error"]
    tests = sorted({d.test for d in failing if d.test})
    command = plugin.command() or ""
    runner = test_runner(failing[0].tool, command) if failing else None
    if not tests or runner is None or any(not d.test for d in failing) or len(tests) > MAX_RERUN_TESTS:
        return None
    selected = select_tests(command, runner, tests)
    if selected is None:
        return None
    view = plan.evaluation_view
    with view.layer(layer, below=plan.below(strategy)) as root:
        run = plan.run_for(strategy, root)
        outcome = execute(run, selected)
        try:
            parsed = plugin.parse(run, plugin.report_spec(root), outcome)
        except ReportError:
            parsed = None
    if view.changed_sources(layer, expected=plugin.outputs(plan.source)) or outcome.timed_out \
            or parsed is None or parsed.counts is None:
        return None
    ran = parsed.counts.passed + parsed.counts.failed
    if ran != len(tests):
        return None
    return (outcome.exit_code == 0 and parsed.counts.failed == 0 and not parsed.failures), selected


MAX_RERUN_TESTS = 50
"""More failing tests than this are re-run by running the whole check again."""


def _modified_sources(result: StrategyResult, changed: list[str]) -> StrategyResult:
    """A check that changes what it checks cannot be believed: it fails, naming the files."""
    shown = ", ".join(changed[:20]) + (f" and {len(changed) - 20} more" if len(changed) > 20 else "")
    details = (f"{result.strategy} modified sources while checking them: {shown}. A check must not change the "
               "code (an autofix setting or a formatter that writes?); its changes were discarded and the "
               f"workspace is unchanged. What it reported: {result.details}")
    return result.model_copy(update={"result": Outcome.failed, "details": details})


def record_tests(plan: EvaluationPlan, judged: Judged) -> StrategyResult:
    """Keep the test run a strategy saw (``runs/<runId>/``) and bridge it to ``bugs.ndjson``.

    Returns the strategy's result, its details noting the run and the bugs opened and fixed.
    """
    if judged.test_run is None:
        return judged.result
    # Imported once tests ran: a cached evaluation need not import the bug ledger.
    from sprintflow.testruns.bugs import sync_bugs

    run_id = judged.test_run.run_id
    try:
        sync = sync_bugs(plan.workspace, judged.test_run, unit=plan.contract.contract_id, run_id=run_id)
        record_test_run(plan.workspace, run_id, sync.test_run, judged.stdout, judged.stderr)
    except OSError as exc:  # a full disk loses the record, never the verdict
        note = f"TestRun {run_id} and its bugs not stored: {exc.strerror or exc}."
        return judged.result.model_copy(update={"details": f"{judged.result.details} {note}"})  # no test_run: lost
    fixed = [move["id"] for move in sync.bugs_transitioned if move["to"] == "fixed"]
    # Named without its folder: what the generator reads never points into sprintflow's own state.
    note = (f"TestRun {run_id} recorded; bugs opened {sync.bugs_opened or 'none'}, "
            f"fixed {fixed or 'none'}.")
    return judged.result.model_copy(update={"details": f"{judged.result.details} {note}", "test_run": run_id})


def _criterion(plan: EvaluationPlan, criterion_id: str) -> SuccessCriterion:
    return next(c for c in plan.contract.success_criteria if c.criterion_id == criterion_id)


def reused_criterion(plan: EvaluationPlan, criterion_id: str) -> CriterionResult | None:
    """A custom criterion's stored verdict on identical content and command (never on a baseline's
    recording run, which is for what ran there); None when there is none."""
    if plan.recording:
        return None
    return cached_criterion(plan, _criterion(plan, criterion_id), plan.project.executor.default_timeout)


def custom_criterion_step(plan: EvaluationPlan, criterion_id: str, use_cache: bool = False) -> CriterionResult:
    """A custom criterion: its customCommand in the executor; exit 0 passes, and when the command is a
    test runner only the tests that count (:mod:`.outcomes`: canaries, the baseline's tests, a
    held-out eval whole).

    With ``use_cache`` a verdict on identical content and command is reused; a
    command that timed out or could not start is never stored.
    """
    criterion = _criterion(plan, criterion_id)
    command = without_autofix(criterion.custom_command or "")
    timeout = plan.project.executor.default_timeout
    check = f"criterion-{criterion_id}"
    held_out = is_held_out(command, plan.project.sprint.held_out)
    if use_cache and (hit := reused_criterion(plan, criterion_id)) is not None:
        return hit
    spec = infer_report(command, plan.source)
    runner = runner_of(spec.format if spec else None, command)
    reference = plan.reference_of(check)
    with plan.evaluation_view.layer(check, below=plan.below()) as root:
        canary = plant(root, runner, collected=reference.files if reference else ()) \
            if runner and (reference is None or reference.canaries or reference.files) else None
        outcome: CommandResult = plan.executor.run(root, CommandSpec(
            command=canary.judged_command(command, root) if canary else command, timeout=timeout,
            env=dict(canary.env) if canary else {}))
        parsed = _test_report(spec, command, outcome, [plan.executor.workspace_path(root), str(root)])
    if parsed is None and runner is not None and outcome.exit_code == 0:
        # A test runner that exits 0 and names no test, not even in its totals, ran none (a test binary
        # ended from inside before it printed anything): judged against the baseline's run as such.
        parsed = ParsedReport(counts=TestCounts(0, 0, 0, 0))
    console = console_of(runner, spec.report_path if spec else None, outcome.stdout, outcome.stderr)
    if plan.recording:
        path = plan.reference_file(check)
        if path is not None:
            atomic_write_text(path, reference_of(parsed, canary, console).to_json())
    outcomes = judge_outcomes(parsed, canary, reference, held_out, outcome.exit_code, console) \
        if parsed is not None else None
    result = judge_by_command(criterion, command, outcome, outcomes).model_copy(update={"held_out": held_out})
    if outcome.exit_code is not None and not outcome.timed_out and outcome.error is None and not plan.recording:
        store_cached_criterion(plan, criterion, timeout, result)
    return result


def _test_report(spec: ReportSpec | None, command: str, outcome: CommandResult,
                 roots: list[str]) -> ParsedReport | None:
    """What a test runner's plain output says of its tests; None for a command that is not one."""
    if spec is None or spec.report_path is not None or runner_of(spec.format, command) is None:
        return None
    try:
        report = parse_report(spec.format, combined_output(outcome.stdout, outcome.stderr), roots)
    except ReportError:
        return None
    return report if report.counts is not None else None


def manual_criterion_step(plan: EvaluationPlan, criterion_id: str) -> CriterionResult:
    """A manual criterion: the evaluator engine's verdict when one is configured, otherwise skipped."""
    criterion = _criterion(plan, criterion_id)
    try:
        engine = resolve_engine("evaluator", config=plan.project.engines)
    except ConfigError:
        return skipped_manual(criterion, "Manual criterion: no evaluator engine is configured "
                                         "to judge it by reading the code.")
    with plan.evaluation_view.layer(f"criterion-{criterion_id}") as root:
        # It reads the judged tree, shown where the workspace is (as every contained command sees its tree).
        shown = str(plan.workspace) if containment_unavailable() is None else str(root)
        reply = run_engine(engine, manual_prompt(criterion, plan.contract, plan.source), cwd=shown,
                           timeout=plan.project.engines.timeout,
                           contain=Containment(binds=(Bind(str(root), shown, writable=True),)))
    return judge_manual(criterion, reply)
