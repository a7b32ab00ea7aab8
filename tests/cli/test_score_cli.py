"""``sprintflow score`` end to end: a real CLI process, the bundled example, stub engines."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scoring"
ENGINE = f"exec {sys.executable} stub_engine.py"
CASE_KEYS = ["id", "pass", "expected", "actual", "reason"]


@pytest.fixture()
def example(tmp_path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "scoring", ignore=shutil.ignore_patterns(".sprintflow")))


def score(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # No Prefect server and no engine from the developer's environment leak in.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SPRINTFLOW_", "PREFECT_API_URL", "PREFECT_PROFILE"))}
    base["PREFECT_HOME"] = str(cwd / ".prefect-home")
    return subprocess.run([sys.executable, "-m", "sprintflow", "score", *args], cwd=cwd, capture_output=True,
                          text=True, env={**base, **(env or {})}, timeout=120, check=False)


def errors(run: subprocess.CompletedProcess) -> list[str]:
    assert "Traceback" not in run.stderr
    return [line for line in run.stderr.splitlines() if line.startswith("error: ")]


def test_the_bundled_example_passes_with_exact_report_keys(example):
    run = score(example, "triage", "--engine", ENGINE)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert list(report)[:6] == ["skill", "total", "passed", "failed", "score", "cases"]
    assert (report["total"], report["passed"], report["failed"], report["score"]) == (8, 8, 0, 1.0)
    assert all(list(case) == CASE_KEYS for case in report["cases"])
    assert "timing" not in report
    assert "triage: 8/8 passed, score 1.000" in run.stderr


def test_a_failing_case_exits_1_and_min_score_can_accept_it(example):
    run = score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md")
    assert run.returncode == 1
    report = json.loads(run.stdout)
    [failed] = [case for case in report["cases"] if not case["pass"]]
    assert failed["id"] == "pr-107" and failed["reason"].startswith("escalate: expected true, got false")
    assert '"escalate": false' in failed["raw"]  # the engine's answer as printed
    assert "pr-107" in run.stderr  # the summary table names it
    assert score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md",
                 "--min-score", "0.85").returncode == 0
    assert score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md",
                 "--min-score", "0.9").returncode == 1


def test_json_mode_prints_only_json_and_timings_come_last(example):
    run = score(example, "triage", "--engine", ENGINE, "--json", "--timings", "--concurrency", "3")
    assert run.returncode == 0 and run.stderr == ""
    report = json.loads(run.stdout)
    assert list(report)[-1] == "timing"
    assert report["timing"]["mode"] == "plain" and report["timing"]["concurrency"] == 3


def test_same_answers_same_bytes_and_the_cases_file_is_untouched(example):
    cases = example / "evals" / "triage" / "cases.jsonl"
    before, mtime = cases.read_bytes(), cases.stat().st_mtime_ns
    first = score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md", "--concurrency", "8")
    second = score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md", "--concurrency", "1")
    assert first.stdout == second.stdout and first.returncode == second.returncode == 1
    assert cases.read_bytes() == before and cases.stat().st_mtime_ns == mtime


def test_reports_are_saved_with_history_unless_no_save(example):
    score(example, "triage", "--engine", ENGINE)
    score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md")
    rows = [json.loads(line) for line in (example / ".sprintflow/history/scores.ndjson").read_text().splitlines()]
    assert [(r["passed"], r["promptFile"]) for r in rows] == [(8, "prompts/triage.md"), (7, "prompts/triage-old.md")]
    assert all((example / r["report"]).is_file() for r in rows)
    shutil.rmtree(example / ".sprintflow")
    assert score(example, "triage", "--engine", ENGINE, "--no-save").returncode == 0
    assert not (example / ".sprintflow").exists()


def test_engine_overrides_in_precedence_order(example):
    wrong = "echo '{\"escalate\": false, \"risk\": \"low\"}'"
    env = {"SPRINTFLOW_ENGINE": wrong}
    assert json.loads(score(example, "triage", env=env).stdout)["passed"] == 2
    env["SPRINTFLOW_SCORER_ENGINE"] = ENGINE
    assert json.loads(score(example, "triage", env=env).stdout)["passed"] == 8
    assert json.loads(score(example, "triage", "--engine", wrong, env=env).stdout)["passed"] == 2


def test_compare_prints_differences_and_the_mcnemar_verdict(example):
    run = score(example, "triage", "--engine", ENGINE, "--compare", "prompts/triage-old.md", "prompts/triage.md")
    assert run.returncode == 0, run.stderr
    comparison = json.loads(run.stdout)
    assert (comparison["a"]["passed"], comparison["b"]["passed"]) == (7, 8)
    assert [d["id"] for d in comparison["differences"]] == ["pr-107"]
    assert comparison["mcnemar"] == {"onlyAPassed": 0, "onlyBPassed": 1, "pValue": 1.0, "alpha": 0.05,
                                     "verdict": "no-significant-difference"}
    assert "McNemar exact p = 1" in run.stderr


def test_help_explains_when_the_flow_is_used():
    run = subprocess.run([sys.executable, "-m", "sprintflow", "score", "--help"], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0
    text = " ".join(run.stdout.split())
    assert "PREFECT_API_URL" in text and "--compare PROMPT_A PROMPT_B" in text and "--min-score" in text


def test_epochs_run_every_case_k_times_with_the_same_bytes_each_time(example):
    first = score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md", "--epochs", "3")
    second = score(example, "triage", "--engine", ENGINE, "--prompt", "prompts/triage-old.md", "--epochs", "3",
                   "--concurrency", "2")
    assert first.returncode == second.returncode == 1, first.stderr
    assert first.stdout == second.stdout
    report = json.loads(first.stdout)
    assert (report["epochs"], report["passed"], report["passHatK"], report["passAtK"]) == (3, 7, 7 / 8, 7 / 8)
    failed = next(c for c in report["cases"] if not c["pass"])
    assert (failed["id"], failed["passes"], failed["stability"]) == ("pr-107", 0, "always-fail")
    assert [e["epoch"] for e in failed["epochs"]] == [1, 2, 3]
    assert "7/8 passed in all 3 epochs" in first.stderr and "pass@3 0.875, pass^3 0.875, 0 flaky" in first.stderr
    history = example / ".sprintflow" / "history" / "scores.ndjson"
    rows = [json.loads(line) for line in history.read_text().splitlines()]
    assert [(r["epochs"], r["epochScores"]) for r in rows] == [(3, [7 / 8] * 3)] * 2


def lines(*rows: object) -> str:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows)


GOOD = {"id": "a", "input": "x", "expected": {"escalate": False, "risk": "low"}}


@pytest.mark.parametrize("args, setup, message", [
    ([], None, "error: no skill given"),
    (["labeler"], None, "error: evals/labeler/cases.jsonl: no cases file for skill 'labeler'"),
    (["triage", "--cases", "missing.jsonl"], None, "error: missing.jsonl: no cases file for skill 'triage'"),
    (["triage", "--prompt", "prompts/nope.md"], None, "error: prompts/nope.md: no prompt file"),
    (["triage"], lines(GOOD, '{"id": "b", "input": '),
     "error: evals/triage/cases.jsonl:2: invalid JSON at column 22: Expecting value"),
    (["triage"], lines(GOOD, {**GOOD, "input": "y"}),
     "error: evals/triage/cases.jsonl:2: id: duplicate id 'a' (first on line 1)"),
    (["triage"], lines(GOOD, {"id": "b", "input": "y"}),
     "error: evals/triage/cases.jsonl:2: expected: missing: a case needs the expected answer fields"),
    (["triage"], "", "error: evals/triage/cases.jsonl: no cases: the file has no case lines"),
    (["triage", "--concurrency", "0"], None, "error: Invalid value for '--concurrency'"),
    (["triage", "--prompt", "prompts/triage.md", "--compare", "prompts/triage.md", "prompts/triage-old.md"],
     None, "error: --compare takes both prompt files"),
    (["triage", "--compare", "prompts/triage.md", "prompts/v9.md"], None, "error: prompts/v9.md: no prompt file"),
    (["triage", "--epochs", "0"], None, "error: Invalid value for '--epochs'"),
    (["triage", "--epochs", "2", "--compare", "prompts/triage.md", "prompts/triage-old.md"], None,
     "error: --compare pairs one answer per case for McNemar's test; do not combine it with --epochs"),
])
def test_every_hard_error_exits_2_with_its_message(example, args, setup, message):
    if setup is not None:
        (example / "evals" / "triage" / "cases.jsonl").write_text(setup)
    run = score(example, *args, "--engine", ENGINE)
    assert run.returncode == 2, run.stderr
    assert any(line.startswith(message) for line in errors(run)), run.stderr
    assert run.stdout == ""


def test_no_engine_configured_is_a_hard_error(example):
    run = score(example, "triage")
    assert run.returncode == 2
    assert errors(run) == [("error: no engine for the scorer: pass --engine CMD, set SPRINTFLOW_SCORER_ENGINE "
                           "or SPRINTFLOW_ENGINE, or set engines.scorer in sprintflow.toml "
                           "(presets: aider, claude, codex, gemini)")]
