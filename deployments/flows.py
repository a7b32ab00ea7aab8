"""Deployment entry flows: one typed parameter model each, so the Prefect UI shows a form.

Each entry flow takes ONE pydantic model (Prefect renders its fields, defaults
and descriptions as a form; a field without a working default is required; the
UI renders a description as markdown, so a path with ``<placeholders>`` goes in
backticks, or its placeholder would vanish as an HTML tag),
resolves the workspace — a local path, or a git repository and branch cloned or
updated into a checkout cache — and paths the way the CLI does
(:mod:`sprintflow.io.inputs`), then calls the existing flow as a subflow.

The run the operator triggered carries what they need: it ends in the subflow's
verdict state (:mod:`sprintflow.orchestration.runs`), logs the verdict line, and publishes a
summary artifact linking to every EvalResult artifact under it. Bad input ends
it Failed (``InvalidInput``) with a one-line message, before any work starts; so
does a missing Docker engine (``NoVerdict``): a deployment run never falls back
to the host (:func:`deployment_executor`). A run holds its workspace while it
works there; another run on it waits its turn (:mod:`sprintflow.deployments.queue`).

``prefect.yaml`` points its entrypoints here (``deployments/flows.py:<name>``),
and ``sprintflow serve`` serves the same deployments from one process.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, overload

from prefect.artifacts import create_markdown_artifact
from prefect.events import emit_event
from prefect.runtime import flow_run
from prefect.states import State
from pydantic import BaseModel, Field

from sprintflow.engines import resolve_engine
from sprintflow.errors import ExecutorUnavailable, InputError, WorkspaceError
from sprintflow.evaluate.config import load_project_config
from sprintflow.flows.evaluate import evaluate_flow
from sprintflow.flows.score import score_flow
from sprintflow.flows.sprint import sprint_flow
from sprintflow.io.checkouts import checkout_folder
from sprintflow.io.files import read_ndjson
from sprintflow.io.inputs import resolve_input, resolve_output
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.kinds import ExecutorName
from sprintflow.orchestration.runs import (
    ends_in_error_states,
    eval_links_markdown,
    failure_kind,
    flow,
    shortened,
    state_value,
    verdict_heading,
    verdict_line_of,
    verdict_state,
    without_heartbeats,
)
from sprintflow.sandbox.executors import docker_available
from sprintflow.schemas import ExecutorConfig
from sprintflow.scoring.prepare import DEFAULT_CASE_TIMEOUT
from sprintflow.settings import Settings, get_settings
from sprintflow.sprint.contracts import load_contracts
from sprintflow.tasks.workspace import checkout

from .queue import held_lock, workspace_turn

__all__ = [
    "EvaluateParams",
    "ReportParams",
    "ScoreParams",
    "SprintParams",
    "WorkspaceSource",
    "deployment_executor",
    "evaluate_workspace",
    "held_workspace",
    "report_workspace",
    "resolve_workspace",
    "score_skill_scheduled",
    "sprint_workspace",
    "task_runner_for",
]

TASK_RUNNER_ENV = Settings.variable("task_runner")

EXECUTOR_HELP = ("Where strategy commands run: docker, or local (on the worker's host, without isolation). "
                 "auto means docker in a deployment run: without a Docker engine the run ends Failed "
                 "(NoVerdict), never on the host. Default: the config's executor.kind.")


class WorkspaceSource(BaseModel):
    """Where the workspace comes from: a folder on the worker, or a git repository and branch."""

    workspace: str = Field(..., description="Folder of the project: absolute, or relative to the folder "
                                            "`sprintflow serve` or the worker started in (SPRINTFLOW_ROOT). "
                                            "With git_url: a folder inside the checkout ('.' for its root).")
    git_url: str | None = Field(None, description="Clone this repository (any URL git understands, "
                                                  "including a local path or file://) into the "
                                                  "checkout cache and work there.")
    git_branch: str = Field("main", description="Branch of git_url to check out; updated to its "
                                                "latest commit on every run.")


class EvaluateParams(WorkspaceSource):
    """Evaluate a workspace against one contract."""

    contract: str = Field(..., description="SprintContract JSON file: absolute, or relative to the workspace "
                                           "(else to the folder serve started in), e.g. "
                                           "`.sprintflow/contracts/<contractId>.json`.")
    executor: ExecutorName | None = Field(None, description=EXECUTOR_HELP)
    use_cache: bool = Field(True, description="Reuse strategy results of identical content and config.")
    task_runner: Literal["threads", "dask"] | None = Field(
        None, description="How strategies fan out: threads, or dask (needs prefect-dask). Default: "
                          "SPRINTFLOW_TASK_RUNNER, else threads.")
    dask_address: str | None = Field(None, description="Scheduler of a running Dask cluster "
                                                       "(tcp://host:8786); default: a local cluster.")
    dask_workers: int = Field(2, ge=1, description="Worker processes of the local Dask cluster.")


class SprintParams(WorkspaceSource):
    """Run a sprint: generator then evaluator until each contract is completed or needs rework."""

    contracts: str | None = Field(None, description="Folder of contracts, relative to the workspace "
                                                    "(default .sprintflow/contracts).")
    engine: str | None = Field(None, description="Generator engine command or preset (claude, codex, gemini, "
                                                 "aider). Empty: SPRINTFLOW_GENERATOR_ENGINE or SPRINTFLOW_ENGINE "
                                                 "where serve or the worker runs, else the workspace config's "
                                                 "engines.generator; a run with none of them fails at once.")
    executor: ExecutorName | None = Field(None, description=EXECUTOR_HELP)
    max_iterations: int | None = Field(None, ge=1, description="Iterations per contract (default: "
                                                               "evaluator.maxIterations).")
    retry_rework: bool = Field(False, description="Also run contracts that ended needs-rework before.")


class ScoreParams(WorkspaceSource):
    """Score a skill's prompt on its held-out cases; emit an event when the score drops."""

    skill: str = Field(..., description="Skill name: cases are read from `evals/<skill>/cases.jsonl`.")
    cases: str | None = Field(None, description="Cases file (default `evals/<skill>/cases.jsonl`).")
    prompt: str | None = Field(None, description="Prompt file (default from the cases' folder).")
    engine: str | None = Field(None, description="Engine command (default: SPRINTFLOW_ENGINE or config).")
    concurrency: int = Field(8, ge=1, le=256, description="Engines running at once.")
    timeout: float = Field(DEFAULT_CASE_TIMEOUT, gt=0, description="Seconds per case.")


class ReportParams(WorkspaceSource):
    """Report on a workspace's history: HTML, CSV and Parquet files, and Prefect artifacts."""

    since_days: int | None = Field(7, ge=1, description="Only the last N days (empty: all history).")
    out: str | None = Field(None, description="Folder for the files, relative to the folder serve started "
                                              "in (default: the workspace's .sprintflow/report).")
    key_prefix: str = Field("report", pattern=r"^[a-z0-9-]+$",
                            description="Artifact key prefix; one per reported workspace.")


def resolve_workspace(source: WorkspaceSource) -> Path:
    """The workspace folder: ``source.workspace`` itself, or inside a fresh checkout of ``git_url``."""
    root = Path(checkout(source.git_url, source.git_branch)) if source.git_url else Path(".")
    workspace = (root / source.workspace).resolve()
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    return workspace


@contextmanager
def held_workspace(source: WorkspaceSource) -> Iterator[Path]:
    """The run's workspace, held for the block: queued behind every other run on it (:mod:`.queue`).

    A git workspace is checked out during the turn (a checkout replaces the folder); a
    missing folder fails before it.
    """
    folder = None if source.git_url else resolve_workspace(source)
    with workspace_turn(folder or checkout_folder(str(source.git_url))):
        workspace = folder or resolve_workspace(source)
        with held_lock(workspace):
            yield workspace


@overload
def _inside(workspace: Path, path: str, what: str) -> str: ...
@overload
def _inside(workspace: Path, path: None, what: str) -> None: ...
def _inside(workspace: Path, path: str | None, what: str) -> str | None:
    return None if path is None else str(resolve_input(workspace, path, what))


def _finish(child: State[Any], value: Any) -> State[Any]:
    """End the triggered run as its subflow ended: the verdict line logged, a summary artifact, the same state."""
    verdict = verdict_line_of(child)
    _summarize(verdict, eval_links_markdown(flow_run.id))
    return verdict_state(value, failure_kind(child), verdict)


def _summarize(line: str, body: str) -> None:
    """The run's own summary artifact, ``<flow>-summary``: ``line`` as its heading, ``body`` below; ``line`` logged.

    On the run itself, not only on its subflows: an operator (or an automation) looking at the
    run that was triggered finds what it did there.
    """
    print(line)
    create_markdown_artifact(verdict_heading(line) + body, key=f"{flow_run.flow_name or 'run'}-summary",
                             description=shortened(line))


def deployment_executor(kind: str | None, config: ExecutorConfig) -> str:
    """The executor of a deployment run: ``auto`` means Docker, and Docker must answer.

    At a terminal ``auto`` may fall back to the host with a warning someone reads; a
    scheduled or triggered run has nobody watching, and the fallback turned a stopped
    Docker engine into a green, unsandboxed run. So a deployment run never downgrades
    its isolation: without an engine it ends without a verdict (``NoVerdict``, the
    environment's fault); ``local``, asked for by name (the field or the config), runs on the host.

    Example:
        >>> from sprintflow.schemas import ExecutorConfig
        >>> deployment_executor("local", ExecutorConfig())
        'local'
    """
    kind = ExecutorName(kind or config.kind)
    if kind is ExecutorName.LOCAL:
        return kind.value
    if not docker_available():
        raise ExecutorUnavailable(f"executor {kind}: no Docker engine answers, and a deployment run never falls "
                                  "back to the host (start dockerd, or set executor local to run unsandboxed)")
    return ExecutorName.DOCKER.value


def task_runner_for(kind: str | None, address: str | None = None, workers: int = 2) -> Any:
    """The task runner for the evaluate fan-out: ``threads`` (Prefect's default) or ``dask``."""
    kind = kind or get_settings().task_runner or "threads"
    if kind == "threads":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner()
    if kind != "dask":
        raise InputError(f"task runner {kind!r}: use threads or dask")
    try:
        from prefect_dask import DaskTaskRunner
    except ImportError:
        raise InputError("task runner dask needs prefect-dask: pip install 'sprintflow[dask]'") from None
    if address:
        return DaskTaskRunner(address=address)
    return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "processes": True,
                                          "threads_per_worker": 2, "dashboard_address": None})


@flow(name="evaluate-workspace", log_prints=True)
@ends_in_error_states
def evaluate_workspace(params: EvaluateParams) -> State[dict[str, Any]]:
    """Evaluate a workspace (a folder, or a git branch) against a contract; ends in the verdict's state,
    carrying the EvalResult."""
    with held_workspace(params) as workspace:
        contract = _inside(workspace, params.contract, "contract")
        executor = deployment_executor(params.executor, load_project_config(workspace).executor)  # no Docker: fail
        runner = task_runner_for(params.task_runner, params.dask_address, params.dask_workers)
        with without_heartbeats():  # this run's own heartbeats cover the process
            child = evaluate_flow.with_options(task_runner=runner)(
                str(workspace), contract, executor=executor, use_cache=params.use_cache, return_state=True)
    return _finish(child, state_value(child).model_dump(mode="json", by_alias=True))


@flow(name="sprint-workspace", log_prints=True)
@ends_in_error_states
def sprint_workspace(params: SprintParams) -> State[dict[str, str]]:
    """Run a sprint on a workspace (a folder, or a git branch); ends in the sprint's verdict state,
    carrying contractId -> outcome."""
    with held_workspace(params) as workspace:
        contracts = _inside(workspace, params.contracts, "contracts folder")
        project = load_project_config(workspace)  # bad input fails here, in one line, before any work
        load_contracts(Path(contracts) if contracts else WorkspaceLayout(workspace).contracts_dir)
        resolve_engine("generator", explicit=params.engine, config=project.engines, flag="the engine field")
        executor = deployment_executor(params.executor, project.executor)
        with without_heartbeats():  # this run's own heartbeats cover the process
            child = sprint_flow(str(workspace), contracts, engine=params.engine, executor=executor,
                                max_iterations=params.max_iterations, retry_rework=params.retry_rework,
                                return_state=True)
    return _finish(child, state_value(child))


def _last_score(root: Path, skill: str) -> float | None:
    last = None
    for line in read_ndjson(WorkspaceLayout(root).scores_file):
        if line.record and line.record.get("skill") == skill and line.record.get("score") is not None:
            last = float(line.record["score"])
    return last


@flow(name="score-skill-scheduled", log_prints=True)
@ends_in_error_states
def score_skill_scheduled(params: ScoreParams) -> State[dict[str, Any]]:
    """Score a skill and emit ``sprintflow.score.reported`` (and ``.dropped`` below the last score).

    Automations react to these events (``deployments/automations.yaml``).
    """
    with held_workspace(params) as root:
        previous = _last_score(root, params.skill)
        report = score_flow(params.skill, root=str(root), cases=_inside(root, params.cases, "cases file"),
                            prompt=_inside(root, params.prompt, "prompt file"), engine=params.engine,
                            concurrency=params.concurrency, timeout=params.timeout)
    payload = {"skill": report.skill, "score": report.score, "previousScore": previous,
               "passed": report.passed, "total": report.total, "failedIds": report.failed_ids[:50]}
    resource = {"prefect.resource.id": f"sprintflow.skill.{report.skill}",
                "prefect.resource.name": report.skill}
    emit_event(event="sprintflow.score.reported", resource=resource, payload=payload)
    if previous is not None and report.score < previous:
        print(f"Score of {report.skill} dropped: {previous:.3f} -> {report.score:.3f}")
        emit_event(event="sprintflow.score.dropped", resource=resource, payload=payload)
    line = f"SCORED {report.skill} {report.score:.3f} ({report.passed}/{report.total} cases)"
    if previous is not None:
        line += f"; {'dropped' if report.score < previous else 'was'} {previous:.3f} before"
    failed = ", ".join(f"`{case}`" for case in report.failed_ids[:50])
    _summarize(line, f"Failed cases: {failed}\n" if failed else "Every case passed.\n")
    return verdict_state(payload, None, line)


@flow(name="report-workspace", log_prints=True)
@ends_in_error_states
def report_workspace(params: ReportParams) -> State[Mapping[str, Any]]:
    """Report on a workspace's history over the last ``since_days`` days; the summary's first line is the
    run's message, the summary itself an artifact of the run (the tables are the report subflow's)."""
    from sprintflow.flows.report import report_flow  # lazily: reporting pulls in matplotlib

    since = None
    if params.since_days:
        since = (datetime.now(UTC) - timedelta(days=params.since_days)).date().isoformat()
    out = resolve_output(params.out)
    with held_workspace(params) as workspace:
        result = report_flow(str(workspace), str(out) if out else None, since, params.key_prefix)
    line = f"REPORTED {workspace}: " + (result["summary"][0].removeprefix("sprintflow report: ")
                                         if result["summary"] else "nothing to report")
    files = "".join(f"- {kind}: `{path}`\n" for kind, path in result["files"].items())
    _summarize(line, "```\n" + "\n".join(result["summary"]) + "\n```\n\n" + files)
    return verdict_state(result, None, line)
