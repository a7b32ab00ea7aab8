"""Sandbox benchmarks on real projects: setup times, image sizes, Docker / local (no thresholds asserted).

For each project of ``tests/sandbox/projects.py`` (ts-native: node >= 20 with
better-sqlite3; zod: a vitest library; outcome: a src-layout python library):

1. first setup: its dependency layer built from nothing (``--cold`` also removes
   the runtime layer, so node is downloaded and the compiler installed again);
2. second setup: the same preparation with an unchanged lockfile (what every
   later evaluation pays before its strategies start), and the first container
   command after it;
3. sizes: base image, runtime layer, dependency layer (what each adds), node_modules volume;
4. the project's unit tests in Docker / on the host (median of ``--repeat`` runs each).

Run: python benchmarks/sandbox.py [--project zod] [--repeat 3] [--cold]
Removes and rebuilds only this machine's layers of these projects.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMANDS = {
    "ts-native": "npx vitest run",
    "zod": "npx vitest run src/v4/mini",
    "outcome": "pytest -q -p no:cacheprovider",
}


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def _forget_layers(workspace: Path, cold: bool) -> None:
    """Remove this project's dependency layer and volume (and with ``cold`` its runtime layer)."""
    import docker

    from sprintflow.sandbox.prepare import prepare_sandbox

    prepared = prepare_sandbox(workspace, progress=lambda line: None)
    if prepared is None:
        return
    client = docker.from_env()
    if prepared.node_modules_volume:
        client.volumes.get(prepared.node_modules_volume).remove(force=True)
    image = client.images.get(prepared.image)
    runtime = image.labels.get("sprintflow.runtime")
    client.images.remove(prepared.image, force=True)
    if cold and runtime:
        try:
            client.images.remove(runtime, force=True)
        except Exception as exc:  # another project's layer still builds on it
            print(f"  (runtime layer {runtime} kept: {exc})")


def _mb(size: float) -> str:
    return f"{size / 1e6:,.0f} MB"


def _sizes(prepared) -> dict[str, str]:
    import docker

    client = docker.from_env()
    deps = client.images.get(prepared.image)
    runtime = client.images.get(deps.labels.get("sprintflow.runtime", prepared.image))
    base = client.images.get(runtime.labels.get("sprintflow.base", "sprintflow-sandbox:latest"))
    sizes = {"base": _mb(base.attrs["Size"]), "+runtime": _mb(runtime.attrs["Size"] - base.attrs["Size"]),
             "+deps": _mb(deps.attrs["Size"] - runtime.attrs["Size"])}
    if prepared.node_modules_volume:
        output = client.containers.run("sprintflow-sandbox:latest", ["du", "-sb", "/m"], remove=True, user="0",
                                       network_mode="none",
                                       volumes={prepared.node_modules_volume: {"bind": "/m", "mode": "ro"}})
        sizes["volume"] = _mb(int(output.split()[0]))
    return sizes


def bench(name: str, repeat: int, cold: bool, scratch: Path) -> dict:
    from sprintflow.sandbox.executors import CommandSpec, DockerExecutor, LocalExecutor
    from sprintflow.sandbox.prepare import prepare_sandbox, with_project_sandbox
    from tests.sandbox.projects import project_copy

    workspace = project_copy(name, scratch)
    _forget_layers(workspace, cold)
    first, prepared = _timed(lambda: prepare_sandbox(workspace, progress=lambda line: print("  " + line)))
    second, _ = _timed(lambda: prepare_sandbox(workspace, progress=lambda line: print("  " + line)))
    docker_executor = with_project_sandbox(DockerExecutor(), workspace, progress=lambda line: None)
    to_first_command, _ = _timed(lambda: (with_project_sandbox(DockerExecutor(), workspace, lambda line: None)
                                          .run(workspace, CommandSpec("true", timeout=60))))
    env = {"PATH": f"{workspace / '.venv/bin'}:{os.environ['PATH']}"} if (workspace / ".venv").is_dir() else {}
    spec = CommandSpec(COMMANDS[name], timeout=600, env=env)
    local_runs, docker_runs = [], []
    for _ in range(repeat):
        result = LocalExecutor().run(workspace, spec)
        assert result.exit_code == 0, result.stdout[-2000:] + result.stderr[-2000:]
        local_runs.append(result.duration_s)
        result = docker_executor.run(workspace, CommandSpec(COMMANDS[name], timeout=600))
        assert result.exit_code == 0, result.stdout[-2000:] + result.stderr[-2000:]
        docker_runs.append(result.duration_s)
    local, docker = statistics.median(local_runs), statistics.median(docker_runs)
    return {"project": name, "first": first, "second": second, "to_first_command": to_first_command,
            "local": local, "docker": docker, "sizes": _sizes(prepared), "sandbox": prepared.description}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(COMMANDS), action="append")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="also rebuild the runtime layers")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sprintflow-bench-sandbox-") as scratch:
        for name in args.project or ["ts-native", "zod", "outcome"]:
            print(f"{name}:")
            rows.append(bench(name, args.repeat, args.cold, Path(scratch)))
    print()
    print(f"{'project':<10} {'1st setup':>10} {'2nd setup':>10} {'2nd→1st cmd':>12} {'2nd/1st':>8} "
          f"{'local':>8} {'docker':>8} {'docker/local':>13}  sizes")
    for row in rows:
        sizes = ", ".join(f"{k} {v}" for k, v in row["sizes"].items())
        print(f"{row['project']:<10} {row['first']:>9.1f}s {row['second']:>9.2f}s {row['to_first_command']:>11.2f}s "
              f"{row['second'] / row['first']:>8.3f} {row['local']:>7.2f}s {row['docker']:>7.2f}s "
              f"{row['docker'] / row['local']:>12.2f}x  {sizes}")
    for row in rows:
        print(f"  {row['project']}: {row['sandbox']}")


if __name__ == "__main__":
    main()
