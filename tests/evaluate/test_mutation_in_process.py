"""The Python mutation runner's fast way (one pytest process, a fork per mutant) against cosmic-ray's
own (the test command per mutant): the same verdict for every mutant, and the fast way steps aside
whenever it cannot judge as the slow one would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "sprintflow/sandbox/scripts/mutate_python.py"

SOURCE = '''\
RATE = 3


def scale(x):
    if x > 2:
        return x * 2
    return x - 1


class Meter:
    def read(self, x):
        return [v + 1 for v in range(x)]


def cli_double(x):
    return x * 2


def table():
    return {k: k * 3 for k in range(3)}


TABLE = table()


def untouched(x):
    return x + 40
'''
TESTS = '''\
import os
import subprocess
import sys

from pkg import TABLE, Meter, RATE, cli_double, scale


def test_scale():
    assert scale(3) == 6 and scale(1) == 0


def test_meter():
    assert Meter().read(2) == [1, 2]


def test_rate():
    assert RATE == 3


def test_table():
    assert TABLE == {0: 0, 1: 3, 2: 6}


def test_cli_double_in_a_process_of_its_own():
    out = subprocess.run([sys.executable, "-c", "from pkg import cli_double; print(cli_double(4))"],
                         env={**os.environ, "PYTHONPATH": "src"}, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "8"
'''
PYPROJECT = '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'


def _project(root: Path, tests: str = TESTS) -> Path:
    for rel, text in {"pyproject.toml": PYPROJECT, "src/pkg/__init__.py": SOURCE, "tests/test_pkg.py": tests}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(root: Path, command: str, *, max_mutants: int = 40, timeout: float = 60) -> dict:
    job = {"files": {"src/pkg/__init__.py": [[1, 23]]}, "commands": [command], "maxMutants": max_mutants,
           "budget": 300, "mutantTimeout": timeout, "seed": 11, "report": "report.json"}
    (root / "job.json").write_text(json.dumps(job))
    for stale in ("report.json", "claim", "in-process.json"):
        (root / stale).unlink(missing_ok=True)
    subprocess.run([sys.executable, str(RUNNER), "job.json"], cwd=root, check=True, timeout=600,
                   capture_output=True)
    return json.loads((root / "report.json").read_text())


def _in_process(root: Path, report: dict) -> dict:
    """What the one pytest process said of each mutant it judged, by (line, operator, function)."""
    statuses = json.loads((root / "in-process.json").read_text())["statuses"]
    return {(m["line"], m["operator"], m["function"]): statuses[str(index)]
            for index, m in enumerate(report["mutants"]) if str(index) in statuses}


def _verdicts(report: dict) -> dict:
    return {(m["line"], m["operator"], m["function"]): m["status"] for m in report["mutants"]}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """The same mutants judged both ways, once."""
    root = _project(tmp_path_factory.mktemp("pkg"))
    fast = _run(root, "python3 -m pytest -q -p no:cacheprovider", max_mutants=16)
    fast["judgedInProcess"] = _in_process(root, fast)
    # Blocking the plugin by name leaves the runner only cosmic-ray's own way.
    slow = _run(root, "python3 -m pytest -q -p no:cacheprovider -p no:sprintflow_mutants", max_mutants=16)
    source = (root / "src/pkg/__init__.py").read_text()
    return fast, slow, source


def test_the_fast_way_judged_and_agrees_with_cosmic_rays_own(both):
    fast, slow, source = both
    assert source == SOURCE  # every mutant restored
    assert fast["inProcess"] == "judged"
    assert slow["inProcess"] != "judged"
    assert len(fast["mutants"]) == 16
    fast_verdicts, slow_verdicts = _verdicts(fast), _verdicts(slow)
    assert fast_verdicts.keys() == slow_verdicts.keys()
    # Never a kill the command would not make; and every function tested, or not, alike.
    assert all(slow_verdicts[key] == "killed" for key, status in fast_verdicts.items() if status == "killed")
    assert _tested(fast) == _tested(slow) and "error" not in fast_verdicts.values()


def _tested(report: dict) -> dict:
    tested: dict = {}
    for mutant in report["mutants"]:
        tested[mutant["function"]] = tested.get(mutant["function"], False) or mutant["status"] == "killed"
    return tested


def test_what_no_function_holds_and_what_another_process_runs_are_judged_too(both):
    fast, _, _ = both
    verdicts = _verdicts(fast)
    # RATE = 3 is module level (not patched into memory: judged by running the command), and its test kills it.
    assert {s for (line, _, _), s in verdicts.items() if line == 1} == {"killed"}
    # cli_double runs only in a process the test starts: no test reaches it here, so the command judges
    # its mutants, and kills them.
    assert {s for (line, _, _), s in verdicts.items() if line == 16} == {"killed"}
    # table ran at import, and only what it computed then is tested: judged by running the command.
    assert {s for (line, _, _), s in verdicts.items() if line == 20} == {"killed"}
    # The comprehension's mutants are patched in through its method.
    assert "killed" in {s for (line, _, f), s in verdicts.items() if line == 12}


NOTE = ("import pathlib\n\nimport pkg\n\n\ndef _note(name):\n    text = pathlib.Path(pkg.__file__).read_text()\n"
        "    with open('runs.log', 'a') as log:\n        log.write(f\"{name} {'return x + 1' in text} "
        "{'return x * 3' in text}\\n\")\n\n\n")
"""Test code: ``_note(name)`` writes to runs.log the test's name (a or b) and whether the file holds
each function as written (False: one of its mutants)."""


def _each_ran_on_its_own_mutants_only(root: Path) -> None:
    """The tests of ``root`` (NOTE's, test_a* calling ``a``, test_b* ``b``) killed every mutant of the
    two functions, and each ran on its own function's mutants, never on the other's."""
    (root / "src/pkg/__init__.py").write_text("def a(x):\n    return x + 1\n\n\ndef b(x):\n    return x * 3\n")
    report = _run(root, "python3 -m pytest -q -p no:cacheprovider", max_mutants=12)
    assert report["inProcess"] == "judged" and set(_in_process(root, report).values()) == {"killed"}
    runs = [line.split() for line in (root / "runs.log").read_text().splitlines()]
    assert [r for r in runs if r[0] == "a" and r[2] == "False"] == []  # test_a* never ran on b's mutants
    assert [r for r in runs if r[0] == "b" and r[1] == "False"] == []
    assert {r[0] for r in runs if "False" in r} == {"a", "b"}  # and each ran on its own


def test_a_mutant_runs_only_the_tests_that_reach_its_function(tmp_path):
    # The clean run maps each test to the functions it calls, its tests dealt out among forks side by
    # side. Each test notes whether the file holds a mutant of the other function when it runs: with
    # every mutant killed by the first test that reaches it, a test never sees the other's mutants.
    tests = NOTE + "".join(f"def test_{f}{n}():\n    _note('{f}')\n    assert pkg.{f}(2) == {v}\n\n\n"
                           for n in (1, 2) for f, v in (("a", 3), ("b", 6)))
    _each_ran_on_its_own_mutants_only(_project(tmp_path, tests))


def test_a_function_a_test_runs_in_a_thread_of_its_own_is_mapped_to_that_test(tmp_path):
    # As a test of a server runs its handlers: in a thread the test starts (a Thread, a pool). Three
    # tests make one part, so a mutant of `a` that no test were mapped to would reach test_b first,
    # in its order, and test_b would note it.
    threads = ("import threading\nfrom concurrent.futures import ThreadPoolExecutor\n\n\n"
               "def _in_thread(f, x):\n    out = []\n    thread = threading.Thread(target=lambda: out.append(f(x)))\n"
               "    thread.start()\n    thread.join()\n    return out[0]\n\n\n")
    tests = NOTE + threads + ("def test_b1():\n    _note('b')\n    with ThreadPoolExecutor(1) as pool:\n"
                              "        assert pool.submit(pkg.b, 2).result() == 6\n\n\n"
                              "def test_a():\n    _note('a')\n    assert _in_thread(pkg.a, 2) == 3\n\n\n"
                              "def test_b2():\n    _note('b')\n    assert _in_thread(pkg.b, 1) == 3\n")
    _each_ran_on_its_own_mutants_only(_project(tmp_path, tests))


def test_once_a_part_kills_a_mutant_the_other_parts_are_stopped(tmp_path):
    # The test that calls `a` checks nothing, so its mutants go to the other tests, in the clean run's
    # parts side by side (dealt in turn: test_0 and test_2, test_1 and test_3): test_2 kills at once in
    # a process of its own, test_3 is slow. The slow test must not finish on a mutant: its part was
    # stopped. (On one core the parts are one, and test_2 kills before test_3 starts.)
    tests = ("import os\nimport pathlib\nimport subprocess\nimport sys\nimport time\n\nimport pkg\n\n\n"
             "def test_0():\n    pkg.a(2)\n\n\n"
             "def test_1():\n    pass\n\n\n"
             "def test_2():\n    out = subprocess.run([sys.executable, '-c', 'import pkg; print(pkg.a(2))'],\n"
             "                         env={**os.environ, 'PYTHONPATH': 'src'}, capture_output=True, text=True)\n"
             "    assert out.stdout.strip() == '3'\n\n\n"
             "def test_3():\n    time.sleep(3)\n    text = pathlib.Path(pkg.__file__).read_text()\n"
             "    with open('slow.log', 'a') as log:\n        log.write(f\"{'return x + 1' in text}\\n\")\n")
    root = _project(tmp_path, tests)
    (root / "src/pkg/__init__.py").write_text("def a(x):\n    return x + 1\n")
    report = _run(root, "python3 -m pytest -q -p no:cacheprovider", max_mutants=2)
    assert report["inProcess"] == "judged" and set(_in_process(root, report).values()) == {"killed"}
    assert (root / "slow.log").read_text().split() == ["True"]  # the clean run's, and no mutant's


def test_tests_that_need_the_one_before_them_are_mapped_in_one_run(tmp_path):
    # Run apart (the clean run's forks side by side), the second test fails: the tests run again in
    # one fork, in their order, and the mutants are still judged in the process.
    tests = ("from pkg import scale\n\nSEEN = []\n\n\ndef test_first():\n    SEEN.append(scale(3))\n\n\n"
             "def test_second():\n    assert SEEN == [6]\n\n\ndef test_third():\n    assert scale(1) == 0\n\n\n"
             "def test_fourth():\n    assert SEEN == [6]\n")
    root = _project(tmp_path, tests)
    report = _run(root, "python3 -m pytest -q -p no:cacheprovider", max_mutants=10)
    assert report["inProcess"] == "judged"
    assert {s for (_, _, f), s in _in_process(root, report).items() if f == "scale"} == {"killed"}


def test_a_mutant_that_never_ends_is_a_timeout_and_the_source_is_restored(tmp_path):
    root = _project(tmp_path)
    spin = "def spin(n):\n    while n > 0:\n        n -= 1\n    return n\n"
    (root / "src/pkg/__init__.py").write_text(spin)
    (root / "tests/test_pkg.py").write_text("from pkg import spin\n\n\ndef test_spin():\n    assert spin(3) == 0\n")
    report = _run(root, "python3 -m pytest -q -p no:cacheprovider", timeout=2)
    assert report["inProcess"] == "judged"
    assert {"timeout", "killed"} <= {m["status"] for m in report["mutants"]}
    assert (root / "src/pkg/__init__.py").read_text() == spin


def test_tests_that_fail_in_one_process_leave_every_mutant_to_the_command(tmp_path):
    # Passes when pytest runs as the command, fails in the runner's own pytest process: no verdict of
    # that process may count.
    tests = TESTS + "\n\ndef test_alone():\n    import os\n    assert 'SPRINTFLOW_MUTANTS' not in os.environ\n"
    report = _run(_project(tmp_path, tests), "python3 -m pytest -q -p no:cacheprovider", max_mutants=4)
    assert report["inProcess"] == "the tests do not all pass when run here"
    # One mutant for each of the five changed functions (the module's own lines are one), above the cap of 4.
    assert len(report["mutants"]) == 5 and "not-run" not in {m["status"] for m in report["mutants"]}
