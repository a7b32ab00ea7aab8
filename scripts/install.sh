#!/usr/bin/env bash
# Install sprintflow from this checkout (editable, with its dev tools), then compile its byte code
# once. pip compiles no byte code for an editable install, and where PYTHONDONTWRITEBYTECODE=1
# (this machine; many Docker images) Python never caches it either: every command would compile
# sprintflow's modules again, 0.2-0.3 s of each (benchmarks/cli.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[dev]'
python3 -m compileall -q sprintflow flows tasks schemas deployments
# The judge's cargo-mutants (the mutation check of Rust's tests; sprintflow/sandbox/cargo_mutants.py), built once
# with the host's cargo, about two minutes; without it a Rust project's tests are judged, not mutation-checked.
if command -v cargo >/dev/null; then
  python3 -m sprintflow.sandbox.cargo_mutants >/dev/null || echo "cargo-mutants was not built (see above)" >&2
fi
