"""The judge's build cache of Go's standard library: every Go command starts warm, and none can change it.

Real go, both executors. A command that rewrites every entry of its cache and plants one of its own
leaves the next command's cache as the judge built it (the red-team sprint ``go_forged_build_cache``
does the same with a forged package, in a real sprint).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from sprintflow.sandbox.executors import CommandSpec, DockerExecutor, Executor, LocalExecutor
from sprintflow.sandbox.go_cache import GO_CACHE, HOST_GO_CACHE
from sprintflow.sandbox.prepare import with_project_sandbox
from sprintflow.settings import get_settings

MODULE = {
    "go.mod": "module example.com/calc\n\ngo 1.22\n",
    "calc.go": 'package calc\n\nimport "fmt"\n\n// Describe names a sum.\nfunc Describe(a, b int) string {\n'
               '\treturn fmt.Sprintf("%d + %d", a, b)\n}\n',
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestDescribe(t *testing.T) {\n'
                    '\tif got := Describe(1, 2); got != "1 + 2" {\n\t\tt.Fatal(got)\n\t}\n}\n',
}
STALE = "go list -f '{{.ImportPath}} {{.Stale}}' fmt testing runtime"
POISON = ('find "$GOCACHE" -type f -name "*-[ad]" -exec sh -c \'for f; do echo poisoned > "$f"; done\' _ {} + '
          '&& touch "$GOCACHE/planted" && echo "poisoned $GOCACHE"')


def _module(root: Path) -> Path:
    for rel, text in MODULE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _executor(kind: str, root: Path, request) -> Executor:
    if kind == "local":
        return LocalExecutor()
    request.getfixturevalue("docker_ready")
    return with_project_sandbox(DockerExecutor(), root)


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder)}\0{path.stat().st_mtime_ns}\0".encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def results(tmp_path_factory, request) -> dict[str, dict[str, str]]:
    """Each executor's answers, in order: the cache's state, a poisoning command, then the state again."""
    answers = {}
    for kind in ("local", "docker"):
        root = _module(tmp_path_factory.mktemp(f"go-{kind}"))
        executor = _executor(kind, root, request)

        def run(command: str, executor: Executor = executor, root: Path = root) -> str:
            result = executor.run(root, CommandSpec(command, timeout=900))
            return f"{result.exit_code}\n{result.stdout}{result.stderr}"

        kept = get_settings().judge_home_path / "go-std-cache"
        first = run(STALE)  # builds the judge's copy on the host, the first time
        before = _digest(kept) if kind == "local" else ""
        answers[kind] = {"first": first, "poison": run(POISON),
                         "after": run(f'ls "$GOCACHE/planted" 2>/dev/null; {STALE} && go vet ./... '
                                      "&& go test -count=1 ."),
                         "kept": str(_digest(kept) == before) if kind == "local" else ""}
    return answers


@pytest.mark.parametrize("kind", ["local", "docker"])
def test_a_go_command_starts_with_the_standard_library_compiled(results, kind):
    assert results[kind]["first"].splitlines() == ["0", "fmt false", "testing false", "runtime false"]


@pytest.mark.parametrize("kind, where", [("local", HOST_GO_CACHE), ("docker", GO_CACHE)])
def test_what_a_command_writes_into_its_cache_is_its_own(results, kind, where):
    assert results[kind]["poison"].splitlines() == ["0", f"poisoned {where}"]
    after = results[kind]["after"].splitlines()
    assert after[:4] == ["0", "fmt false", "testing false", "runtime false"], after  # nothing planted, all fresh
    assert after[4].startswith("ok  \texample.com/calc"), after


def test_the_judges_own_copy_is_as_it_built_it(results):
    assert results["local"]["kept"] == "True"


def test_a_tree_that_is_no_go_module_gets_no_go_cache(tmp_path):
    result = LocalExecutor().run(tmp_path, CommandSpec('echo "${GOCACHE:-unset}"', timeout=60))
    assert result.stdout == "unset\n"


def test_a_go_mod_that_is_no_regular_file_gets_none_and_blocks_nothing(tmp_path):
    os.mkfifo(tmp_path / "go.mod")
    result = LocalExecutor().run(tmp_path, CommandSpec('echo "${GOCACHE:-unset}"', timeout=60))
    assert result.stdout == "unset\n"
