#!/usr/bin/env bash
# Install sprintflow from this checkout (editable, with its dev tools), then compile its byte code
# once. pip compiles no byte code for an editable install, and where PYTHONDONTWRITEBYTECODE=1
# (this machine; many Docker images) Python never caches it either: every command would compile
# sprintflow's modules again, 0.2-0.3 s of each (benchmarks/cli.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[dev]'
python3 -m compileall -q sprintflow flows tasks schemas deployments
