#!/usr/bin/env bash
# Build the Docker sandbox image when a Docker engine answers and the image is missing: it is built on this
# machine (no registry is reachable), once; the demo and the test command both need it.
set -euo pipefail
if docker info >/dev/null 2>&1 && ! docker image inspect sprintflow-sandbox:latest >/dev/null 2>&1; then
  sprintflow sandbox build
fi
