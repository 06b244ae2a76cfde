# Sourced by the example tests: example_build EXAMPLE WORK installs dgnn from $build into
# WORK/prefix and builds examples/EXAMPLE against it as an out-of-tree project
# (find_package(dgnn)) in WORK/build; have_mpi says whether this build has MPI and mpiexec is
# there; mpi_root holds --allow-run-as-root when running as root.
example_build() {
  local example="$1" work="$2"
  rm -rf "$work"
  cmake --install "$build" --prefix "$work/prefix" >/dev/null
  cmake -S "$src/examples/$example" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
  cmake --build "$work/build" >/dev/null
}
have_mpi() {
  grep -q "define DGNN_HAVE_MPI 1" "$build/generated/dgnn/dgnn_config.hpp" 2>/dev/null &&
    command -v mpiexec >/dev/null
}
mpi_root=()
[ "$(id -u)" -eq 0 ] && mpi_root=(--allow-run-as-root)
# compare_runs WORK FINAL_REGEX EPOCHS TOL NAME...: every WORK/NAME.txt against WORK/one.txt:
# as many "epoch N loss X" lines, each loss within 1e-4 relative; the final line's numbers
# (FINAL_REGEX's groups, the last one the best epoch, which must be equal) within TOL (absolute
# below 1, relative above).
compare_runs() {
  python3 - "$@" <<'PY'
import re, sys
work, final_re, epochs, tol = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def parse(name):
    text = open(f"{work}/{name}.txt").read()
    losses = [float(x) for x in re.findall(r"^epoch \d+ loss ([0-9.]+)", text, re.M)]
    final = re.search(final_re, text)
    assert final, f"{name}: no final line"
    return losses, [float(x) for x in final.groups()]
one, f1 = parse("one")
assert len(one) == epochs, one
for name in sys.argv[5:]:
    two, f2 = parse(name)
    assert len(two) == epochs, (name, two)
    for e, (a, b) in enumerate(zip(two, one), 1):
        assert abs(a - b) <= 1e-4 * b, f"{name}: epoch {e}: {a} vs {b}"
    assert f2[-1] == f1[-1], (name, "best epoch", f2, f1)
    for a, b in zip(f2[:-1], f1[:-1]):
        assert abs(a - b) <= tol * max(abs(b), 1.0), (name, f2, f1)
PY
}
