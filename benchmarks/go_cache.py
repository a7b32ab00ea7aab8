"""Go's standard library compiled by the judge: a Go project's commands cold and warm, in both executors.

For fatih/color v1.19.0 (a library with three module dependencies, from ``tests/sandbox/projects.py``)
and a one-file module, each executor runs ``go vet ./... && go test -count=1 ./...``:

* cold: with ``GOCACHE`` pointed at an empty folder, as every Go command ran before the judge's cache;
* warm: as sprintflow runs it, from the standard library the judge compiled (``sprintflow.sandbox.go_cache``).

The judge's cache is built before timing (its one-time cost is printed apart). Medians of ``--repeat``
runs each, printed side by side with their ratio; nothing is asserted.

Run: python benchmarks/go_cache.py [--repeat 3] [--executor local --executor docker]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COMMAND = "go vet ./... && go test -count=1 ./..."
COLD = 'GOCACHE="$(mktemp -d)" sh -c {command!r}'
ONE_FILE = {
    "go.mod": "module example.com/calc\n\ngo 1.22\n",
    "calc.go": 'package calc\n\nimport "fmt"\n\n// Describe names a sum.\nfunc Describe(a, b int) string {\n'
               '\treturn fmt.Sprintf("%d + %d", a, b)\n}\n',
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestDescribe(t *testing.T) {\n'
                    '\tif Describe(1, 2) != "1 + 2" {\n\t\tt.Fatal()\n\t}\n}\n',
}


def _one_file(scratch: Path) -> Path:
    root = scratch / "one-file"
    for rel, text in ONE_FILE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _executor(kind: str, root: Path):
    from sprintflow.sandbox.executors import DockerExecutor, LocalExecutor
    from sprintflow.sandbox.prepare import with_project_sandbox

    return LocalExecutor() if kind == "local" else with_project_sandbox(DockerExecutor(), root, progress=print)


def _median_s(executor, root: Path, command: str, repeat: int) -> float:
    from sprintflow.sandbox.executors import CommandSpec

    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = executor.run(root, CommandSpec(command, timeout=1800))
        times.append(time.perf_counter() - started)
        if result.exit_code != 0:
            raise SystemExit(f"`{command}` failed in {root}:\n{result.stdout[-1500:]}{result.stderr[-1500:]}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--executor", choices=["local", "docker"], action="append")
    args = parser.parse_args()
    from tests.sandbox.projects import project_copy

    with tempfile.TemporaryDirectory(prefix="sprintflow-bench-go-") as folder:
        scratch = Path(folder)
        projects = {"one-file": _one_file(scratch), "color": project_copy("color", scratch)}
        rows = []
        for kind in args.executor or ["local", "docker"]:
            for name, root in projects.items():
                executor = _executor(kind, root)
                started = time.perf_counter()
                _median_s(executor, root, "go version", 1)  # builds the judge's cache on the host, the first time
                first = time.perf_counter() - started
                cold = _median_s(executor, root, COLD.format(command=COMMAND), args.repeat)
                warm = _median_s(executor, root, COMMAND, args.repeat)
                rows.append((kind, name, first, cold, warm))
    print(f"\n`{COMMAND}`, median of {args.repeat}")
    print(f"{'executor':9} {'project':9} {'first command':>14} {'cold':>8} {'warm':>8} {'cold ÷ warm':>12}")
    for kind, name, first, cold, warm in rows:
        print(f"{kind:9} {name:9} {first:13.2f}s {cold:7.2f}s {warm:7.2f}s {cold / warm:11.1f}x")


if __name__ == "__main__":
    main()
