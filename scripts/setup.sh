#!/usr/bin/env bash
# Installs what dgnn needs to build, from Debian packages, when it is missing, then configures
# and builds into ${DGNN_BUILD_DIR:-build}. Safe to run again: it only installs what is absent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DGNN_BUILD_DIR:-$here/build}"

# libptscotch-dev (with libscotch-dev): the ptscotch partitioner, Scotch on one process and
# PT-Scotch over MPI ranks (its ParMETIS shim, libscotchparmetis-dev, is not used, and conflicts
# with libparmetis-dev).
packages=(build-essential cmake ninja-build pkg-config zlib1g-dev libopenblas-openmp-dev libmetis-dev
          libscotch-dev libptscotch-dev libopenmpi-dev openmpi-bin catch2 libcli11-dev nlohmann-json3-dev libbenchmark-dev
          python3-matplotlib valgrind)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The MPI and benchmark scripts read JSON logs with python3 (any python3 on PATH will do);
# `dgnn scale` draws its plots with matplotlib (python3-matplotlib, for the system's python3:
# dgnn scale tries /usr/bin/python3 when the python3 on PATH lacks it).
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages and not root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# nvcc is often installed outside PATH; DGNN_CUDA=AUTO only sees it there.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# DGNN_SETUP_ONLY=1: the packages only (scripts/fuzz.sh and sanitize.sh configure their own builds).
[ -z "${DGNN_SETUP_ONLY:-}" ] || exit 0

cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${DGNN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$(nproc)"
