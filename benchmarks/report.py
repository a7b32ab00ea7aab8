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
4. DuckDB's own query on the same Parquet files, in a fresh process: pass rate by strategy by
   week, reading the columns it names. The report ÷ DuckDB ratio (goal <= 3 at 2 M rows) says how
   far the report is from what an SQL engine pays for one aggregation over the same rows.

Numbers from one run, printed side by side; nothing is asserted.

Run: python benchmarks/report.py [--evaluations 200000] [--naive-evaluations N] [--twenty-million]
(--naive-evaluations < evaluations times the naive load on that many files and scales it up,
 and says so. --twenty-million generates ~21 M rows (2,000,000 evaluations, in chunks so the
 generator's memory stays bounded) and skips the naive side; goal <= 10 s wall on an idle machine,
 <= 1.5 GiB peak. Each child runs under an address-space limit (--memory-limit-mib), so a side
 that would need more fails with MemoryError instead of pressing the machine.)
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
TARGET_DUCKDB_RATIO = 3.0
TARGET_20M_SECONDS, TARGET_20M_MIB = 10.0, 1536
CHUNK_EVALUATIONS = 200_000
"""Evaluations generated at a time: the generator holds a chunk's rows in pandas."""
DUCKDB_QUERY = """
SELECT date_trunc('week', timestamp) AS week, name AS strategy,
       count(*) FILTER (WHERE result = 'pass') AS passed, count(*) FILTER (WHERE result = 'fail') AS failed,
       count(*) FILTER (WHERE result = 'skipped') AS skipped
FROM read_parquet($files, union_by_name = true)
WHERE kind = 'strategy'
GROUP BY ALL ORDER BY week, strategy
"""


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
        # Counted by DuckDB: history.evals would load every row into pandas, which the report never does.
        rows = int(history.table.query("SELECT count(*) AS n FROM evals")["n"].item())
        return {"rows": rows, "page_mib": paths["html"].stat().st_size / 2**20}
    return _measure(work)


def child_duckdb(workspace: str) -> dict:
    """DuckDB's own query over the same files the report reads (compacted sources left out)."""
    import duckdb

    from sprintflow.history.dataset import EVALS, live_parts

    def work() -> dict:
        files = [str(p) for p in live_parts(Path(workspace, ".sprintflow", "history"), EVALS)]
        table = duckdb.connect().execute(DUCKDB_QUERY, {"files": files}).df()
        return {"rows": int(table[["passed", "failed", "skipped"]].to_numpy().sum()), "groups": len(table)}
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


def _run_child(*args: str, memory_mib: int | None = None) -> dict:
    """Run one side in a fresh interpreter; wall time is the whole process, as a user waits for it.

    Under ``memory_mib`` of address space, when given: a side that needs more fails (its row says so)
    rather than pressing a shared machine into swap."""
    def limit() -> None:
        if memory_mib:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mib * 2**20, memory_mib * 2**20))

    started = time.perf_counter()
    run = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                         check=False, cwd=ROOT, preexec_fn=limit)
    if run.returncode:
        last = (run.stderr.strip().splitlines() or ["(no output)"])[-1]
        print(f"child {args[0]} failed (exit {run.returncode}): {last}")
        return {"failed": last, "wall_s": time.perf_counter() - started}
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


def _write_history(workspace: Path, evaluations: int, files: int, test_runs: int) -> pd.DataFrame | None:
    """The synthetic history in ``workspace``; returns its rows when they were generated in one piece
    (the naive side needs them), None when generated in chunks (each chunk its own contracts)."""
    from synthetic_history import synthetic_evals, synthetic_unit_test_runs, write_test_runs

    from sprintflow.history.dataset import EVALS, append_rows

    history = workspace / ".sprintflow" / "history"
    chunks = max(1, -(-evaluations // CHUNK_EVALUATIONS)) if evaluations > CHUNK_EVALUATIONS * 2 else 1
    whole = None
    for chunk in range(chunks):
        size = evaluations if chunks == 1 else min(CHUNK_EVALUATIONS, evaluations - chunk * CHUNK_EVALUATIONS)
        frame = synthetic_evals(size, seed=7 + chunk, workspace=str(workspace)).sort_values("timestamp",
                                                                                         ignore_index=True)
        if chunks > 1:  # each chunk's contracts are its own, not re-runs of the first chunk's
            frame["contract_id"] = f"c{chunk}-" + frame["contract_id"].astype(str)
        if chunk == 0:
            frame, unit_runs = synthetic_unit_test_runs(frame, count=test_runs)
            write_test_runs(workspace, unit_runs)
        for rows in np.array_split(np.arange(len(frame)), max(1, files // chunks)):
            append_rows(history, EVALS, frame.iloc[rows], compact_after=files + 1)
        whole = frame if chunks == 1 else None
    return whole


def _row(label: str, side: dict, scale: float = 1.0) -> str:
    if "failed" in side:
        return f"{label:42}{side['wall_s']:9.1f}  failed: {side['failed'][:60]}"
    return (f"{label:42}{side['wall_s'] * scale:9.1f}{side['cpu_s'] * scale:9.1f}{side['peak_mib']:10,.0f}"
            f"{side['rows']:12,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evaluations", type=int, default=200_000)
    parser.add_argument("--naive-evaluations", type=int, default=None,
                        help="EvalResult files for the naive run (default: all of them; none with --twenty-million)")
    parser.add_argument("--files", type=int, default=8, help="Parquet parts of the history")
    parser.add_argument("--test-runs", type=int, default=2000, help="unit-test runs (TestRun files) in the workspace")
    parser.add_argument("--twenty-million", action="store_true",
                        help="2,000,000 evaluations (~21 M rows) in 80 Parquet parts; the naive side is skipped")
    parser.add_argument("--memory-limit-mib", type=int, default=6144,
                        help="address space each child may use (0: no limit)")
    args = parser.parse_args()
    if args.twenty_million:
        args.evaluations, args.files = 2_000_000, 80
        args.naive_evaluations = args.naive_evaluations or 0

    from sprintflow.reporting.html import _cache_dir, vega_bundle

    started = time.perf_counter()
    for cached in _cache_dir().glob("vega-bundle-*.js"):
        cached.unlink()
    vega_bundle()
    print(f"vega bundles built and cached once: {time.perf_counter() - started:.1f} s (every later report reads "
          "the cache)")

    limit = args.memory_limit_mib or None
    with tempfile.TemporaryDirectory(prefix="sprintflow-report-bench-") as tmp:
        workspace = Path(tmp, "workspace")
        started = time.perf_counter()
        frame = _write_history(workspace, args.evaluations, args.files, args.test_runs)
        history = workspace / ".sprintflow" / "history"
        size = sum(p.stat().st_size for p in history.rglob("*.parquet")) / 2**20
        import pyarrow.dataset as ds

        kinds = ds.dataset(history / "evals").to_table(columns=["kind"]).column("kind").value_counts().to_pylist()
        count = {k["values"]: k["counts"] for k in kinds}
        total = sum(count.values())
        print(f"history: {total:,} rows ({count.get('strategy', 0):,} strategy, {count.get('criterion', 0):,} "
              f"criterion, {count.get('evaluation', 0):,} evaluation) in {len(list(history.rglob('*.parquet')))} "
              f"Parquet files, {size:,.0f} MiB (generated in {time.perf_counter() - started:.1f} s)")
        evaluations = int(count.get("evaluation", 0))
        naive_n = min(evaluations if args.naive_evaluations is None else args.naive_evaluations, evaluations)
        written = 0
        if naive_n and frame is not None:
            started = time.perf_counter()
            written = write_eval_files(frame, Path(tmp, "evals"), naive_n)
            print(f"naive input: {written:,} EvalResult JSON files (written in {time.perf_counter() - started:.1f} s)")
        del frame

        ours = _run_child("report", str(workspace), str(Path(tmp, "out")), memory_mib=limit)
        duck = _run_child("duckdb", str(workspace), memory_mib=limit)
        naive = _run_child("naive", str(Path(tmp, "evals")), str(Path(tmp, "naive-out")), str(workspace),
                           memory_mib=limit) if written else None

    print(f"\n{'':42}{'wall s':>9}{'cpu s':>9}{'peak MiB':>10}{'rows':>12}")
    print(_row("sprintflow report (Parquet, columns)", ours))
    print(_row("DuckDB: pass rate by strategy by week", duck))
    if naive is not None:
        scale = evaluations / written
        label = "naive json + pandas" + (f" (x{scale:.1f}, from {written:,} files)" if scale > 1 else "")
        print(_row(label, naive, scale))
        if "failed" not in ours and "failed" not in naive:
            print(f"\nnaive / sprintflow wall time: {naive['wall_s'] * scale / ours['wall_s']:.1f}x")
    if "failed" in ours or "failed" in duck:
        print("target: NOT met (a side failed)")
        return
    print(f"report / DuckDB: {ours['wall_s'] / duck['wall_s']:.1f}x wall, {ours['cpu_s'] / duck['cpu_s']:.1f}x CPU, "
          f"{ours['peak_mib'] / duck['peak_mib']:.1f}x peak memory (goal <= {TARGET_DUCKDB_RATIO:g}x)")
    print(f"interactive page: {ours['page_mib']:.1f} MiB (target <= {TARGET_PAGE_MB:g} MB)")
    seconds, mib = (TARGET_20M_SECONDS, TARGET_20M_MIB) if args.twenty_million else (TARGET_SECONDS, TARGET_MIB)
    met = ours["wall_s"] <= seconds and ours["peak_mib"] <= mib and ours["page_mib"] * 2**20 <= TARGET_PAGE_MB * 1e6
    print(f"target (<= {seconds:g} s, <= {mib:,} MiB peak, page <= {TARGET_PAGE_MB:g} MB): "
          f"{'met' if met else 'NOT met'}")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        # Each child takes its own arguments, as strings from the command line.
        children: dict[str, Callable[..., dict]] = {"report": child_report, "naive": child_naive,
                                                     "duckdb": child_duckdb}
        print(json.dumps(children[sys.argv[2]](*sys.argv[3:])))
    else:
        main()
