"""What the tester is asked: its settings and engine, the mode of its step, the prompt it reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from sprintflow.engines import resolve_engine
from sprintflow.errors import ConfigError
from sprintflow.schemas import ProjectConfig, SprintContract, TesterConfig
from sprintflow.schemas.journal import TesterJournal
from sprintflow.schemas.testrun import TestRun
from sprintflow.settings import Settings, get_settings
from sprintflow.testruns.testrun import declared_status_codes

from .record import MAX_FAILURES_KEPT

__all__ = ["TESTER_MODES", "TesterMode", "next_mode", "tester_engine", "tester_prompt", "tester_settings"]

TesterMode = Literal["test", "retry", "resume"]
TESTER_MODES: tuple[str, ...] = ("test", "retry", "resume")

_MODE_TEXT = {
    "test": "First run: write tests for every success criterion and every declared status "
            "code, then run them.",
    "retry": "The code changed since your last run: re-run the existing tests and rewrite only "
             "tests that no longer apply (an interface that moved). Never weaken a test to make "
             "it pass: a failing test is the coder's feedback.",
    "resume": "An earlier tester step stopped before it finished: keep what the tests folder "
              "holds and complete what is missing, then run the tests.",
}


def tester_settings(project: ProjectConfig) -> TesterConfig:
    """The project's ``[tester]`` settings, or the defaults.

    Example:
        >>> tester_settings(ProjectConfig()).tests_dir
        'tests/sprintflow'
    """
    return project.tester or TesterConfig()


def tester_engine(project: ProjectConfig, environ: Mapping[str, str] | None = None) -> str | None:
    """The tester's engine command, or None when no engine is named for the tester.

    Only ``SPRINTFLOW_TESTER_ENGINE`` or ``engines.tester`` switch the tester on:
    the catch-all ``SPRINTFLOW_ENGINE`` is ignored here, so setting it for the
    other roles does not start writing tests into a project that never asked.

    Example:
        >>> tester_engine(ProjectConfig(), {"SPRINTFLOW_TESTER_ENGINE": "claude"})
        'claude -p --output-format json'
        >>> tester_engine(ProjectConfig(), {"SPRINTFLOW_ENGINE": "claude"}) is None
        True
    """
    settings = get_settings() if environ is None else Settings.of(environ)
    try:
        return resolve_engine("tester", config=project.engines, settings=settings.model_copy(update={"engine": None}))
    except ConfigError:
        return None


def next_mode(current: TesterJournal | None, previous: TesterJournal | None) -> TesterMode:
    """The mode of an iteration's tester step, from the journal entries of the tester steps.

    ``current`` is this iteration's entry (a ``started`` one means the step was
    cut off), ``previous`` the last iteration's; a previous step whose engine did
    not finish is resumed too.

    Example:
        >>> from sprintflow.schemas.journal import EngineCall
        >>> finished = TesterJournal(status="finished", mode="test", run_id="r", engine=EngineCall(ok=True))
        >>> next_mode(None, None), next_mode(None, finished)
        ('test', 'retry')
    """
    if current is not None and current.status == "started":
        return "resume"
    if previous is None:
        return "test"
    return "retry" if previous.engine_finished else "resume"


def tester_prompt(contract: SprintContract, mode: str, tests_dir: str,
                  previous_run: TestRun | None = None, *, run_id: str = "<runId>",
                  command: str | None = None, timeout: float = 60) -> str:
    """What the tester engine reads: its mode, its sandbox, what to cover, the rules.

    Example:
        >>> from sprintflow.schemas import load_document
        >>> path = "examples/python-api/.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json"
        >>> contract = load_document(path, SprintContract)
        >>> print(tester_prompt(contract, "test", "tests/sprintflow").splitlines()[0])
        # Tester: sprint 1, Implement the todo HTTP JSON API (mode: test)
    """
    parts = [
        f"# Tester: sprint {contract.sprint_number}, {contract.title} (mode: {mode})",
        ("You are the tester. Another agent writes the code; you write and run the tests that "
         "judge it. You never change the code."),
        f"## Mode\n{_MODE_TEXT[mode]}",
        f"## What the code should do\n{contract.description}\n\nFiles of the code under test:\n"
        + "\n".join(f"- {f}" for f in contract.estimated_files),
        _sandbox_text(tests_dir, run_id),
        _coverage_text(contract),
        _rules_text(command, timeout),
    ]
    if previous_run is not None:
        parts.append(_previous_text(previous_run))
    return "\n\n".join(parts) + "\n"


def _sandbox_text(tests_dir: str, run_id: str) -> str:
    return (f"## Sandbox\nYou may write only:\n- {tests_dir}/**\n- .sprintflow/runs/{run_id}/**\n"
            "Anything else you change is detected, restored and reported as a sandbox violation.")


def _coverage_text(contract: SprintContract) -> str:
    criteria = "\n".join(f"- {c.criterion_id} ({c.verification_method.value}): {c.description}"
                         for c in contract.success_criteria)
    codes = [c for c in declared_status_codes(contract.to_dict()) if c < 500]
    text = ("## What to cover\nEvery success criterion needs at least one test of its own (never "
            "merge two criteria into one test). Name the criterion in the test title in brackets, "
            "e.g. \"[sc-1-2] blank title -> 400\" (pytest: a parametrize id, ids=[\"sc-1-2\"]).\n"
            f"{criteria}")
    if codes:
        text += ("\n\nStatus codes the contract declares: each needs a test whose title names the "
                 "code; each 4xx needs a negative case that sends the bad input and asserts the "
                 "code. Do not test 5xx: a 500 is a bug, not a feature.\n"
                 + ", ".join(str(c) for c in codes))
    return text


def _rules_text(command: str | None, timeout: float) -> str:
    run = f" They are run with `{command}`" if command else " They are run"
    return ("## Rules\n"
            "- Do not mock the module under test as a whole (vi.mock/jest.mock of the code's own "
            "files, mock.patch of a whole module, sys.modules). Mock only external APIs, "
            "third-party services, time and randomness.\n"
            "- No network: reach no host but localhost; stub fetch, axios, requests.\n"
            "- The same code must give the same result: stub time and randomness.\n"
            f"-{run} with a {timeout:g} s limit; a run over it is killed and counts as crashed.")


def _previous_text(run: TestRun) -> str:
    state = "crashed: " + (run.crash_reason or "") if run.crashed else (
        f"{run.summary.passed} passed, {run.summary.failed} failed")
    failures = "\n".join(f"- {f.test}: {f.hint}" for f in run.failures[:MAX_FAILURES_KEPT])
    return f"## Your previous run {run.run_id}: {state}\n{failures}".rstrip()
