"""What a flow run tells an operator: its final state, its verdict line, links to its EvalResults.

A Prefect flow run's state is the first thing an operator (and an automation)
sees, so sprintflow's flows end in a state that says the verdict:

==============  =========  ====================================================
state name      type       when
==============  =========  ====================================================
Completed       COMPLETED  the contract passed; every contract of a sprint completed
ContractFailed  FAILED     an evaluation: the code under test failed its contract
NeedsRework     FAILED     a sprint: a contract ran out of iterations
Blocked         FAILED     a contract could not be judged: its environment broke
                           (a missing tool, no network), or a dependency did not complete
InvalidInput    FAILED     something the user gave is wrong (exit code 2 in the CLI)
NoVerdict       FAILED     the machinery failed, not the code (exit code 3 in the CLI)
Failed          FAILED     a bug in sprintflow (its traceback is in the run's logs)
Crashed         CRASHED    the process running the flow died
==============  =========  ====================================================

Prefect emits ``prefect.flow-run.<state name>`` for each, which automations key on.
Tasks follow the same rule: a strategy or criterion that fails ends its task run
Failed (``StrategyFailed``, ``CriterionFailed``).

Python callers get the judged value back with :func:`run_flow`, whether it passed
or failed; an error that stopped the run is raised as itself.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from prefect import Flow
from prefect.states import Completed, Failed, State
from pydantic_core import to_jsonable_python

from sprintflow.errors import SprintflowError

__all__ = [
    "BLOCKED",
    "CONTRACT_FAILED",
    "CRITERION_FAILED",
    "INVALID_INPUT",
    "NEEDS_REWORK",
    "NO_VERDICT",
    "STRATEGY_FAILED",
    "VERDICT_STATES",
    "Verdict",
    "error_state",
    "eval_artifacts_under",
    "eval_links_markdown",
    "ends_in_error_states",
    "failed_names",
    "flow",
    "flow_run_url",
    "joined",
    "run_flow",
    "state_value",
    "task_value",
    "verdict_state",
    "without_heartbeats",
]

CONTRACT_FAILED = "ContractFailed"
NEEDS_REWORK = "NeedsRework"
BLOCKED = "Blocked"
INVALID_INPUT = "InvalidInput"
NO_VERDICT = "NoVerdict"
STRATEGY_FAILED = "StrategyFailed"
CRITERION_FAILED = "CriterionFailed"
VERDICT_STATES = frozenset({CONTRACT_FAILED, NEEDS_REWORK, BLOCKED, STRATEGY_FAILED, CRITERION_FAILED})
"""Failed states that carry a verdict (their data is the judged value), not an error."""

T = TypeVar("T")
logger = logging.getLogger("sprintflow.runs")


class Verdict(Exception):
    """The data of a verdict's Failed state: the judged value, under the verdict line.

    An exception because Prefect raises a Failed run's data where it insists on a
    value (a deployment run's process, ``state.result()``); :func:`state_value`
    unwraps it.
    """

    def __init__(self, value: Any, message: str):
        super().__init__(message)
        self.value = value


class _OurFailuresInOneLine(logging.Filter):
    """Drop Prefect's end-of-run traceback for runs that ended Failed on purpose.

    A deployment run's process raises its Failed state's data and logs it as
    "Engine execution exited with unexpected exception" with a traceback; for a
    verdict or one of our errors the state's one-line message already says it all.
    A bug in sprintflow keeps its traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, (Verdict, SprintflowError))


logging.getLogger("prefect.flow_runs").addFilter(_OurFailuresInOneLine())


def verdict_state(value: T, failed_as: str | None, message: str) -> State[T]:
    """What a flow or task returns: Completed when it passed, else Failed under the verdict's name.

    Either way the state carries ``value`` and a one-line ``message`` the UI shows.

    Example:
        >>> state = verdict_state({"c-1": "needs-rework"}, NEEDS_REWORK, "c-1 needs rework")
        >>> state.type.value, state.name, state.message
        ('FAILED', 'NeedsRework', 'c-1 needs rework')
        >>> verdict_state(1, None, "passed").name
        'Completed'
    """
    if failed_as is None:
        return Completed(message=message, data=value)
    return Failed(name=failed_as, message=message, data=Verdict(value, message))


def error_state(error: SprintflowError) -> State[Any]:
    """The Failed state of a run stopped by one of our errors: its one-line message, no traceback.

    Example:
        >>> from sprintflow.errors import WorkspaceError
        >>> state = error_state(WorkspaceError("workspace /x does not exist"))
        >>> state.name, state.message
        ('InvalidInput', 'workspace /x does not exist')
    """
    name = NO_VERDICT if error.exit_code == 3 else INVALID_INPUT
    return Failed(name=name, message=str(error), data=error)


F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
R = TypeVar("R")


class PlainParametersFlow(Flow[P, R]):
    """A Prefect flow whose run parameters are stored as pydantic encodes them.

    Prefect encodes them with FastAPI's ``jsonable_encoder``, and importing FastAPI
    costs 0.3 s, a seventh of a cached ``sprintflow evaluate`` at a terminal
    (``benchmarks/cli.py``). sprintflow's parameters are plain JSON values (strings,
    numbers, lists and dicts of them), which pydantic encodes the same way; what it
    cannot encode is stored as ``<TypeName>``, as Prefect does.

    Example:
        >>> @flow(name="example")
        ... def example(workspace: str, notes: list[str] | None = None) -> None: ...
        >>> example.serialize_parameters({"workspace": "/w", "notes": ["a"], "lock": object()})
        {'workspace': '/w', 'notes': ['a'], 'lock': '<object>'}
    """

    def serialize_parameters(self, parameters: dict[str, Any]) -> dict[str, Any]:
        return {key: _jsonable(value) for key, value in parameters.items()}


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except Exception:  # any value pydantic cannot encode (Prefect falls back the same way)
        return f"<{type(value).__name__}>"


def flow(**options: Any) -> Callable[[Callable[P, R]], Flow[P, R]]:
    """Prefect's ``@flow(...)`` for sprintflow's flows: the same options, a :class:`PlainParametersFlow`."""
    def decorate(fn: Callable[P, R]) -> Flow[P, R]:
        return PlainParametersFlow(fn, **options)
    return decorate


def ends_in_error_states(fn: F) -> F:
    """Wrap a flow function so one of our errors ends its run in :func:`error_state`.

    Prefect would log the error with a traceback and call the state plain
    ``Failed``; an operator needs the one line that says what to fix, and
    automations need to tell bad input (``InvalidInput``) from a broken machine
    (``NoVerdict``). A Python caller still gets the error raised (the state's data).
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except SprintflowError as error:
            _log_error(error)
            return error_state(error)

    # Prefect builds the run's parameter model from the signature; its annotations, strings under
    # `from __future__ import annotations`, would be read in this module, which knows none of the
    # flow's types (its parameter models): give it them read in the flow's own module.
    wrapper.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def _log_error(error: SprintflowError) -> None:
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        run_logger: logging.Logger | logging.LoggerAdapter[logging.Logger] = get_run_logger()
    except MissingContextError:
        run_logger = logger
    for line in str(error).splitlines() or [type(error).__name__]:
        run_logger.error("error: %s", line)


def run_flow(flow: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``flow`` (without heartbeats) and return what it judged, whether the verdict passed or failed.

    Raises the error that stopped a run with no verdict (our own errors as
    themselves, so the CLI prints them with their exit code).
    """
    with without_heartbeats():
        state = flow(*args, return_state=True, **kwargs)
    return state_value(state)


@contextmanager
def without_heartbeats() -> Iterator[None]:
    """Flow runs started in this block send no heartbeats.

    Why: Prefect 3.9's heartbeat thread sleeps in one-second steps and every
    flow run waits for it to wake before it ends, about 1 s per flow run
    (``benchmarks/cli.py`` measures it): more than a cached evaluation costs.
    Heartbeats let a server tell a crashed deployment run from a slow one; a
    run watched from a terminal needs none, and a subflow runs in a process
    whose top-level run still sends them.
    """
    from prefect.context import SettingsContext, get_settings_context

    # A copy that changes one field, not ``temporary_settings``: that validates the whole
    # settings tree again (40 ms, 2 % of a cached evaluation) to set a value known to be valid.
    context = get_settings_context()
    settings = context.settings
    flows = settings.flows.model_copy(update={"heartbeat_frequency": None})
    with SettingsContext(profile=context.profile, settings=settings.model_copy(update={"flows": flows})):
        yield


def state_value(state: State[Any]) -> Any:
    """The value of a finished run: its result, or the verdict a verdict state carries.

    Raises:
        the error of a run that ended in any other Failed or Crashed state.
    """
    if state.is_failed() and state.name in VERDICT_STATES:
        verdict = state.result(raise_on_failure=False)
        return verdict.value if isinstance(verdict, Verdict) else verdict
    return state.result(raise_on_failure=True)


def task_value(future: Any) -> Any:
    """A task future's value, a failed strategy's or criterion's result included (see :func:`state_value`)."""
    future.wait()
    return state_value(future.state)


def flow_run_url(flow_run_id: Any) -> str | None:
    """The flow run's page in the Prefect UI, when the API has one."""
    from prefect.utilities.urls import url_for

    return url_for("flow-run", obj_id=flow_run_id)


def failed_names(outcomes: dict[str, str], wanted: str) -> list[str]:
    """The keys of ``outcomes`` whose value is ``wanted``, in order.

    Example:
        >>> failed_names({"a": "completed", "b": "blocked"}, "blocked")
        ['b']
    """
    return [key for key, value in outcomes.items() if value == wanted]


def joined(names: Iterable[str], limit: int = 5) -> str:
    """Names for a one-line message, the rest counted.

    Example:
        >>> joined(["a", "b", "c"], limit=2)
        'a, b and 1 more'
    """
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"



def eval_artifacts_under(flow_run_id: Any) -> list[Any]:
    """Every EvalResult markdown artifact of the flow run and of the runs under it, oldest first."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        ArtifactFilterKey,
        ArtifactFilterType,
        FlowRunFilter,
        FlowRunFilterParentFlowRunId,
    )

    with get_client(sync_client=True) as client:
        runs, frontier = [flow_run_id], [flow_run_id]
        while frontier:  # subflows: a sprint's evaluations sit two levels under a deployment's run
            children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=frontier)))
            frontier = [child.id for child in children]
            runs += frontier
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=runs), type=ArtifactFilterType(any_=["markdown"]),
            key=ArtifactFilterKey(like_="eval-")))
    return sorted((a for a in artifacts if a.key and a.key.startswith("eval-")), key=lambda a: a.created)


def eval_links_markdown(flow_run_id: Any) -> str:
    """A markdown list linking every EvalResult artifact under the flow run (see :func:`eval_artifacts_under`)."""
    if flow_run_id is None:
        return ""
    from prefect.settings import get_current_settings

    base = (get_current_settings().ui_url or "").rstrip("/")
    artifacts = eval_artifacts_under(flow_run_id)
    if not artifacts:
        return "No EvalResult was published by this run.\n"
    lines = [f"## EvalResults ({len(artifacts)})", ""]
    lines += [f"- [{a.key}]({base}/artifacts/artifact/{a.id}): {a.description or ''}" for a in artifacts]
    return "\n".join(lines) + "\n"
