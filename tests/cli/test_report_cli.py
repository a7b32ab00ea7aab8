"""``sprintflow report``: files, summary, --since, shared history, errors (plain path, no Prefect)."""

import re

import pandas as pd
import pytest
from click.testing import CliRunner
from synthetic_history import demo_workspace

from sprintflow.cli import cli

TABLES = {"pass-rate-by-week", "first-pass-yield", "first-pass-yield-by-week", "pass-rate-by-strategy",
          "strategy-pass-rate-by-week", "time-to-green", "criteria-coverage-summary", "criteria-coverage",
          "flaky-strategies", "regressions-by-week", "bug-summary", "bug-activity", "time-to-fix",
          "score-by-prompt", "score-trends", "cost-per-sprint", "testrun-trends", "kill-rates", "criterion-pass-rate",
          "criterion-time-to-green", "flaky-tests", "test-history", "test-outcomes", "score-epochs", "cost-over-time",
          "engine-comparison", "engine-side-by-side", "engine-pairs"}


@pytest.fixture(autouse=True)
def plain_path(monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("SPRINTFLOW_HISTORY", raising=False)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return demo_workspace(tmp_path_factory.mktemp("demo"), evaluations=300)


def run(*args):
    return CliRunner().invoke(cli, ["report", *map(str, args)], catch_exceptions=False)


@pytest.fixture(scope="module")
def full(workspace, tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    return run(workspace, "--out", out), out


def test_writes_an_offline_html_report_exports_and_a_summary(full):
    result, out = full
    assert result.exit_code == 0, result.output
    assert result.output.startswith("sprintflow report: ")
    assert re.search(r"evaluation pass rate \d+\.\d% \[", result.output)
    assert "flakiest strategy: playwright" in result.output and f"report: {out}/report.html" in result.output
    assert "flakiest test: tests/test_api.py::test_websocket_reconnect" in result.output
    assert re.search(r"engine claude: evaluations passing \d+\.\d% \[", result.output)
    html = (out / "report.html").read_text()
    # One file: the charting library and the data are inline; nothing is fetched by address
    # (tests/reporting/test_html.py watches a real browser make no request).
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", html, flags=re.S)  # the page, not the code
    assert not re.search(r"<script[^>]*\bsrc=|<link|<img|<iframe|@import", markup)
    assert not re.search(r"(src|href)=\"(https?:)?//", markup)
    assert html.count('id="sprintflow-spec"') == 1 and "vegaEmbed" in html
    assert {p.stem for p in (out / "csv").glob("*.csv")} == TABLES
    assert {p.stem for p in (out / "parquet").glob("*.parquet")} == TABLES
    coverage_csv = pd.read_csv(out / "csv" / "criteria-coverage.csv")
    coverage_parquet = pd.read_parquet(out / "parquet" / "criteria-coverage.parquet")
    assert len(coverage_csv) == len(coverage_parquet) > 100
    assert (out / "summary.txt").read_text() == result.output.rsplit("report: ", 1)[0]


def evaluations(summary: str) -> int:
    return int(re.search(r"report: ([\d,]+) evaluations", summary).group(1).replace(",", ""))


def test_since_keeps_the_recent_part(workspace, full, tmp_path):
    recent = run(workspace, "--out", tmp_path, "--since", "2026-05-01").output
    assert 0 < evaluations(recent) < evaluations(full[0].output)
    assert "since 2026-05-01" in recent
    weeks = pd.read_csv(tmp_path / "csv" / "pass-rate-by-week.csv")
    assert weeks.week.min() >= "2026-04-27"


def test_default_out_is_inside_the_workspace(workspace):
    assert run(workspace, "--since", "2030-01-01").exit_code == 0  # nothing that recent: quick
    assert (workspace / ".sprintflow" / "report" / "report.html").is_file()


def test_a_shared_history_folder_is_read_from_the_setting(workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("SPRINTFLOW_HISTORY", str(workspace / ".sprintflow" / "history"))
    empty = tmp_path / "another-workspace"
    empty.mkdir()
    result = run(empty, "--out", tmp_path / "out", "--since", "2026-06-22")
    assert result.exit_code == 0 and evaluations(result.output) > 0


def test_an_empty_workspace_still_gets_a_report(tmp_path):
    result = run(tmp_path, "--out", tmp_path / "out")
    assert result.exit_code == 0
    assert "no evaluations recorded yet" in result.output
    assert "No evaluations recorded yet" in (tmp_path / "out" / "report.html").read_text()


def test_history_rows_missing_what_evaluations_always_carry_still_get_a_report(tmp_path):
    # Written by hand or damaged: no eval id, no contract, no iteration or timestamp, a 100,000-character hash.
    from sprintflow.history.dataset import EVALS, append_rows

    rows = [{"kind": "evaluation", "contract_id": "A", "iteration": None, "timestamp": None, "result": "pass"},
            {"kind": "evaluation", "contract_id": None, "iteration": 2**31 - 1, "result": "fail",
             "timestamp": pd.Timestamp("2026-01-01", tz="UTC")},
            *({"kind": "strategy", "name": "lint", "workspace_hash": "h" * 100_000, "result": result,
               "timestamp": pd.Timestamp("2026-01-01", tz="UTC")} for result in ("pass", "fail"))]
    append_rows(tmp_path / ".sprintflow" / "history", EVALS, rows)
    result = run(tmp_path, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "sprints went green; iterations to green: n/a; n/a from first evaluation to green" in result.output
    page = (tmp_path / "out" / "report.html").read_text()
    sampled = re.search(r'id="sprintflow-evaluations">(.*?)</script>', page).group(1)
    assert '"eval_id":null' in sampled and '"iteration":2147483647' in sampled
    assert pd.read_csv(tmp_path / "out" / "csv" / "flaky-strategies.csv")[["strategy", "flips"]].values.tolist() == [
        ["lint", 1]]


def test_a_history_in_several_files_gets_a_report_whatever_order_its_evaluations_were_written_in(tmp_path):
    # Rows are numbered across files (file index times 2**40). The page's sample looks its evaluations up newest
    # first: here 1,999 in the first file, then an older one in a second file. Numbered as DuckDB's HUGEINT, they
    # reached pandas as Decimals, and DuckDB typed the frame sent back by every other one of them: DECIMAL(4,0).
    from sprintflow.history.dataset import EVALS, append_rows
    from sprintflow.history.query import EvalTable

    history, start = tmp_path / ".sprintflow" / "history", pd.Timestamp("2026-03-01", tz="UTC")
    append_rows(history, EVALS, [{"kind": "evaluation", "eval_id": f"e{n}", "contract_id": "A", "iteration": 1,
                                  "result": "pass", "timestamp": start + pd.Timedelta(days=n // 12, minutes=n % 12)}
                                 for n in range(1999)])  # 12 a day: each is in the page's sample
    append_rows(history, EVALS, [{"kind": "evaluation", "eval_id": "older", "contract_id": "A", "iteration": 1,
                                  "result": "pass", "timestamp": pd.Timestamp("2026-01-01", tz="UTC")}])
    assert str(EvalTable.over_files(history).rows("evaluation", ["_row"])["_row"].dtype) == "int64"
    result = run(tmp_path, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    sampled = re.search(r'id="sprintflow-evaluations">(.*?)</script>', (tmp_path / "out" / "report.html").read_text())
    assert sampled.group(1).count('"eval_id":') == 2000 and '"eval_id":"older"' in sampled.group(1)


@pytest.mark.parametrize(("args", "message"), [
    (["--since", "last tuesday"], "--since 'last tuesday': expected a date"),
    (["--since", "2026-05-01", "--flow"], "does not exist"),
    ([], "does not exist"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, args, message):
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "missing"), *args])
    assert result.exit_code == 2 and message in result.output


def test_help_explains_when_the_flow_runs():
    text = " ".join(run("--help").output.split())
    assert "--flow" in text and "PREFECT_API_URL" in text and "~10 s" in text and "report-<table>" in text


def test_unreadable_files_are_skipped_listed_and_left_as_they_were(workspace, full, tmp_path):
    import hashlib
    import shutil

    copy = shutil.copytree(workspace, tmp_path / "ws")
    parts = sorted((copy / ".sprintflow/history/evals").glob("part-*.parquet"))
    torn = parts[0].with_name("part-20260101T000000000000Z-torn00000000.parquet")
    torn.write_bytes(parts[0].read_bytes()[:300])
    (copy / ".sprintflow/history/evals/part-20260101T000000000001Z-text00000000.parquet").write_text("not parquet")
    with (copy / ".sprintflow/history/scores.ndjson").open("ab") as scores:
        scores.write(b'\xff\xfe{"kind": "score"}\n{"kind": "score", "total": NaN}\n')
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in copy.rglob("*") if p.is_file()}

    result = run(copy, "--out", tmp_path / "out")

    assert result.exit_code == 0, result.output
    assert evaluations(result.output) == evaluations(full[0].output)  # every readable row still counts
    assert "4 unreadable lines or files skipped:" in result.output
    for named in ("torn00000000.parquet: not a readable Parquet file", "text00000000.parquet: not a readable",
                  "scores.ndjson:", "NaN is not valid JSON"):
        assert named in result.output, named
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before} == before
    assert "Skipped input" in (tmp_path / "out/report.html").read_text()


def test_an_eval_result_file_that_is_not_one_stops_the_report(workspace, tmp_path):
    """An EvalResult is a document, read as every document is: refused with its file and where, not skipped."""
    import shutil

    copy = shutil.copytree(workspace, tmp_path / "ws")
    (copy / ".sprintflow/evals").mkdir(exist_ok=True)
    (copy / ".sprintflow/evals/eval-latin1-1.json").write_bytes(b'{"evalId": "caf\xe9"}')
    result = run(copy, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "eval-latin1-1.json: not UTF-8: byte 0xe9" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_out_of_memory_is_one_line_exit_3_and_the_last_report_stays(workspace, full, tmp_path):
    # Under an address-space limit (ulimit -v, a batch system's) the report runs out wherever memory is
    # short first: the loader mapping a library, DuckDB, Arrow, numpy. Each is the machine's limit, not a
    # bug: one line, exit 3, no traceback (nor a crash in the teardown after it), and the report already
    # in the folder as it was. A library the C runtime aborts in (glibc's thread-local data, OpenBLAS)
    # ends before Python can say anything: such a limit is not asserted on.
    import functools
    import os
    import resource
    import shutil
    import subprocess
    import sys

    out = shutil.copytree(full[1], tmp_path / "out")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    codes = []
    for mib in (400, 900, 1200):
        before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
        limit = functools.partial(resource.setrlimit, resource.RLIMIT_AS, (mib << 20, mib << 20))
        ended = subprocess.run([sys.executable, "-m", "sprintflow", "report", str(workspace), "--out", str(out)],
                               preexec_fn=limit, env=env, capture_output=True, text=True, timeout=300)
        assert "Traceback" not in ended.stderr, ended.stderr
        codes.append(ended.returncode)
        if ended.returncode == 3:
            assert [line[:21] for line in ended.stderr.splitlines()] == ["error: out of memory "], ended.stderr
            assert ended.stdout == "" and {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert 3 in codes, codes
