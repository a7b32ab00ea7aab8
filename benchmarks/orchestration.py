"""Orchestration cost: the CPU seconds an evaluation and a sprint iteration take beyond their commands.

Every strategy and custom criterion is ``true`` and the engine does nothing, so what is measured is
sprintflow and Prefect alone: the client (this process: the flow, its tasks, the judge) and the
Prefect server (a temporary one, started once and not counted; its process's CPU read from /proc).

1. one evaluation, uncached, with 1 and with 4 strategies;
2. the same evaluations again, every result reused (cached): the cost of a cached strategy is the
   difference between 4 and 1 strategies, divided by 3 (goal <= 20 ms each, client + server);
3. a sprint of 5 iterations whose engine is ``true`` (the contract never passes): CPU per iteration,
   client + server (goal <= 0.3 s);
4. Prefect's own floor for one iteration's shape: a flow that runs, per iteration, one empty task (the
   generator step) and one empty subflow (the evaluation), the same 5 times: what any iteration that
   keeps the evaluation a subflow pays before sprintflow does anything.

Numbers from one run, side by side, each the median of ``--repeat`` runs; nothing is asserted.

Run: python benchmarks/orchestration.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")

TYPES = ("build", "typecheck", "lint", "unit-test")
ITERATIONS = 5
GOAL_ITERATION_S, GOAL_CACHED_MS = 0.3, 20.0
_TICK = os.sysconf("SC_CLK_TCK")


def _workspace(root: Path, strategies: int) -> Path:
    """A contract of one criterion per strategy and one custom criterion, every command ``true``."""
    from tests.fixtures.sprint.make_workspace import contract

    (root / ".sprintflow" / "contracts").mkdir(parents=True)
    (root / "sprintflow.toml").write_text("[evaluator]\nmaxIterations = %d\n\n" % ITERATIONS + "".join(
        f'[[evaluator.strategies]]\ntype = "{kind}"\ncommand = "true"\n\n' for kind in TYPES[:strategies]))
    criteria = [{"criterionId": f"sc-1-{n}", "description": f"The {kind} check passes.", "verificationMethod": kind,
                 "required": True} for n, kind in enumerate(TYPES[:strategies], 1)]
    criteria.append({"criterionId": f"sc-1-{strategies + 1}", "description": "A file the engine never writes exists.",
                     "verificationMethod": "custom", "required": True, "customCommand": "test -f never.txt"})
    data = contract(1, criteria, [])
    (root / ".sprintflow" / "contracts" / f"{data['contractId']}.json").write_text(json.dumps(data, indent=2))
    return root


def _server_pids() -> list[int]:
    """The processes this one started (the temporary Prefect server), from /proc."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        try:
            found += [int(pid) for pid in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _cpu(pids: list[int]) -> tuple[float, float]:
    """(client, server) CPU seconds so far: this process, and the server's processes."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    server = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            server += (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return usage.ru_utime + usage.ru_stime, server


def _measured(work: Callable[[], object], pids: list[int]) -> tuple[float, float]:
    client, server = _cpu(pids)
    work()
    client_after, server_after = _cpu(pids)
    return client_after - client, server_after - server


def _floor_sprint() -> None:
    """Prefect alone, in the shape of a sprint: per iteration an empty task and an empty subflow."""
    from prefect import flow, task

    @task(name="generate")
    def generate() -> None:
        return None

    @flow(name="evaluate")
    def evaluate() -> None:
        return None

    @flow(name="sprint")
    def sprint() -> None:
        for _ in range(ITERATIONS):
            generate()
            evaluate()

    sprint()


def _median(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from prefect.testing.utilities import prefect_test_harness

    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.flows.sprint import sprint_flow
    from sprintflow.orchestration.runs import run_flow, without_heartbeats

    contract_path = Path(".sprintflow/contracts/sprint-spec-tiny-1.json")
    with prefect_test_harness(server_startup_timeout=120), without_heartbeats():
        pids = _server_pids()
        scratch = Path(tempfile.mkdtemp(prefix="sprintflow-orchestration-"))
        warm = _workspace(scratch / "warm", 1)
        run_flow(evaluate_flow, str(warm), str(warm / contract_path), executor="local")  # imports, first calls

        rows: dict[str, tuple[float, float]] = {}
        for count in (1, len(TYPES)):
            uncached: list[tuple[float, float]] = []
            cached: list[tuple[float, float]] = []
            for n in range(args.repeat):
                ws = _workspace(scratch / f"eval-{count}-{n}", count)
                contract = str(ws / contract_path)
                for iteration, samples in ((1, uncached), (2, cached)):  # the second reuses every verdict
                    samples.append(_measured(partial(run_flow, evaluate_flow, str(ws), contract, executor="local",
                                                     iteration=iteration), pids))
            rows[f"evaluate, {count} strateg{'y' if count == 1 else 'ies'}, uncached"] = _median(uncached)
            rows[f"evaluate, {count} strateg{'y' if count == 1 else 'ies'}, cached"] = _median(cached)
        sprints: list[tuple[float, float]] = []
        for n in range(args.repeat):
            ws = _workspace(scratch / f"sprint-{n}", len(TYPES))
            sprints.append(_measured(partial(run_flow, sprint_flow, str(ws), engine="true", executor="local"), pids))
        client, server = _median(sprints)
        rows[f"sprint iteration (engine true, {len(TYPES)} strategies)"] = (client / ITERATIONS, server / ITERATIONS)
        _floor_sprint()  # its flows registered, its first calls made
        client, server = _median([_measured(_floor_sprint, pids) for _ in range(args.repeat)])
        rows["Prefect alone: an empty task and subflow"] = (client / ITERATIONS, server / ITERATIONS)

    print(f"{'':52}{'client':>9}{'server':>9}{'total':>9}  CPU s, median of {args.repeat}")
    for label, (client, server) in rows.items():
        print(f"{label:52}{client:9.3f}{server:9.3f}{client + server:9.3f}")
    one, many = rows["evaluate, 1 strategy, cached"], rows[f"evaluate, {len(TYPES)} strategies, cached"]
    per_cached = (sum(many) - sum(one)) / (len(TYPES) - 1) * 1000
    per_iteration = sum(rows[f"sprint iteration (engine true, {len(TYPES)} strategies)"])
    print(f"per cached strategy: {per_cached:6.1f} ms   (goal <= {GOAL_CACHED_MS:g} ms)")
    floor = sum(rows["Prefect alone: an empty task and subflow"])
    print(f"per sprint iteration: {per_iteration:5.2f} s    (goal <= {GOAL_ITERATION_S:g} s); "
          f"{per_iteration / floor:4.2f} x Prefect's own floor of {floor:4.2f} s")


if __name__ == "__main__":
    main()
