"""The sprint flow: drive each contract to completed or needs-rework, resumably.

Per iteration: the generator engine changes the workspace (guarded), the tester
engine, when one is named, writes and runs its tests (sandboxed), then the
evaluate flow judges it. Every step leaves an atomically written file behind,
so a run killed at any moment continues where it stopped when started again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    update_progress_artifact,
)
from prefect.events import emit_event
from prefect.runtime import flow_run
from prefect.states import State

from sprintflow.engines import engine_label, resolve_engine
from sprintflow.errors import EngineUnavailable
from sprintflow.evaluate.outcomes import baseline_test_files
from sprintflow.evaluate.result import load_eval
from sprintflow.io.layout import STATE_DIR, WorkspaceLayout
from sprintflow.io.locks import workspace_lock
from sprintflow.judge.sprint import Admission, SprintJudge
from sprintflow.judge.tree import WorkspaceStore, remove_tree
from sprintflow.orchestration.runs import (
    BLOCKED,
    NEEDS_REWORK,
    FailureKind,
    ends_in_error_states,
    eval_links_markdown,
    failed_names,
    flow,
    joined,
    run_flow,
    shortened,
    verdict_heading,
    verdict_state,
)
from sprintflow.schemas import ContractStatus, EvalResult, ProjectConfig, SprintContract
from sprintflow.schemas.journal import IterationJournal, TesterJournal
from sprintflow.sprint.branches import commit_iteration
from sprintflow.sprint.contracts import dependency_order, load_contracts, record_iteration, transition, write_contract
from sprintflow.sprint.findings import environment_blocker, generator_findings, generator_usage, touched_files
from sprintflow.sprint.generator import RAW_KEPT
from sprintflow.sprint.journal import read_journal, write_journal
from sprintflow.sprint.pin import JudgePin, pin_judge, release_pin
from sprintflow.sprint.prompt import generator_prompt
from sprintflow.sprint.tester import (
    evaluator_runs_tests,
    new_tester_run_id,
    next_mode,
    tester_engine,
    tester_findings,
    tester_settings,
)
from sprintflow.tasks.sprint import generate_task, tester_task

from .evaluate import evaluate_flow, reference_flow

__all__ = ["sprint_flow"]


@dataclass(frozen=True)
class _Sprint:
    """What every iteration of a sprint run shares: where, judged by what, with which engines."""

    workspace: Path
    pin: JudgePin
    contracts: Path
    engine: str
    executor: str | None
    tester: str | None
    label: str = ""
    """The engine's name in the history (:func:`~sprintflow.engines.engine_label`)."""

    @property
    def project(self) -> ProjectConfig:
        return self.pin.config

    def judge(self, contract: SprintContract) -> SprintJudge:
        """The judge of ``contract``'s iterations: the pinned baseline, admitted by its estimatedFiles;
        the tests are also the files its baseline's runs collected tests from (:func:`_reference`)."""
        inputs = [*self.project.sprint.held_out, *self.project.protected_paths]
        if self.contracts.is_relative_to(self.workspace) and self.contracts != self.workspace:
            inputs.append(self.contracts.relative_to(self.workspace).as_posix())
        return SprintJudge(WorkspaceStore(self.workspace), self.pin.baseline,
                           Admission(estimated_files=tuple(contract.estimated_files), judge_inputs=tuple(inputs),
                                     tester_tests=tester_settings(self.project).tests_dir if self.tester else None,
                                     allowed_suppressions=tuple(contract.allowed_suppressions),
                                     baseline_tests=baseline_test_files(self.references(contract))))

    def references(self, contract: SprintContract) -> Path:
        """Where the baseline's test-running checks' references of ``contract`` are kept
        (:mod:`~sprintflow.evaluate.outcomes`)."""
        return WorkspaceStore(self.workspace).pin_folder(self.pin.baseline.pin_id) / "references" / contract.contract_id

    def secret(self) -> list[str]:
        """What the generator may not even read (relative): the state, held-out evals, the tester's tests,
        the contracts."""
        paths = [STATE_DIR, *self.project.sprint.held_out]
        if self.tester:
            paths.append(tester_settings(self.project).tests_dir)
        if self.contracts.is_relative_to(self.workspace) and self.contracts != self.workspace:
            paths.append(self.contracts.relative_to(self.workspace).as_posix())
        return paths

    def hidden(self) -> tuple[str, ...]:
        return tuple(str(self.workspace / rel) for rel in self.secret() if (self.workspace / rel).exists())


def _generate(sprint: _Sprint, contract: SprintContract, iteration: int) -> IterationJournal:
    """The generator step of one iteration, judged; its journal entry marks it done."""
    workspace, project = sprint.workspace, sprint.project
    previous = load_eval(workspace, contract.contract_id, iteration - 1)
    judge = sprint.judge(contract)
    prompt = generator_prompt(contract, iteration, previous)
    entry = generate_task(workspace, contract.contract_id, iteration, sprint.engine, prompt, project.engines.timeout,
                          sprint.hidden(), judge.discarded())
    if entry.could_not_start:
        return entry  # not journaled: the step never ran, so it runs when the sprint runs next
    entry.prompt = prompt[:RAW_KEPT]  # the transcript the report's drill-down shows (masked there)
    entry.change = judge.judge_step()
    entry.pin_id, entry.contract_revision = sprint.pin.baseline.pin_id, contract.revision()
    if project.sprint.branch_pattern:
        entry.commit = commit_iteration(workspace, project.sprint.branch_pattern, contract, iteration,
                                           hide=sprint.secret()[1:])
    write_journal(workspace, contract.contract_id, iteration, entry)
    return entry


def _test(sprint: _Sprint, contract: SprintContract, iteration: int,
          entry: IterationJournal) -> tuple[list[str], list[str]]:
    """The tester step after the generator's, journaled under "tester" (``started`` first, so a
    step cut off is resumed); its tests run on the judged tree. Returns its blocking issues and notes."""
    workspace, project, cid = sprint.workspace, sprint.project, contract.contract_id
    last = read_journal(workspace, cid, iteration - 1)
    previous = last.tester if last else None
    current = entry.tester
    if current is None or current.status != "finished":
        mode = next_mode(current, previous)
        run_id = current.run_id if current else new_tester_run_id(workspace)
        entry.tester = TesterJournal(status="started", mode=mode, run_id=run_id)
        write_journal(workspace, cid, iteration, entry)
        current = entry.tester = tester_task(workspace, contract, iteration, project, mode, sprint.tester or "",
                                             sprint.executor, run_id, previous.run_id if previous else None,
                                             sprint.judge(contract))
        write_journal(workspace, cid, iteration, entry)
    return tester_findings(current, previous, evaluator_runs_tests(project))


def _iterate(sprint: _Sprint, path: Path, contract: SprintContract, max_iterations: int) -> ContractStatus | str:
    """Iterations until a pass or the limit; resumes from whatever files the last run left.

    A verdict belongs to the tree it judged: only iterations this sprint run judged (its pin) count,
    for a pass and for the limit, and an EvalResult left by a killed run is reused only for the same
    pin, the same revision of the contract and the same judged tree; anything else is judged again.
    A finished generator step (its journal entry) is not run again for the same revision of the
    contract. Returns the contract's final status, or why the environment blocks it (the iteration
    is not counted: it is judged again when the sprint runs next).
    """
    workspace, pin = sprint.workspace, sprint.pin.baseline.pin_id
    if transition(contract, ContractStatus.in_progress):
        write_contract(path, contract)
    _reference(sprint, path, contract)
    while True:
        ours = [record for record in contract.iteration_history if record.pin_id == pin]
        if ours and ours[-1].result == "pass":
            return ContractStatus.completed
        if len(ours) >= max_iterations:
            return ContractStatus.needs_rework
        iteration = len(contract.iteration_history) + 1
        entry = _trusted_entry(read_journal(workspace, contract.contract_id, iteration), contract)
        result = load_eval(workspace, contract.contract_id, iteration) if entry is not None else None
        if result is not None and not _judged_here(result, sprint, contract):
            result = None  # judged under another pin or revision, or on another tree: judge again
        if result is not None and environment_blocker(result, workspace):
            result = None  # the environment was to blame last time: judge the same generator step again
        if result is None:
            entry = entry or _generate(sprint, contract, iteration)
            if entry.could_not_start:
                return f"the generator {entry.reason}"  # no verdict on the code: the iteration is not spent
            result, blocker = _judge_iteration(sprint, path, contract, iteration, entry)
            if blocker:
                return blocker
            assert result is not None  # no result comes with a blocker
        record_iteration(contract, result)
        write_contract(path, contract)


def _trusted_entry(entry: IterationJournal | None, contract: SprintContract) -> IterationJournal | None:
    """A finished generator step for this revision of the contract (a changed contract asks for a new one)."""
    if entry is None or entry.contract_revision != contract.revision():
        return None
    return entry


def _judged_here(result: EvalResult, sprint: _Sprint, contract: SprintContract) -> bool:
    judged = result.judged
    return (judged is not None and judged.pin_id == sprint.pin.baseline.pin_id
            and judged.contract_revision == contract.revision()
            and judged.tree_digest == sprint.judge(contract).judged_digest())


def _reference(sprint: _Sprint, path: Path, contract: SprintContract) -> None:
    """The baseline's tests run once per contract and pin (a resumed sprint keeps what it found)."""
    folder = sprint.references(contract)
    if (folder / "done").is_file():
        return
    store = sprint.judge(contract).store
    tree = store.materialize(sprint.pin.baseline.manifest, sprint.pin.baseline.dependencies)
    try:
        run_flow(reference_flow, str(sprint.workspace), str(path), tree.to_dict(), str(folder),
                 executor=sprint.executor, config=sprint.project.to_dict())
    finally:
        remove_tree(tree)
    (folder / "done").write_text("")


def _judge_iteration(sprint: _Sprint, path: Path, contract: SprintContract, iteration: int,
                     entry: IterationJournal) -> tuple[EvalResult | None, str | None]:
    """The tester's step (when there is a tester), then the evaluation of the judged tree; and the
    environment's blocker, if it is to blame."""
    blocking, notes = generator_findings(entry)
    if sprint.tester:
        try:
            more_blocking, more_notes = _test(sprint, contract, iteration, entry)
        except EngineUnavailable as exc:
            return None, str(exc)  # no verdict on the code: the iteration is not spent
        blocking, notes = blocking + more_blocking, notes + more_notes
    tree = sprint.judge(contract).judged_tree()
    try:
        result = run_flow(evaluate_flow, str(sprint.workspace), str(path), executor=sprint.executor,
                          iteration=iteration, blocking_issues=blocking, notes=notes,
                          usage=generator_usage(entry, sprint.label or sprint.engine), config=sprint.project.to_dict(),
                          tree=tree.to_dict(), suppressions=[s.to_dict() for s in entry.change.suppressions],
                          references=str(sprint.references(contract)),
                          tester_mutation=entry.tester.mutation.to_dict() if entry.tester and entry.tester.mutation
                          else None,
                          touched=touched_files(entry))
        return result, environment_blocker(result, tree.root)
    finally:
        remove_tree(tree)


def _finish(workspace: Path, path: Path, contract: SprintContract, status: ContractStatus) -> None:
    if transition(contract, status):
        write_contract(path, contract)
    _emit(workspace, contract, status.value)


def _emit(workspace: Path, contract: SprintContract, outcome: str) -> None:
    """The contract's event; its payload names the workspace, so an automation acts on this one."""
    emit_event(event=f"sprintflow.contract.{outcome}",
               resource={"prefect.resource.id": f"sprintflow.contract.{contract.contract_id}",
                         "prefect.resource.name": contract.title},
               payload={"contractId": contract.contract_id, "specId": contract.spec_id,
                        "iterations": len(contract.iteration_history), "lastEvalId": contract.last_eval_id,
                        "workspace": str(workspace)})


@flow(name="sprint", log_prints=True)
@ends_in_error_states
def sprint_flow(workspace: str, contracts: str | None = None, engine: str | None = None,
                executor: str | None = None, max_iterations: int | None = None,
                retry_rework: bool = False, restart: bool = False) -> State[dict[str, str]]:
    """Run every contract that is not completed, in dependency order.

    The run ends Completed when every contract completed, else Failed: ``NeedsRework`` when any
    ran out of iterations, else ``Blocked`` when any could not run (see
    :mod:`sprintflow.orchestration.runs`); each state carries the outcomes (``run_flow`` returns them).

    Args:
        workspace: the project the generator works on.
        contracts: folder of contracts (default: WORKSPACE/.sprintflow/contracts).
        engine: generator engine command or preset (else SPRINTFLOW_GENERATOR_ENGINE, SPRINTFLOW_ENGINE,
            engines.generator). A tester engine (SPRINTFLOW_TESTER_ENGINE or engines.tester) adds
            the tester step to every iteration.
        executor: where strategies run: auto, docker or local (default: the config's executor.kind).
        max_iterations: iterations per contract (default: evaluator.maxIterations).
        retry_rework: also run contracts that ended needs-rework before (from their next iteration).
        restart: start over: forget a killed sprint's pin (the configuration and the workspace are
            pinned anew) and its iterations, and run contracts that ended needs-rework too.

    Returns:
        A state carrying contractId -> completed | needs-rework | blocked.
    """
    root = Path(workspace).resolve()
    with workspace_lock(root):
        if restart:
            release_pin(root)
        pin = pin_judge(root)
        retry_rework = retry_rework or restart
        project = pin.config
        print(f"Judged by the configuration pinned at {pin.pinned_at} from {pin.source or 'the defaults'}")
        folder = Path(contracts).resolve() if contracts else WorkspaceLayout(root).contracts_dir
        loaded = load_contracts(folder)
        command = resolve_engine("generator", explicit=engine, config=project.engines)
        sprint = _Sprint(root, pin, folder, command, executor, tester_engine(project),
                         engine_label(command, labels=project.engines.labels, workspace=root))
        limit = max_iterations or project.evaluator.max_iterations
        order = dependency_order({cid: c for cid, (_, c) in loaded.items()})
        progress = create_progress_artifact(progress=0.0, description="Contracts finished in this sprint run")
        outcomes: dict[str, str] = {}
        for done, cid in enumerate(order, start=1):
            path, contract = loaded[cid]
            outcomes[cid] = _run_one(sprint, path, contract, limit, retry_rework, outcomes)
            print(f"{cid}: {outcomes[cid]} after {len(contract.iteration_history)} iteration(s)")
            # In a sync flow the artifact call returns its id (its type also admits the async variant).
            update_progress_artifact(progress, progress=100.0 * done / len(order))  # type: ignore[arg-type]
        release_pin(root)
    verdict, failed_as = sprint_verdict(outcomes)
    print(verdict)
    create_markdown_artifact(_summary_markdown(loaded, outcomes, verdict), key="sprint-summary",
                             description=shortened(verdict))
    return verdict_state(outcomes, failed_as, verdict)


def sprint_verdict(outcomes: dict[str, str]) -> tuple[str, FailureKind | None]:
    """The sprint's verdict line and the kind of its failure (None: every contract completed).

    Example:
        >>> sprint_verdict({"c-1": "needs-rework", "c-2": "blocked"})
        ('NEEDS-REWORK c-1; blocked: c-2', FailureKind(name='NeedsRework', cause='code'))
        >>> sprint_verdict({"c-1": "completed"})
        ('COMPLETED c-1', None)
    """
    rework, blocked = failed_names(outcomes, "needs-rework"), failed_names(outcomes, "blocked")
    if rework:
        return f"NEEDS-REWORK {joined(rework)}" + (f"; blocked: {joined(blocked)}" if blocked else ""), NEEDS_REWORK
    if blocked:
        return f"BLOCKED {joined(blocked)}", BLOCKED
    return f"COMPLETED {joined(outcomes) or 'no contract to run'}", None


def _run_one(sprint: _Sprint, path: Path, contract: SprintContract, limit: int, retry_rework: bool,
             outcomes: dict[str, str]) -> str:
    if contract.status is ContractStatus.completed:
        return "completed"
    if contract.status is ContractStatus.needs_rework and not retry_rework:
        return "needs-rework"
    blockers = [d for d in contract.depends_on if outcomes.get(d) != "completed"]
    if blockers:
        print(f"{contract.contract_id} is blocked by {', '.join(blockers)}")
        _emit(sprint.workspace, contract, "blocked")
        return "blocked"
    status = _iterate(sprint, path, contract, limit)
    if not isinstance(status, ContractStatus):
        print(f"{contract.contract_id} is blocked by its environment, not its code (no iteration spent): {status}")
        _emit(sprint.workspace, contract, "blocked")
        return "blocked"
    _finish(sprint.workspace, path, contract, status)
    return status.value


def _summary_markdown(loaded: dict, outcomes: dict[str, str], verdict: str) -> str:
    lines = [verdict_heading(verdict) + "| contract | outcome | iterations | last eval |", "|---|---|---|---|"]
    for cid, outcome in outcomes.items():
        contract = loaded[cid][1]
        lines.append(f"| {cid} | {outcome} | {len(contract.iteration_history)} | {contract.last_eval_id or ''} |")
    return "\n".join(lines) + "\n\n" + eval_links_markdown(flow_run.id)
