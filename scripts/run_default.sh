#!/usr/bin/env bash
# Quick start 1: set up, build, and train the main job on the embedded default graph.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
exec "${DGNN_BUILD_DIR:-$here/build}/dgnn" train "$@"
