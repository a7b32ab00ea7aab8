"""Report benchmark: the full report over a million strategy results, beside a naive approach.

1. A synthetic history (``synthetic_history``, the generator the notebooks'
   tests use): 200,000 evaluations plus nightly re-runs, i.e. > 1,000,000 strategy-result
   rows (and ~850,000 criterion rows) in Parquet parts, as compaction leaves them, and
   2,000 unit-test runs (TestRun files with their tests) linked to strategy rows.
2. ``sprintflow report``'s path: load_history + build_report + write_report (the interactive
   HTML page, CSV, Parquet), in a fresh process: wall time of the whole process (interpreter
   start and imports included), its CPU time and peak RSS, and the page's size.
   Targets: <= 10 s, <= 2 GiB, page <= 10 MB. The vega bundles the page inlines are built once
   per vl-convert version and cached (``sprintflow.reporting.html.vega_bundle``): the parent
   builds them first and prints what that first build costs.
3. The naive approach: the same evaluations as one EvalResult JSON file each, loaded with
   json + pandas into the same rows, then the same report, in a fresh process.

Numbers from one run, printed side by side; nothing is asserted.

Run: python benchmarks/report.py [--evaluations 200000] [--naive-evaluations N]
(--naive-evaluations < evaluations times the naive load on that many files and scales it up,
 and says so.)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples" / "history"))  # the synthetic history generator
TARGET_SECONDS, TARGET_MIB, TARGET_PAGE_MB = 10.0, 2048, 10.0


def _peak_mib() -> float:
    """This process's peak RSS. Linux keeps ru_maxrss across exec (it would report the parent's
    peak), so read the per-address-space high-water mark VmHWM where there is one."""
    try:
        status = Path("/proc/self/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(work) -> dict:
    """Run ``work()``; CPU seconds and peak RSS of this whole process (imports included)."""
    extra = work() or {}
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": _peak_mib(), **extra}


def child_report(workspace: str, out: str) -> dict:
    from sprintflow.history.sources import load_history
    from sprintflow.reporting.analytics import REPORT_COLUMNS
    from sprintflow.reporting.report import build_report, write_report

    def work():
        history = load_history(workspace, columns=REPORT_COLUMNS)
        paths = write_report(build_report(history, workspace=workspace), out)
        return {"rows": len(history.evals), "page_mib": paths["html"].stat().st_size / 2**20}
    return _measure(work)


def _naive_rows(doc: dict) -> list[dict]:
    base = {"eval_id": doc["evalId"], "contract_id": doc["contractId"], "spec_id": doc["specId"],
            "iteration": doc["iteration"], "timestamp": doc["timestamp"], "workspace_hash": doc["workspaceHash"],
            "executor": doc["executor"]}
    rows = [{**base, "kind": "evaluation", "result": doc["overallResult"], "regressions": len(doc["regressions"]),
             "tokens": doc["usage"]["tokens"], "cost_usd": doc["usage"]["costUsd"], "engine": doc["usage"]["engine"]}]
    rows += [{**base, "kind": "strategy", "name": s["strategy"], "required": s["required"], "result": s["result"],
              "cached": s["cached"]} for s in doc["strategyResults"]]
    rows += [{**base, "kind": "criterion", "name": c["criterionId"], "required": c["required"],
              "result": c["result"], "method": c["verificationMethod"]} for c in doc["criteriaResults"]]
    return rows


def child_naive(folder: str, out: str, workspace: str) -> dict:
    from sprintflow.history.sources import History
    from sprintflow.reporting.report import build_report, write_report

    def work() -> dict:
        rows: list[dict] = []
        for path in sorted(Path(folder).glob("*.json")):
            rows += _naive_rows(json.loads(path.read_text(encoding="utf-8")))
        frame = pd.DataFrame(rows)
        frame["timestamp"] = pd.to_datetime(frame["timestamp"], utc=True, format="ISO8601")
        write_report(build_report(History(evals=frame), workspace=workspace), out)
        return {"rows": len(frame)}
    return _measure(work)


def _run_child(*args: str) -> dict:
    """Run one side in a fresh interpreter; wall time is the whole process, as a user waits for it."""
    started = time.perf_counter()
    run = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                         check=False, cwd=ROOT)
    if run.returncode:
        raise SystemExit(f"child {args[0]} failed:\n{run.stderr}")
    return {**json.loads(run.stdout.strip().splitlines()[-1]), "wall_s": time.perf_counter() - started}


def _grouped(frame: pd.DataFrame, kind: str, columns: list[str]) -> tuple[dict[str, list], np.ndarray]:
    """Rows of one kind as column lists ordered by evaluation, and where each evaluation's rows start."""
    rows = frame[frame.kind == kind].sort_values("run_id", kind="stable")
    starts = np.searchsorted(rows.run_id.to_numpy(), np.sort(frame.run_id.unique()))
    return {c: rows[c].tolist() for c in columns}, np.append(starts, len(rows))


def write_eval_files(frame: pd.DataFrame, folder: Path, limit: int) -> int:
    """One EvalResult-shaped JSON file per evaluation of ``frame`` (the first ``limit``)."""
    folder.mkdir(parents=True, exist_ok=True)
    evaluations = frame[frame.kind == "evaluation"].head(limit)
    index = {run: i for i, run in enumerate(np.sort(frame.run_id.unique()))}
    s, s_at = _grouped(frame, "strategy", ["name", "required", "result", "cached", "duration_ms", "error_count"])
    c, c_at = _grouped(frame, "criterion", ["name", "required", "result", "method"])
    for n, ev in enumerate(evaluations.itertuples(index=False)):
        i = index[ev.run_id]
        doc = {"evalId": ev.eval_id, "contractId": ev.contract_id, "specId": ev.spec_id,
               "timestamp": ev.timestamp.isoformat().replace("+00:00", "Z"), "iteration": int(ev.iteration),
               "overallResult": ev.result, "workspaceHash": ev.workspace_hash, "summary": "…" * 40,
               "usage": {"tokens": int(ev.tokens), "costUsd": float(ev.cost_usd), "engine": ev.engine},
               "executor": ev.executor,
               "regressions": [{"description": "r", "evidence": "e", "severity": "major"}] * int(ev.regressions),
               "strategyResults": [{"strategy": s["name"][j], "required": s["required"][j], "result": s["result"][j],
                                    "cached": s["cached"][j], "durationMs": s["duration_ms"][j],
                                    "errorCount": s["error_count"][j], "exitCode": int(s["result"][j] != "pass"),
                                    "output": "" if s["result"][j] == "pass" else "FAIL tests/x.test.ts > case\n" * 4,
                                    "details": "", "diagnostics": []} for j in range(s_at[i], s_at[i + 1])],
               "criteriaResults": [{"criterionId": c["name"][j], "description": "The API returns 400 for …",
                                    "required": c["required"][j], "result": c["result"][j],
                                    "verificationMethod": c["method"][j], "evidence": "unit-test: 12 passed",
                                    "feedback": ""} for j in range(c_at[i], c_at[i + 1])]}
        (folder / f"{n:07d}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return len(evaluations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evaluations", type=int, default=200_000)
    parser.add_argument("--naive-evaluations", type=int, default=None,
                        help="EvalResult files for the naive run (default: all of them)")
    parser.add_argument("--files", type=int, default=8, help="Parquet parts of the history")
    parser.add_argument("--test-runs", type=int, default=2000, help="unit-test runs (TestRun files) in the workspace")
    args = parser.parse_args()

    from synthetic_history import synthetic_evals, synthetic_unit_test_runs, write_test_runs

    from sprintflow.history.dataset import EVALS, append_rows
    from sprintflow.reporting.html import _cache_dir, vega_bundle

    started = time.perf_counter()
    for cached in _cache_dir().glob("vega-bundle-*.js"):
        cached.unlink()
    vega_bundle()
    print(f"vega bundles built and cached once: {time.perf_counter() - started:.1f} s (every later report reads "
          "the cache)")

    with tempfile.TemporaryDirectory(prefix="sprintflow-report-bench-") as tmp:
        workspace = Path(tmp, "workspace")
        history = workspace / ".sprintflow" / "history"
        started = time.perf_counter()
        frame = synthetic_evals(args.evaluations, workspace=str(workspace)).sort_values("timestamp", ignore_index=True)
        frame, unit_runs = synthetic_unit_test_runs(frame, count=args.test_runs)
        write_test_runs(workspace, unit_runs)
        for rows in np.array_split(np.arange(len(frame)), args.files):
            append_rows(history, EVALS, frame.iloc[rows], compact_after=args.files + 1)
        kinds = frame.kind.value_counts()
        size = sum(p.stat().st_size for p in history.rglob("*.parquet")) / 2**20
        print(f"history: {len(frame):,} rows ({kinds['strategy']:,} strategy, {kinds['criterion']:,} criterion, "
              f"{kinds['evaluation']:,} evaluation) in {args.files} Parquet files, {size:,.0f} MiB "
              f"(generated in {time.perf_counter() - started:.1f} s)")
        evaluations = int(kinds["evaluation"])
        naive_n = min(args.naive_evaluations or evaluations, evaluations)
        started = time.perf_counter()
        written = write_eval_files(frame, Path(tmp, "evals"), naive_n)
        print(f"naive input: {written:,} EvalResult JSON files (written in {time.perf_counter() - started:.1f} s)")
        del frame

        ours = _run_child("report", str(workspace), str(Path(tmp, "out")))
        naive = _run_child("naive", str(Path(tmp, "evals")), str(Path(tmp, "naive-out")), str(workspace))

    scale = evaluations / written
    label = "naive json + pandas" + (f" (x{scale:.1f}, from {written:,} files)" if scale > 1 else "")
    print(f"\n{'':42}{'wall s':>9}{'cpu s':>9}{'peak MiB':>10}{'rows':>12}")
    print(f"{'sprintflow report (Parquet, columns)':42}{ours['wall_s']:9.1f}{ours['cpu_s']:9.1f}"
          f"{ours['peak_mib']:10,.0f}{ours['rows']:12,}")
    print(f"{label:42}{naive['wall_s'] * scale:9.1f}{naive['cpu_s'] * scale:9.1f}"
          f"{naive['peak_mib']:10,.0f}{naive['rows']:12,}")
    print(f"\nnaive / sprintflow wall time: {naive['wall_s'] * scale / ours['wall_s']:.1f}x")
    print(f"interactive page: {ours['page_mib']:.1f} MiB (target <= {TARGET_PAGE_MB:g} MB)")
    met = (ours["wall_s"] <= TARGET_SECONDS and ours["peak_mib"] <= TARGET_MIB
           and ours["page_mib"] * 2**20 <= TARGET_PAGE_MB * 1e6)
    print(f"target (<= {TARGET_SECONDS:g} s, <= {TARGET_MIB:,} MiB peak, page <= {TARGET_PAGE_MB:g} MB): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        # Each child takes its own arguments, as strings from the command line.
        children: dict[str, Callable[..., dict]] = {"report": child_report, "naive": child_naive}
        print(json.dumps(children[sys.argv[2]](*sys.argv[3:])))
    else:
        main()
