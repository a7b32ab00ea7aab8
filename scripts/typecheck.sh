#!/usr/bin/env bash
# mypy over every source folder. The folders map onto one package (pyproject's package-dir),
# which mypy cannot follow, so it checks a tree of symlinks laid out like the installed package
# and reports the files under their paths in this repository.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/sprintflow"
for entry in sprintflow/*; do ln -s "$root/$entry" "$tree/sprintflow/"; done
for folder in flows tasks schemas deployments; do ln -s "$root/$folder" "$tree/sprintflow/$folder"; done
cd "$tree"
status=0
python3 -m mypy --config-file "$root/pyproject.toml" --cache-dir "$root/.mypy_cache" sprintflow \
  "$root/benchmarks" "$root/examples/history" "$@" \
  | sed -E "s#^sprintflow/(flows|tasks|schemas|deployments)/#\1/#; s#^$root/##" || status=$?
exit "$status"
