"""Everything the reports read, as DataFrames: the Parquet rows and the workspace's other logs.

Bug events (``bugs.ndjson``), score rows and test runs (``runs/<runId>/result.json``)
are read from the workspace at report time, never copied; so are EvalResult
files that no history row records yet (written before the history existed).
Torn lines and unreadable files are skipped and listed in ``History.problems``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from sprintflow.errors import DocumentError, Problem, WorkspaceError
from sprintflow.io.documents import loads_json, read_text
from sprintflow.io.files import read_ndjson
from sprintflow.io.layout import WorkspaceLayout

from .dataset import EVALS, as_table, parse_since, read_table
from .query import EvalTable
from .sprints import SPRINT_KEYS, sprint_ids

__all__ = ["BUG_COLUMNS", "SCORE_COLUMNS", "SYNTHETIC_NOTE", "TESTRUN_COLUMNS", "UNIT_TEST_COLUMNS", "History",
           "bug_rows",
           "eval_file_rows", "load_history", "score_rows", "testrun_rows", "unit_test_rows"]

BUG_COLUMNS = ["bug_id", "event", "status", "from_status", "unit", "test_name", "severity",
               "reopen_count", "created_at", "updated_at"]
SCORE_COLUMNS = ["recorded_at", "skill", "prompt_file", "prompt_sha256", "cases_sha256", "score",
                 "passed", "failed", "total", "engine", "git_sha", "duration_s", "input_tokens",
                 "output_tokens", "cost_usd", "epochs", "pass_at_1", "pass_at_k", "pass_hat_k",
                 "epoch_scores", "flaky_ids"]
"""Scorer rows; the epoch columns are empty for runs of one epoch (and for rows written before epochs)."""
TESTRUN_COLUMNS = ["run_id", "recorded_at", "total", "passed", "failed", "skipped", "crashed",
                    "duration_ms", "acceptance_coverage", "contract_coverage", "next_action"]
SYNTHETIC_NOTE = "SYNTHETIC.txt"
"""A file of a history folder that says its rows are made up (a demo), and by what: reports say so."""
UNIT_TEST_COLUMNS = ["run_id", "recorded_at", "test", "passed"]
"""One row per test of a TestRun: its ``passed_tests`` (passed) and ``failures`` (failed)."""


def _frame(records: Iterable[dict[str, Any]], columns: list[str], times: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(list(records), columns=columns)
    for column in times:
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


def _ndjson_records(path: Path, problems: list[str]) -> Iterable[dict[str, Any]]:
    for line in read_ndjson(path):
        if line.error:
            problems.append(line.error)
        else:
            yield line.record  # type: ignore[misc]


def bug_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per line of ``.sprintflow/bugs.ndjson`` (open, transition, reopen events).

    Torn or invalid lines are skipped and described in ``problems``.
    """
    problems = [] if problems is None else problems
    records = ({**r, "bug_id": r.get("id")} for r in
               _ndjson_records(WorkspaceLayout(Path(workspace)).bugs_file, problems))
    return _frame(records, BUG_COLUMNS, ["created_at", "updated_at"])


def score_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per scoring run, from the scorer's ``.sprintflow/history/scores.ndjson``.
    """
    problems = [] if problems is None else problems
    # The scorer writes camelCase (ScoreHistoryRow); the history speaks snake_case.
    renames = {"recordedAt": "recorded_at", "promptFile": "prompt_file",
               "promptSha256": "prompt_sha256", "casesSha256": "cases_sha256", "gitSha": "git_sha",
               "durationS": "duration_s", "inputTokens": "input_tokens",
               "outputTokens": "output_tokens", "costUsd": "cost_usd", "passAt1": "pass_at_1",
               "passAtK": "pass_at_k", "passHatK": "pass_hat_k", "epochScores": "epoch_scores",
               "flakyIds": "flaky_ids"}
    path = WorkspaceLayout(Path(workspace)).scores_file
    records = ({renames.get(k, k): v for k, v in r.items()} for r in _ndjson_records(path, problems)
               if r.get("kind", "score") == "score")
    return _frame(records, SCORE_COLUMNS, ["recorded_at"])


def _test_run_documents(workspace: Path | str, problems: list[str]) -> list[tuple[dict[str, Any], datetime]]:
    """Every readable ``runs/<runId>/result.json`` with its file time; unreadable ones go to ``problems``."""
    documents = []
    for path in sorted(WorkspaceLayout(Path(workspace)).runs_dir.glob("*/result.json")):
        try:
            doc = loads_json(read_text(path))
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            documents.append((doc, datetime.fromtimestamp(path.stat().st_mtime, UTC)))
        except DocumentError as exc:
            problems.append(f"{exc}: skipped")
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: unreadable test run: {exc}")
    return documents


def _testrun_frame(documents: list[tuple[dict[str, Any], datetime]]) -> pd.DataFrame:
    records = []
    for doc, at in documents:
        summary: dict[str, Any] = doc["summary"] if isinstance(doc.get("summary"), dict) else {}
        records.append({**{k: doc.get(k) for k in TESTRUN_COLUMNS}, **summary, "recorded_at": at})
    frame = pd.DataFrame.from_records(records, columns=TESTRUN_COLUMNS)
    frame["recorded_at"] = pd.to_datetime(frame["recorded_at"], utc=True)
    return frame


def _unit_test_frame(documents: list[tuple[dict[str, Any], datetime]]) -> pd.DataFrame:
    runs, times, names, passed = [], [], [], []
    for doc, at in documents:
        failed = [f.get("test") for f in doc.get("failures") or [] if isinstance(f, dict)]
        for outcome, tests in ((True, doc.get("passed_tests") or []), (False, failed)):
            for name in tests:
                if isinstance(name, str) and name:
                    runs.append(doc.get("run_id"))
                    times.append(at)
                    names.append(name)
                    passed.append(outcome)
    return pd.DataFrame({"run_id": pd.Series(runs, dtype=object),
                         "recorded_at": pd.to_datetime(pd.Series(times, dtype=object), utc=True),
                         "test": pd.Series(names, dtype=object), "passed": pd.Series(passed, dtype=bool)})


def testrun_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per test run in ``.sprintflow/runs/<runId>/result.json`` (recorded_at = file time).
    """
    return _testrun_frame(_test_run_documents(workspace, [] if problems is None else problems))


def unit_test_rows(workspace: Path | str, problems: list[str] | None = None) -> pd.DataFrame:
    """One row per test of every test run: ``run_id, recorded_at, test, passed`` (the flaky-test input).

    A run's ``passed_tests`` are its passes, its ``failures`` its failures;
    skipped tests are not listed in a TestRun, so they have no row.
    """
    return _unit_test_frame(_test_run_documents(workspace, [] if problems is None else problems))


def eval_file_rows(workspace: Path | str, known_ids: Iterable[str] = (),
                   problems: list[str] | None = None) -> pd.DataFrame:
    """Rows for ``.sprintflow/evals/*.json`` files whose eval id is not in ``known_ids``.

    Evaluations written before the history existed (or by another tool) still
    count; what the file does not say (hash, executor) stays empty.
    """
    # Here: the schemas' import (0.13 s) is paid only where such files are, not by every report.
    from sprintflow.schemas import EvalResult, load_document

    from .records import criterion_methods, eval_rows

    problems = [] if problems is None else problems
    workspace = Path(workspace).resolve()
    known = set(known_ids)
    rows: list[dict[str, Any]] = []
    refused: list[Problem] = []
    for path in sorted(WorkspaceLayout(workspace).evals_dir.glob("*.json")):
        if path.stem in known:
            continue
        try:  # read as every document is (one reader, one set of rules), so a bad one is refused, not skipped
            result = load_document(path, EvalResult)
        except DocumentError as exc:
            refused += exc.problems
            continue
        rows += eval_rows(result, workspace_hash=None, git_sha=None, executor=None, image=None,
                          run_id=None, workspace=str(workspace),
                          methods=criterion_methods(workspace, result.contract_id))
    if refused:
        raise DocumentError(refused)
    return as_table(EVALS, rows).to_pandas()


class History:
    """Everything the reports read: the ``evals`` rows, and the workspace's other logs as DataFrames.

    The rows are both :attr:`table`, a DuckDB table whose queries read the Parquet files themselves
    (what the report aggregates), and :attr:`evals`, a DataFrame loaded on first use (what a notebook
    explores): a report never loads the rows into pandas.
    """

    def __init__(self, evals: pd.DataFrame | None = None, bugs: pd.DataFrame | None = None,
                 scores: pd.DataFrame | None = None, testruns: pd.DataFrame | None = None,
                 tests: pd.DataFrame | None = None, problems: list[str] | None = None,
                 synthetic: str | None = None, *, table: EvalTable | None = None,
                 load: Callable[[], pd.DataFrame] | None = None) -> None:
        if evals is None and load is None:
            raise ValueError("History needs its evals rows: a DataFrame or a way to load them")
        self._evals, self._load, self._table = evals, load, table
        self.bugs = _frame([], BUG_COLUMNS, ["created_at", "updated_at"]) if bugs is None else bugs
        self.scores = _frame([], SCORE_COLUMNS, ["recorded_at"]) if scores is None else scores
        self.testruns = _frame([], TESTRUN_COLUMNS, ["recorded_at"]) if testruns is None else testruns
        self.tests = _unit_test_frame([]) if tests is None else tests
        """One row per test of each test run (:func:`unit_test_rows`)."""
        self.problems = [] if problems is None else problems
        """Lines or files that could not be read (skipped, never fatal)."""
        self.synthetic = synthetic
        """What the history folder's :data:`SYNTHETIC_NOTE` says: set for a made-up demo history."""

    @property
    def evals(self) -> pd.DataFrame:
        """The ``evals`` table (:data:`EVAL_SCHEMA`), plus unrecorded EvalResult files; with the sprint's
        columns loaded, ``sprint`` numbers each row's sprint (:func:`~sprintflow.history.sprints.sprint_ids`)."""
        if self._evals is None:
            assert self._load is not None  # one of the two, checked when built
            self._evals = self._load()
        return self._evals

    @property
    def table(self) -> EvalTable:
        """The same rows as a DuckDB table (:class:`~sprintflow.history.query.EvalTable`), for SQL over them."""
        if self._table is None:
            self._table = EvalTable.of(self.evals)
        return self._table


def _after(frame: pd.DataFrame, column: str, since: datetime | str | None) -> pd.DataFrame:
    return frame if since is None or frame.empty else frame[frame[column] >= pd.Timestamp(parse_since(since))]


def load_history(workspace: Path | str, since: datetime | str | None = None,
                 directory: Path | str | None = None, columns: list[str] | None = None) -> History:
    """The workspace's history: Parquet rows, unrecorded eval files, bugs, scores and test runs.

    The rows are queried where they are (:attr:`History.table`); :attr:`History.evals` loads them into
    pandas when first asked for.

    Args:
        workspace: the workspace whose logs are read (bugs, scores, runs, eval files); the bugs and
            test runs of every other workspace the history names are read too, where they still are.
        since: keep only what happened at or after this date or time (UTC unless given).
        directory: the history folder (default: the workspace's history folder).
        columns: the ``evals`` columns to load (default all); fewer columns, less memory.
    """
    workspace = Path(workspace)
    if not workspace.is_dir():
        raise WorkspaceError(f"workspace {workspace} does not exist or is not a directory")
    directory = Path(directory) if directory is not None else WorkspaceLayout(workspace).history_dir
    problems: list[str] = []
    wanted = None if columns is None else list(dict.fromkeys(["eval_id", "timestamp", *columns]))
    table = EvalTable.over_files(directory, since=since, columns=wanted, problems=problems)
    files = _unrecorded(workspace, table, since, problems)
    if not files.empty:
        table = EvalTable.over_files(directory, since=since, columns=wanted, extra=files)
    # A shared history holds many workspaces: their test runs and bugs are read where they live.
    homes = _workspaces(workspace, table)
    runs = [document for home in homes for document in _test_run_documents(home, problems)]
    bugs = pd.concat([bug_rows(home, problems) for home in homes], ignore_index=True)
    return History(
        table=table,
        load=partial(_evals_frame, directory, since, wanted, files),
        bugs=_after(bugs, "updated_at", since),
        scores=_after(score_rows(workspace, problems), "recorded_at", since),
        testruns=_after(_testrun_frame(runs), "recorded_at", since),
        tests=_after(_unit_test_frame(runs), "recorded_at", since),
        problems=problems,
        synthetic=_synthetic_note(directory),
    )


def _unrecorded(workspace: Path, table: EvalTable, since: datetime | str | None,
                problems: list[str]) -> pd.DataFrame:
    """Rows of the workspace's EvalResult files that no history row records (after ``since``)."""
    stems = [path.stem for path in WorkspaceLayout(workspace).evals_dir.glob("*.json")]
    known = table.query("SELECT DISTINCT eval_id FROM evals WHERE eval_id IN (SELECT unnest($ids))",
                        {"ids": stems})["eval_id"] if stems else []
    files = eval_file_rows(workspace, known_ids=known, problems=problems) if stems else as_table(EVALS, []).to_pandas()
    return _after(files, "timestamp", since)


def _evals_frame(directory: Path, since: datetime | str | None, wanted: list[str] | None,
                 files: pd.DataFrame) -> pd.DataFrame:
    """The rows as one DataFrame (text as categoricals), numbered by sprint: what :attr:`History.evals` loads."""
    evals = read_table(directory, EVALS, since=since, columns=wanted, problems=[])  # the table noted them
    if not files.empty:
        evals = pd.concat([evals, files if wanted is None else files[wanted]], ignore_index=True)
    # Numbered once here: every report function groups by sprint, and numbering 2 M rows costs 70 ms.
    if all(column in evals.columns for column in SPRINT_KEYS):
        evals["sprint"] = sprint_ids(evals)
    return evals


def _workspaces(workspace: Path, table: EvalTable) -> list[Path]:
    """``workspace`` first, then every other workspace the history names that is still a folder here."""
    homes = [workspace.resolve()]
    named = table.query("SELECT DISTINCT workspace FROM evals WHERE workspace IS NOT NULL")["workspace"]
    for name in sorted(str(value) for value in named):
        home = Path(name)
        if home.is_absolute() and home not in homes and home.is_dir():
            homes.append(home)
    return homes


def _synthetic_note(directory: Path) -> str | None:
    path = directory / SYNTHETIC_NOTE
    if not path.is_file():
        return None
    try:
        return read_text(path).strip()[:500] or "synthetic"
    except (DocumentError, OSError):
        return "synthetic (its note is unreadable)"
