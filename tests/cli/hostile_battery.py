#!/usr/bin/env python3
"""Hostile-input battery for the dgnn command line (python3 standard library only).

Usage:
  python3 tests/cli/hostile_battery.py DGNN_BINARY [--jobs N] [--filter SUBSTR] [--timeout S]
                                      [--keep] [--list] [--mem-limit-gb G] [--verbose]
                                      [--cases FILE ...]

The cases live in tests/cli/hostile_cases*.txt (every file matching that pattern, in name order),
one case per line:

  id | expect | regex | must-not-exist | command

  id              unique, [A-Za-z0-9_.+-]+; the family is the first dotted component
  expect          'error' or 'valid', optionally followed by comma-separated flags:
                    serial   run alone (not beside other cases); any command naming mpirun or
                             mpiexec is serial without the flag (and is skipped, with a note,
                             where neither is on PATH)
                    t=S      this case's own timeout in seconds (default: --timeout)
  regex           Python regex, searched case-insensitively; for 'error' in the one error line,
                  for 'valid' in stdout; '-' = no check. It must not contain ' | ' (a bar with
                  spaces on both sides); write alternatives without spaces: (a|b).
  must-not-exist  space-separated paths, relative to the case's working folder ($DS, $SHIPPED
                  expanded), that must not exist after the run ('-' = none): the outputs a failed
                  run must not leave half-written
  command         the rest of the line, run by `bash -c` (it may itself contain ' | ')

Lines starting with '#' are comments ('# == family ==' headers group the cases); blank lines are
skipped.

Every case runs in a fresh folder of its own (its working directory), holding:
  ds/     $DS: the case's own copy of the fixtures built once per run (build_fixtures), its own
          to break. Only the entries the command names as $DS/<entry> are copied ($DS/bad/<entry>
          for the many damaged folders under bad/); the whole fixture when the command reaches $DS
          any other way ($DS alone, or 'ds/' spelled out). The manifest covers what was copied.
  home/   $HOME, with a plan calibration made once per run (dgnn plan's default cache)
  cache/  $DGNN_CACHE_DIR (dgnn's parsed-graph cache)
  tmp/    $TMPDIR
Variables: $DGNN (the binary), $DS, $SHIPPED (the repository's datasets/, read only: no case may
write there), $FIX (same as $DS), $CASE (the working folder). The environment also has
DGNN_FIFO_WAIT=3, OMP_NUM_THREADS=1, stdin is /dev/null, and the address space is limited to
--mem-limit-gb (default 8; 0 = unlimited) so that a size option that asks for all the memory of the
machine fails there instead of taking the machine down.

Classes, checked in this order:
  destroyed  a fixture file under $DS changed or vanished (new files there are fine)
  hang       the command ran past its timeout
  crash      killed by a signal, exit status >= 128, or a crash marker in stdout or stderr
             ("terminate called", "Aborted", "Segmentation", "core dumped", "internal error",
             "Assertion", "std::bad_alloc")
  silent     an 'error' case that exited 0
  leftover   a path of must-not-exist exists afterwards, or a '*.tmp.*' file is anywhere in the
             case folder (any case)
  unclear    an 'error' case whose stderr (after the MPI filter below) is not exactly one line
             starting with 'dgnn: error:', or whose line does not match the regex
  wrong      a 'valid' case that exited non-zero, or whose stdout does not match the regex
  ok-error / ok-valid   the case met its expectation

MPI filter (only for commands naming mpirun or mpiexec), applied to stderr before the check:
  - a block enclosed by two lines of 10 or more dashes is Open MPI's (help/abort messages) and is
    dropped, dash lines included;
  - lines starting with 'mpirun', 'mpiexec', 'prterun', 'Primary job', 'a non-zero exit code',
    'Per user-direction', and '[host:pid] ' (Open MPI's own notes: aggregated help,
    ORTE_ERROR_LOG races in show_help) are dropped, as are '[warn] ' lines (the libevent inside
    Open MPI, e.g. "[warn] Epoll MOD(1) on fd 25 failed ...: Bad file descriptor" when the job's
    processes are torn down at once: seen in 1 of 904 cases of one CI run);
  - 'dgnn: stopped by SIGTERM [rank N] (exit 143)' and 'dgnn: stopped by SIGTERM (exit 143)' (rank
    0's form) lines are dropped: ranks that mpirun stops after another rank failed (MPI_Abort) say
    so, as designed; a case whose only lines are these is still 'unclear' (nothing is left);
  - blank lines are dropped.
  What remains must be one or more lines, every one starting with 'dgnn: error:' and every one
  matching the regex (several ranks may each report the error).
For other commands only blank lines are dropped.

Fixtures ($DS): tiny/ (12 vertices 0..11, edges.txt, features.npy [12, 4] with a hand-written
.npy header, labels.txt of 3 classes, train/val/test.txt) and variants of it (tinygz/, nofeat/,
nosplit/, featxt/, tiny2/ with other edges), the same files loose at the top (edges.txt,
features.npy, ...), temporal.txt / temporal.csv ('src dst w time', 160 events), tempdir/ (a temporal
folder with snapshots.txt), fc/ and signals.npy [40, 12] for --task forecast, pj/ PyG-Temporal JSON
files, ogb/ (raw/*.csv, split/time/*.csv), el/ odd edge lists, bad/ damaged copies of the folders,
ckpt/ a real checkpoint and forgeries of it (checksum recomputed), part2/ a 2-part partition, and
shipped/ copies of the repository's datasets (cora, bitcoin-alpha, collegemsg, chickenpox).

Other options: --list prints the cases, --verbose every result as it comes, --keep keeps the
scratch folder (under $TMPDIR), --cases FILE runs another table (repeatable).

The SHA-256 manifest of $SHIPPED is taken at the start and the end of the run; any difference
(changed, removed or added files) fails the run.

Output: one line per failing case,
  FAIL <id> [<class>] (<table>:<line>; <why>) $ <command>  =>  <last stderr line>
(the last stdout line when stderr is empty), then
  hostile battery: N cases: a ok-error, b ok-valid, c unclear, d silent, e hang, f crash,
  g destroyed, h leftover, i wrong
and last, alone on its line, 'P passed, F failed'. Exit status 0 only when every case met its
expectation (and $SHIPPED is unchanged); 2 when the battery itself could not run.
"""

import argparse
import concurrent.futures
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHIPPED = os.path.join(REPO, "datasets")

CRASH_MARKERS = ("terminate called", "Aborted", "Segmentation", "core dumped", "internal error",
                 "Assertion", "std::bad_alloc")
CLASSES = ("ok-error", "ok-valid", "unclear", "silent", "hang", "crash", "destroyed", "leftover",
           "wrong")
MPI_RE = re.compile(r"\b(mpirun|mpiexec)\b")
ID_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")


# ---------------------------------------------------------------------------------------------
# Case tables


class Case:
    def __init__(self, cid, expect, flags, regex, absent, command, where):
        self.id = cid
        self.expect = expect
        self.flags = flags
        self.regex = regex
        self.absent = absent
        self.command = command
        self.where = where
        self.serial = "serial" in flags or bool(MPI_RE.search(command))
        self.timeout = None
        for f in flags:
            if f.startswith("t="):
                self.timeout = float(f[2:])


def load_cases(paths):
    cases, seen, errors = [], {}, []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                where = "%s:%d" % (os.path.basename(path), n)
                parts = line.split(" | ", 4)
                if len(parts) != 5:
                    errors.append("%s: expected 'id | expect | regex | must-not-exist | command'"
                                  % where)
                    continue
                cid, expect, regex, absent, command = (p.strip() for p in parts)
                ex = [x.strip() for x in expect.split(",") if x.strip()]
                if not ex or ex[0] not in ("error", "valid"):
                    errors.append("%s: expect must be error or valid, got %r" % (where, expect))
                    continue
                bad_flags = [x for x in ex[1:] if x != "serial" and not re.match(r"^t=\d+(\.\d+)?$", x)]
                if bad_flags:
                    errors.append("%s: unknown flags %r" % (where, bad_flags))
                    continue
                if not ID_RE.match(cid):
                    errors.append("%s: bad id %r" % (where, cid))
                    continue
                if cid in seen:
                    errors.append("%s: id %s already used at %s" % (where, cid, seen[cid]))
                    continue
                seen[cid] = where
                rx = None
                if regex != "-":
                    try:
                        rx = re.compile(regex, re.IGNORECASE)
                    except re.error as e:
                        errors.append("%s: bad regex %r: %s" % (where, regex, e))
                        continue
                cases.append(Case(cid, ex[0], ex[1:], rx, [] if absent == "-" else absent.split(),
                                  command, where))
    return cases, errors


# ---------------------------------------------------------------------------------------------
# Fixtures


def npy_bytes(shape, values=None, descr="<f4", fortran=False, version=1, raw=None):
    """A .npy file, header written by hand (format 1.0: magic, version, u16 header length)."""
    if len(shape) == 1:
        shape_s = "(%d,)" % shape[0]
    else:
        shape_s = "(" + ", ".join(str(s) for s in shape) + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_s)
    lenbytes = 2 if version == 1 else 4
    pre = 6 + 2 + lenbytes
    total = pre + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header)) + header.encode("latin1")
    if raw is not None:
        return out + raw
    fmt = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i", ">f4": "f"}[descr]
    endian = ">" if descr.startswith(">") else "<"
    return out + struct.pack(endian + "%d%s" % (len(values), fmt), *values)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    with open(path, mode, **({} if mode == "wb" else {"newline": ""})) as f:
        f.write(data)


# The tiny static graph: 12 vertices 0..11 in 3 classes of 4, a ring plus chords.
TINY_N = 12
TINY_EDGES = [(i, (i + 1) % 12) for i in range(12)] + [
    (0, 2), (1, 3), (4, 6), (5, 7), (8, 10), (9, 11), (0, 5), (3, 9)]
TINY_CLASS = [i // 4 for i in range(TINY_N)]
TINY_TRAIN, TINY_VAL, TINY_TEST = [0, 1, 4, 5, 8, 9], [2, 6, 10], [3, 7, 11]


def tiny_features(rows=TINY_N, cols=4):
    vals = []
    for i in range(rows):
        c = TINY_CLASS[i % TINY_N]
        row = [1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0, i / 12.0]
        vals += (row * ((cols + 3) // 4))[:cols]
    return vals


def edges_text(edges=TINY_EDGES, sep=" ", eol="\n"):
    return "".join("%d%s%d%s" % (s, sep, d, eol) for s, d in edges)


def ids_text(ids, eol="\n"):
    return "".join("%d%s" % (i, eol) for i in ids)


def labels_text(eol="\n"):
    return "# vertex label" + eol + "".join("%d %d%s" % (i, TINY_CLASS[i], eol) for i in range(TINY_N))


def static_folder(base, name, **override):
    """A copy of the tiny dataset folder with files replaced (value None: file left out)."""
    files = {
        "edges.txt": edges_text(),
        "features.npy": npy_bytes((TINY_N, 4), tiny_features()),
        "labels.txt": labels_text(),
        "train.txt": ids_text(TINY_TRAIN),
        "val.txt": ids_text(TINY_VAL),
        "test.txt": ids_text(TINY_TEST),
    }
    files.update(override)
    d = os.path.join(base, name)
    os.makedirs(d, exist_ok=True)
    for fname, data in files.items():
        if data is None:
            continue
        if data == "<dir>":
            os.makedirs(os.path.join(d, fname), exist_ok=True)
            continue
        write(os.path.join(d, fname), data)


def temporal_edges(count=160, span=10):
    """src dst weight time: 12 vertices, +-1 weights, times 0..(count-1)*span."""
    rows = []
    for k in range(count):
        s, d = (k * 7) % 12, (k * 5 + 3) % 12
        if s == d:
            d = (d + 1) % 12
        rows.append((s, d, 1 if k % 3 else -1, k * span))
    return rows


def ogb_folder(base, name, count="12\n", feat=True, label=True, splits=("time",), labels=None,
               edges=None):
    d = os.path.join(base, name)
    write(os.path.join(d, "raw", "edge.csv"), edges if edges is not None else edges_text(sep=","))
    if feat:
        fv = tiny_features()
        write(os.path.join(d, "raw", "node-feat.csv"),
              "".join(",".join("%g" % fv[i * 4 + j] for j in range(4)) + "\n" for i in range(TINY_N)))
    if label:
        write(os.path.join(d, "raw", "node-label.csv"),
              labels if labels is not None else "".join("%d\n" % c for c in TINY_CLASS))
    if count is not None:
        write(os.path.join(d, "raw", "num-node-list.csv"), count)
    for s in splits:
        write(os.path.join(d, "split", s, "train.csv"), ids_text(TINY_TRAIN))
        write(os.path.join(d, "split", s, "valid.csv"), ids_text(TINY_VAL))
        write(os.path.join(d, "split", s, "test.csv"), ids_text(TINY_TEST))


def ckpt_parse(data):
    """magic(8) version(u32 @8) header length(u64 @12) JSON tensors CRC32(last 4, version 2)."""
    version = struct.unpack_from("<I", data, 8)[0]
    hlen = struct.unpack_from("<Q", data, 12)[0]
    header = json.loads(data[20:20 + hlen].decode())
    tensors = data[20 + hlen:len(data) - (4 if version >= 2 else 0)]
    return version, header, tensors


def ckpt_build(header, tensors, version=2, crc=True, raw_header=None):
    """As save_checkpoint writes it; the CRC is zlib's CRC-32 of every byte after the version
    field (header length, header, tensors), as crc_of(0, bytes + 12, size - 4 - 12) checks."""
    text = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    body = struct.pack("<Q", len(text)) + text + tensors
    out = b"DGNNCKPT" + struct.pack("<I", version) + body
    if crc:
        out += struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
    return out


def build_checkpoints(fix, dgnn, env, log):
    """A real checkpoint of the tiny folder (gcn, 2 epochs) and forgeries of it."""
    ck = os.path.join(fix, "ckpt")
    os.makedirs(ck, exist_ok=True)
    good = os.path.join(ck, "good.ckpt")
    runs = [
        ([dgnn, "train", "--graph", os.path.join(fix, "tiny"), "--epochs", "2", "--quiet",
          "--save", good], "good.ckpt"),
        ([dgnn, "train", "--graph", os.path.join(fix, "tiny"), "--epochs", "2", "--quiet",
          "--model", "gat", "--save", os.path.join(ck, "gat.ckpt")], "gat.ckpt"),
        ([dgnn, "train", "--graph", os.path.join(fix, "tiny2"), "--epochs", "2", "--quiet",
          "--save", os.path.join(ck, "other_graph.ckpt")], "other_graph.ckpt"),
        ([dgnn, "train", "--graph", os.path.join(fix, "tiny"), "--epochs", "2", "--quiet",
          "--optimizer", "sgd", "--save", os.path.join(ck, "sgd.ckpt")], "sgd.ckpt"),
        ([dgnn, "train", "--graph", os.path.join(fix, "tiny"), "--epochs", "2", "--quiet",
          "--hidden", "8", "--save", os.path.join(ck, "hidden8.ckpt")], "hidden8.ckpt"),
        ([dgnn, "train", "--graph", os.path.join(fix, "temporal.txt"), "--time-col", "3",
          "--snapshots", "10", "--epochs", "2", "--quiet", "--model", "gcrn",
          "--save", os.path.join(ck, "temporal.ckpt")], "temporal.ckpt"),
    ]
    for cmd, name in runs:
        r = subprocess.run(cmd, cwd=ck, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if r.returncode != 0:
            log("warning: fixture %s: %s exited %d: %s" % (name, " ".join(cmd[1:3]), r.returncode,
                                                          r.stderr.decode(errors="replace").strip()))
    if not os.path.exists(good):
        log("warning: no good.ckpt; the forged-checkpoint cases will fail")
        return
    data = open(good, "rb").read()
    version, header, tensors = ckpt_parse(data)

    def forged(name, mutate=None, **kw):
        h = json.loads(json.dumps(header))
        if mutate:
            mutate(h)
        write(os.path.join(ck, name), ckpt_build(h, kw.pop("tensors", tensors), **kw))

    write(os.path.join(ck, "truncated.ckpt"), data[:len(data) // 2])
    write(os.path.join(ck, "truncated_fixed.ckpt"), data[:15])
    write(os.path.join(ck, "empty.ckpt"), b"")
    write(os.path.join(ck, "random.ckpt"), bytes((i * 131 + 7) % 256 for i in range(4096)))
    write(os.path.join(ck, "text.ckpt"), "this is not a checkpoint\n")
    write(os.path.join(ck, "appended.ckpt"), data + b"\0\0\0\0junk")
    flipped = bytearray(data)
    flipped[len(data) - 40] ^= 0x55
    write(os.path.join(ck, "bitflip.ckpt"), bytes(flipped))
    bad_magic = bytearray(data)
    bad_magic[0:8] = b"DGNNCKPX"
    write(os.path.join(ck, "badmagic.ckpt"), bytes(bad_magic))
    forged("epoch_neg.ckpt", lambda h: h["meta"].__setitem__("epoch", -5))
    forged("epoch_huge.ckpt", lambda h: h["meta"].__setitem__("epoch", 2 ** 62))
    forged("epoch_str.ckpt", lambda h: h["meta"].__setitem__("epoch", "two"))
    forged("epoch_float.ckpt", lambda h: h["meta"].__setitem__("epoch", 1.5))
    forged("steps_neg.ckpt", lambda h: h["meta"].__setitem__("optimizer_steps", -3))
    forged("best_epoch_neg.ckpt", lambda h: h["meta"].__setitem__("best_epoch", -7))
    forged("meta_array.ckpt", lambda h: h.__setitem__("meta", [1, 2, 3]))
    forged("no_tensors.ckpt", lambda h: h.pop("tensors"), tensors=b"")
    forged("model_forged.ckpt", lambda h: h["meta"].__setitem__("model", "gat"))
    forged("data_forged.ckpt", lambda h: h["meta"].__setitem__("data", "0123456789abcdef"))

    def shape(h, rows, cols):
        h["tensors"][0]["rows"] = rows
        h["tensors"][0]["cols"] = cols
    forged("shape_neg.ckpt", lambda h: shape(h, -1, 4))
    forged("shape_huge.ckpt", lambda h: shape(h, 2 ** 40, 2 ** 20))
    forged("shape_swapped.ckpt", lambda h: shape(h, h["tensors"][0]["cols"], h["tensors"][0]["rows"]))
    forged("version0.ckpt", version=0)
    forged("version3.ckpt", version=3)
    forged("version1_with_crc.ckpt", version=1)          # a v1 header, yet a CRC at the end
    forged("version1.ckpt", version=1, crc=False)         # what format 1 was: no checksum
    forged("header_garbage.ckpt", raw_header=b"{not json at all")
    forged("header_len_huge.ckpt", raw_header=None)
    # The header length field says 2^63: patch it after the fact, CRC recomputed.
    hb = bytearray(open(os.path.join(ck, "header_len_huge.ckpt"), "rb").read())
    hb[12:20] = struct.pack("<Q", 2 ** 63)
    hb[-4:] = struct.pack("<I", zlib.crc32(bytes(hb[12:-4])) & 0xFFFFFFFF)
    write(os.path.join(ck, "header_len_huge.ckpt"), bytes(hb))
    # NaN in the first tensor, CRC recomputed.
    t = bytearray(tensors)
    t[0:4] = struct.pack("<f", float("nan"))
    forged("nan.ckpt", tensors=bytes(t))
    os.makedirs(os.path.join(ck, "a_dir.ckpt"), exist_ok=True)


def build_fixtures(fix, dgnn, env, log):
    os.makedirs(fix)
    # -- static
    static_folder(fix, "tiny")
    # tiny2: the same shapes, other edges (for another graph's checkpoint).
    static_folder(fix, "tiny2", **{"edges.txt": edges_text(
        [(i, (i + 5) % 12) for i in range(12)] + [(0, 6), (1, 7)])})
    static_folder(fix, "tinygz", **{"edges.txt": None, "edges.txt.gz": gzip.compress(edges_text().encode())})
    static_folder(fix, "nofeat", **{"features.npy": None})
    static_folder(fix, "nosplit", **{"train.txt": None, "val.txt": None, "test.txt": None})
    static_folder(fix, "featxt", **{"features.npy": None, "features.txt": "".join(
        "%d %s\n" % (i, " ".join("%g" % v for v in tiny_features()[i * 4:i * 4 + 4])) for i in range(TINY_N))})
    write(os.path.join(fix, "edges.txt"), edges_text())
    write(os.path.join(fix, "features.npy"), npy_bytes((TINY_N, 4), tiny_features()))
    write(os.path.join(fix, "labels.txt"), labels_text())
    write(os.path.join(fix, "train.txt"), ids_text(TINY_TRAIN))
    write(os.path.join(fix, "val.txt"), ids_text(TINY_VAL))
    write(os.path.join(fix, "test.txt"), ids_text(TINY_TEST))
    # labels under the name that --embeddings sidecar/e.npy gives its ids file (e.ids.txt)
    write(os.path.join(fix, "sidecar", "e.ids.txt"), labels_text())
    # -- bad dataset folders (family 3)
    F = lambda rows, cols: npy_bytes((rows, cols), tiny_features(rows, cols))
    static_folder(fix, "bad/feat_rows", **{"features.npy": F(8, 4)})
    static_folder(fix, "bad/feat_1d", **{"features.npy": npy_bytes((TINY_N,), [0.5] * TINY_N)})
    static_folder(fix, "bad/feat_3d", **{"features.npy": npy_bytes((TINY_N, 4, 1), tiny_features())})
    static_folder(fix, "bad/feat_width0", **{"features.npy": npy_bytes((TINY_N, 0), [])})
    static_folder(fix, "bad/feat_short", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features())[:-20]})
    static_folder(fix, "bad/feat_long", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features()) + b"\0" * 16})
    static_folder(fix, "bad/feat_huge_shape", **{"features.npy": npy_bytes((3000000000, 4), raw=b"\0" * 64)})
    static_folder(fix, "bad/feat_dtype_str", **{"features.npy": npy_bytes((TINY_N, 4), descr="|S4", raw=b"abcd" * 48)})
    static_folder(fix, "bad/feat_int", **{"features.npy": npy_bytes((TINY_N, 4), [1] * 48, descr="<i8")})
    static_folder(fix, "bad/feat_bigendian", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features(), descr=">f4")})
    static_folder(fix, "bad/feat_fortran", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features(), fortran=True)})
    static_folder(fix, "bad/feat_nan", **{"features.npy": npy_bytes((TINY_N, 4), [float("nan")] + tiny_features()[1:])})
    static_folder(fix, "bad/feat_inf", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features()[:-1] + [float("inf")])})
    static_folder(fix, "bad/feat_badmagic", **{"features.npy": b"\x93NUMPX" + npy_bytes((TINY_N, 4), tiny_features())[6:]})
    static_folder(fix, "bad/feat_header_garbage", **{"features.npy": b"\x93NUMPY\x01\x00" + struct.pack("<H", 22) + b"this is no header!!!!\n" + b"\0" * 192})
    static_folder(fix, "bad/feat_header_len_huge", **{"features.npy": b"\x93NUMPY\x01\x00" + struct.pack("<H", 65535) + b"{'descr'"})
    static_folder(fix, "bad/feat_header_cut", **{"features.npy": npy_bytes((TINY_N, 4), tiny_features())[:40]})
    static_folder(fix, "bad/feat_empty", **{"features.npy": b""})
    static_folder(fix, "bad/feat_text_rows", **{"features.npy": None, "features.txt": "0 1 2\n1 1\n"})
    static_folder(fix, "bad/feat_text_nan", **{"features.npy": None, "features.txt": "".join("%d nan 1\n" % i for i in range(TINY_N))})
    static_folder(fix, "bad/feat_dir", **{"features.npy": "<dir>"})
    static_folder(fix, "bad/labels_3col", **{"labels.txt": "".join("%d %d 7\n" % (i, TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_1col", **{"labels.txt": "".join("%d\n" % i for i in range(TINY_N))})
    static_folder(fix, "bad/labels_neg", **{"labels.txt": "".join("%d %d\n" % (i, -5 if i == 3 else TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_float", **{"labels.txt": "".join("%d %s\n" % (i, "1.5" if i == 2 else TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_huge", **{"labels.txt": "".join("%d %s\n" % (i, "2147483648" if i == 2 else TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_big_class", **{"labels.txt": "".join("%d %s\n" % (i, "1000000000" if i == 2 else TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_dup", **{"labels.txt": labels_text() + "4 2\n"})
    static_folder(fix, "bad/labels_oob", **{"labels.txt": labels_text() + "99 1\n"})
    static_folder(fix, "bad/labels_text", **{"labels.txt": "".join("%d %s\n" % (i, "cat" if i == 5 else TINY_CLASS[i]) for i in range(TINY_N))})
    static_folder(fix, "bad/labels_empty", **{"labels.txt": ""})
    static_folder(fix, "bad/labels_dir", **{"labels.txt": "<dir>"})
    static_folder(fix, "bad/labels_cr", **{"labels.txt": labels_text(eol="\r")})
    static_folder(fix, "bad/split_cr", **{"train.txt": ids_text(TINY_TRAIN, eol="\r")})
    static_folder(fix, "bad/split_2col", **{"train.txt": "".join("%d %d\n" % (i, TINY_CLASS[i]) for i in TINY_TRAIN)})
    static_folder(fix, "bad/split_oob", **{"train.txt": ids_text(TINY_TRAIN + [99])})
    static_folder(fix, "bad/split_dup", **{"train.txt": ids_text(TINY_TRAIN + [0])})
    static_folder(fix, "bad/split_overlap", **{"val.txt": ids_text(TINY_VAL + [0])})
    static_folder(fix, "bad/split_neg", **{"test.txt": ids_text(TINY_TEST + [-1])})
    static_folder(fix, "bad/split_float", **{"test.txt": "3\n7.5\n11\n"})
    static_folder(fix, "bad/split_text", **{"val.txt": "2\nsix\n10\n"})
    static_folder(fix, "bad/split_huge", **{"val.txt": "2\n9223372036854775808\n"})
    static_folder(fix, "bad/split_empty_train", **{"train.txt": ""})
    static_folder(fix, "bad/split_dir", **{"val.txt": "<dir>"})
    static_folder(fix, "bad/edges_empty", **{"edges.txt": ""})
    static_folder(fix, "bad/edges_comments", **{"edges.txt": "# nothing\n% here\n"})
    static_folder(fix, "bad/edges_dir", **{"edges.txt": "<dir>"})
    static_folder(fix, "bad/edges_oob_feat", **{"edges.txt": edges_text() + "3 40\n"})
    static_folder(fix, "bad/no_edges", **{"edges.txt": None})
    # -- temporal
    rows = temporal_edges()
    write(os.path.join(fix, "temporal.txt"), "# src dst weight time\n" + "".join("%d %d %d %d\n" % r for r in rows))
    write(os.path.join(fix, "temporal.csv"), "".join("%d,%d,%d,%d\n" % r for r in rows))
    d = os.path.join(fix, "tempdir")
    write(os.path.join(d, "edges.txt"), "".join("%d %d %d\n" % (r[0], r[1], r[3]) for r in rows))
    write(os.path.join(d, "snapshots.txt"), "# dgnn temporal dataset\ntime-col 2\nsnapshot-seconds 160\n")
    write(os.path.join(d, "features.npy"), npy_bytes((TINY_N, 4), tiny_features()))
    write(os.path.join(d, "labels.txt"), labels_text())
    for name, text in [("snap_unknown", "time-col 2\nsnapshot-seconds 160\ncolour blue\n"),
                       ("snap_dup", "time-col 2\nsnapshot-seconds 160\nsnapshot-seconds 80\n"),
                       ("snap_timecol1", "time-col 1\nsnapshot-seconds 160\n"),
                       ("snap_notime", "snapshot-seconds 160\n"),
                       ("snap_zero", "time-col 2\nsnapshot-seconds 0\n"),
                       ("snap_seconds_nan", "time-col 2\nsnapshot-seconds nan\n"),
                       ("snap_huge", "time-col 2\nsnapshots 99999999999999999999\n"),
                       ("snap_col_beyond", "time-col 7\nsnapshot-seconds 160\n")]:
        d = os.path.join(fix, "bad", name)
        write(os.path.join(d, "edges.txt"), "".join("%d %d %d\n" % (r[0], r[1], r[3]) for r in rows))
        write(os.path.join(d, "snapshots.txt"), text)
    # -- forecasting on the tiny graph: signals.npy [T=40, N=12]
    sig = [math.sin(t * 0.4 + v) + 0.1 * v for t in range(40) for v in range(TINY_N)]
    d = os.path.join(fix, "fc")
    write(os.path.join(d, "edges.txt"), edges_text())
    write(os.path.join(d, "signals.npy"), npy_bytes((40, TINY_N), sig))
    write(os.path.join(fix, "signals.npy"), npy_bytes((40, TINY_N), sig))
    write(os.path.join(fix, "bad", "sig_narrow.npy"), npy_bytes((40, 8), sig[:320]))
    write(os.path.join(fix, "bad", "sig_short.npy"), npy_bytes((3, TINY_N), sig[:36]))
    write(os.path.join(fix, "bad", "sig_nan.npy"), npy_bytes((40, TINY_N), [float("nan")] + sig[1:]))
    write(os.path.join(fix, "bad", "sig_1d.npy"), npy_bytes((40,), sig[:40]))
    write(os.path.join(fix, "bad", "sig_trunc.npy"), npy_bytes((40, TINY_N), sig)[:-100])
    # -- OGB-style folders (graph/dataset.cpp: raw/{edge,node-feat,node-label,num-node-list}.csv,
    #    split/<name>/{train,valid,test}.csv, each optionally .gz)
    ogb_folder(fix, "ogb")
    ogb_folder(fix, "bad/ogb_count_huge", count="3000000000\n")
    ogb_folder(fix, "bad/ogb_count_zero", count="0\n")
    ogb_folder(fix, "bad/ogb_count_neg", count="-12\n")
    ogb_folder(fix, "bad/ogb_count_text", count="twelve\n")
    ogb_folder(fix, "bad/ogb_count_two", count="12\n12\n")
    ogb_folder(fix, "bad/ogb_count_small", count="10\n")
    ogb_folder(fix, "bad/ogb_count_empty", count="")
    ogb_folder(fix, "bad/ogb_labels_short", labels="".join("%d\n" % c for c in TINY_CLASS[:-1]))
    ogb_folder(fix, "bad/ogb_two_splits", splits=("a", "b"))
    ogb_folder(fix, "bad/ogb_no_valid")
    os.remove(os.path.join(fix, "bad/ogb_no_valid/split/time/valid.csv"))
    ogb_folder(fix, "bad/ogb_edge_oob", edges=edges_text(sep=",") + "3,50\n")
    ogb_folder(fix, "bad/ogb_feat_ragged")
    with open(os.path.join(fix, "bad/ogb_feat_ragged/raw/node-feat.csv"), "a") as f:
        f.write("1,2\n")
    # -- edge lists (family 2)
    el = os.path.join(fix, "el")
    write(os.path.join(el, "crlf.txt"), edges_text(eol="\r\n"))
    write(os.path.join(el, "cr_only.txt"), edges_text(eol="\r"))
    write(os.path.join(el, "tabs_commas.txt"), "".join("%d\t%d\n" % e if i % 2 else "%d,%d\n" % e for i, e in enumerate(TINY_EDGES)))
    write(os.path.join(el, "bom.txt"), "\ufeff" + edges_text())
    write(os.path.join(el, "header.csv"), "src,dst\n" + edges_text(sep=","))
    write(os.path.join(el, "comments_blank.txt"), "# c\n\n% d\n" + edges_text().replace("\n", "\n\n", 3))
    write(os.path.join(el, "plain.txt.gz"), gzip.compress(edges_text().encode()))
    write(os.path.join(el, "two_members.txt.gz"), gzip.compress(edges_text(TINY_EDGES[:10]).encode()) + gzip.compress(edges_text(TINY_EDGES[10:]).encode()))
    full = gzip.compress(edges_text().encode())
    write(os.path.join(el, "cut.txt.gz"), full[:len(full) - 12])
    write(os.path.join(el, "trailing_junk.txt.gz"), full + b"JUNKJUNK")
    write(os.path.join(el, "not_gzip.txt.gz"), edges_text())
    write(os.path.join(el, "empty.txt"), "")
    write(os.path.join(el, "comments_only.txt"), "# a\n% b\n")
    write(os.path.join(el, "header_only.csv"), "src,dst\n")
    write(os.path.join(el, "neg_ids.txt"), "0 1\n-3 2\n")
    write(os.path.join(el, "id_2p63.txt"), "0 1\n9223372036854775808 2\n")
    write(os.path.join(el, "id_2p64.txt"), "0 1\n18446744073709551616 2\n")
    write(os.path.join(el, "id_max.txt"), "0 1\n9223372036854775807 2\n")
    write(os.path.join(el, "float_ids.txt"), "0 1\n1.5 2\n")
    write(os.path.join(el, "exp_ids.txt"), "0 1\n1e3 2\n")
    write(os.path.join(el, "hex_ids.txt"), "0 1\n0x1f 2\n")
    write(os.path.join(el, "one_col.txt"), "0\n1\n2\n")
    write(os.path.join(el, "ragged.txt"), "0 1\n2\n3 4\n")
    write(os.path.join(el, "text_id.txt"), "0 1\nalice bob\n")
    write(os.path.join(el, "mid_header.txt"), "0 1\n1 2\nsrc dst\n2 3\n")
    write(os.path.join(el, "nul.txt"), b"0 1\n1 \x00 2\n2 3\n")
    write(os.path.join(el, "garbage.bin"), bytes((i * 197 + 11) % 256 for i in range(8192)))
    write(os.path.join(el, "w_nan.txt"), "0 1 1.0\n1 2 nan\n")
    write(os.path.join(el, "w_inf.txt"), "0 1 1.0\n1 2 inf\n")
    write(os.path.join(el, "w_text.txt"), "0 1 1.0\n1 2 heavy\n")
    write(os.path.join(el, "t_text.txt"), "0 1 1 10\n1 2 1 noon\n")
    write(os.path.join(el, "t_huge.txt"), "0 1 1 10\n1 2 1 1e300\n")
    write(os.path.join(el, "t_neg.txt"), "".join("%d %d %d %d\n" % (r[0], r[1], r[2], r[3] - 800) for r in rows))
    write(os.path.join(el, "t_same.txt"), "".join("%d %d %d 5\n" % (r[0], r[1], r[2]) for r in rows))
    write(os.path.join(el, "t_missing.txt"), "0 1 1 10\n1 2 1\n")
    write(os.path.join(el, "selfloops_only.txt"), "1 1\n2 2\n")
    # -- shipped datasets, copied
    for rel in ("cora", "bitcoin-alpha/soc-sign-bitcoinalpha.csv.gz",
                "collegemsg/CollegeMsg.txt.gz", "chickenpox/chickenpox.json.gz"):
        src = os.path.join(SHIPPED, rel)
        dst = os.path.join(fix, "shipped", rel)
        if os.path.isdir(src):
            shutil.copytree(src, dst)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
    # -- forecasting JSON damage
    pj = os.path.join(fix, "pj")
    cj = {"edges": [[s, d] for s, d in TINY_EDGES], "weights": [1.0] * len(TINY_EDGES),
          "FX": [[sig[t * TINY_N + v] for v in range(TINY_N)] for t in range(40)]}
    write(os.path.join(pj, "good.json"), json.dumps(cj))
    bad = json.loads(json.dumps(cj)); bad["FX"][17] = bad["FX"][17][:-1]
    write(os.path.join(pj, "ragged.json"), json.dumps(bad))
    bad = json.loads(json.dumps(cj)); bad["weights"] = bad["weights"][:-2]
    write(os.path.join(pj, "weights_short.json"), json.dumps(bad))
    bad = json.loads(json.dumps(cj)); bad["edges"][3] = [0, 99]
    write(os.path.join(pj, "edge_oob.json"), json.dumps(bad))
    bad = json.loads(json.dumps(cj)); del bad["FX"]
    write(os.path.join(pj, "no_signal.json"), json.dumps(bad))
    write(os.path.join(pj, "cut.json"), json.dumps(cj)[:500])
    bad = json.loads(json.dumps(cj)); bad["FX"][3][2] = "x"
    write(os.path.join(pj, "text_value.json"), json.dumps(bad))
    # -- a partition folder of the tiny graph (2 parts), made by dgnn itself
    r = subprocess.run([dgnn, "partition", "--graph", os.path.join(fix, "tiny"), "--parts", "2",
                        "--out", os.path.join(fix, "part2")], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        log("warning: fixture part2: dgnn partition exited %d: %s" % (
            r.returncode, r.stderr.decode(errors="replace").strip()))
    # -- checkpoints (family 5)
    build_checkpoints(fix, dgnn, env, log)


def manifest(root):
    """relative path -> sha256 (files), 'link:TARGET', 'dir' or 'special' (FIFOs...)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(p)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                try:
                    with open(p, "rb") as f:
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                    out[rel] = h.hexdigest()
                except OSError as e:
                    out[rel] = "unreadable:%s" % e.errno
            else:
                out[rel] = "special"
    return out


def manifest_diff(before, after, added_matters=False):
    changes = []
    for rel, h in sorted(before.items()):
        if rel not in after:
            changes.append("removed " + rel)
        elif after[rel] != h:
            changes.append("changed " + rel)
    if added_matters:
        changes += ["added " + rel for rel in sorted(set(after) - set(before))]
    return changes


# ---------------------------------------------------------------------------------------------
# Running and classifying


def is_mpi_noise(line):
    s = line.strip()
    return (not s or s.startswith(("mpirun", "mpiexec", "prterun", "Primary job",
                                   "a non-zero exit code", "Per user-direction"))
            or re.match(r"^\[[\w.-]+:\d+\] ", s) is not None
            or s.startswith("[warn] ")
            or re.match(r"^dgnn: stopped by SIGTERM( \[rank \d+\])? \(exit 143\)$", s) is not None)


def relevant_stderr_lines(stderr, mpi):
    lines = stderr.splitlines()
    if not mpi:
        return [l for l in lines if l.strip()]
    kept, inside = [], False
    for l in lines:
        if re.match(r"^\s*-{10,}\s*$", l):
            inside = not inside
            continue
        if inside or is_mpi_noise(l):
            continue
        kept.append(l)
    return kept


def expand(path, env):
    return re.sub(r"\$\{?(DS|SHIPPED|FIX|CASE)\}?", lambda m: env[m.group(1)], path)


def tmp_leftovers(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            if ".tmp." in name:
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return found


def kill_tree(pgid, cdir):
    """The case's process group, then any process still working in its folder (a rank that an
    MPI launcher put in a group of its own): all of them started by this case."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        if sig == signal.SIGTERM:
            time.sleep(1.0)
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue
        if cwd == cdir or cwd.startswith(cdir + os.sep):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


class Result:
    def __init__(self, case, cls, rc, stdout, stderr, seconds, detail=""):
        self.case, self.cls, self.rc = case, cls, rc
        self.stdout, self.stderr, self.seconds, self.detail = stdout, stderr, seconds, detail

    @property
    def passed(self):
        return self.cls == ("ok-error" if self.case.expect == "error" else "ok-valid")


def fixture_parts(command, fix):
    """The fixture entries a command names, as paths relative to the fixture root: each
    '$DS/<entry>' (for the big 'bad' folder, '$DS/bad/<entry>'). None: the whole fixture, when
    the command also reaches $DS another way ($DS alone, '$DS/' followed by nothing nameable, or
    the case folder's 'ds/' spelled out)."""
    if re.search(r"(?<![$\w{])ds/", command):
        return None
    parts = set()
    for m in re.finditer(r"\$(?:\{DS\}|DS|\{FIX\}|FIX)(?![\w])", command):
        rest = command[m.end():]
        first = re.match(r"/([^\s/'\"()<>|;&]+)", rest)
        if not first:
            return None
        entry = first.group(1)
        if entry == "bad":
            second = re.match(r"/bad/([^\s/'\"()<>|;&]+)", rest)
            if not second:
                return None
            entry = "bad/" + second.group(1)
        if os.path.lexists(os.path.join(fix, entry)):
            parts.add(entry)
    return sorted(parts)


def copy_fixtures(fix, ds, parts):
    if parts is None:
        shutil.copytree(fix, ds, symlinks=True)
        return
    os.makedirs(ds)
    for entry in parts:
        src, dst = os.path.join(fix, entry), os.path.join(ds, entry)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)


def run_case(case, ctx):
    cdir = os.path.join(ctx.cases_root, case.id)
    os.makedirs(cdir)
    ds = os.path.join(cdir, "ds")
    # The case's own copy of the fixtures it names (all of them when it is not clear which).
    parts = fixture_parts(case.command, ctx.fix)
    copy_fixtures(ctx.fix, ds, parts)
    shutil.copytree(ctx.home, os.path.join(cdir, "home"), symlinks=True)
    os.makedirs(os.path.join(cdir, "cache"))
    os.makedirs(os.path.join(cdir, "tmp"))
    before = manifest(ds)
    expected = ctx.fix_manifest if parts is None else {
        rel: h for rel, h in ctx.fix_manifest.items()
        if any(rel == p or rel.startswith(p + os.sep) or p.startswith(rel + os.sep) for p in parts)}
    if before != expected:
        return Result(case, "destroyed", None, "", "", 0.0, "fixture copy differs from the master")
    env = dict(ctx.base_env)
    env.update(DGNN=ctx.dgnn, DS=ds, FIX=ds, SHIPPED=SHIPPED, CASE=cdir,
               HOME=os.path.join(cdir, "home"), DGNN_CACHE_DIR=os.path.join(cdir, "cache"),
               TMPDIR=os.path.join(cdir, "tmp"))
    out_path, err_path = cdir + ".stdout", cdir + ".stderr"
    limit = ctx.mem_limit_kb
    wrapper = ("ulimit -v %d 2>/dev/null; " % limit if limit else "") + 'exec bash -c "$1"'
    timeout = case.timeout or ctx.timeout
    t0 = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(["bash", "-c", wrapper, "hostile", case.command], cwd=cdir, env=env,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_tree(p.pid, cdir)
            rc = p.wait()
    seconds = time.monotonic() - t0
    if not timed_out:  # background helpers the command left (a FIFO writer, ...)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    stdout = open(out_path, "rb").read().decode("utf-8", errors="replace")
    stderr = open(err_path, "rb").read().decode("utf-8", errors="replace")
    after = manifest(ds)
    destroyed = manifest_diff(before, after)
    mpi = bool(MPI_RE.search(case.command))

    leftovers = [a for a in case.absent if os.path.lexists(os.path.join(cdir, expand(a, env)))]
    leftovers += [t for t in tmp_leftovers(cdir)]

    def result(cls, detail=""):
        return Result(case, cls, rc, stdout, stderr, seconds, detail)

    if destroyed:
        return result("destroyed", "; ".join(destroyed[:4]))
    if timed_out:
        return result("hang", "no exit after %g s" % timeout)
    markers = [m for m in CRASH_MARKERS if m in stdout or m in stderr]
    if rc < 0 or rc >= 128 or markers:
        return result("crash", "exit %d%s" % (rc, (", " + ", ".join(markers)) if markers else ""))
    if case.expect == "error":
        if rc == 0:
            return result("silent", "exit 0")
        if leftovers:
            return result("leftover", "left " + ", ".join(leftovers[:4]))
        lines = relevant_stderr_lines(stderr, mpi)
        if not lines:
            return result("unclear", "exit %d, nothing on stderr" % rc)
        if mpi:
            bad = [l for l in lines if not l.startswith("dgnn: error:")]
        else:
            bad = [] if len(lines) == 1 and lines[0].startswith("dgnn: error:") else lines
        if bad:
            return result("unclear", "exit %d, %d stderr line(s), not one 'dgnn: error:' line" % (rc, len(lines)))
        if case.regex and not all(case.regex.search(l) for l in lines):
            return result("unclear", "exit %d, error line does not match /%s/" % (rc, case.regex.pattern))
        return result("ok-error")
    if rc != 0:
        return result("wrong", "exit %d" % rc)
    if case.regex and not case.regex.search(stdout):
        return result("wrong", "stdout does not match /%s/" % case.regex.pattern)
    if leftovers:
        return result("leftover", "left " + ", ".join(leftovers[:4]))
    return result("ok-valid")


class Ctx:
    pass


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def main():
    ap = argparse.ArgumentParser(description="Hostile-input battery for the dgnn command line.")
    ap.add_argument("dgnn", help="the dgnn binary")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--filter", default="", help="run only cases whose id contains SUBSTR")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    ap.add_argument("--mem-limit-gb", type=float, default=8.0,
                    help="address-space limit of each case, GiB (default 8; 0 = none)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--verbose", action="store_true", help="print every case's result")
    ap.add_argument("--cases", action="append", metavar="FILE",
                    help="case table(s) to run instead of tests/cli/hostile_cases*.txt")
    args = ap.parse_args()

    tables = [os.path.abspath(t) for t in args.cases] if args.cases else sorted(
        os.path.join(HERE, f) for f in os.listdir(HERE)
        if f.startswith("hostile_cases") and f.endswith(".txt"))
    cases, errors = load_cases(tables)
    if errors:
        for e in errors:
            print("hostile battery: " + e)
        return 2
    if args.filter:
        cases = [c for c in cases if args.filter in c.id]
    skipped = []
    if not (shutil.which("mpirun") or shutil.which("mpiexec")):
        skipped = [c for c in cases if MPI_RE.search(c.command)]
        cases = [c for c in cases if not MPI_RE.search(c.command)]
    if args.list:
        for c in cases:
            print("%s | %s | %s" % (c.id, c.expect, c.command))
        print("%d cases" % len(cases))
        return 0
    dgnn = os.path.abspath(args.dgnn)
    if not os.access(dgnn, os.X_OK):
        print("hostile battery: %s is not an executable" % dgnn)
        return 2

    def binary_id():
        st = os.stat(dgnn)
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    binary_before = binary_id()
    t_start = time.monotonic()
    root = tempfile.mkdtemp(prefix="dgnn-hostile-", dir=os.environ.get("TMPDIR") or None)
    ctx = Ctx()
    ctx.dgnn = dgnn
    ctx.timeout = args.timeout
    ctx.keep = args.keep
    ctx.mem_limit_kb = int(args.mem_limit_gb * 1024 * 1024) if args.mem_limit_gb > 0 else 0
    ctx.fix = os.path.join(root, "fixtures")
    ctx.home = os.path.join(root, "home")
    ctx.cases_root = os.path.join(root, "cases")
    os.makedirs(ctx.cases_root)
    os.makedirs(os.path.join(ctx.home, ".cache", "dgnn"))
    base_env = dict(os.environ)
    for k in list(base_env):
        if k.startswith(("DGNN_", "OMPI_", "PMIX_", "OMP_")):
            del base_env[k]
    base_env.update(DGNN_FIFO_WAIT="3", OMP_NUM_THREADS="1", LC_ALL="C",
                    OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    DGNN_CACHE_DIR=os.path.join(root, "fixture-cache"), HOME=ctx.home)
    ctx.base_env = base_env

    def log(msg):
        print(msg, flush=True)

    shipped_before = manifest(SHIPPED)
    try:
        build_fixtures(ctx.fix, dgnn, base_env, log)
        # dgnn plan's calibration, made once; every case's $HOME gets a copy.
        subprocess.run([dgnn, "plan", "--graph", os.path.join(ctx.fix, "tiny"), "--ranks", "1"],
                       cwd=root, env=base_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
    except Exception as e:  # the battery itself cannot run
        print("hostile battery: building the fixtures failed: %r" % (e,))
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        return 2
    ctx.fix_manifest = manifest(ctx.fix)
    t_fix = time.monotonic() - t_start

    parallel = [c for c in cases if not c.serial]
    serial = [c for c in cases if c.serial]
    results = {}
    lock = threading.Lock()
    done = [0]

    def one(c):
        try:
            r = run_case(c, ctx)
        except Exception as e:  # a bug of the battery: report it as the case's failure
            r = Result(c, "wrong", None, "", "", 0.0, "battery error: %r" % (e,))
        if not ctx.keep:  # bound the scratch space: each case folder holds a fixture copy
            cdir = os.path.join(ctx.cases_root, c.id)
            shutil.rmtree(cdir, ignore_errors=True)
            for ext in (".stdout", ".stderr"):
                try:
                    os.remove(cdir + ext)
                except OSError:
                    pass
        with lock:
            results[c.id] = r
            done[0] += 1
            if args.verbose:
                print("[%d/%d] %-40s %-9s %5.1fs %s | %s" % (
                    done[0], len(cases), c.id, r.cls, r.seconds, r.detail,
                    (last_line(r.stderr) or last_line(r.stdout))[:200]), flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(one, parallel))
    for c in serial:
        one(c)
    shipped_after = manifest(SHIPPED)
    shipped_changes = manifest_diff(shipped_before, shipped_after, added_matters=True)

    counts = {k: 0 for k in CLASSES}
    failed = []
    for c in cases:
        r = results[c.id]
        counts[r.cls] += 1
        if not r.passed:
            failed.append(r)
    for r in failed:
        last = last_line(r.stderr)
        if not last:
            last = "(no stderr; stdout: %s)" % (last_line(r.stdout)[:160] or "none")
        print("FAIL %s [%s] (%s; %s) $ %s  =>  %s" % (
            r.case.id, r.cls, r.case.where, r.detail, r.case.command, last[:300]))
    if shipped_changes:
        print("FAIL shipped datasets changed: " + "; ".join(shipped_changes[:10]))
    try:
        if binary_id() != binary_before:
            print("warning: %s changed during the run (rebuilt?): the results may mix two builds"
                  % dgnn)
    except OSError:
        print("warning: %s vanished during the run (rebuilt?)" % dgnn)
    if skipped:
        print("note: %d MPI case(s) skipped: no mpirun or mpiexec on PATH" % len(skipped))
    print("hostile battery: %d cases: %s" % (len(cases), ", ".join(
        "%d %s" % (counts[k], k) for k in CLASSES)))
    print("(fixtures %.1f s, total %.1f s, scratch %s%s)" % (
        t_fix, time.monotonic() - t_start, root, "" if args.keep else ", removed"))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    print("%d passed, %d failed" % (len(cases) - len(failed), len(failed)))
    return 0 if not failed and not shipped_changes else 1


if __name__ == "__main__":
    sys.exit(main())
