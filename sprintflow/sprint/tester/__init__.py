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

Its modules, one question each: :mod:`.prompt` (the settings, the engine, the
mode and the prompt), :mod:`.step` (one step, run), :mod:`.self_checks` (the
tests it wrote, checked), :mod:`.record` (the step's run id, result and journal
entry) and :mod:`.findings` (what the evaluation hears of it).
"""

from __future__ import annotations

from .findings import evaluator_runs_tests, tester_findings
from .prompt import TESTER_MODES, TesterMode, next_mode, tester_engine, tester_prompt, tester_settings
from .record import EngineSummary, TesterStep, load_test_run, new_tester_run_id
from .self_checks import self_check
from .step import run_tester_step

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
