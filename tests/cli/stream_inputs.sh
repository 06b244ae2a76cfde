#!/usr/bin/env bash
# Inputs that are not regular files: a process substitution (<(zcat g.gz)), /dev/stdin and a
# named pipe read as the file itself does (the same graph, the same training numbers), and a
# dataset folder whose every file is gzipped trains as the plain folder does.
set -euo pipefail
dgnn="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

"$dgnn" generate sbm --vertices 300 --features 8 --classes 3 --seed 4 --out plain > /dev/null
gzip -c plain/edges.txt > edges.txt.gz
# What info says of the graph, less the file's name and the load time.
summary() { python3 -c 'import json,sys; j=json.load(sys.stdin); [j.pop(k) for k in ("graph","description","load_ms")]; print(json.dumps(j, sort_keys=True))'; }
want="$("$dgnn" info --graph plain/edges.txt --no-cache --json | summary)"

same() {  # label, got
  [ "$2" = "$want" ] || { echo "$1: got '$2', want '$want'"; exit 1; }
}
same "<(zcat)" "$("$dgnn" info --graph <(zcat edges.txt.gz) --json | summary)"
same "/dev/stdin (gzip)" "$("$dgnn" info --graph /dev/stdin --json < edges.txt.gz | summary)"
same "a pipe into /dev/stdin" "$(zcat edges.txt.gz | "$dgnn" info --graph /dev/stdin --json | summary)"
mkfifo fifo
gzip -dc edges.txt.gz > fifo &
same "fifo" "$("$dgnn" info --graph fifo --json | summary)"
wait
# Nothing is cached under a pipe's name (the next /dev/fd/63 is another graph).
empty="$("$dgnn" info --graph <(printf '1 2\n') --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["vertices"])')"
[ "$empty" = 2 ] || { echo "a second pipe read the first one's cache: $empty vertices"; exit 1; }

# Training from a pipe: the input hash (for --save) and the parser read the same bytes.
train=(train --seed 2 --quiet --features plain/features.npy --labels plain/labels.txt)
acc() { tail -1 | sed 's/, median epoch.*//'; }  # the result, less the time
a="$("$dgnn" "${train[@]}" --epochs 3 --graph plain/edges.txt --save a.ckpt | acc)"
b="$("$dgnn" "${train[@]}" --epochs 3 --graph <(cat plain/edges.txt) --save b.ckpt | acc)"
[ "$a" = "$b" ] || { echo "train from a pipe: '$b' vs '$a'"; exit 1; }
# Its checkpoint names the same data: it resumes on the plain file.
"$dgnn" "${train[@]}" --epochs 4 --graph plain/edges.txt --load b.ckpt > /dev/null

# A folder of .gz files (features.npy.gz included) trains as the plain folder.
mkdir gz
for f in plain/*; do
  case "$f" in *.dgnn-generated|*manifest*) cp "$f" gz/ ;; *) gzip -c "$f" > "gz/$(basename "$f").gz" ;; esac
done
p="$("$dgnn" train --graph plain --epochs 3 --seed 2 --quiet | acc)"
g="$("$dgnn" train --graph gz --epochs 3 --seed 2 --quiet | acc)"
[ "$p" = "$g" ] || { echo "gzipped folder: '$g' vs '$p'"; exit 1; }
echo "stream inputs: ok"
