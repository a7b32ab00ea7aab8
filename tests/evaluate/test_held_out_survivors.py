"""The held-out evals' run on a mutation tool's survivors (``sandbox/scripts/judge_survivors.py``), run
for real on a small tree: where an edit lands, what counts as a kill, and the file put back."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

from sprintflow.evaluate.mutation import FOLDER
from sprintflow.evaluate.mutation.cargo_mutants import OUTCOMES, CargoMutants
from sprintflow.evaluate.mutation.changes import ChangedFile
from sprintflow.evaluate.mutation.stryker import Stryker
from sprintflow.evaluate.mutation.tools import SourceEdit, ToolRun
from sprintflow.sandbox.executors import SCRIPTS_DIR, LocalExecutor
from sprintflow.schemas.strategies import MutationSettings

from .judged_change import judged_tree, measured
from .test_mutation_rust import UNTESTED

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "mutation"

SOURCE = "fn add(a, b) {\n    a + b\n}\n\nfn halve(x) {\n    x / 2 // é\n}\n"


def _judge(root: Path, commands: list[str], mutants: list[dict], budget: float = 60,
           timeout: float = 10) -> dict:
    job = {"commands": commands, "budget": budget, "mutantTimeout": timeout, "mutants": mutants,
           "report": "survivors.json"}
    (root / "job.json").write_text(json.dumps(job))
    done = subprocess.run([sys.executable, "-I", str(SCRIPTS_DIR / "judge_survivors.py"), "job.json"], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads((root / "survivors.json").read_text())


def _mutant(start, end, replacement, group="lib.rs halve"):
    return {"file": "lib.rs", "start": start, "end": end, "replacement": replacement, "group": group}


def test_each_survivor_is_written_where_the_report_puts_it_and_the_file_is_put_back(tmp_path):
    (tmp_path / "lib.rs").write_bytes(SOURCE.encode())
    # The held-out eval: halve must divide. It sees each mutant as the file holds it then.
    seen = "cp lib.rs seen-$(ls | grep -c seen).rs; grep -q ' / 2' lib.rs"
    report = _judge(tmp_path, [seen], [
        _mutant([6, 7], [6, 8], "*", group="lib.rs halve-1"),   # x * 2: the eval fails, a kill
        _mutant([6, 5], [6, 6], "y", group="lib.rs halve-2"),   # y / 2: the eval passes, a survivor
        _mutant([2, 5], [6, 6], "0", group="lib.rs both"),      # across lines, end exclusive
    ])
    assert report == {"passing": [seen], "statuses": ["killed", "survived", "survived"]}
    written = [(tmp_path / f"seen-{n}.rs").read_text() for n in range(4)]
    assert written[0] == SOURCE  # the clean run
    assert written[1] == SOURCE.replace("x / 2", "x * 2")
    assert written[2] == SOURCE.replace("x / 2", "y / 2")
    assert written[3] == "fn add(a, b) {\n    0 / 2 // é\n}\n"
    assert (tmp_path / "lib.rs").read_bytes() == SOURCE.encode()


def test_a_command_failing_on_the_clean_tree_kills_nothing_and_a_function_needs_one_kill(tmp_path):
    (tmp_path / "lib.rs").write_text(SOURCE)
    failing, divides = "false", "grep -q 'x / 2' lib.rs"
    report = _judge(tmp_path, [failing], [_mutant([6, 7], [6, 8], "*")])
    assert report == {"passing": [], "statuses": ["survived"]}
    report = _judge(tmp_path, [failing, divides], [_mutant([6, 7], [6, 8], "*"), _mutant([6, 7], [6, 8], "%")])
    assert report == {"passing": [divides], "statuses": ["killed", None]}  # halve has its kill: no second run


def test_an_edit_outside_the_file_a_timeout_and_the_budget_count_as_no_kill(tmp_path):
    (tmp_path / "lib.rs").write_text(SOURCE)
    outside = [_mutant([60, 1], [60, 2], "x"), _mutant([6, 90], [6, 91], "x"), _mutant([6, 8], [6, 7], "x")]
    assert _judge(tmp_path, ["true"], outside)["statuses"] == ["error", "error", "error"]
    slow = "grep -q 'x / 2' lib.rs || sleep 30"
    assert _judge(tmp_path, [slow], [_mutant([6, 7], [6, 8], "*")], timeout=2)["statuses"] == ["timeout"]
    assert _judge(tmp_path, ["sleep 1"], [_mutant([6, 7], [6, 8], "*")], budget=0.5)["statuses"] == ["not-run"]
    # A held-out eval slower than the tests' mutant timeout gets time by its own clean run.
    slower = "sleep 1.5; grep -q 'x / 2' lib.rs"
    assert _judge(tmp_path, [slower], [_mutant([6, 7], [6, 8], "*")], timeout=1) == {
        "passing": [slower], "statuses": ["killed"]}
    assert (tmp_path / "lib.rs").read_text() == SOURCE


def _apply(text: str, edit: SourceEdit) -> str:
    """``edit`` applied as the held-out run applies it."""
    spec = importlib.util.spec_from_file_location("judge_survivors", SCRIPTS_DIR / "judge_survivors.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script._edited(text, {"start": edit.start, "end": edit.end, "replacement": edit.replacement})


def _run_in(layer: Path, changed: str) -> ToolRun:
    return ToolRun("vitest", layer, LocalExecutor(), [ChangedFile(changed, ((1, 100),))], [], MutationSettings(), 10)


def test_the_tools_reports_say_what_each_mutant_writes_where(tmp_path):
    """Real reports (Stryker 9.6's of the TypeScript example, cargo-mutants 27.1's of a crate): each
    mutant's edit, applied to the source the tool mutated, writes the mutant the tool named."""
    (tmp_path / FOLDER / "mutants.out").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "stryker-ts-app.json", tmp_path / FOLDER / "report.json")
    source = json.loads((tmp_path / FOLDER / "report.json").read_text())["files"]["src/store.ts"]["source"]
    _, mutants = Stryker().report(_run_in(tmp_path, "src/store.ts"))
    edits = Stryker().edits(_run_in(tmp_path, "src/store.ts"))
    assert len(edits) == len(mutants) == 42 and all(e is not None and e.file == "src/store.ts" for e in edits)
    regex = [e for m, e in zip(mutants, edits, strict=True) if m.operator == "Regex"]
    assert regex and all(e is not None and e.start[0] == e.end[0] == 23 for e in regex)
    assert {_apply(source, e).splitlines()[22].strip()[:30] for e in regex if e} >= {"const words = title.split(/\\s/"}
    # cargo-mutants: its spans over the crate it mutated (the test's UNTESTED change).
    shutil.copyfile(FIXTURES / "cargo-mutants-plan.json", tmp_path / FOLDER / "report.json")
    shutil.copyfile(FIXTURES / "cargo-mutants-outcomes.json", tmp_path / OUTCOMES)
    crate = _run_in(tmp_path, "src/lib.rs")
    written = {m.operator: _apply(UNTESTED["src/lib.rs"], e)
               for m, e in zip(CargoMutants().report(crate)[1], CargoMutants().edits(crate), strict=True) if e}
    assert len(written) == 10
    assert "    a - b\n" in written["replace + with - in add"].splitlines(keepends=True)
    assert "    x * 2\n" in written["replace / with * in halve"].splitlines(keepends=True)


JS_BEFORE = {
    "package.json": json.dumps({"name": "calc-js", "private": True, "type": "module"}),
    "vitest.config.js": "export default { test: { include: ['test/**/*.test.js'] } };\n",
    "src/add.js": "export function add(a, b) {\n  return a - b;\n}\n",
    "test/add.test.js": "import { expect, it } from 'vitest';\nimport { add } from '../src/add.js';\n\n"
                        "it('adds', () => {\n  expect(add(2, 2)).toBe(4);\n});\n",
    # The held-out eval, the planner's: it checks what the change is to add.
    "evals/check.mjs": "import * as calc from '../src/add.js';\n"
                       "if (calc.add(1, 1) !== 2 || calc.halve(9) !== 4) process.exit(1);\n",
}
JS_CHANGE = {  # add fixed; halve called by the unit tests, checked by the held-out eval alone
    "src/add.js": "export function add(a, b) {\n  return a + b;\n}\n\n"
                  "export function halve(x) {\n  return Math.floor(x / 2);\n}\n",
    "test/add.test.js": JS_BEFORE["test/add.test.js"].replace("import { add }", "import { add, halve }")
                        + "\nit('halves', () => {\n  halve(8);\n});\n",
}


def test_strykers_survivors_are_judged_by_the_held_out_evals(tmp_path):
    workspace = tmp_path / "calc-js"
    copy_modules = lambda root: subprocess.run(  # noqa: E731  (vitest and Stryker from the TypeScript example)
        ["cp", "-al", str(ROOT / "examples/ts-app/node_modules"), str(root / "node_modules")], check=True)
    tree = judged_tree(workspace, JS_BEFORE, JS_CHANGE, "pin-js", prepare=copy_modules)
    mutation, _ = measured(tree, workspace, "vitest", LocalExecutor(),
                           ["npx vitest run", "node evals/check.mjs"], 1.0, MutationSettings(max_mutants=16))
    assert mutation is not None and mutation.status == "measured", mutation.reason if mutation else None
    # add by the unit tests; halve, which they only call, by the held-out eval alone.
    assert {f.function: f.killed >= 1 for f in mutation.functions} == {"add": True, "halve": True}
