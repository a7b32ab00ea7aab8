"""What a flow run tells an operator: its final state, its verdict, links to its EvalResults.

A Prefect flow run's state is the first thing an operator (and an automation)
sees. The Prefect UI's own views (a deployment's runs, the Runs page's Failed
filter) select runs by state *name* among Prefect's standard names, so every
failure ends in the standard ``Failed`` state (type FAILED), never a name of our
own, which those views would hide. What kind of failure it was is said three ways:

- the state message starts with the kind and its cause:
  ``NeedsRework (code): NEEDS-REWORK c-1``; the state's event
  (``prefect.flow-run.Failed``) carries it as ``prefect.state-message``, which an
  automation matches on (``NeedsRework*``);
- the run is tagged ``verdict:<kind>`` and ``failure:<cause>``, which the UI shows
  on the run and filters by (the event's related tags do not have them: the server
  caches a run's tags for its events from its first state on);
- the state's data, for Python callers (:func:`failure_kind`).

==============  ===========  ==================================================
kind            cause        when
==============  ===========  ==================================================
ContractFailed  code         an evaluation: the code under test failed its contract
NeedsRework     code         a sprint: a contract ran out of iterations
Blocked         environment  a contract could not be judged: its environment broke
                             (a missing tool, no network), or a dependency did not complete
InvalidInput    input        something the user gave is wrong (exit code 2 in the CLI)
NoVerdict       environment  the machinery failed, not the code (exit code 3 in the CLI)
==============  ===========  ==================================================

A run that passed ends ``Completed``; a bug in sprintflow ends plain ``Failed``
with its traceback in the run's logs and no ``verdict:`` tag; a process that died
ends ``Crashed``. Tasks follow the same rule: a strategy or criterion that fails
ends its task run ``Failed`` (kinds ``StrategyFailed``, ``CriterionFailed``).

Python callers get the judged value back with :func:`run_flow`, whether it passed
or failed; an error that stopped the run is raised as itself.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal, ParamSpec, TypeVar

from prefect import Flow
from prefect.states import Completed, Failed, State
from prefect.utilities.callables import ParameterSchema, parameter_schema
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
    "FailureKind",
    "Verdict",
    "error_state",
    "eval_artifacts_under",
    "eval_links_markdown",
    "ends_in_error_states",
    "failed_names",
    "failure_kind",
    "outcome_label",
    "tag_flow_run",
    "flow",
    "flow_run_url",
    "flow_state",
    "joined",
    "run_flow",
    "shortened",
    "state_value",
    "task_value",
    "verdict_heading",
    "verdict_line_of",
    "verdict_state",
    "without_heartbeats",
]

Cause = Literal["code", "environment", "input"]


@dataclass(frozen=True)
class FailureKind:
    """What kind of failure a Failed state is, and whose fault: the code under test, the environment, the input.

    Example:
        >>> NEEDS_REWORK.tags
        ('verdict:needs-rework', 'failure:code')
        >>> BLOCKED.message("c-1 is blocked")
        'Blocked (environment): c-1 is blocked'
    """

    name: str
    """The kind, in the state message: ``NeedsRework``."""
    cause: Cause
    """Whose fault it is: ``code`` (the agent's), ``environment`` (a broken machine), ``input`` (the user's)."""

    @property
    def tag(self) -> str:
        """The kind as a run tag: ``verdict:needs-rework``."""
        return "verdict:" + re.sub(r"(?<!^)(?=[A-Z])", "-", self.name).lower()

    @property
    def tags(self) -> tuple[str, str]:
        """The run's tags for this kind: the verdict and the cause (``failure:environment``)."""
        return self.tag, f"failure:{self.cause}"

    def message(self, line: str) -> str:
        """The state message: the kind and its cause, then the verdict line (one line, at most 1000 characters)."""
        return f"{self.name} ({self.cause}): {line}"[:1000]


CONTRACT_FAILED = FailureKind("ContractFailed", "code")
NEEDS_REWORK = FailureKind("NeedsRework", "code")
BLOCKED = FailureKind("Blocked", "environment")
INVALID_INPUT = FailureKind("InvalidInput", "input")
NO_VERDICT = FailureKind("NoVerdict", "environment")
STRATEGY_FAILED = FailureKind("StrategyFailed", "code")
CRITERION_FAILED = FailureKind("CriterionFailed", "code")

T = TypeVar("T")
logger = logging.getLogger("sprintflow.orchestration.runs")


class Verdict(Exception):
    """The data of a verdict's Failed state: the judged value, under the verdict line, and its kind.

    An exception because Prefect raises a Failed run's data where it insists on a
    value (a deployment run's process, ``state.result()``); :func:`state_value`
    unwraps it.
    """

    def __init__(self, value: Any, message: str, kind: FailureKind):
        super().__init__(message)
        self.value = value
        self.kind = kind

    def __reduce__(self) -> tuple[Any, ...]:  # pickled across processes (Dask workers): keep every field
        return Verdict, (self.value, str(self), self.kind)


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


def verdict_state(value: T, failed_as: FailureKind | None, line: str) -> State[T]:
    """What a flow or task returns: Completed when it passed, else the standard Failed with the verdict's kind.

    Either way the state carries ``value`` and a one-line message the UI shows:
    the verdict line, after the kind and its cause when it failed.

    Example:
        >>> state = verdict_state({"c-1": "needs-rework"}, NEEDS_REWORK, "c-1 needs rework")
        >>> state.type.value, state.name, state.message
        ('FAILED', 'Failed', 'NeedsRework (code): c-1 needs rework')
        >>> verdict_state(1, None, "passed").name
        'Completed'
    """
    if failed_as is None:
        return Completed(message=line[:1000], data=value)
    return Failed(message=failed_as.message(line), data=Verdict(value, line, failed_as))


def error_state(error: SprintflowError) -> State[Any]:
    """The Failed state of a run stopped by one of our errors: its kind and its one-line message, no traceback.

    Example:
        >>> from sprintflow.errors import WorkspaceError
        >>> state = error_state(WorkspaceError("workspace /x does not exist"))
        >>> state.name, state.message
        ('Failed', 'InvalidInput (input): workspace /x does not exist')
    """
    return Failed(message=_error_kind(error).message(str(error)), data=error)


def _error_kind(error: SprintflowError) -> FailureKind:
    return NO_VERDICT if error.exit_code == 3 else INVALID_INPUT


def failure_kind(state: Any) -> FailureKind | None:
    """The kind of a Failed state of ours (:func:`verdict_state`, :func:`error_state`); None for any other.

    Example:
        >>> failure_kind(verdict_state(1, BLOCKED, "c-1 is blocked")).name
        'Blocked'
        >>> failure_kind(verdict_state(1, None, "passed")) is None
        True
    """
    if not isinstance(state, State) or not state.is_failed():
        return None
    data = state.result(raise_on_failure=False)
    if isinstance(data, Verdict):
        return data.kind
    if isinstance(data, SprintflowError):
        return _error_kind(data)
    return None


def verdict_line_of(state: State[Any]) -> str:
    """The verdict line a state of ours carries, without its kind: what a run that ends as this one repeats.

    Example:
        >>> verdict_line_of(verdict_state(1, NEEDS_REWORK, "NEEDS-REWORK c-1"))
        'NEEDS-REWORK c-1'
    """
    data = state.result(raise_on_failure=False) if state.is_failed() else None
    if isinstance(data, Verdict):
        return str(data)
    return state.message or str(state.name or "")


def outcome_label(state: State[Any]) -> str:
    """How a finished run ended, in a word or two: ``Completed``, ``Failed: NeedsRework``, ``Crashed``.

    Example:
        >>> outcome_label(verdict_state(1, NEEDS_REWORK, "c-1"))
        'Failed: NeedsRework'
    """
    kind = failure_kind(state)
    return f"{state.name}: {kind.name}" if kind else str(state.name)


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

    # Why: Prefect builds the flow's parameter schema when the flow is declared, and the first one
    # imports pydantic.v1 to look for v1 models: 80 ms of every sprintflow process that imports a
    # flow (benchmarks/cli.py). Only a deployment reads a schema, and it builds its own
    # (RunnerDeployment, `prefect deploy`); this one is built the first time it is asked for.
    _parameter_schema: ParameterSchema | None = None

    def __init__(self, fn: Callable[P, R], **options: Any) -> None:
        with _parameter_schema_on_demand():
            super().__init__(fn, **options)

    @property
    def parameters(self) -> ParameterSchema:
        if self._parameter_schema is None:
            self._parameter_schema = parameter_schema(self.fn)
        return self._parameter_schema

    @parameters.setter
    def parameters(self, schema: ParameterSchema | None) -> None:
        self._parameter_schema = schema

    def serialize_parameters(self, parameters: dict[str, Any]) -> dict[str, Any]:
        return {key: _jsonable(value) for key, value in parameters.items()}


@contextmanager
def _parameter_schema_on_demand() -> Iterator[None]:
    """While a :class:`PlainParametersFlow` is declared, Prefect's ``Flow`` builds no parameter schema.

    Prefect's own function is put back, not whatever was there: two declarations in two threads
    cannot leave the stand-in behind.
    """
    import prefect.flows

    prefect.flows.parameter_schema = lambda fn: None  # type: ignore[assignment,return-value]
    try:
        yield
    finally:
        prefect.flows.parameter_schema = parameter_schema


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
    """Wrap a flow function so one of our errors ends its run in :func:`error_state`, and a failure is tagged.

    Prefect would log the error with a traceback and call the state plain
    ``Failed`` with no word of what went wrong; an operator needs the one line that
    says what to fix, and automations need to tell bad input (``InvalidInput``)
    from a broken machine (``NoVerdict``). A Python caller still gets the error
    raised (the state's data). Every failure of ours, a verdict or an error, tags
    the run (:func:`tag_flow_run`).
    """
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            returned = fn(*args, **kwargs)
        except SprintflowError as error:
            _log_error(error)
            returned = error_state(error)
        kind = failure_kind(returned)
        if kind is not None:
            tag_flow_run(kind)
        return returned

    # Prefect builds the run's parameter model from the signature; its annotations, strings under
    # `from __future__ import annotations`, would be read in this module, which knows none of the
    # flow's types (its parameter models): give it them read in the flow's own module.
    wrapper.__signature__ = inspect.signature(fn, eval_str=True)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def tag_flow_run(kind: FailureKind) -> None:
    """Add the kind's tags (``verdict:needs-rework``, ``failure:code``) to the flow run this code runs in.

    Before the run's final state is set: whoever sees the run failed sees its tags.
    A server that refuses the update costs the run its tags, not its verdict: logged.
    """
    import httpx
    from prefect.client.orchestration import get_client
    from prefect.context import FlowRunContext
    from prefect.exceptions import PrefectException

    context = FlowRunContext.get()
    run = context.flow_run if context else None
    if run is None:
        return
    tags = list(dict.fromkeys([*run.tags, *kind.tags]))
    try:
        with get_client(sync_client=True) as client:
            client.update_flow_run(run.id, tags=tags)
    except (PrefectException, httpx.HTTPError) as error:  # the API's refusals and a server gone away
        logger.warning("could not tag flow run %s with %s: %s", run.id, ", ".join(kind.tags), error)
        return
    run.tags = tags


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
    return state_value(flow_state(flow, *args, **kwargs))


def flow_state(flow: Callable[..., Any], *args: Any, **kwargs: Any) -> State[Any]:
    """Run ``flow`` from Python (without heartbeats, without parameter validation) and return its final state."""
    with without_heartbeats():
        return _called_from_python(flow)(*args, return_state=True, **kwargs)


@functools.cache
def _called_from_python(flow: Callable[..., Any]) -> Callable[..., Any]:
    """``flow`` without Prefect's parameter validation, for a caller that passes the flow's own types.

    Why: Prefect builds a pydantic model of the flow's signature on every call to validate its
    parameters (about 40 ms of CPU for the evaluate flow, a sixth of a sprint iteration's client
    cost). Validation casts JSON into the annotated types, which a deployment's run needs and gets
    (it calls the flow itself); every parameter of our flows is a plain JSON type, and our callers
    pass exactly those. A copy of the same class (Prefect's ``with_options`` would make a plain
    ``Flow``, whose parameter encoding imports FastAPI), with the flow's name: the runs and the UI
    are the same.
    """
    if not isinstance(flow, PlainParametersFlow):
        return flow
    unvalidated = copy.copy(flow)
    unvalidated.should_validate_parameters = False
    return unvalidated


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
    try:
        return state.result(raise_on_failure=True)
    except Verdict as verdict:
        return verdict.value


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


def verdict_heading(verdict: str) -> str:
    r"""A summary artifact's top: the verdict's first line as its heading, any other lines below it as text.

    A line break inside a markdown heading ends it, and what follows would run into the page unmarked.

    Example:
        >>> verdict_heading("InvalidInput: 2 problems\nc-1.json: line 3: bad\n")
        '# InvalidInput: 2 problems\n\nc-1.json: line 3: bad\n\n'
        >>> verdict_heading("COMPLETED c-1")
        '# COMPLETED c-1\n\n'
    """
    first, _, rest = verdict.strip().partition("\n")
    body = "\n".join(line.rstrip() for line in rest.strip().splitlines())
    return f"# {first.strip()}\n\n" + (f"{body}\n\n" if body else "")


def shortened(text: str, limit: int = 250) -> str:
    r"""``text`` on one line in at most ``limit`` characters: cut at a word boundary, with an ellipsis.

    For artifact descriptions, which the UI shows whole on a card, where a word cut in two reads as a typo.

    Example:
        >>> shortened("NEEDS-REWORK sprint-spec-1, sprint-spec-2", limit=30)
        'NEEDS-REWORK sprint-spec-1…'
        >>> shortened("short\nenough")
        'short enough'
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit - 1]
    if flat[limit - 1] != " " and " " in cut:  # mid-word: back to the last space (a single huge word is cut)
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


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
