#!/usr/bin/env bash
# What a stopped run leaves behind: SIGTERM (or SIGINT, SIGHUP) ends it with 128 + n and one line
# (also while METIS partitions, which traps SIGTERM itself); the --log-json file holds a valid
# line per finished epoch (written as each ends); kill -9 leaves no temporary file; the last
# --save-every checkpoint resumes.
set -euo pipefail
dgnn="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

wait_for_lines() {  # file, count: poll until it has that many lines (60 s at most)
  for _ in $(seq 600); do
    [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ] && return 0
    sleep 0.1
  done
  echo "no $2 lines in $1 after 60 s"; exit 1
}

# 1. SIGTERM mid-training: exit 143, one line, a valid log of the epochs done, no temporary.
"$dgnn" train --epochs 1000000 --log-json log.jsonl --save m.ckpt --save-every 3 --quiet \
  > out.txt 2> err.txt &
pid=$!
wait_for_lines log.jsonl 8
kill -TERM $pid
set +e; wait $pid; code=$?; set -e
[ "$code" -eq 143 ] || { echo "SIGTERM: exit $code"; cat err.txt; exit 1; }
grep -qx "dgnn: stopped by SIGTERM (exit 143)" err.txt || { cat err.txt; exit 1; }
python3 - <<'PY'
import json
rows = [json.loads(l) for l in open("log.jsonl")]  # every line whole
assert len(rows) >= 8 and not any(r.get("final") for r in rows), len(rows)
assert [r["epoch"] for r in rows] == list(range(1, len(rows) + 1))
PY
ls -A | grep "\.tmp\." >/dev/null && { echo "a temporary was left: $(ls -A)"; exit 1; }
# The checkpoint of a --save-every epoch resumes (to the epoch after it).
epoch=$(python3 -c "
import re
b = open('m.ckpt', 'rb').read()
print(re.search(rb'\"epoch\":(\d+)', b).group(1).decode())")
[ "$epoch" -ge 3 ] && [ $((epoch % 3)) -eq 0 ] || { echo "checkpoint at epoch $epoch"; exit 1; }
"$dgnn" train --epochs $((epoch + 1)) --load m.ckpt --quiet | grep "^test accuracy" >/dev/null

# 2. kill -9 while the checkpoint is rewritten every epoch: no temporary left, ever.
"$dgnn" train --epochs 1000000 --log-json log9.jsonl --save m9.ckpt --save-every 1 --quiet \
  > /dev/null 2>&1 &
pid=$!
wait_for_lines log9.jsonl 20
kill -9 $pid
set +e; wait $pid 2>/dev/null; set -e
ls -A | grep "\.tmp\." >/dev/null && { echo "kill -9 left a temporary: $(ls -A)"; exit 1; }
[ -f m9.ckpt ] || { echo "no checkpoint after 20 epochs"; exit 1; }

# 3. SIGTERM while METIS partitions (METIS traps SIGTERM itself): exit 143 and the same line,
# not "METIS failed". (SIGINT is ignored in a script's background job, as the shell sets it.)
"$dgnn" generate sbm --vertices 150000 --avg-degree 16 --classes 8 --seed 3 --out big >/dev/null
"$dgnn" partition --graph big --parts 64 --dry-run > part.txt 2> perr.txt &
pid=$!
sleep 2  # loading takes 0.3 s here, METIS 4.7 s: the signal comes while METIS runs
kill -TERM $pid
set +e; wait $pid; code=$?; set -e
[ "$code" -eq 143 ] || { echo "SIGTERM during METIS: exit $code"; cat perr.txt; exit 1; }
grep -qx "dgnn: stopped by SIGTERM (exit 143)" perr.txt || { cat perr.txt; exit 1; }
echo "stopped runs: exit 143 with one line (METIS too), whole log lines, no temporaries, the checkpoint resumes"
