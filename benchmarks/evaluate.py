"""Evaluate benchmarks: ratios from one run, printed side by side (no thresholds asserted).

1. evaluate wall time / the longest single strategy run raw (target <= 1.3), and / the
   same commands run one after another in bash;
2. cached re-evaluation (the best of three) / first evaluation (target <= 0.1), as sprintflow runs
   them (no flow-run heartbeat), and beside it with Prefect's default heartbeat (about 1 s per flow run);
3. DockerExecutor / LocalExecutor on the same strategy (target <= 1.3);
4. what the judge adds to an iteration (judging the step, building the judged tree, checking the
   workspace is unchanged, the view's layers) as (strategies + judge) / strategies, on the example
   and beside a 200 MB node_modules (target <= 1.15), and the time to build the judged tree of a
   20,000-file project (target <= 1 s);
5. the mutation check of a tested change of 10 and of 50 lines, on the Python and the TypeScript
   example, and of a 10-line request handler the Python example's tests serve from a thread, / the
   unit-test strategy's own run (target <= 1.0), with the kill rate;
6. a sprint's second iteration (a one-line change, dependencies unchanged), on the Python and the
   TypeScript example, local and Docker: evaluate / the same commands run one after another in a
   developer's warm shell after the same change (target <= 1.2), and / the longest of those warm
   commands (target <= 1.3). The judge's kept tool caches are what make the second evaluation warm.

Run: python benchmarks/evaluate.py [--example python-api] [--repeat 3] [--mutation-only] [--warm-only]
Uses sprintflow's background Prefect server in a temporary PREFECT_HOME (started once, not
counted, stopped at the end), as `sprintflow evaluate` does. The raw commands and the flow's
evaluations each run on a fresh copy of the example, so no tool cache of one warms the other.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "ERROR")


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _fresh_copy(example: str, into: Path) -> Path:
    from tests.conftest import copy_example

    shutil.rmtree(into / example, ignore_errors=True)
    return copy_example(example, into)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default="python-api")
    parser.add_argument("--repeat", type=int, default=3, help="runs per executor for ratio 3")
    parser.add_argument("--mutation-only", action="store_true", help="only ratio 5, the mutation check")
    parser.add_argument("--warm-only", action="store_true", help="only ratio 6, the second iteration")
    args = parser.parse_args()
    if args.mutation_only:
        _mutation_cost(Path(tempfile.mkdtemp(prefix="sprintflow-bench-")))
        return
    if args.warm_only:
        _second_iteration(Path(tempfile.mkdtemp(prefix="sprintflow-bench-")))
        return

    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.evaluate.strategies import strategy_for
    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.io.process import run_command
    from sprintflow.orchestration.runs import run_flow
    from sprintflow.sandbox.executors import docker_available
    from sprintflow.schemas import StrategyType

    work = Path(tempfile.mkdtemp(prefix="sprintflow-bench-"))
    workspace = _fresh_copy(args.example, work)
    contract = str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))
    _, project, strategies = load_inputs(workspace, contract)
    commands = [(s.name, strategy_for(s, project).command() or "") for s in strategies
                if s.type is not StrategyType.api_check]

    # Raw: each command on its own, then all of them serially in one bash.
    raw = {}
    for name, command in commands:
        raw[name] = run_command(command, cwd=workspace, timeout=600).duration_s
    serial_s, _ = _timed(lambda: subprocess.run(["bash", "-c", " ; ".join(c for _, c in commands)],
                                                cwd=workspace, capture_output=True))
    longest = max(raw.values())
    # api-check and playwright wait for build by design, so the best possible wall time is
    # the longer of: the longest independent strategy, and build + the longest waiting one.
    waiting = [s.name for s in strategies if s.type in (StrategyType.playwright,)]
    critical = max(max(t for n, t in raw.items() if n not in waiting),
                   raw.get("build", 0.0) + max((raw[n] for n in waiting), default=0.0))

    def evaluation(copy: Path, **kwargs):
        return run_flow(evaluate_flow, str(copy), str(copy / relative), executor="local", **kwargs)

    relative = Path(contract).relative_to(workspace)
    with _background_server(work / "prefect-home"):
        evaluation(_fresh_copy(args.example, work / "warm-up"), use_cache=False)  # not counted
        fresh = _fresh_copy(args.example, work / "flow")
        first_s, first = _timed(lambda: evaluation(fresh, use_cache=False))
        evaluation(fresh, use_cache=True, iteration=2)  # fills the cache
        # The best of three: a SQLite-backed server answers some flow-run creations "database is locked",
        # and Prefect's client backs off 2 s (an outlier of the server's, not of the evaluation).
        cached_s, cached = min((_timed(lambda n=n: evaluation(fresh, use_cache=True, iteration=n))
                                for n in (3, 4, 5)), key=lambda timed: timed[0])
        heartbeat_s, _ = _timed(lambda: evaluate_flow(str(fresh), str(fresh / relative), executor="local",
                                                      use_cache=True, iteration=6, return_state=True))
        # Containers take the Docker host's slot from the server: measured while it runs.
        docker = _docker_vs_local(args.repeat, project, workspace, commands) if docker_available() else None
    assert first.overall_result == "pass" and all(s.cached for s in cached.strategy_results)

    print(f"example: {args.example}; {len(commands)} command strategies + api-check; "
          f"{len(first.strategy_results)} strategies in the flow")
    for name, seconds in raw.items():
        print(f"  raw {name:<16} {seconds:6.2f} s")
    print(f"1. evaluate (local, no cache)     {first_s:6.2f} s")
    print(f"   / longest raw strategy          {first_s / longest:6.2f}   (longest {longest:.2f} s; target <= 1.3)")
    print(f"   / critical path (build first)   {first_s / critical:6.2f}   (critical path {critical:.2f} s)")
    print(f"   / serial bash of the commands   {first_s / serial_s:6.2f}   (serial {serial_s:.2f} s)")
    print(f"2. cached re-evaluation            {cached_s:6.2f} s")
    print(f"   / first evaluation              {cached_s / first_s:6.2f}   (target <= 0.1)")
    print(f"   with Prefect's heartbeat        {heartbeat_s:6.2f} s, / first {heartbeat_s / first_s:6.2f}")

    _judge_cost(workspace, contract, critical)
    if docker is None:
        print("3. skipped: no Docker engine answers")
    else:
        docker_s, local_s = docker
        print(f"3. unit-test in Docker {docker_s:.2f} s, local {local_s:.2f} s (best of {args.repeat})")
        print(f"   DockerExecutor / LocalExecutor  {docker_s / local_s:6.2f}   (target <= 1.3)")
    _mutation_cost(work)
    _second_iteration(work)
    shutil.rmtree(work, ignore_errors=True)


ONE_LINE_CHANGE = {"python-api": ("src/todo_api/model.py", "\n# the second iteration\n"),
                   "ts-app": ("src/store.ts", "\n// the second iteration\n")}
"""What the generator changed for the second iteration: a line of a source file the type checker reads."""


def _change(workspace: Path, example: str) -> None:
    rel, line = ONE_LINE_CHANGE[example]
    with open(workspace / rel, "a", encoding="utf-8") as handle:
        handle.write(line)


def _warm_shell(example: str, work: Path) -> tuple[float, float]:
    """The example's commands in a developer's shell: run once (warm), changed, then run serially, timed;
    and after another change, the longest of them run alone."""
    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.evaluate.strategies import strategy_for
    from sprintflow.io.process import run_command
    from sprintflow.schemas import StrategyType

    shell = _fresh_copy(example, work / f"shell-{example}")
    contract = next((shell / ".sprintflow" / "contracts").glob("*.json"))
    _, project, strategies = load_inputs(shell, contract)
    # api-check's "command" is the server it starts and waits for: a shell would never return from it.
    commands = [c for c in (strategy_for(s, project).command() for s in strategies
                            if s.type is not StrategyType.api_check) if c]
    for command in commands:
        run_command(command, cwd=shell, timeout=600)
    _change(shell, example)
    serial_s, _ = _timed(lambda: subprocess.run(["bash", "-c", " ; ".join(commands)], cwd=shell,
                                                capture_output=True, check=False))
    _change(shell, example)
    longest = max(run_command(command, cwd=shell, timeout=600).duration_s for command in commands)
    return serial_s, longest


def _evaluate(workspace: Path, executor: str, iteration: int) -> float:
    """One timed evaluation of the workspace's contract, as `sprintflow evaluate --no-cache` runs it."""
    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.orchestration.runs import run_flow

    contract = str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))
    seconds, _ = _timed(lambda: run_flow(evaluate_flow, str(workspace), contract, executor=executor,
                                         use_cache=False, iteration=iteration))
    return seconds


def _second_iteration(work: Path) -> None:
    from sprintflow.judge.tree import WorkspaceStore
    from sprintflow.sandbox.executors import docker_available

    executors = ["local", "docker"] if docker_available() else ["local"]
    print("6. the second iteration (a one-line change, dependencies unchanged) / a warm shell's same commands")
    with _background_server(work / "prefect-home-warm"):
        for example in ONE_LINE_CHANGE:
            source = ROOT / "examples" / example
            if (source / "package.json").is_file() and not (source / "node_modules").is_dir():
                # Without its dependencies every command fails fast, and the ratios would time failures.
                raise SystemExit(f"{source} has no node_modules: run `npm ci` there first (scripts/test.sh does)")
            serial_s, longest_s = _warm_shell(example, work)
            for executor in executors:
                workspace = _fresh_copy(example, work / f"sprint-{example}-{executor}")
                _evaluate(workspace, executor, iteration=1)
                _change(workspace, example)
                second_s = _evaluate(workspace, executor, iteration=2)
                # The same again without the judge's kept tool caches: what they save.
                _change(workspace, example)
                shutil.rmtree(WorkspaceStore(workspace).root / "tool-caches", ignore_errors=True)
                cold_s = _evaluate(workspace, executor, iteration=3)
                print(f"   {example:<10} {executor:<6} evaluate {second_s:6.2f} s (cold tools {cold_s:6.2f} s); "
                      f"warm shell serial {serial_s:6.2f} s -> {second_s / serial_s:4.2f} (target <= 1.2); "
                      f"longest warm command {longest_s:5.2f} s -> {second_s / longest_s:4.2f} (target <= 1.3)")


def _docker_vs_local(repeat: int, project, workspace: Path, commands) -> tuple[float, float]:
    """The unit-test command's best time in each executor, runs interleaved so noise hits both alike."""
    from sprintflow.sandbox.executors import CommandSpec, DockerExecutor, LocalExecutor

    command = next(c for n, c in commands if n == "unit-test")
    spec = CommandSpec(command=command, timeout=600)
    docker_runs, local_runs = [], []
    for _ in range(repeat):
        docker_runs.append(_timed(lambda: DockerExecutor(project.executor).run(workspace, spec))[0])
        local_runs.append(_timed(lambda: LocalExecutor(project.executor).run(workspace, spec))[0])
    return min(docker_runs), min(local_runs)


@contextmanager
def _background_server(home: Path) -> Iterator[None]:
    """sprintflow's background server in ``home``, this process pointed at it; stopped afterwards."""
    from sprintflow.orchestration.server import ensure_background_server, stop_background_server

    os.environ["PREFECT_HOME"] = str(home)
    os.environ.pop("PREFECT_API_URL", None)
    try:
        ensure_background_server(home, announce=lambda line: None)
        yield
    finally:
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        # The runs' logs and events reach the server before it stops (else "Error logging to API").
        APILogWorker.drain_all(timeout=10)
        EventsWorker.drain_all(timeout=10)
        stop_background_server(home)


def _node_modules(workspace: Path, megabytes: int = 200) -> None:
    """A dependency folder the size of a real project's: 20,000 files of 10 KiB."""
    block = os.urandom(10 << 10)
    for package in range(megabytes * 10):
        folder = workspace / "node_modules" / f"pkg-{package}"
        folder.mkdir(parents=True)
        for index in range(10):
            (folder / f"f{index}.js").write_bytes(block)


def _judge_once(workspace: Path, contract: str) -> dict[str, float]:
    """What the judge adds to one sprint iteration, step by step (a fresh store: the first scan copies)."""
    from sprintflow.evaluate.view import open_view
    from sprintflow.judge.baseline import pin_baseline
    from sprintflow.judge.sprint import Admission, SprintJudge
    from sprintflow.judge.tree import WorkspaceStore, changed_since, remove_tree, stat_picture
    from sprintflow.schemas import SprintContract, load_document

    loaded = load_document(contract, SprintContract)
    store = WorkspaceStore(workspace, home=Path(tempfile.mkdtemp(prefix="sprintflow-bench-judge-")))
    costs: dict[str, float] = {}
    costs["pin the baseline (copies)"], baseline = _timed(lambda: pin_baseline(store, "pin-bench"))
    judge = SprintJudge(store, baseline, Admission(estimated_files=tuple(loaded.estimated_files)))
    if loaded.estimated_files:  # the generator touched what it was asked to
        (workspace / loaded.estimated_files[0]).touch()
    costs["judge the step"], _ = _timed(judge.judge_step)
    costs["build the judged tree"], tree = _timed(judge.judged_tree)
    costs["workspace unchanged check"], _ = _timed(lambda: changed_since(workspace, stat_picture(workspace)))

    def layers() -> None:
        view = open_view(tree.root)
        try:
            for name in ("0-build", "1-typecheck", "2-lint", "3-unit-test"):
                with view.layer(name):
                    pass
                view.changed_sources(name)
        finally:
            view.close()

    open_view(tree.root).close()  # once per process, not per iteration: the overlay probe, reclaiming leftovers
    costs["view (4 layers)"], _ = _timed(layers)
    remove_tree(tree)
    shutil.rmtree(store.home, ignore_errors=True)
    return costs


PER_ITERATION = ("judge the step", "build the judged tree", "workspace unchanged check", "view (4 layers)")


def _judge_cost(workspace: Path, contract: str, strategies_s: float) -> None:
    without = _judge_once(workspace, contract)
    _node_modules(workspace)
    with_modules = _judge_once(workspace, contract)
    shutil.rmtree(workspace / "node_modules")
    _source_tree(workspace)
    big_tree = _judge_once(workspace, contract)
    shutil.rmtree(workspace / "src" / "generated")
    print("4. the judge's cost: the example / with a 200 MB node_modules (20,000 files) / with 20,000 source files")
    for name, seconds in without.items():
        print(f"   {name:<28} {seconds:6.2f} s   {with_modules[name]:6.2f} s   {big_tree[name]:6.2f} s")
    for label, costs in (("the example", without), ("200 MB node_modules", with_modules)):
        added = sum(costs[name] for name in PER_ITERATION)
        print(f"   (strategies + judge) / strategies, {label:<20} {(strategies_s + added) / strategies_s:5.2f}"
              f"   (judge {added:.2f} s per iteration; target <= 1.15)")
    print(f"   building the judged tree of 20,000 source files: {big_tree['build the judged tree']:.2f} s "
          "(target <= 1 s)")


def _source_tree(workspace: Path, files: int = 20_000) -> None:
    """A large project's own files: 20,000 small modules in 200 packages."""
    for package in range(files // 100):
        folder = workspace / "src" / "generated" / f"pkg_{package}"
        folder.mkdir(parents=True)
        for index in range(100):
            (folder / f"m{index}.py").write_text(f"VALUE = {package * 100 + index}\n")
    time.sleep(1.1)  # a project's files are older than a timestamp's reach (see sprintflow.judge.store.RACY_S)

def _python_change(workspace: Path, lines: int) -> None:
    """About ``lines`` new lines of source in functions of 4 lines, each with a test that checks it."""
    source, tests = [], ["from todo_api.extra import *  # noqa: F403\n"]
    for i in range(max(1, lines // 5)):
        source.append(f"\ndef scaled_{i}(x):\n    if x > {i}:\n        return x * {i + 2}\n    return x - {i}\n")
        tests.append(f"\ndef test_scaled_{i}():\n    assert scaled_{i}({i + 1}) == {(i + 1) * (i + 2)}\n"
                     f"    assert scaled_{i}(0) == {-i}\n")
    (workspace / "src/todo_api/extra.py").write_text("".join(source))
    (workspace / "tests/test_extra.py").write_text("".join(tests))


def _python_handler_change(workspace: Path, lines: int) -> None:
    """About 10 new lines of a request handler, tested through the example's server, which its tests run
    in a thread of their own (``lines`` is not used: one handler)."""
    server, tests = workspace / "src/todo_api/server.py", workspace / "tests/test_api.py"
    handler = ('\n\ndef count_todos(store: TodoStore, body: Any) -> Reply:\n    items = store.items()\n'
               '    long = [todo for todo in items if len(todo.title) > 3]\n    if not items:\n'
               '        return HTTPStatus.OK, {"count": 0, "long": 0}\n'
               '    return HTTPStatus.OK, {"count": len(items), "long": len(long)}\n')
    route = '    ("GET", "/todos"): list_todos,\n'
    text = server.read_text().replace("\n\nROUTES", handler + "\n\nROUTES", 1)
    server.write_text(text.replace(route, route + '    ("GET", "/todos/count"): count_todos,\n', 1))
    tests.write_text(tests.read_text() + '\n\ndef test_count_counts_todos_and_long_ones(api: TodoServer) -> None:\n'
                     '    assert call(api, "GET", "/todos/count") == (200, {"count": 0, "long": 0})\n'
                     '    call(api, "POST", "/todos", {"title": "abcd"})\n'
                     '    call(api, "POST", "/todos", {"title": "abc"})\n'
                     '    assert call(api, "GET", "/todos/count") == (200, {"count": 2, "long": 1})\n')


def _ts_change(workspace: Path, lines: int) -> None:
    """The same in TypeScript, tested with vitest."""
    source, names, tests = [], [], []
    for i in range(max(1, lines // 5)):
        source.append(f"\nexport function scaled{i}(x: number): number {{\n  if (x > {i}) {{\n"
                      f"    return x * {i + 2};\n  }}\n  return x - {i};\n}}\n")
        names.append(f"scaled{i}")
        tests.append(f"\ntest('scaled{i}', () => {{\n  expect(scaled{i}({i + 1})).toBe({(i + 1) * (i + 2)});\n"
                     f"  expect(scaled{i}(0)).toBe({-i});\n}});\n")
    (workspace / "src/extra.ts").write_text("".join(source))
    (workspace / "test/extra.test.ts").write_text(
        f"import {{ expect, test }} from 'vitest';\nimport {{ {', '.join(names)} }} from '../src/extra.js';\n"
        + "".join(tests))


CHANGES = {"python-api": _python_change, "python-api handler": _python_handler_change, "ts-app": _ts_change}
"""The changes measured, by name: the example is the name's first word."""


def _measure_change(work: Path, change: str, lines: int):
    """The unit-test strategy's own run and the mutation check of a fresh change, on one judged tree."""
    from dataclasses import replace

    from sprintflow.evaluate.canary import runner_of
    from sprintflow.evaluate.mutation import MutationJob, measure
    from sprintflow.evaluate.plan import load_inputs
    from sprintflow.evaluate.strategies import strategy_for
    from sprintflow.evaluate.view import open_view
    from sprintflow.judge.baseline import pin_baseline
    from sprintflow.judge.tree import WorkspaceStore, remove_tree
    from sprintflow.parsers import parse_report
    from sprintflow.sandbox.executors import CommandSpec, LocalExecutor
    from sprintflow.schemas import StrategyType

    example = change.split()[0]
    workspace = _fresh_copy(example, work / f"mutation-{change.replace(' ', '-')}-{lines}")
    contract = str(next((workspace / ".sprintflow" / "contracts").glob("*.json")))
    _, project, strategies = load_inputs(workspace, contract)
    unit = next(s for s in strategies if s.type is StrategyType.unit_test)
    plugin = strategy_for(unit, project)
    store = WorkspaceStore(workspace)
    pin_baseline(store, "pin-bench")
    CHANGES[change](workspace, lines)
    snapshot = store.scan()
    tree = replace(store.materialize(snapshot.manifest, snapshot.dependencies), pin_id="pin-bench")
    command, spec = plugin.command() or "", plugin.report_spec(tree.root)
    runner = runner_of(spec.format if spec else None, command) or ""
    executor, view = LocalExecutor().for_tree(tree), open_view(tree.root)
    try:
        with view.layer("unit-test") as layer:
            unit_s = executor.run(layer, CommandSpec(command=command, timeout=600)).duration_s
            # The files the run collected tests from, as the judge hands them to the check.
            report = parse_report(spec.format, (layer / (spec.report_path or "")).read_text(encoding="utf-8"),
                                  [executor.workspace_path(layer), str(layer.resolve())]) if spec else None
            tests = tuple(sorted({case.file for case in report.tests if case.file})) if report else ()
        with view.layer("unit-test-mutation") as layer:
            job = MutationJob(unit.config.mutation, tree.root, workspace, "pin-bench")
            mutation = measure(job, runner, layer, executor, [command], unit_s, tests=tests)
    finally:
        view.close()
        remove_tree(tree)
    return unit_s, mutation


def _mutation_cost(work: Path) -> None:
    os.environ["SPRINTFLOW_JUDGE_HOME"] = str(work / "judge")  # the benchmark's baselines, not the user's
    print("5. the mutation check of a tested change / the unit-test run (default settings: at most 16 mutants, 120 s)")
    for change, lines in (("python-api", 10), ("python-api", 50), ("python-api handler", 10), ("ts-app", 10),
                          ("ts-app", 50)):
        unit_s, mutation = _measure_change(work, change, lines)
        if mutation is None or mutation.duration_ms is None:
            why = mutation.reason if mutation else "no change"
            print(f"   {change:<18} {lines:>2} lines: not measured ({why})")
            continue
        seconds = mutation.duration_ms / 1000
        print(f"   {change:<18} {lines:>2} lines: unit-test {unit_s:5.2f} s, mutation {seconds:6.2f} s, "
              f"ratio {seconds / unit_s:5.2f} (target <= 1.0); {mutation.tool}: killed {mutation.killed} of "
              f"{mutation.mutants} (kill rate {mutation.kill_rate}), {mutation.not_run} not run")


if __name__ == "__main__":
    main()
