#!/usr/bin/env bash
# Downloads (does not install) the Debian packages dgnn builds against into .gpu-deps/, for a
# GPU machine that cannot reach a package registry: carry the folder there and
# scripts/gpu_check.sh unpacks it inside the tree (nothing is installed system-wide).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$here/.gpu-deps"
cd "$here/.gpu-deps"
# Open MPI and what it loads (about 8 MB), for the multi-rank GPU tests (mpirun -np 2): a GPU
# machine without MPI runs them from the unpacked tree (gpu_check.sh sets OPAL_PREFIX).
# Scotch and PT-Scotch (the ptscotch partitioner): headers, libraries and what they load.
apt-get download libmetis5 libmetis-dev libopenblas0-openmp libopenblas-openmp-dev \
  libscotch-dev libscotch-7.0 libptscotch-dev libptscotch-7.0 libbz2-1.0 liblzma5 \
  libgfortran5 libcli11-dev nlohmann-json3-dev catch2 zlib1g zlib1g-dev \
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libhwloc15 libhwloc-plugins \
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libpmix2 libmunge2 libfabric1 libucx0 \
  libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2 \
  libpsm-infinipath1 libnuma1 libltdl7 libxnvctrl0 libpciaccess0 libudev1 libatomic1 2>&1 |
  grep -v "^W: Download is performed unsandboxed" || true
ls -1 "$here/.gpu-deps"/*.deb | wc -l | xargs echo "gpu_fetch_deps: packages in .gpu-deps:"
