#!/usr/bin/env bash
# Downloads (does not install) the Debian packages dgnn builds against into .gpu-deps/, for a
# GPU machine that cannot reach a package registry: carry the folder there and
# scripts/gpu_check.sh unpacks it inside the tree (nothing is installed system-wide).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$here/.gpu-deps"
cd "$here/.gpu-deps"
apt-get download libmetis5 libmetis-dev libopenblas0-openmp libopenblas-openmp-dev \
  libgfortran5 libcli11-dev nlohmann-json3-dev catch2 zlib1g zlib1g-dev 2>&1 |
  grep -v "^W: Download is performed unsandboxed" || true
ls -1 "$here/.gpu-deps"/*.deb | wc -l | xargs echo "gpu_fetch_deps: packages in .gpu-deps:"
