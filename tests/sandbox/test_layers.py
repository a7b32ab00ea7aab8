"""The layered sandbox for real: built once, found by key, the host's dependencies masked."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import docker
import pytest

from sprintflow.judge.tree import WorkspaceStore, remove_tree
from sprintflow.sandbox.downloads import sandbox_cache
from sprintflow.sandbox.executors import CommandSpec, DockerExecutor
from sprintflow.sandbox.prepare import prepare_sandbox, with_project_sandbox
from sprintflow.sandbox.prune import prune_sandbox
from sprintflow.sandbox.runtimes import RuntimeUnavailable

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sandbox"

pytestmark = pytest.mark.docker


@pytest.fixture
def tiny_node(tmp_path) -> Path:
    """A project with one dependency, and a host node_modules and virtualenv that must not be seen."""
    workspace = tmp_path / "tiny-node"
    shutil.copytree(FIXTURES / "tiny-node", workspace)
    (workspace / "node_modules" / "is-number").mkdir(parents=True)
    (workspace / "node_modules" / "is-number" / "index.js").write_text("module.exports = () => 'HOST COPY';\n")
    (workspace / "node_modules" / "host-only").mkdir()
    (workspace / ".venv" / "bin").mkdir(parents=True)
    (workspace / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return workspace


def test_dependencies_come_from_the_sandbox_and_the_host_copies_are_masked(docker_ready, tiny_node):
    before = sorted(str(p.relative_to(tiny_node)) for p in tiny_node.rglob("*"))
    store = WorkspaceStore(tiny_node)
    snapshot = store.scan()
    tree = store.materialize(snapshot.manifest, snapshot.dependencies)  # what a strategy runs on
    executor = with_project_sandbox(DockerExecutor(), tree.root, progress=lambda line: None).for_tree(tree)
    assert executor.sandbox is not None and executor.sandbox.node_modules_volume
    script = ("node -e \"console.log(require('is-number')(5))\"; ls node_modules; ls -A .venv | wc -l; "
              "touch node_modules/planted 2>&1 | grep -c 'Read-only'; "
              "echo cache > node_modules/.cache/tool && echo scratch-ok")
    try:
        result = executor.run(tree.root, CommandSpec(script, timeout=60))
    finally:
        remove_tree(tree)
    lines = result.stdout.split()
    assert lines[0] == "true"                       # the registry's is-number, not the host's stub
    assert "host-only" not in lines and "is-number" in lines
    assert lines[-3:] == ["0", "1", "scratch-ok"]   # the venv is empty, node_modules read-only, scratch writable
    after = sorted(str(p.relative_to(tiny_node)) for p in tiny_node.rglob("*"))
    assert after == before                           # the host workspace is untouched


def test_a_second_preparation_builds_nothing(docker_ready, tiny_node):
    first = prepare_sandbox(tiny_node, progress=lambda line: None)
    lines: list[str] = []
    second = prepare_sandbox(tiny_node, progress=lines.append)
    assert second == first and lines == []
    (tiny_node / "src.js").write_text("console.log(1)\n")  # code changes do not touch the layer
    assert prepare_sandbox(tiny_node, progress=lines.append) == first and lines == []


def test_a_new_lockfile_builds_a_new_dependency_layer(docker_ready, tiny_node):
    first = prepare_sandbox(tiny_node, progress=lambda line: None)
    manifest = json.loads((tiny_node / "package.json").read_text())
    manifest["description"] = f"changed by a test ({uuid.uuid4().hex})"  # never seen before: a new key
    (tiny_node / "package.json").write_text(json.dumps(manifest))
    lines: list[str] = []
    second = prepare_sandbox(tiny_node, progress=lines.append)
    try:
        assert second is not None and first is not None and second.image != first.image
        assert any(line.startswith("[deps] building") for line in lines)
        assert not any(line.startswith("[runtime] building") for line in lines)  # the runtime layer is shared
    finally:  # a layer no other test will use again
        client = docker.from_env()
        if second is not None and second.node_modules_volume:
            client.volumes.get(second.node_modules_volume).remove(force=True)
        if second is not None and second != first:
            client.images.remove(second.image, force=True)


def test_a_python_nobody_provides_stops_the_evaluation_before_any_strategy(tmp_path, monkeypatch):
    (tmp_path / ".python-version").write_text("3.12\n")
    (tmp_path / "requirements.txt").write_text("attrs\n")
    # No engine at all: the mismatch is found before anything (a layer, a container) is asked of Docker.
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(RuntimeUnavailable, match=r"\.python-version '3.12': no Debian release"):
        with_project_sandbox(DockerExecutor(), tmp_path, progress=lambda line: None)


def test_the_cli_exits_3_naming_the_mismatch(docker_ready, tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"engines": {"node": ">=99"}}))
    proc = subprocess.run([sys.executable, "-m", "sprintflow", "sandbox", "build", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == [
        "error: package.json engines.node '>=99': no node release satisfies it (the registry offers node up to "
        + proc.stderr.split("node up to ", 1)[1].strip()]
    assert "Traceback" not in proc.stderr


def test_the_cli_prepares_a_workspace_ahead_of_time(docker_ready, tiny_node):
    proc = subprocess.run([sys.executable, "-m", "sprintflow", "sandbox", "build", str(tiny_node)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith("sprintflow-deps:")
    assert "ready in" in proc.stderr and "npm ci (package-lock.json)" in proc.stderr


def _fake_layer(client, kind: str, scope: str, age_days: float) -> str:
    tag = f"sprintflow-deps:test-{uuid.uuid4().hex[:8]}" if kind == "deps" else \
        f"sprintflow-runtime:test-{uuid.uuid4().hex[:8]}"
    labels = f"sprintflow.sandbox={kind} sprintflow.test={scope} sprintflow.test.tag={tag}"
    dockerfile = f"FROM sprintflow-sandbox:latest\nLABEL {labels}\n"
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    stamp = sandbox_cache() / "used" / tag.replace(":", "_")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()
    old = time.time() - age_days * 86400
    os.utime(stamp, (old, old))
    return tag


def test_prune_keeps_the_most_recently_used(docker_ready):
    client, scope = docker.from_env(), uuid.uuid4().hex[:8]
    fresh, stale, old = (_fake_layer(client, "deps", scope, days) for days in (0, 3, 30))
    report = prune_sandbox(keep=2, only_label=f"sprintflow.test={scope}", dry_run=True)
    assert [line.split()[0] for line in report.removed] == [old]
    report = prune_sandbox(keep=2, older_than_s=2 * 86400, only_label=f"sprintflow.test={scope}")
    assert sorted(line.split()[0] for line in report.removed) == sorted([stale, old])
    remaining = {t for i in client.images.list(filters={"label": f"sprintflow.test={scope}"}) for t in i.tags}
    assert remaining == {fresh}
    prune_sandbox(keep=0, only_label=f"sprintflow.test={scope}")
    assert client.images.list(filters={"label": f"sprintflow.test={scope}"}) == []


def test_an_evaluation_of_a_project_nobody_can_serve_exits_3_with_no_result(docker_ready, prefect_api_url, tmp_path):
    workspace = tmp_path / "needs-312"
    shutil.copytree(Path(__file__).resolve().parent.parent.parent / "examples" / "python-api", workspace,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"))
    (workspace / ".python-version").write_text("3.12\n")
    contract = next((workspace / ".sprintflow" / "contracts").glob("*.json"))
    proc = subprocess.run([sys.executable, "-m", "sprintflow", "evaluate", str(workspace), "--contract",
                           str(contract), "--executor", "docker"], capture_output=True, text=True,
                          env={**os.environ, "PREFECT_API_URL": prefect_api_url}, timeout=300)
    assert proc.returncode == 3, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: .python-version '3.12': no Debian release carries a python that satisfies it "
                      "(available: python 3.11 (bookworm), python 3.13 (trixie))"]
    assert "Traceback" not in proc.stderr
    assert not (workspace / ".sprintflow" / "evals").exists()


def test_playwright_finds_the_images_chromium_without_being_told(docker_ready, tmp_path):
    """No executablePath, no CHROMIUM_PATH in the config, no browser download: the sandbox provides one."""
    workspace = tmp_path / "ts-app"
    shutil.copytree(Path(__file__).resolve().parent.parent.parent / "examples" / "ts-app", workspace,
                    ignore=shutil.ignore_patterns("node_modules", ".sprintflow", "dist"))
    config = workspace / "playwright.config.ts"
    text = config.read_text()
    assert "executablePath" in text
    config.write_text("\n".join(line for line in text.splitlines() if "executablePath" not in line) + "\n")
    executor = with_project_sandbox(DockerExecutor(), workspace, progress=lambda line: None)
    result = executor.run(workspace, CommandSpec(
        "node_modules/.bin/tsc -p tsconfig.build.json && node_modules/.bin/playwright test --reporter=line",
        timeout=300))
    assert result.exit_code == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "2 passed" in result.stdout


@pytest.mark.parametrize("fixture, installer", [("tiny-pnpm", "pnpm 9.15.9 install --frozen-lockfile"),
                                                ("tiny-yarn", "yarn 1.22.22 install --frozen-lockfile")])
def test_pnpm_and_yarn_lockfiles_install_at_the_pinned_version(docker_ready, tmp_path, fixture, installer):
    workspace = tmp_path / fixture
    shutil.copytree(FIXTURES / fixture, workspace)
    executor = with_project_sandbox(DockerExecutor(), workspace, progress=lambda line: None)
    assert executor.sandbox is not None and installer in executor.sandbox.description
    result = executor.run(workspace, CommandSpec("node -e \"console.log(require('is-number')(3))\"", timeout=60))
    assert result.stdout.strip() == "true", result.stderr
    # The one trace on the host: Docker's mount point for the sandbox's node_modules, an empty folder.
    assert sorted(p.name for p in workspace.iterdir()) == sorted(
        [p.name for p in (FIXTURES / fixture).iterdir()] + ["node_modules"])
    assert list((workspace / "node_modules").iterdir()) == []


def test_a_missing_sandbox_image_is_a_clear_error_that_says_how_to_build_it():
    # A fresh machine: the Docker engine answers, but no image was built yet (none can be pulled).
    from sprintflow.errors import ExecutorUnavailable
    from sprintflow.sandbox.layers import runtime_layer

    docker.from_env().ping()
    missing = f"sprintflow-sandbox:missing-{uuid.uuid4().hex[:8]}"
    with pytest.raises(ExecutorUnavailable, match=rf"no image {missing}: build it with `sprintflow sandbox build`"):
        runtime_layer(missing, None, progress=lambda line: None)
