"""The judge's change: what of a generator's change is judged, what is undone, what is only told."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sprintflow.judge.baseline import pin_baseline
from sprintflow.judge.change import Admission
from sprintflow.judge.sprint import SprintJudge
from sprintflow.judge.tree import WorkspaceStore, remove_tree

FILES = {"src/app/__init__.py": "def f():\n    return 1\n", "tests/test_app.py": "def test_f():\n    pass\n",
         "package.json": json.dumps({"scripts": {"test": "vitest run"}, "dependencies": {}}),
         "pyproject.toml": '[project]\nname = "app"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
         "evals/held.py": "SECRET = 1\n", "README.md": "app\n", ".sprintflow/contracts/c.json": "{}"}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture
def judge(tmp_path):
    """A judge of a small workspace (its store under tmp_path), admitting src/app/__init__.py."""
    workspace = tmp_path / "ws"
    _write(workspace, FILES)

    def make(estimated: tuple[str, ...] = ("src/app/__init__.py",)) -> SprintJudge:
        store = WorkspaceStore(workspace, home=tmp_path / "judge")
        return SprintJudge(store, pin_baseline(store, "pin-1"),
                           Admission(estimated_files=estimated, judge_inputs=("evals",)))
    return make


def _paths(items: list[str]) -> list[str]:
    return [item.split(":")[0] for item in items]


def test_configuration_and_existing_tests_are_undone_and_new_code_and_tests_are_judged(judge):
    j = judge()
    ws = j.workspace
    _write(ws, {"conftest.py": "import pytest\n", ".pytest.toml": "[pytest]\naddopts = ['-k', 'nothing']\n",
                "pytest.toml": "[pytest]\n", "tests/pytest.ini": "[pytest]\n", "tests/test_new.py": "def test_n():\n",
                "src/app/helpers.py": "X = 1\n", "src/app/__init__.py": "import _pytest\n\n\ndef f():\n    return 2\n",
                "package.json": json.dumps({"scripts": {"test": "exit 0"}, "dependencies": {}}),
                "evals/held.py": "SECRET = 2\n", "README.md": "better\n"})
    (ws / "tests/test_app.py").unlink()
    change = j.judge_step()
    assert _paths(change.critical) == [".pytest.toml (created)", "conftest.py (created)",
                                       "evals/held.py (modified)", "package.json (scripts changed)",
                                       "pytest.toml (created)", "tests/pytest.ini (created)",
                                       "tests/test_app.py (deleted)"]
    assert change.admitted == ["src/app/__init__.py (modified)", "src/app/helpers.py (created)",
                               "tests/test_new.py (created)"]
    assert change.unexpected == ["src/app/helpers.py", "tests/test_new.py"]
    assert change.reaches == ["src/app/__init__.py:1 reaches into pytest's internals"]
    assert change.notes == ["README.md (modified): not judged (documentation)"]
    # The workspace is as the baseline had it where the change was critical; the rest is the generator's.
    assert not (ws / "conftest.py").exists() and not (ws / ".pytest.toml").exists()
    assert (ws / "tests/test_app.py").read_text() == FILES["tests/test_app.py"]
    assert (ws / "evals/held.py").read_text() == "SECRET = 1\n"
    assert json.loads((ws / "package.json").read_text())["scripts"]["test"] == "vitest run"
    assert (ws / "README.md").read_text() == "better\n" and (ws / "src/app/helpers.py").exists()


def test_the_judged_tree_is_the_baseline_plus_the_judged_change(judge):
    j = judge()
    ws = j.workspace
    _write(ws, {"src/app/__init__.py": "def f():\n    return 2\n", "README.md": "better\n",
                "src/app/__pycache__/__init__.cpython-311.pyc": "planted", "node_modules/x/index.js": "planted"})
    (ws / "tests/test_app.py").write_text("def test_f():\n    assert True\n")  # undone by judge_step, so
    tree = j.judged_tree()  # not even a scan after it reads the weakened test
    try:
        files = sorted(p.relative_to(tree.root).as_posix() for p in tree.root.rglob("*") if p.is_file())
        assert files == ["README.md", "evals/held.py", "package.json", "pyproject.toml", "src/app/__init__.py",
                         "tests/test_app.py"]
        assert (tree.root / "src/app/__init__.py").read_text() == "def f():\n    return 2\n"
        assert (tree.root / "README.md").read_text() == "app\n"  # documentation is not judged: the baseline's
        assert (tree.root / "tests/test_app.py").read_text() == FILES["tests/test_app.py"]
    finally:
        remove_tree(tree)


def test_a_test_or_configuration_file_the_contract_names_is_judged_with_its_diff(judge):
    j = judge(("package.json", "tests/test_app.py"))
    _write(j.workspace, {"package.json": json.dumps({"scripts": {"test": "vitest run --coverage"}}),
                         "tests/test_app.py": "def test_f():\n    assert 1\n"})
    change = j.judge_step()
    assert change.critical == [] and "--coverage" in change.reviewed["package.json"]
    assert "+    assert 1" in change.reviewed["tests/test_app.py"]


def test_a_dependency_change_through_the_manifest_and_the_lockfile_is_judged(judge):
    j = judge()
    _write(j.workspace, {
        "pyproject.toml": FILES["pyproject.toml"].replace("dependencies = []", 'dependencies = ["six>=1.16"]'),
        "package.json": json.dumps({"scripts": {"test": "vitest run"}, "dependencies": {"is-number": "^7.0.0"}}),
        "package-lock.json": "{}", "requirements.txt": "six==1.16.0\n"})
    change = j.judge_step()
    assert change.critical == []
    assert change.admitted == ["package-lock.json (created)", "package.json (dependencies changed)",
                               "pyproject.toml (project.dependencies changed)", "requirements.txt (created)"]


def test_special_files_and_links_that_lead_out_are_critical_and_never_opened(judge):
    j = judge()
    ws = j.workspace
    (ws / "package.json").unlink()
    os.mkfifo(ws / "package.json")  # opening it would block the judge forever
    os.mkfifo(ws / "src/app/data.py")
    (ws / "src/app/hosts").symlink_to("/etc/hosts")
    (ws / "src/app/inner").symlink_to("__init__.py")  # a link inside the project is a file like another
    change = j.judge_step()
    assert sorted(_paths(change.critical)) == ["package.json (a FIFO)", "src/app/data.py (a FIFO)",
                                               "src/app/hosts -> /etc/hosts"]
    assert change.admitted == ["src/app/inner (created)"]
    assert (ws / "package.json").is_file() and not (ws / "src/app/data.py").exists()
    assert not (ws / "src/app/hosts").is_symlink()


def test_what_appears_in_the_areas_that_are_never_judged_is_told_once(judge):
    j = judge()
    _write(j.workspace, {"src/app/__pycache__/x.pyc": "", ".git/hooks/pre-commit": "", "dist/app.js": ""})
    change = j.judge_step()
    assert change.critical == [] and change.admitted == []
    assert change.notes == ["Not judged (the judge provides or rebuilds these itself): caches: "
                            "src/app/__pycache__; outputs: dist; vcs: .git"]


def test_a_rewrite_with_the_old_size_and_times_is_still_seen(judge):
    """The stat cache keys on ctime, which no program can set: same size and restored mtime are no disguise."""
    j = judge()
    source = j.workspace / "src/app/__init__.py"
    info = source.stat()
    source.write_text(FILES["src/app/__init__.py"].replace("1", "2"))
    os.utime(source, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert j.judge_step().admitted == ["src/app/__init__.py (modified)"]


def test_the_baselines_contents_live_outside_the_workspace(judge, tmp_path):
    j = judge()
    (j.workspace / "evals/held.py").write_text("SECRET = 2\n")  # even the workspace's copy of the pin
    tree = j.judged_tree()
    try:
        assert (tree.root / "evals/held.py").read_text() == "SECRET = 1\n"
        assert tree.root.is_relative_to(tmp_path / "judge") and not tree.root.is_relative_to(j.workspace)
    finally:
        remove_tree(tree)


def test_a_scan_of_a_fifo_ridden_workspace_ends(tmp_path):
    """Run in a child with a deadline: a scan that opened a FIFO would never return."""
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    for index in range(20):
        os.mkfifo(workspace / "src" / f"f{index}.py")
    code = ("import sys; from pathlib import Path; from sprintflow.judge.tree import WorkspaceStore; "
            f"s = WorkspaceStore(Path({str(workspace)!r}), home=Path({str(tmp_path / 'judge')!r})).scan(); "
            "print(len(s.scan.specials))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "20", done.stderr


def test_suppressions_the_change_adds_are_recorded_and_the_contract_can_allow_a_kind(tmp_path):
    from typing import get_args

    from sprintflow.judge.suppressions import KINDS
    from sprintflow.schemas.contract import SuppressionKind

    assert tuple(KINDS) == get_args(SuppressionKind)  # the contract's allowedSuppressions names these kinds
    workspace = tmp_path / "ws"
    _write(workspace, FILES)
    store = WorkspaceStore(workspace, home=tmp_path / "judge")
    judge = SprintJudge(store, pin_baseline(store, "pin-1"),
                        Admission(estimated_files=("src/app/__init__.py",), allowed_suppressions=("type-ignore",)))
    _write(workspace, {"src/app/__init__.py": "import os  # noqa: F401\n\n\ndef f():\n    return 1  # type: ignore\n",
                       "tests/test_more.py": "import pytest\n\n\n@pytest.mark.skip\ndef test_g():\n    pass\n"})
    found = [(s.file, s.line, s.kind, s.checker) for s in judge.judge_step().suppressions]
    assert found == [("src/app/__init__.py", 1, "noqa", "lint"), ("tests/test_more.py", 4, "skip", "unit-test")]


def test_a_file_the_baselines_runs_collected_tests_from_is_an_existing_test_whatever_its_name(tmp_path):
    workspace = tmp_path / "ws"
    _write(workspace, {**FILES, "checks/app_checks.py": "def test_f():\n    assert f() == 1\n",
                       "checks/helpers.py": "X = 1\n"})
    store = WorkspaceStore(workspace, home=tmp_path / "judge")
    judge = SprintJudge(store, pin_baseline(store, "pin-1"),
                        Admission(estimated_files=("src/app/__init__.py",), baseline_tests=("checks/app_checks.py",)))
    _write(workspace, {"checks/app_checks.py": "def test_f():\n    assert True\n", "checks/helpers.py": "X = 2\n",
                       "checks/new_checks.py": "def test_g():\n    pass\n"})
    change = judge.judge_step()
    assert _paths(change.critical) == ["checks/app_checks.py (modified)"]
    assert "an existing test" in change.critical[0]
    assert change.admitted == ["checks/helpers.py (modified)", "checks/new_checks.py (created)"]
    assert (workspace / "checks/app_checks.py").read_text() == "def test_f():\n    assert f() == 1\n"


@pytest.mark.parametrize(("rel", "line", "kind"), [
    ("calc.go", "\tx := f() //nolint:errcheck", "nolint"),
    ("calc.go", "\t//lint:ignore SA4006 the value is kept for later", "nolint"),
    ("calc.go", "//lint:file-ignore U1000 generated", "nolint"),
    ("calc_test.go", "\tt.Skip(\"flaky\")", "skip"),
    ("src/lib.rs", "#[allow(clippy::needless_return)]", "allow-lint"),
    ("src/lib.rs", "#[ignore]", "skip"),
    ("src/test/java/x/FooTest.java", "    @Disabled", "skip"),
    ("src/main/java/x/Foo.java", "@SuppressWarnings(\"unchecked\")", "suppress-warnings"),
    # a manifest that builds or runs no tests, or ignores their failures
    ("Cargo.toml", "test = false", "tests-off"),
    ("member/Cargo.toml", "harness = false  # our own main", "tests-off"),
    ("Cargo.toml", "doctest = false", "tests-off"),
    ("pom.xml", "        <skipTests>true</skipTests>", "tests-off"),
    ("pom.xml", "    <maven.test.skip>true</maven.test.skip>", "tests-off"),
    ("core/pom.xml", "          <testFailureIgnore>true</testFailureIgnore>", "tests-off"),
])
def test_go_rust_and_java_suppressions_are_findings(rel, line, kind):
    from sprintflow.judge.suppressions import suppressions_added

    [found] = suppressions_added(rel, b"package x\n", f"package x\n{line}\n".encode())
    assert (found.line, found.kind) == (2, kind)
    assert suppressions_added(rel, f"package x\n{line}\n".encode(), f"package x\n{line}\n".encode()) == []


@pytest.mark.parametrize("line", ["let test = false;", "test = False", "<skipTests>false</skipTests>",
                                  "harness = true", "# test = false is what we do not do"])
def test_lines_that_keep_the_tests_on_are_not_findings(line):
    from sprintflow.judge.suppressions import suppressions_added

    assert suppressions_added("Cargo.toml", b"[lib]\n", f"[lib]\n{line}\n".encode()) == []
