#!/usr/bin/env bash
# The main job on the bundled example, offline: install sprintflow, lay out the
# sprint demo (the python-api example in its broken state, two contracts, a held-out
# eval), then run the sprint with a scripted generator engine that makes real
# changes. Contract 1: iteration 1 fails with precise feedback, iteration 2 passes;
# contract 2 depends on contract 1 and then runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
bash scripts/sandbox-image.sh  # the sprint runs in the Docker sandbox where an engine answers
export PREFECT_SERVER_ANALYTICS_ENABLED=false PREFECT_LOGGING_LEVEL="${PREFECT_LOGGING_LEVEL:-WARNING}"
workspace="$(mktemp -d)/todo-api"
python3 examples/sprint-demo/prepare.py "$workspace" >/dev/null
echo "workspace: $workspace"
set +e
sprintflow run "$workspace" --engine "python3 $PWD/examples/sprint-demo/generator/scripted_engine.py"
status=$?
set -e
sprintflow status "$workspace"
echo; echo "Feedback the generator got after iteration 1 of contract 1:"
python3 - "$workspace" <<'PY'
import sys
from pathlib import Path
from sprintflow.evaluate.result import load_eval
evaluated = load_eval(Path(sys.argv[1]), "sprint-spec-20260115-todo-api-1", 1)
if evaluated is None:
    sys.exit("  (none: iteration 1 was not evaluated; the run's errors are above)")
result = evaluated.model_dump(mode="json", by_alias=True)
print(result["summary"])
for item in result["generatorFeedback"][:5]:
    where = f"{item['file']}:{item['line']} " if item.get("file") and item.get("line") else ""
    print(f"  [{item['priority']}] {where}{item['description'][:160]}")
PY
echo "sprintflow run exited $status; EvalResults are in $workspace/.sprintflow/evals/"
exit "$status"
