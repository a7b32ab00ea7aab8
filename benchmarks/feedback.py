"""Feedback precision on real projects with injected faults: recall and noise, from recordings.

For every project in ``tests/fixtures/feedback/`` (four TypeScript, four
Python, three Go, three Rust, three Java, recorded by ``benchmarks/record_feedback.py``: real tools
of several versions on real code with a type error, a lint error and a failing assertion
injected; in Go, Rust and Java, a compile error, a vet, staticcheck, clippy or Checkstyle finding,
a failing check and a panic or exception), each recorded command goes through what the evaluator
does with it:
format inference from the command line, the parser, the environment
classifier, then the generator feedback of one evaluation, together with one
criterion per strategy and a previous evaluation in which everything passed
(so criterion and regression items are produced, as in a real sprint). The
``repeated`` evaluation judges each project's first plain evaluation again,
after one that failed the same way (a sprint's next iteration on a tree nobody
fixed). Two projects, defu and cachetools, were recorded again after their own
build wrote ``dist/`` or ``build/`` into the checkout: the ``built``
evaluation, what a linter reading a built tree reports, shown apart from the
goal (sprintflow's strategies never see a build's output: ``--live`` measures
that).

It prints, per evaluation, how many injected faults the feedback names at the
right file:line (recall: out of the faults the evaluation's tools can report,
as each recorded command's ``expects`` says; a fault no tool there can see is
listed apart; an item pointing at the code a failing test exercises counts the
test's line it names), how many feedback items it holds per fault (noise), how
many of the failing tests the runners named are named by an item (test-name
recall) and how many items' reproductions select exactly their failing tests
among every test the recorded run listed (reproduction precision), the
recorded commands' wall time one after another (serial bash, where the
recording kept it), then the totals for plain commands (what a user writes
first: ``npm run lint``, ``pytest``, ``mypy src``), their repeated evaluation
and configured ones (explicit reporters).
Goal, first and repeated: recall >= 95 % with plain commands, <= 1.5 items per
fault, test names and reproductions 100 %.

    python benchmarks/feedback.py [--runs]    # --runs: also one line per recorded command
    python benchmarks/feedback.py --live defu=/path/to/defu-checkout [--live NAME=CHECKOUT ...]

``--live NAME=CHECKOUT`` also evaluates, on a checkout of a recorded project with
its faults applied (and removed afterwards), its first plain evaluation's commands
with ``sprintflow evaluate`` (local executor, no cache) twice, first and repeated,
and scores each evaluation's own feedback as above (reproductions among the tests
the recording listed), with its time ÷ the same commands run one after another in
bash (run twice; the second, with the tools' caches as warm as the judged tree
has them, is the divisor), then the totals of every live project. It starts
sprintflow's background Prefect server in a temporary PREFECT_HOME (not
counted). The commands run with this process's environment plus the project's
``env`` (passed through ``executor.passEnv``): put the Python tools' virtualenv
first on PATH, and start this script with an interpreter's own path, not a
pyenv shim, which puts its own folders first on PATH.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sprintflow.errors import ReportError  # noqa: E402
from sprintflow.evaluate.criteria import judge_by_strategy  # noqa: E402
from sprintflow.evaluate.environment import classify_environment  # noqa: E402
from sprintflow.evaluate.excerpt import combined_output, relevant_output  # noqa: E402
from sprintflow.evaluate.feedback import find_regressions, generator_feedback  # noqa: E402
from sprintflow.evaluate.inference import ReportSpec, infer_report  # noqa: E402
from sprintflow.evaluate.reproduction import split_js_id, test_runner  # noqa: E402
from sprintflow.parsers import ParsedReport, parse_report  # noqa: E402
from sprintflow.schemas import (  # noqa: E402
    EvalResult,
    GeneratorFeedback,
    Outcome,
    Score,
    StrategyResult,
    SuccessCriterion,
    VerificationMethod,
)

FIXTURES = ROOT / "tests" / "fixtures" / "feedback"
GOAL_RECALL, GOAL_NOISE = 0.95, 1.5


@dataclass
class Run:
    """One recorded command, judged as its strategy would judge it."""

    project: str
    id: str
    strategy: str
    plain: bool
    expects: list[str]
    evaluate: bool
    command: str
    tool: str
    spec: ReportSpec
    result: StrategyResult
    tests: list[str]
    """Every test the run's report listed (its runner's names)."""
    repeat: bool
    """Recorded after the project's build wrote its output into the checkout."""
    duration_s: float | None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", action="store_true", help="also print one line per recorded command")
    parser.add_argument("--live", action="append", default=[], metavar="NAME=CHECKOUT",
                        help="also time evaluate against serial bash on this checkout of a recorded project")
    args = parser.parse_args()
    catalogue = json.loads((FIXTURES / "projects.json").read_text(encoding="utf-8"))
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0, 0])
    # found, faults, items, tests named, failing tests, exact reproductions, items with tests
    print(f"{'project':<15} {'evaluation':<11} {'recall':>8} {'items':>6} {'per fault':>9} {'tests':>7} "
          f"{'repro':>7} {'serial':>7}  commands")
    for project in catalogue["projects"]:
        runs, faults = load_project(project)
        if args.runs:
            for run in runs:
                environment = classify_environment(run.result.output, run.result.exit_code)
                print(f"  run {run.project}/{run.id:<24} {run.tool:<34} {run.spec.format:<26} "
                      f"{run.result.result.value:<5} {len(run.result.diagnostics):>3} diagnostics"
                      + (f"  environment: {environment.kind.value}" if environment else ""))
        for label, chosen in evaluations(runs):
            items = feedback_for(chosen, repeated=label == "repeated")
            visible = {name: faults[name] for run in chosen for name in run.expects}
            found = named_faults(items, visible)
            named, failing = test_names(items, chosen)
            exact, with_tests = reproductions(items, chosen)
            hidden = sorted(set(faults) - set(visible))
            kind = "plain" if label.startswith("plain") else label
            for key in (kind, f"{kind}:{project['language']}"):
                for i, n in enumerate((len(found), len(visible), len(items), named, failing, exact, with_tests)):
                    totals[key][i] += n
            note = f"  (not visible to these tools: {', '.join(hidden)})" if hidden else ""
            print(f"{project['name']:<15} {label:<11} {len(found)}/{len(visible):<6} {len(items):>6} "
                  f"{len(items) / max(1, len(visible)):>9.2f} {named:>3}/{failing:<3} {exact:>3}/{with_tests:<3} "
                  f"{serial_bash(chosen):>7}  "
                  f"{'; '.join(r.command for r in chosen)}{note}")
    print()
    languages = ("typescript", "python", "go", "rust", "java")
    for key in ("plain", *(f"plain:{language}" for language in languages), "repeated", "configured",
                *(f"configured:{language}" for language in languages), "built"):
        if totals[key][1]:
            print(totals_line(key, totals[key]))
    print()
    for key in ("plain", "repeated"):
        print(goal_line(key, totals[key]))
    checkouts = []
    for pair in args.live:  # every pair checked before the first (long) live run
        name, _, checkout = pair.partition("=")
        project = next((p for p in catalogue["projects"] if p["name"] == name), None)
        if project is None or not Path(checkout).is_dir():
            print(f"--live {pair}: no recorded project {name!r} or no folder {checkout!r}", file=sys.stderr)
            return 2
        checkouts.append((project, Path(checkout).resolve()))
    live_totals = {"first": [0] * 7, "repeated": [0] * 7}
    for project, checkout in checkouts:
        for label, scored in live(project, checkout).items():
            live_totals[label] = [total + n for total, n in zip(live_totals[label], scored, strict=True)]
    if checkouts:
        print()
        for label, summed in live_totals.items():
            print(totals_line(f"live {label}", summed))
        for label, summed in live_totals.items():
            print(goal_line(f"live {label}", summed))
    return 0


def totals_line(key: str, counts: list[int]) -> str:
    named, faults, items, tests, failing, exact, with_tests = counts
    return (f"{key:<22} recall {named}/{faults} = {named / max(1, faults):6.1%}   "
            f"items per fault {items / max(1, faults):4.2f}   "
            f"test names {tests}/{failing} = {tests / max(1, failing):6.1%}   "
            f"reproductions {exact}/{with_tests} = {exact / max(1, with_tests):6.1%}")


def goal_line(key: str, counts: list[int]) -> str:
    return (f"goal ({key}): recall >= {GOAL_RECALL:.0%}, <= {GOAL_NOISE} items per fault, every failing test "
            f"named and reproduced alone: {'met' if goal_met(*counts) else 'NOT met'}")


def goal_met(named: int, faults: int, items: int, tests: int, failing: int, exact: int, with_tests: int) -> bool:
    """Whether an evaluation's totals meet the goal (none at all is no pass)."""
    return (faults > 0 and named / faults >= GOAL_RECALL and items / faults <= GOAL_NOISE and tests == failing
            and exact == with_tests)


def live(project: dict, checkout: Path) -> dict[str, list[int]]:
    """Faulty-tree ``evaluate`` (first and repeated) ÷ the same commands in serial bash, on ``checkout``.

    Each evaluation's own feedback is scored as a recorded one is: recall, items per fault, the
    failing tests its strategies named and the reproductions that select exactly those (among
    the tests the project's recording listed).
    """
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from evaluate import _background_server, _timed
    from record_feedback import _restore, _snapshot, apply_faults

    from sprintflow.flows.evaluate import evaluate_flow
    from sprintflow.orchestration.runs import run_flow

    recorded, _ = load_project(project)
    first = dict(evaluations(recorded))["plain-1"]
    chosen = {run.strategy: run.command for run in first}
    listed = {run.strategy: run.tests for run in first}
    added = [checkout / "sprintflow.toml", checkout / "contract.json", checkout / ".sprintflow"]
    if any(path.exists() for path in added):
        raise SystemExit(f"{checkout} already has sprintflow files; use a checkout of its own")
    env = project.get("env", {})
    sources = _snapshot(checkout)
    saved = {name: os.environ.get(name) for name in env}
    try:
        faults = apply_faults(checkout, project["faults"])
        _write_sprint(checkout, chosen, sorted(env))
        os.environ.update(env)
        def serial() -> object:
            return subprocess.run(["bash", "-c", " ; ".join(chosen.values())], cwd=checkout, capture_output=True,
                                  check=False)

        # Twice: the first run fills the tools' own caches in the checkout (mypy's, tsc's), which the
        # judged tree then has too, so the second is the fair comparison.
        cold_s, _ = _timed(serial)
        serial_s, _ = _timed(serial)
        with tempfile.TemporaryDirectory() as home, _background_server(Path(home)):
            timed = [_timed(lambda n=n: run_flow(evaluate_flow, str(checkout), str(checkout / "contract.json"),
                                                 executor="local", use_cache=False, iteration=n))
                     for n in (1, 2)]
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _restore(checkout, sources)
        for path in added:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
    visible = {name for run in first for name in run.expects}  # as recorded: what these tools can see
    places = {name: (where["file"], where["line"]) for name, where in faults.items() if name in visible}
    hidden = sorted(set(faults) - visible)
    note = f"  (not visible to these tools: {', '.join(hidden)})" if hidden else ""
    counts = {}
    for label, (seconds, result) in zip(("first", "repeated"), timed, strict=True):
        items = result.generator_feedback
        runs = [Run(project["name"], s.strategy, s.strategy, True, [], True, chosen.get(s.strategy, ""), "",
                    ReportSpec("generic"), s, listed.get(s.strategy, []), False, None) for s in result.strategy_results]
        found = named_faults(items, places)
        named, failing = test_names(items, runs)
        exact, with_tests = reproductions(items, runs)
        leaks = leaked_paths(result)
        print(f"live {project['name']:<15} {label:<9} evaluate {seconds:6.1f}s / serial bash {serial_s:6.1f}s = "
              f"{seconds / serial_s:4.2f} (cold bash {cold_s:5.1f}s)   recall {len(found)}/{len(places)}   "
              f"items {len(items)} ({len(items) / len(places):.2f} per fault)   tests {named}/{failing}   "
              f"repro {exact}/{with_tests}   {'no' if not leaks else len(leaks)} sprintflow paths   "
              f"({'; '.join(chosen.values())}){note}")
        counts[label] = [len(found), len(places), len(items), named, failing, exact, with_tests]
    return counts


def leaked_paths(result: EvalResult) -> list[str]:
    """The feedback items and strategy outputs that name sprintflow's own state (``.sprintflow/``, the
    judge's store): strategies see only the judged tree, so there should be none."""
    from sprintflow.settings import get_settings

    own = (".sprintflow/", str(get_settings().judge_home_path))
    texts = [item.model_dump_json() for item in result.generator_feedback]
    texts += [s.output or "" for s in result.strategy_results]
    return [text[:200] for text in texts if any(mark in text for mark in own)]


def _write_sprint(checkout: Path, commands: dict[str, str], passed: list[str]) -> None:
    """A ``sprintflow.toml`` with the commands as strategies (``passed``: host variables they get), and a
    contract with one criterion each."""
    executor = f"[executor]\npassEnv = {json.dumps(passed)}\n\n" if passed else ""
    (checkout / "sprintflow.toml").write_text(executor + "".join(
        f'[[evaluator.strategies]]\ntype = "{strategy}"\ncommand = {json.dumps(command)}\n\n'
        for strategy, command in commands.items()), encoding="utf-8")
    criteria = [{"criterionId": f"sc-1-{i}", "description": f"{strategy} passes", "verificationMethod": strategy,
                 "required": True} for i, strategy in enumerate(commands, 1)]
    (checkout / "contract.json").write_text(json.dumps({
        "contractId": "sprint-bench-1", "specId": "bench", "sprintNumber": 1, "title": "bench",
        "description": "the project's checks", "status": "proposed", "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z", "generatorNotes": "", "evaluatorNotes": "",
        "estimatedDuration": "small", "successCriteria": criteria}), encoding="utf-8")


def load_project(project: dict) -> tuple[list[Run], dict[str, tuple[str, int]]]:
    """Judge every recorded run of a project in a scratch workspace holding its manifests."""
    folder = FIXTURES / project["name"]
    meta = json.loads((folder / "project.json").read_text(encoding="utf-8"))
    faults = {name: (where["file"], where["line"]) for name, where in meta["faults"].items()}
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        for name, text in meta["manifests"].items():
            (workspace / name).write_text(text, encoding="utf-8")
        for entry in project["runs"]:
            path = folder / f"{entry['id']}.json"
            if not path.is_file():
                continue
            recording = json.loads(path.read_text(encoding="utf-8"))
            # A run recorded with its report (Surefire's XML beside mvn's console) says which it reads.
            spec = ReportSpec(entry["format"], entry.get("report"), "stdout") if entry.get("format") \
                else infer_report(recording["command"], workspace)
            # The scratch workspace is a root too: its go.mod says which folder a Go package is in.
            result, tests = judge(entry["strategy"], recording, spec, [meta["root"], scratch])
            runs.append(Run(project["name"], entry["id"], entry["strategy"], entry["plain"], entry["expects"],
                            entry.get("evaluate", True),
                            recording["command"], recording["toolVersion"], spec, result, tests,
                            entry.get("repeat", False), recording.get("durationS")))
    return runs, faults


def judge(strategy: str, recording: dict, spec: ReportSpec, roots: list[str]) -> tuple[StrategyResult, list[str]]:
    """What a strategy makes of a finished command: parse its report, else keep the relevant tail."""
    output = combined_output(recording["stdout"], recording["stderr"])
    if spec.report_path:
        text = recording["reports"].get(spec.report_path)
    else:
        text = recording["stdout"] if spec.stream == "stdout" else output
    parsed: ParsedReport | None = None
    details = f"`{recording['command']}` exited {recording['exitCode']}"
    try:
        parsed = parse_report(spec.format, text, roots) if text is not None else None
    except ReportError as exc:
        details += f"; its {spec.format} report could not be read: {exc}"
    errors = parsed.error_count if parsed else 0
    failed = recording["exitCode"] != 0 or errors > 0
    result = StrategyResult(strategy=strategy, required=True, result=Outcome.failed if failed else Outcome.passed,
                            exit_code=recording["exitCode"], output=relevant_output(output),
                            error_count=errors if parsed else None, details=details + ".",
                            diagnostics=parsed.diagnostics if parsed else [])
    return result, [t.name for t in parsed.tests] if parsed else []


def evaluations(runs: list[Run]) -> list[tuple[str, list[Run]]]:
    """The evaluations a project's recordings make: one strategy run each.

    Plain commands recorded with several tool versions make several plain
    evaluations (``plain-1``, ``plain-2``: the i-th version of each strategy).
    ``repeated`` is ``plain-1`` judged again as a sprint's next iteration judges a
    tree nobody fixed: after an evaluation that failed the same way
    (:func:`feedback_for`). The configured evaluation uses each strategy's
    configured run where there is one. A project recorded again after its own
    build wrote its output into the checkout makes a ``built`` evaluation:
    ``plain-1`` with each strategy's run on the built tree in place of its first
    one, what a linter reading a built tree reports. sprintflow's strategies never
    see a build's output (``--live`` measures its own repeated evaluation), so
    ``built`` is shown apart from the goal.
    """
    plain: dict[str, list[Run]] = defaultdict(list)
    configured: dict[str, Run] = {}
    built = {run.strategy: run for run in runs if run.repeat and run.evaluate}
    for run in runs:
        if not run.evaluate or run.repeat:
            continue
        if run.plain and run.result.exit_code != 127:  # a tool that could not start names no fault
            plain[run.strategy].append(run)
        elif not run.plain:
            configured.setdefault(run.strategy, run)
    variants = max((len(v) for v in plain.values()), default=0)
    chosen = [(f"plain-{i + 1}", [choices[min(i, len(choices) - 1)] for choices in plain.values()])
              for i in range(variants)]
    if chosen:
        chosen.append(("repeated", chosen[0][1]))
    if built and chosen:
        chosen.append(("built", [built.get(run.strategy, run) for run in chosen[0][1]]))
    if configured:
        chosen.append(("configured", [configured.get(s) or plain[s][0] for s in plain]
                       + [r for s, r in configured.items() if s not in plain]))
    return chosen


def feedback_for(runs: list[Run], repeated: bool = False) -> list[GeneratorFeedback]:
    """The generator feedback of one evaluation, with criteria and regressions as a sprint has them.

    The previous evaluation passed everything (so criterion and regression items are
    produced), or, ``repeated``, failed just as this one does: the next iteration of a
    sprint whose generator changed nothing.
    """
    strategies = [run.result for run in runs]
    criteria = [judge_by_strategy(SuccessCriterion(criterion_id=f"sc-1-{i + 1}", description=f"{s.strategy} passes",
                                                   verification_method=VerificationMethod(s.strategy),
                                                   required=True), s)
                for i, s in enumerate(strategies)]
    if repeated:
        before_strategies, before_criteria = strategies, criteria
    else:
        before_strategies = [s.model_copy(update={"result": Outcome.passed, "diagnostics": []}) for s in strategies]
        before_criteria = [c.model_copy(update={"result": Outcome.passed}) for c in criteria]
    previous = EvalResult(
        eval_id="eval-bench-1", contract_id="bench", spec_id="spec-bench", timestamp="2026-01-01T00:00:00Z",
        iteration=1, overall_result="fail" if repeated else "pass", summary="before",
        score=Score(criteria_total=0, criteria_passed=0, criteria_failed=0, criteria_skipped=0,
                    required_passed=0, required_failed=0, required_total=0),
        strategy_results=before_strategies, criteria_results=before_criteria)
    regressions = find_regressions(previous, strategies, criteria)
    commands = {run.strategy: run.command for run in runs}
    return generator_feedback(strategies, criteria, regressions, commands)


def serial_bash(runs: list[Run]) -> str:
    """The evaluation's commands one after another, as recorded (blank for recordings without times)."""
    if any(run.duration_s is None for run in runs):
        return "-"
    return f"{sum(run.duration_s or 0.0 for run in runs):.1f}s"


def named_faults(items: list[GeneratorFeedback], faults: dict[str, tuple[str, int]]) -> set[str]:
    """The faults some feedback item names at their file and line (a test's own line, for an item that
    points at the code the test exercises)."""
    places = {(item.file, item.line) for item in items}
    told = " ".join(item.description for item in items)
    return {name for name, place in faults.items() if place in places or f"failed at {place[0]}:{place[1]})" in told}


def test_names(items: list[GeneratorFeedback], runs: list[Run]) -> tuple[int, int]:
    """How many of the failing tests the runners named some item names, of how many."""
    failing = {d.test for run in runs for d in run.result.diagnostics if d.test and d.severity == "error"}
    told = "\n".join(item.description for item in items)
    return sum(test in told for test in failing), len(failing)


def reproductions(items: list[GeneratorFeedback], runs: list[Run]) -> tuple[int, int]:
    """How many items naming failing tests reproduce exactly those, among every test their run listed."""
    exact = with_tests = 0
    for item in items:
        run = next((r for r in runs if any(d.test and d.test in item.description for d in r.result.diagnostics)),
                   None)
        if run is None:
            continue
        tests = sorted({d.test for d in run.result.diagnostics if d.test and d.test in item.description})
        # the failing test's own tool: a run's first finding may be a compiler's warning (mvn test -fae)
        runner = test_runner(next(d.tool for d in run.result.diagnostics if d.test in tests), run.command)
        with_tests += 1
        exact += runner is not None and _selects(item.reproduction or "", runner, tests, run.tests)
    return exact, with_tests


def _selects(reproduction: str, runner: str, tests: list[str], listed: list[str]) -> bool:
    """Whether the reproduction's selection picks exactly ``tests`` among the run's ``listed`` ones."""
    try:
        words = shlex.split(reproduction.removeprefix("Run: ").rpartition("the failing tests alone: ")[2])
    except ValueError:
        return False
    if runner == "pytest":
        return sorted(w for w in words if "::" in w) == tests
    if runner == "go":
        return _go_selects(words, tests, listed)
    if runner == "cargo":
        return _cargo_selects(words, tests, listed)
    if runner == "maven":
        return _maven_selects(words, tests, listed)
    files = {split_js_id(test)[0] for test in tests} - {None}
    if "-t" not in words:  # files that failed to load: each file, whole
        return bool(files) and files <= set(words) and all(not split_js_id(test)[1] for test in tests)
    pattern = re.compile(words[words.index("-t") + 1])
    titles = {" ".join(split_js_id(name)[1]).replace(" › ", " ") for name in listed}
    chosen = {title for title in titles if pattern.search(title)}
    wanted = {" ".join(split_js_id(test)[1]) for test in tests}
    return chosen == wanted and files <= set(words)


def _go_selects(words: list[str], tests: list[str], listed: list[str]) -> bool:
    """``go test -run``: each ``/`` level of the pattern matched against that level of a test's name
    (``./pkg TestX/sub``), in the packages the command names."""
    if "-run" not in words:
        return False
    levels = [re.compile(level) for level in words[words.index("-run") + 1].split("/")]

    def runs(test: str) -> bool:
        package, _, name = test.rpartition(" ")
        named = (package or ".") in words or "./..." in words
        return named and all(level.search(part) for level, part in zip(levels, name.split("/"), strict=False))

    return all(runs(test) for test in tests) and not any(runs(test) for test in listed if test not in tests)


def _cargo_selects(words: list[str], tests: list[str], listed: list[str]) -> bool:
    """libtest's ``--exact`` names after ``--``, or nextest's ``binary_id(=b) & test(=t)`` filterset
    (nextest's failures are ``binary test``; its listed tests, names alone)."""
    if "-E" in words:
        pairs = re.findall(r"binary_id\(=([^)]*)\) & test\(=([^)]*)\)", words[words.index("-E") + 1])
        names = {name for _, name in pairs}
        wanted = {test.partition(" ")[2] or test for test in tests}
        return {f"{binary} {name}" for binary, name in pairs} == set(tests) and \
            {name for name in listed if name in names} <= wanted
    if "--exact" not in words or "--" not in words:
        return False
    after = words[words.index("--") + 1:]
    names = {word for word in after if not word.startswith("-")}
    return names == set(tests) and {name for name in listed if name in names} == set(tests)


def _maven_selects(words: list[str], tests: list[str], listed: list[str]) -> bool:
    """Surefire's ``-Dtest=pkg.Class#m1+m2,…``: the listed tests whose class and method it names."""
    selection = next((w.removeprefix("-Dtest=") for w in words if w.startswith("-Dtest=")), None)
    if selection is None:
        return False
    chosen = {(cls, method) for part in selection.split(",") for cls, _, methods in [part.partition("#")]
              for method in methods.split("+")}

    def selected(test: str) -> bool:
        cls, _, method = test.partition("(")[0].partition("[")[0].rpartition(".")
        return (cls, method) in chosen

    return all(selected(test) for test in tests) and not any(selected(t) for t in listed if t not in tests)


if __name__ == "__main__":
    raise SystemExit(main())
