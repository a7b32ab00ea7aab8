"""Record what real tools print on real projects with injected faults (re-runnable).

The recordings feed ``benchmarks/feedback.py`` and the parser tests. For each
project of ``tests/fixtures/feedback/projects.json`` this script applies the
project's faults to a checkout (each fault is one exact text replacement that
must match once), runs every command of the project there, and writes
``tests/fixtures/feedback/<project>/<run>.json`` (command, tool version, exit
code, stdout, stderr, the report files the command wrote) and ``project.json``
(where each fault landed, the checkout root the tools printed, the manifests
inference reads). The checkout is restored afterwards, even when a run fails.
Commands run in catalogue order and the files a command creates are kept (the
sources it edits are restored), so a run listed after a project's build sees
the tree that build wrote its output into (``"repeat": true`` in the catalogue: the benchmark's
``built`` evaluation).
Each recording keeps the command's wall time (``durationS``), which
``benchmarks/feedback.py`` sums into the serial-bash time of an evaluation.

Usage (checkouts and tool environments are prepared by hand, see the README
beside the fixtures)::

    python benchmarks/record_feedback.py \\
        --project destr=/tmp/rec/destr --project humanize=/tmp/rec/humanize-4.17.0 \\
        --toolchain new=/tmp/rec/tools-new/bin --toolchain old=/tmp/rec/tools-old/bin \\
        [--only destr] [--out tests/fixtures/feedback]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "feedback"
REPORTS_DIR = ".sprintflow/reports"
MANIFESTS = ("package.json", "pyproject.toml", "requirements.txt", "mypy.ini", "setup.cfg", "go.mod", "Cargo.toml",
             "pom.xml")
RUN_TIMEOUT_S = 600


def main() -> int:
    args = _arguments()
    catalogue = json.loads((args.out / "projects.json").read_text(encoding="utf-8"))
    checkouts = dict(_pairs(args.project))
    toolchains = dict(_pairs(args.toolchain))
    for project in catalogue["projects"]:
        if args.only and project["name"] not in args.only:
            continue
        root = checkouts.get(project["name"])
        if root is None:
            print(f"skip {project['name']}: no --project {project['name']}=PATH given", file=sys.stderr)
            continue
        record_project(project, Path(root).resolve(), toolchains, args.out / project["name"])
    return 0


def record_project(project: dict, root: Path, toolchains: dict[str, str], out: Path) -> None:
    """Apply the faults, run every command, write the recordings, restore the checkout."""
    originals = {fault["file"]: (root / fault["file"]).read_text(encoding="utf-8")
                 for fault in project["faults"]}
    try:
        locations = apply_faults(root, project["faults"])
        out.mkdir(parents=True, exist_ok=True)
        _write_json(out / "project.json", {
            "name": project["name"], "root": str(root), "faults": locations,
            "manifests": {name: (root / name).read_text(encoding="utf-8")
                          for name in MANIFESTS if (root / name).is_file()},
        })
        sources = _snapshot(root)
        for run in project["runs"]:
            print(f"{project['name']}/{run['id']}: {run.get('run', run['command'])}", file=sys.stderr)
            _write_json(out / f"{run['id']}.json", record_run(project, run, root, toolchains))
            _restore(root, sources)  # `ruff check` with `fix = true` rewrites files: undo it
    finally:
        for name, text in originals.items():
            (root / name).write_text(text, encoding="utf-8")


SOURCE_SUFFIXES = (".py", ".ts", ".tsx", ".js", ".mjs", ".cjs", ".json", ".toml", ".go", ".rs", ".java", ".kt")
SKIPPED_DIRS = {"node_modules", ".git", ".sprintflow", "__pycache__", ".mypy_cache", ".ruff_cache", "target"}


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in root.rglob("*")
            if path.suffix in SOURCE_SUFFIXES and path.is_file()
            and not SKIPPED_DIRS.intersection(path.relative_to(root).parts)}


def _restore(root: Path, sources: dict[Path, bytes]) -> None:
    for path, content in sources.items():
        if not path.is_file() or path.read_bytes() != content:
            print(f"  restoring {path.relative_to(root)}, which the command changed", file=sys.stderr)
            path.write_bytes(content)


def apply_faults(root: Path, faults: list[dict]) -> dict[str, dict]:
    """Replace each fault's ``find`` text; return where each ``marker`` ended up (file, line)."""
    for fault in faults:
        path = root / fault["file"]
        text = path.read_text(encoding="utf-8")
        if text.count(fault["find"]) != 1:
            raise SystemExit(f"{fault['file']}: the text of fault {fault['id']} occurs "
                             f"{text.count(fault['find'])} times, not once")
        path.write_text(text.replace(fault["find"], fault["replace"]), encoding="utf-8")
    locations = {}
    for fault in faults:
        text = (root / fault["file"]).read_text(encoding="utf-8")
        if text.count(fault["marker"]) != 1:
            raise SystemExit(f"{fault['file']}: the marker of fault {fault['id']} is not unique")
        line = text[: text.index(fault["marker"])].count("\n") + 1  # the marker starts on the fault's line
        locations[fault["id"]] = {"file": fault["file"], "line": line}
    return locations


def record_run(project: dict, run: dict, root: Path, toolchains: dict[str, str]) -> dict:
    """Run one command in the faulted checkout and keep everything it printed and wrote."""
    env = dict(os.environ, **project.get("env", {}))
    env.pop("FORCE_COLOR", None)
    if run.get("toolchain"):
        env["PATH"] = f"{toolchains[run['toolchain']]}{os.pathsep}{env['PATH']}"
    shutil.rmtree(root / REPORTS_DIR, ignore_errors=True)
    (root / REPORTS_DIR).mkdir(parents=True)
    version = _run(run["version"], root, env).stdout.strip().splitlines()
    started = time.perf_counter()
    done = _run(run.get("run", run["command"]), root, env)
    duration_s = round(time.perf_counter() - started, 2)
    reports = {str(path.relative_to(root)): path.read_text(encoding="utf-8", errors="replace")
               for path in sorted((root / REPORTS_DIR).rglob("*")) if path.is_file()}
    return {"command": run["command"], "run": run.get("run", run["command"]),
            "toolVersion": " ".join(version[-1:]), "exitCode": done.returncode,
            "stdout": done.stdout, "stderr": done.stderr, "reports": reports, "durationS": duration_s}


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT_S, check=False)


def _write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _pairs(values: list[str]) -> list[tuple[str, str]]:
    pairs = []
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep:
            raise SystemExit(f"expected NAME=VALUE, got {value!r}")
        pairs.append((name, rest))
    return pairs


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", action="append", default=[], help="NAME=CHECKOUT")
    parser.add_argument("--toolchain", action="append", default=[], help="NAME=BIN_DIR put first on PATH")
    parser.add_argument("--only", action="append", default=[], help="record only this project")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    return parser.parse_args()


if __name__ == "__main__":
    raise SystemExit(main())
