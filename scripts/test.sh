#!/usr/bin/env bash
# Quick start 2: set up, build, and run the whole test suite (what CI runs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
cd "${DGNN_BUILD_DIR:-$here/build}"
ctest --output-on-failure -j "$(nproc)" "$@"
