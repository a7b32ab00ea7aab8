#!/usr/bin/env bash
# The main job on the bundled example: install sprintflow, then evaluate a copy of
# examples/python-api against its contract (passes), and a copy with broken.patch
# applied (fails, naming each failure at file:line). Works offline.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -e '.[dev]'
export PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_LOGGING_LEVEL="${PREFECT_LOGGING_LEVEL:-WARNING}"
work=$(mktemp -d)
contract=.sprintflow/contracts/sprint-spec-20260115-todo-api-1.json
for variant in good broken; do
  mkdir -p "$work/$variant"
  cp -r examples/python-api/. "$work/$variant/"
  rm -rf "$work/$variant/dist" "$work/$variant/.sprintflow/evals" "$work/$variant/.sprintflow/cache"
  if [ "$variant" = broken ]; then patch -s -p1 -d "$work/$variant" -i "$PWD/examples/python-api/broken.patch"; fi
  echo; echo "=== examples/python-api ($variant) ==="
  set +e
  sprintflow evaluate "$work/$variant" --contract "$work/$variant/$contract"
  status=$?
  set -e
  echo "exit code $status; EvalResult in $work/$variant/.sprintflow/evals/"
done
