#!/usr/bin/env bash
# The test command: install sprintflow with its dev tools (scripts/install.sh), type-check every source folder
# (scripts/typecheck.sh) and lint it (ruff; either failing fails the command), install the examples' npm
# dependencies, build the sandbox image if it is missing, run every test.
# Docker tests need a running engine (.ci/run starts one); with SPRINTFLOW_REQUIRE_DOCKER=1
# (set here) they fail instead of skipping when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/typecheck.sh
python3 -m ruff check --quiet .
for project in examples/*/package.json; do
  (cd "$(dirname "$project")" && npm ci --no-audit --no-fund --loglevel=error)
done
bash scripts/sandbox-image.sh
export SPRINTFLOW_REQUIRE_DOCKER="${SPRINTFLOW_REQUIRE_DOCKER:-1}"
python3 -m pytest -q -p no:cacheprovider "$@"
