#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: builds dgnn with CUDA, runs the gpu-labelled tests, a CLI
# training run on the GPU, and the GPU benchmarks (SpMM against a device-to-device copy, a GCN
# epoch against PyTorch Geometric's in the same run), then prints a short table last.
# Takes a few minutes. Packages: installed by scripts/setup.sh where apt works; on a machine
# with no registry, carry .gpu-deps/ (scripts/gpu_fetch_deps.sh fills it) and they are unpacked
# inside the build folder, nothing system-wide.
#   scripts/gpu_check.sh    (logs and JSON under build-gpu/out; with DGNN_GPU_OUT=DIR also
#                            DIR/summary.txt and all of them in DIR/gpu_check.tar.gz, on exit)
# Every step has a time limit, and a step that would not finish by DGNN_GPU_DEADLINE seconds
# (default 540) after the start is skipped, so a hang or a slow build never loses the summary.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here" || exit 1
build="${DGNN_GPU_BUILD:-$here/build-gpu}"
out="$build/out"
rm -rf "$out"
mkdir -p "$build" "$out"
start=$(date +%s)
deadline="${DGNN_GPU_DEADLINE:-540}"
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
# fits SECONDS: whether a step of at most that long still ends before the deadline.
fits() {
  local left=$((deadline - ($(date +%s) - start)))
  [ "$left" -ge "$1" ] && return 0
  echo "(skipped: ${left} s left before the ${deadline} s deadline, the step may take $1 s)"
  return 1
}
pack() {
  if [ -n "${DGNN_GPU_OUT:-}" ]; then
    mkdir -p "$DGNN_GPU_OUT"
    [ -f "$out/summary.txt" ] && cp "$out/summary.txt" "$DGNN_GPU_OUT/"
    tar czf "$DGNN_GPU_OUT/gpu_check.tar.gz" -C "$build" out 2>/dev/null
  fi
}
trap pack EXIT

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
nvcc --version | tail -2 | head -1
g++ --version | head -1
cmake --version | head -1
grep PRETTY_NAME /etc/os-release || true

cmake_args=(-DDGNN_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5
            -DCMAKE_CUDA_ARCHITECTURES="${DGNN_CUDA_ARCHS:-90}")
if ls .gpu-deps/*.deb >/dev/null 2>&1; then
  step "unpacking .gpu-deps into $build/deps"
  root="$build/deps"
  mkdir -p "$root"
  for d in .gpu-deps/*.deb; do
    if command -v dpkg >/dev/null; then
      dpkg -x "$d" "$root"
    else
      tmp=$(mktemp -d) && (cd "$tmp" && ar x "$here/$d" && tar xf data.tar.* -C "$root") && rm -rf "$tmp"
    fi
  done
  lib="$root/usr/lib/x86_64-linux-gnu"
  # zlib1g-dev's libz.so points at an absolute path: point it at the unpacked runtime instead.
  ln -sf "$root/lib/x86_64-linux-gnu/libz.so.1" "$lib/libz.so"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$root/usr" -DDGNN_OPENBLAS_DIR="$lib/openblas-openmp"
               -DZLIB_ROOT="$root/usr")
  export LD_LIBRARY_PATH="$lib:$lib/openblas-openmp:$root/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  # The image's own Open MPI is used when it starts a job; one that cannot (seen: its mpiexec
  # stops on "undefined symbol: PMIx_Info_create", a PMIx it was not built against) is passed over.
  system_mpi_works() {
    command -v mpirun >/dev/null &&
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 30 mpirun -np 1 true >/dev/null 2>&1
  }
  if [ -x "$root/usr/bin/mpicxx.openmpi" ] && ! system_mpi_works; then
    echo "(the system's mpirun cannot start a job, or there is none: Open MPI from .gpu-deps)"
    # Debian's Open MPI, run from the unpacked tree: OPAL_PREFIX relocates Open MPI (wrapper,
    # components, help files), the PMIX_ variables its PMIx. Checked under a mount namespace
    # that hid the system's Open MPI. One node: shared memory only, no network components.
    export OPAL_PREFIX="$root/usr" PATH="$root/usr/bin:$PATH"
    export PMIX_INSTALL_PREFIX="$lib/pmix2" PMIX_MCA_mca_base_component_path="$lib/pmix2/lib/pmix"
    export LD_LIBRARY_PATH="$lib/openmpi/lib:$root/usr/lib/libpsm1:$LD_LIBRARY_PATH"
    export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_mca_base_component_show_load_errors=0
    cmake_args+=(-DDGNN_MPI=ON -DMPI_CXX_COMPILER="$root/usr/bin/mpicxx.openmpi"
                 -DMPIEXEC_EXECUTABLE="$root/usr/bin/mpirun.openmpi")
    mpirun_cmd="$root/usr/bin/mpirun.openmpi"
  elif ! command -v mpirun >/dev/null; then
    cmake_args+=(-DDGNN_MPI=OFF)
  fi
elif command -v apt-get >/dev/null; then
  step "installing packages (scripts/setup.sh)"
  DGNN_BUILD_DIR="$build/setup-build" DGNN_CMAKE_ARGS="-DDGNN_BUILD_TESTS=OFF -DDGNN_BUILD_BENCH=OFF -DDGNN_CUDA=OFF" \
    scripts/setup.sh >/dev/null || { echo "gpu_check: setup failed" >&2; exit 1; }
fi
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
# NCCL: in the CUDA toolkit's folders or $NCCL_HOME, else the pip wheel beside PyTorch
# (nvidia-nccl-*: nccl.h and libnccl.so.2, no libnccl.so for find_library to see).
if [ -z "${NCCL_HOME:-}" ] && [ ! -f /usr/local/cuda/include/nccl.h ] && [ ! -f /usr/include/nccl.h ]; then
  nccl_dir=$(python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null || true)
  nccl_lib=$(ls "$nccl_dir"/lib/libnccl.so* 2>/dev/null | head -1)
  if [ -n "$nccl_dir" ] && [ -f "$nccl_dir/include/nccl.h" ] && [ -n "$nccl_lib" ]; then
    cmake_args+=(-DDGNN_NCCL_INCLUDE_DIR="$nccl_dir/include" -DDGNN_NCCL_LIBRARY="$nccl_lib")
    export LD_LIBRARY_PATH="$nccl_dir/lib:${LD_LIBRARY_PATH:-}"
  fi
fi
cmake_args+=(-DDGNN_GPU_TEST_TIMEOUT="${DGNN_GPU_TEST_TIMEOUT:-150}")
mpirun_cmd="${mpirun_cmd:-$(command -v mpirun || true)}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

step "configure + build (CUDA)"
cmake -S . -B "$build" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
grep "dgnn:" "$out/configure.log"
targets=(test_gpu bench_gpu dgnn_cli)
grep -q "MPI=ON" "$out/configure.log" && targets+=(test_gpu_mpi test_mpi)
build_limit=$((deadline - 200 - $(($(date +%s) - start))))
[ "$build_limit" -lt 60 ] && { echo "gpu_check: only ${build_limit} s left for the build" >&2; exit 1; }
timeout -k 5 "$build_limit" \
  cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
  { grep -E "error|Error|Terminated" "$out/build.log" | head -40; tail -3 "$out/build.log"
    echo "gpu_check: the build failed or did not finish in time" >&2; exit 1; }

# run_for SECONDS CMD...: CMD with a time limit (its whole process group, mpirun's ranks too).
run_for() {
  local limit=$1
  shift
  timeout -k 5 "$limit" "$@"
  local rc=$?
  [ "$rc" -eq 124 ] && echo "(timed out after $limit s: $1 ...)"
  return "$rc"
}
elapsed() { echo $(($(date +%s) - start)); }

step "gpu tests"
# One test at a time: each compares against the CPU backend, whose OpenMP threads would
# oversubscribe the cores if several tests ran at once (a 300x slowdown was seen). Each test
# stops after DGNN_GPU_TEST_TIMEOUT s; all of them leave 200 s for the benchmarks.
tests_budget=$((deadline - $(elapsed) - 200))
[ "$tests_budget" -gt 330 ] && tests_budget=330
if [ "$tests_budget" -ge 30 ]; then
  (cd "$build" && run_for "$tests_budget" ctest -L gpu --output-on-failure) 2>&1 |
    tee "$out/gpu_tests.log" | tail -40
else
  echo "(skipped: ${tests_budget} s left for the tests)" | tee "$out/gpu_tests.log"
fi
tests_line=$(grep -E "tests passed|tests failed|timed out" "$out/gpu_tests.log" | tail -1)
# Skipped tests count as passed in ctest's line: say how many there were (all = no usable GPU).
skipped=$(grep -c "(Skipped)" "$out/gpu_tests.log")
[ "$skipped" -gt 0 ] && tests_line="$tests_line; $skipped of them SKIPPED (see gpu_tests.log)"

step "sharded loading and the partitioners on 2-4 ranks (CPU, many cores: what a laptop does not show)"
if fits 150 && [ -x "$build/tests/test_mpi" ]; then
  (cd "$build" && run_for 140 ctest -R "dist_load|dist_partition" --output-on-failure) 2>&1 |
    tee "$out/dist_tests.log" | tail -6
fi

step "bench: SpMM and GCN epoch on a generated 1M-vertex, 20M-edge graph"
fits 150 && run_for 150 "$build/bench/bench_gpu" 1000000 20 128 128 20 "$build/export" 2>&1 |
  tee "$out/bench_gpu.log"
step "bench: the same GCN in PyTorch Geometric"
fits 100 && [ -d "$build/export" ] && PYTHONUNBUFFERED=1 run_for 100 python3 bench/gpu/pyg_gcn.py "$build/export" 2>&1 |
  tee "$out/bench_pyg.log"

step "CLI: dgnn train --device cuda on the generated default"
if fits 60; then
  run_for 30 "$build/dgnn" train --device cuda --epochs 100 --log-json "$out/train_cuda.json" 2>&1 | tail -4
  run_for 30 "$build/dgnn" train --device cpu --epochs 100 --log-json "$out/train_cpu.json" 2>&1 | tail -2
fi

step "CLI: mini-batch training (--batch-size: sampled on the GPU; GAT's on the CPU) against the CPU"
# The same seeds draw the same blocks on both devices: the losses differ only by summation order.
for m in sage gcn gat; do
  extra=()
  [ "$m" = gcn ] && extra=(--no-prefetch)
  fits 40 || break
  for d in cuda cpu; do
    run_for 20 "$build/dgnn" train --model "$m" --batch-size 256 --fanouts 5,10 --epochs 5 \
      --device "$d" ${extra[@]+"${extra[@]}"} --log-json "$out/mb_${m}_$d.json" 2>&1 | tail -2
  done
done

step "CLI: temporal link prediction (GCRN, EvolveGCN-H) on the GPU and on the CPU"
fits 30 && run_for 30 "$build/dgnn" generate evolving-sbm --vertices 2000 --snapshots 12 --classes 4 \
  --avg-degree 6 --out "$build/evolving" >/dev/null
for m in gcrn evolvegcn-h; do
  fits 60 || break
  for d in cpu cuda; do
    run_for 30 "$build/dgnn" train --graph "$build/evolving" --model "$m" --epochs 3 --neg-eval 20 \
      --device "$d" --quiet --log-json "$out/temporal_${m}_$d.json" 2>&1 | tail -2
  done
done

step "CLI: forecasting (T-GCN) on the GPU and on the CPU: chickenpox, a 10k-vertex diffusion signal"
fits 30 && run_for 30 "$build/dgnn" generate diffusion --vertices 10000 --steps 200 --seed 1 \
  --out "$build/diffusion" >/dev/null
for d in cpu cuda; do
  fits 60 || break
  run_for 20 "$build/dgnn" train --graph datasets/chickenpox/chickenpox.json.gz --task forecast \
    --model tgcn --epochs 20 --device "$d" --quiet --log-json "$out/forecast_cp_$d.json" 2>&1 | tail -1
  [ -d "$build/diffusion" ] && run_for 40 "$build/dgnn" train --graph "$build/diffusion" \
    --task forecast --model tgcn --hidden 32 --epochs 3 --device "$d" --quiet \
    --log-json "$out/forecast_diff_$d.json" 2>&1 | tail -1
done

step "CLI: 2 GPU ranks under mpirun against 1 CPU rank (static GCN, mini-batch SAGE, temporal GCRN)"
# With one GPU both ranks share it: auto picks the staged transport (NCCL needs a GPU per rank).
# With two or more, auto picks NCCL, and --comm mpi runs the staged one too.
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ -n "$mpirun_cmd" ] && grep -q "MPI=ON" "$out/configure.log"; then
  mpi2=("$mpirun_cmd" -np 2 --oversubscribe -x OMP_NUM_THREADS=4)
  fits 30 && run_for 30 "$build/dgnn" generate sbm --vertices 3000 --classes 4 --seed 2 --out "$build/sbm3k" >/dev/null
  if fits $((30 + 60 * (ngpu >= 2 ? 2 : 1))) && [ -d "$build/sbm3k" ]; then
    run_for 30 "$build/dgnn" train --graph "$build/sbm3k" --epochs 30 --seed 1 --quiet \
      --log-json "$out/dist_cpu1.json" 2>&1 | tail -1
    comms=(auto)
    [ "$ngpu" -ge 2 ] && comms+=(mpi)
    for c in "${comms[@]}"; do
      run_for 60 "${mpi2[@]}" "$build/dgnn" train --graph "$build/sbm3k" --epochs 30 --seed 1 \
        --parts 2 --device cuda --comm "$c" --log-json "$out/dist_cuda2_$c.json" 2>&1 |
        grep -E "gpu comm|test acc|timed out"
    done
  fi
  # Mini-batches under mpirun: sampled on the CPU through the owners, trained on the GPU.
  if fits 90 && [ -d "$build/sbm3k" ]; then
    for d in cpu cuda; do
      run_for 45 "${mpi2[@]}" "$build/dgnn" train --graph "$build/sbm3k" --model sage \
        --batch-size 128 --fanouts 5,5 --epochs 3 --seed 1 --parts 2 --device "$d" --quiet \
        --log-json "$out/mbdist_$d.json" 2>&1 | tail -1
    done
  fi
  if fits 120 && [ -d "$build/evolving" ]; then
    run_for 30 "$build/dgnn" train --graph "$build/evolving" --model gcrn --epochs 3 --bptt 3 \
      --neg-eval 20 --quiet --log-json "$out/tdist_cpu1.json" 2>&1 | tail -1
    for strategy in vertex snapshot; do
      run_for 45 "${mpi2[@]}" "$build/dgnn" train --graph "$build/evolving" --model gcrn \
        --epochs 3 --bptt 3 --neg-eval 20 --device cuda --strategy "$strategy" --quiet \
        --log-json "$out/tdist_cuda2_$strategy.json" 2>&1 | tail -1
    done
  fi
else
  echo "no mpirun (and no MPI build): skipped"
fi

step "summary"
python3 - "$out" "$tests_line" <<'PY' | tee "$out/summary.txt"
import glob, json, os, re, sys
out, tests = sys.argv[1], sys.argv[2]
def lines(p):
    try:
        return [json.loads(l) for l in open(p) if l.startswith("{")]
    except OSError:
        return []
g = next((j for j in lines(f"{out}/bench_gpu.log") if j.get("bench") == "gpu"), {})
p = next((j for j in lines(f"{out}/bench_pyg.log") if "best_epoch_ms" in j), {})
variants = {j["variant"]: j.get("epoch_ms") for j in lines(f"{out}/bench_pyg.log") if "variant" in j}
fin = lambda f: next((j for j in lines(f) if j.get("final")), {})
tc, tg = fin(f"{out}/train_cpu.json"), fin(f"{out}/train_cuda.json")
rows = [("gpu tests", tests or "?", ""),
        ("dgnn train (default) test acc cpu / cuda", f"{tc.get('test_acc', '?')} / {tg.get('test_acc', '?')}",
         f"epoch {tc.get('median_epoch_ms', '?')} / {tg.get('median_epoch_ms', '?')} ms"),
        ("d2d copy GB/s", g.get("copy_gbs", "?"), "baseline"),
        ("spmm cuSPARSE ms (of copy bw)", g.get("spmm_cusparse_ms", "?"), f"{g.get('spmm_cusparse_of_copy', '?')}x (target >= 0.6)"),
        ("spmm rowwarp ms (of copy bw)", g.get("spmm_rowwarp_ms", "?"), f"{g.get('spmm_rowwarp_of_copy', '?')}x (target >= 0.6)"),
        ("gcn epoch ms dgnn", g.get("gcn_epoch_ms", "?"), ""),
        ("gcn epoch ms PyG, per variant", json.dumps(variants), ""),
        ("PyG best / dgnn", p.get("best_epoch_ms", "?"),
         f"{p['best_epoch_ms'] / g['gcn_epoch_ms']:.2f}x (target >= 1.5)" if p and g.get("gcn_epoch_ms") else "?")]
for m in ("gcrn", "evolvegcn-h"):
    c, d = fin(f"{out}/temporal_{m}_cpu.json"), fin(f"{out}/temporal_{m}_cuda.json")
    rows.append((f"temporal {m} test AUC cpu / cuda", f"{c.get('test_auc', '?')} / {d.get('test_auc', '?')}",
                 f"epoch {c.get('median_epoch_ms', '?')} / {d.get('median_epoch_ms', '?')} ms"))
def losses(path):
    return [j["loss"] for j in lines(path) if "loss" in j and not j.get("final")]
def max_rel(a, b):
    if not a or len(a) != len(b):
        return "?"
    return f"{max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b)):.1e}"
try:
    ctest_log = open(f"{out}/gpu_tests.log").read().splitlines()
except OSError:
    ctest_log = []
try:
    dist_log = open(f"{out}/dist_tests.log").read().splitlines()
    dist_line = next((l for l in reversed(dist_log) if "tests passed" in l or "tests failed" in l), "?")
except OSError:
    dist_line = "not run"
rows.append(("sharded loading + partitioners (mpi, CPU)", dist_line, ""))
for t in ("mpi", "nccl"):
    hit = [l for l in ctest_log if f"GPU ranks over {t} on 2 ranks" in l and "Test #" in l]
    m = re.search(r"(Passed|Skipped|Failed|Timeout|Not Run|Exception)", hit[-1]) if hit else None
    state = m.group(1) if m else "not run"
    rows.append((f"test_gpu_mpi over {t} (2 ranks)", state, "skipped = see gpu_tests.log for why"))
for m in ("sage", "gcn", "gat"):
    c, d = f"{out}/mb_{m}_cpu.json", f"{out}/mb_{m}_cuda.json"
    rows.append((f"mini-batch {m} (--batch-size 256) test acc cpu / cuda",
                 f"{fin(c).get('test_acc', '?')} / {fin(d).get('test_acc', '?')}",
                 f"max rel loss diff {max_rel(losses(d), losses(c))} (target <= 1e-4)"))
    ep = [j for j in lines(d) if "sample_ms" in j and not j.get("final")]
    if ep:
        rows.append((f"mini-batch {m} on the GPU: epoch / sampling / of it hidden ms (last epoch)",
                     " / ".join(f"{ep[-1].get(k, 0):.1f}" for k in ("time_ms", "sample_ms", "sample_hidden_ms")),
                     "prefetch on its own stream" if m != "gcn" else "--no-prefetch"))
ref = losses(f"{out}/dist_cpu1.json")
for path in sorted(glob.glob(f"{out}/dist_cuda2_*.json")):
    comm = fin(path).get("settings", {}).get("comm", "?")
    rows.append((f"2 GPU ranks GCN ({comm}): max rel loss diff vs 1 CPU rank", max_rel(losses(path), ref),
                 "(target <= 1e-4)"))
if os.path.exists(f"{out}/mbdist_cuda.json"):
    rows.append(("2 ranks mini-batch SAGE, GPU vs CPU: max rel loss diff",
                 max_rel(losses(f"{out}/mbdist_cuda.json"), losses(f"{out}/mbdist_cpu.json")),
                 "(target <= 1e-4)"))
tref = losses(f"{out}/tdist_cpu1.json")
for s in ("vertex", "snapshot"):
    path = f"{out}/tdist_cuda2_{s}.json"
    if os.path.exists(path):
        comm = fin(path).get("settings", {}).get("comm", "?")
        rows.append((f"2 GPU ranks GCRN --strategy {s} ({comm}): max rel loss diff", max_rel(losses(path), tref),
                     "(target <= 1e-4)"))
w = max(len(r[0]) for r in rows)
print("\n".join(f"{a:<{w}}  {b}  {c}" for a, b, c in rows))
PY
step "done"
