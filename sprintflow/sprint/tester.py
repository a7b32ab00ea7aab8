"""The tester role (tester-agent-spec.md): an agent of its own writes and runs the tests.

The code writer must not be able to weaken the tests that judge it, so the
tests come from a separate engine, the *tester*, in the seed's three modes:
``test`` (first run: a test for every success criterion and every declared
status code), ``retry`` (the code changed: re-run the tests, rewrite only what
no longer applies) and ``resume`` (an earlier tester step stopped half-way).

One tester step (:func:`run_tester_step`):

1. snapshots every workspace file except the tester's sandbox — its tests
   folder, its run folder ``.sprintflow/runs/<runId>/`` and the report its test
   command writes — and runs the tester engine, contained;
2. restores whatever the engine changed outside the sandbox, and reports it;
3. runs the tests with the configured command through an Executor, on the judged
   tree (the baseline, the generator's judged change and these tests: never the
   workspace), killed at the time limit (the seed's 60 s; a killed run has crashed);
4. judges the run (:func:`~sprintflow.testruns.testrun.build_test_run`), bridges
   it to ``bugs.ndjson`` and writes ``result.json`` (and the engine's answer,
   ``engine.txt``) into the run folder;
5. runs the seed's self-checks (:func:`self_check`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sprintflow.engines import EngineReply, engine_env, resolve_engine, run_engine
from sprintflow.errors import ConfigError, EngineUnavailable, InputError
from sprintflow.evaluate.canary import runner_of
from sprintflow.evaluate.mutation import MutationJob, measure
from sprintflow.evaluate.strategies import strategy_for
from sprintflow.io.containment import Bind, Containment
from sprintflow.io.files import atomic_write_text
from sprintflow.io.hashing import IGNORED_DIRS
from sprintflow.io.layout import WorkspaceLayout
from sprintflow.io.process import CommandResult
from sprintflow.judge.tree import JudgedTree, WorkspaceStore, remove_tree
from sprintflow.sandbox.executors import CommandSpec, Executor
from sprintflow.schemas import ProjectConfig, SprintContract, StrategyType, TesterConfig
from sprintflow.schemas.evaluation import MutationResult
from sprintflow.schemas.journal import EngineCall, TesterFailure, TesterJournal
from sprintflow.schemas.testrun import TestRun
from sprintflow.settings import Settings, get_settings
from sprintflow.sprint.guard import Snapshot, outside_scope
from sprintflow.testruns.bugs import sync_bugs
from sprintflow.testruns.testrun import build_test_run, declared_status_codes, new_run_id, record_test_run

__all__ = [
    "TESTER_MODES",
    "EngineSummary",
    "TesterMode",
    "TesterStep",
    "evaluator_runs_tests",
    "load_test_run",
    "new_tester_run_id",
    "next_mode",
    "run_tester_step",
    "self_check",
    "tester_engine",
    "tester_findings",
    "tester_prompt",
    "tester_settings",
]

TesterMode = Literal["test", "retry", "resume"]
TESTER_MODES: tuple[str, ...] = ("test", "retry", "resume")

TEST_SOURCE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
"""Files of the tests folder the self-checks read."""

MAX_FAILURES_KEPT = 20
"""Failures (test and hint) copied into the iteration journal; result.json keeps them all."""

RAW_KEPT = 20_000
"""Characters of the engine's stdout and of its stderr kept in the run folder's ``engine.txt``."""

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


def new_tester_run_id(workspace: Path) -> str:
    """A fresh run id marked as the tester's: ``run-20260513-103115-tester`` (``-2``… if taken).

    Example:
        >>> import tempfile
        >>> new_tester_run_id(Path(tempfile.mkdtemp()))  # doctest: +ELLIPSIS
        'run-...-tester'
    """
    base = f"{new_run_id()}-tester"
    layout = WorkspaceLayout(workspace)
    run_id, number = base, 1
    while layout.run_dir(run_id).exists():
        number += 1
        run_id = f"{base}-{number}"
    return run_id


def load_test_run(workspace: Path, run_id: str) -> TestRun | None:
    """The TestRun of ``.sprintflow/runs/<run_id>/result.json``, or None when absent.

    Example:
        >>> import tempfile
        >>> load_test_run(Path(tempfile.mkdtemp()), "run-20260513-103115-tester") is None
        True
    """
    path = WorkspaceLayout(workspace).run_dir(run_id) / "result.json"
    return TestRun.model_validate_json(path.read_text(encoding="utf-8")) if path.is_file() else None


def next_mode(current: TesterJournal | None, previous: TesterJournal | None) -> TesterMode:
    """The mode of an iteration's tester step, from the journal entries of the tester steps.

    ``current`` is this iteration's entry (a ``started`` one means the step was
    cut off), ``previous`` the last iteration's; a previous step whose engine did
    not finish is resumed too.

    Example:
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


@dataclass(frozen=True)
class EngineSummary:
    """How the tester engine's call went (the raw output is not kept here)."""

    ok: bool
    reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: int = 0

    @classmethod
    def of(cls, reply: EngineReply) -> EngineSummary:
        return cls(ok=reply.ok, reason=reply.reason, input_tokens=reply.input_tokens,
                   output_tokens=reply.output_tokens, cost_usd=reply.cost_usd,
                   duration_ms=round(reply.duration_s * 1000))


@dataclass(frozen=True)
class TesterStep:
    """What one tester step did."""

    mode: str
    test_run: TestRun
    """The judged run, bug ids filled in, as ``result.json`` holds it."""
    engine: EngineSummary
    restored: list[str] = field(default_factory=list)
    """Files the engine changed outside its sandbox (all restored)."""
    self_check: list[str] = field(default_factory=list)
    """One sentence per failed self-check; empty when every check passed."""
    bugs_opened: list[str] = field(default_factory=list)
    bugs_transitioned: list[dict[str, str]] = field(default_factory=list)
    mutation: MutationResult | None = None
    """Its passing tests graded by the mutation check of the change (:mod:`sprintflow.evaluate.mutation`)."""

    @property
    def run_id(self) -> str:
        return self.test_run.run_id

    def journal(self) -> TesterJournal:
        """The step as the iteration journal records it (``status: finished``)."""
        run, engine = self.test_run, self.engine
        return TesterJournal(
            status="finished", mode=self.mode, run_id=run.run_id,
            result_ref=f".sprintflow/runs/{run.run_id}/result.json",
            ok=run.ok, crashed=run.crashed, crash_reason=run.crash_reason, summary=run.summary.model_dump(),
            failures=[TesterFailure(test=f.test, hint=f.hint) for f in run.failures[:MAX_FAILURES_KEPT]],
            restored=self.restored, self_check=self.self_check, bugs_opened=self.bugs_opened,
            bugs_transitioned=self.bugs_transitioned, mutation=self.mutation,
            engine=EngineCall(ok=engine.ok, reason=engine.reason, input_tokens=engine.input_tokens,
                              output_tokens=engine.output_tokens, cost_usd=engine.cost_usd,
                              duration_ms=engine.duration_ms))


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
        engine: the tester's engine command (:func:`tester_engine`).
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


def self_check(test_run: TestRun, contract: SprintContract, workspace: Path,
               tests_dir: str) -> list[str]:
    """The seed's self-checks of one tester step; one sentence per problem, none when all pass.

    A test per criterion and per declared status code (5xx excepted), a negative
    case asserting every declared 4xx, no whole-module mock of the code under
    test, no network beyond localhost, an informative hint on every failure.
    """
    sources = list(_test_sources(workspace, tests_dir))
    return [*_coverage_problems(test_run),
            *_negative_case_problems(contract, sources),
            *(p for rel, text in sources for p in _mock_problems(workspace, tests_dir, rel, text)),
            *(p for rel, text in sources for p in _network_problems(rel, text)),
            *_hint_problems(test_run)]


def _test_sources(workspace: Path, tests_dir: str) -> Iterator[tuple[str, str]]:
    root = workspace / tests_dir
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        rel = path.relative_to(workspace)
        if (path.suffix in TEST_SOURCE_SUFFIXES and path.is_file()
                and not IGNORED_DIRS.intersection(rel.parts)):
            yield rel.as_posix(), path.read_text(encoding="utf-8", errors="replace")


def _coverage_problems(run: TestRun) -> list[str]:
    if run.crashed:
        return [f"Coverage could not be checked: the test run crashed ({run.crash_reason})."]
    return [*(f"{c} has no test: name it in a test title as [{c}]." for c in run.uncovered_criteria),
            *(f"Status code {code} has no test: name the code in a test title."
              for code in run.uncovered_status_codes if code < 500)]


def _negative_case_problems(contract: SprintContract, sources: list[tuple[str, str]]) -> list[str]:
    problems = []
    for code in declared_status_codes(contract.to_dict()):
        asserted = re.compile(rf"(?:^\s*assert\b|\bassert\w*\(|\bexpect\(|\.to\w*\()[^\n]*"
                              rf"(?<![\d.]){code}(?!\d)", re.MULTILINE)
        if 400 <= code < 500 and not any(asserted.search(text) for _, text in sources):
            problems.append(f"Status {code} has no negative case: send the input that must be "
                            f"refused and assert the {code}.")
    return problems


_JS_MOCK = re.compile(r"\b(?:vi|jest)\.(?:mock|doMock)\(\s*(['\"`])([^'\"`]+)\1")
_PY_PATCH = re.compile(r"\bpatch\(\s*(['\"])([\w.]+)\1\s*[,)]")
_SYS_MODULES = re.compile(r"(?:patch\.dict|setitem)\(\s*sys\.modules\b|sys\.modules\[[^\]]+\]\s*=(?!=)")


def _mock_problems(workspace: Path, tests_dir: str, rel: str, text: str) -> Iterator[str]:
    """Mocks that replace the code under test as a whole (external packages may be mocked)."""
    for match in _JS_MOCK.finditer(text):
        if _own_js_module(workspace, tests_dir, rel, match[2]):
            yield (f"{rel}:{_line(text, match)}: mocks the module under test {match[2]!r} as a "
                   f"whole; mock only external APIs, time or randomness.")
    for match in _PY_PATCH.finditer(text):
        if _own_py_module(workspace, match[2]):
            yield (f"{rel}:{_line(text, match)}: patches the whole module {match[2]!r}; patch "
                   f"what it calls outside, not the code under test.")
    for match in _SYS_MODULES.finditer(text):
        yield (f"{rel}:{_line(text, match)}: replaces modules in sys.modules, which can swap out "
               f"the code under test as a whole.")


def _own_js_module(workspace: Path, tests_dir: str, rel: str, target: str) -> bool:
    """A relative path that leaves the tests folder, or a ``@/``/``~/`` alias, is the project's code."""
    if target.startswith(("@/", "~/")):
        return True
    if not target.startswith("."):
        return False  # a package: an external API, which may be mocked
    resolved = (workspace / rel).parent.joinpath(target).resolve()
    return not resolved.is_relative_to((workspace / tests_dir).resolve())


def _own_py_module(workspace: Path, dotted: str) -> bool:
    """Whether a dotted name is a module (not an attribute) of the workspace's own code."""
    relative = Path(*dotted.split("."))
    return any((root / relative).with_suffix(".py").is_file() or (root / relative / "__init__.py").is_file()
               for root in (workspace, workspace / "src"))


_NETWORK_CLIENT = re.compile(
    r"\bfetch\(|\baxios\b|\bimport\s+requests\b|\bfrom\s+requests\b|\brequests\.\w+\(|\bhttp\.client\b"
    r"|\burllib\.request\b|\burlopen\(|\bhttpx\b|\baiohttp\b|\bhttps?\.(?:get|request)\(|\bsocket\b")
_NETWORK_STUB = re.compile(
    r"stubGlobal\(\s*['\"]fetch|spyOn\(\s*(?:global|globalThis|window)\s*,\s*['\"]fetch|\bnock\(|from\s+['\"]msw"
    r"|requests_mock|@responses\.activate|\brespx\b|httpretty"
    r"|(?:vi|jest)\.mock\(\s*['\"](?:axios|node-fetch)|patch\(\s*['\"](?:requests|urllib|http\.client|socket|httpx)")
_URL_HOST = re.compile(r"\b(?:https?|wss?)://(\[[^\]]*\]|[^/\s'\"`:?#]+)")
_CONNECT_HOST = re.compile(r"socket\.create_connection\(\s*\(\s*(['\"])([^'\"]+)\1")
_LOOPBACK = re.compile(r"localhost|.*\.localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[?::1\]?", re.IGNORECASE)


def _network_problems(rel: str, text: str) -> Iterator[str]:
    """A file that uses a network client and names a host beyond loopback, without stubbing it."""
    if not _NETWORK_CLIENT.search(text) or _NETWORK_STUB.search(text):
        return
    hosts = [(m, m[1]) for m in _URL_HOST.finditer(text)] + [(m, m[2]) for m in _CONNECT_HOST.finditer(text)]
    for match, host in hosts:
        if not _LOOPBACK.fullmatch(host):
            yield (f"{rel}:{_line(text, match)}: reaches {host} over the network; tests may reach "
                   f"only localhost: stub the call instead.")
            return


_UNINFORMATIVE = re.compile(r"(?:fix (?:the|this) bug|expected \S+,? (?:but )?(?:got|received) \S+)\.?",
                            re.IGNORECASE)


def _hint_problems(run: TestRun) -> list[str]:
    return [f"The failure of {f.test!r} has no usable hint ({f.hint!r}): say what went wrong and "
            f"what to change." for f in run.failures
            if not f.hint.strip() or _UNINFORMATIVE.fullmatch(f.hint.strip())]


def _line(text: str, match: re.Match[str]) -> int:
    return text.count("\n", 0, match.start()) + 1


def evaluator_runs_tests(project: ProjectConfig) -> bool:
    """Whether an evaluator unit-test strategy names the tester's tests folder in its command.

    Then its failures reach the generator through the evaluation already; else
    :func:`tester_findings` passes them on as blocking issues.

    Example:
        >>> evaluator_runs_tests(ProjectConfig())
        False
    """
    tests_dir = tester_settings(project).tests_dir
    return any(s.type is StrategyType.unit_test and tests_dir in (strategy_for(s, project).command() or "")
               for s in project.strategies())


def tester_findings(entry: TesterJournal, previous: TesterJournal | None,
                    evaluated: bool) -> tuple[list[str], list[str]]:
    """Blocking issues and notes for the evaluation, from a tester step's journal entry.

    Blocking: files the tester changed outside its sandbox; its failing tests
    unless the evaluator runs them itself (``evaluated``); a run that crashed
    twice in a row (the seed escalates a repeated crash to the coder). Notes: a
    first crash, a failed engine call, every self-check problem.

    Example:
        >>> entry = TesterJournal(status="finished", mode="test", run_id="r", restored=["src/app.py"],
        ...                       engine=EngineCall(ok=True))
        >>> tester_findings(entry, None, evaluated=True)[0]
        ['The tester wrote outside its sandbox; restored: src/app.py']
    """
    blocking: list[str] = []
    notes = [f"Tester self-check: {problem}" for problem in entry.self_check]
    if entry.restored:
        blocking.append("The tester wrote outside its sandbox; restored: " + ", ".join(entry.restored[:20]))
    if entry.engine is not None and not entry.engine.ok:
        notes.append(f"The tester engine failed ({entry.engine.reason}); the tests already written were run.")
    if entry.crashed:
        again = bool(previous and previous.crashed)
        message = f"The tester's test run {entry.run_id} crashed: {entry.crash_reason}"
        (blocking if again else notes).append(message + (" (twice in a row)" if again else ""))
    elif not evaluated:
        blocking.extend(f"The tester's test {f.test} fails. Hint: {f.hint}" for f in entry.failures)
    return blocking, notes
