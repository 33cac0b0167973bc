#!/usr/bin/env bash
# run.sh - the main job on the embedded default. Until kerfd exists (issue 4) this is the
# scheduling demo on the simulated 8xH200 fleet.
set -euo pipefail
BUILD=${1:-build}
cd "$(dirname "$0")/.."
exec "$BUILD/bin/kerf-demo" examples/fleet-8xh200.yaml
