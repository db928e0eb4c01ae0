#!/usr/bin/env bash
# db_bench workloads, Strata (`strata bench`) against Google's LevelDB (Debian libleveldb-dev
# through bench/leveldb_bench.cc, a harness with the same workloads, keys, values and seeds),
# in one run on this machine. Prints a table of micros/op and the ratio LevelDB/Strata per
# workload (> 1: Strata is faster) and writes bench/results/db_bench-<date>.{json,md}.
#
# usage: bash bench/db_bench.sh [--num=N] [--no-build]
set -euo pipefail
cd "$(dirname "$0")/.."

NUM=1000000
BUILD=1
for a in "$@"; do
  case "$a" in
    --num=*) NUM=${a#--num=} ;;
    --no-build) BUILD=0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

# Google LevelDB from Debian (idempotent).
if ! dpkg -s libleveldb-dev >/dev/null 2>&1 || ! dpkg -s libsnappy-dev >/dev/null 2>&1; then
  echo "[db_bench] installing libleveldb-dev libsnappy-dev"
  apt-get install -y -q libleveldb-dev libsnappy-dev >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null && apt-get install -y -q libleveldb-dev libsnappy-dev >/dev/null; }
fi
OUT=target/bench
mkdir -p "$OUT" bench/results
if [ ! -x "$OUT/leveldb_bench" ] || [ bench/leveldb_bench.cc -nt "$OUT/leveldb_bench" ]; then
  g++ -O2 -std=c++17 bench/leveldb_bench.cc -lleveldb -lsnappy -lpthread -o "$OUT/leveldb_bench"
fi
if [ "$BUILD" = 1 ]; then cargo build --release --quiet; fi

WORKLOADS="fillseq,fillsync,fillrandom,overwrite,readrandom,readseq,readreverse,readmissing,readhot,seekrandom,compact,readrandom,readseq,readreverse,fill100K,fillbatch,deleteseq,fillrandom,deleterandom,bulkload_seq,readseq,bulkload_random,mixed"
COMMON=(--num="$NUM" --value_size=100 --compression_ratio=0.5 --compression=snappy --json)
STRATA_DB=$(mktemp -d /tmp/strata-dbbench.XXXX)
LEVELDB_DB=$(mktemp -d /tmp/leveldb-dbbench.XXXX)
trap 'rm -rf "$STRATA_DB" "$LEVELDB_DB"' EXIT

run() { # engine benchmarks extra-args...
  local engine=$1 list=$2; shift 2
  if [ "$engine" = strata ]; then
    target/release/strata bench --benchmarks="$list" --db="$STRATA_DB/db" "${COMMON[@]}" "$@"
  else
    "$OUT/leveldb_bench" --benchmarks="$list" --db="$LEVELDB_DB/db" "${COMMON[@]}" "$@"
  fi
}

{
  for engine in leveldb strata; do
    run "$engine" "$WORKLOADS" | sed "s/^{/{\"engine\":\"$engine\",/"
    for t in 1 2 4 8; do
      run "$engine" fillrandom --threads="$t" --num=$((NUM / t)) | sed "s/^{/{\"engine\":\"$engine\",\"scaling\":true,/"
    done
  done
} > "$OUT/db_bench.jsonl"

DATE=$(date -u +%Y-%m-%d)
python3 - "$OUT/db_bench.jsonl" "bench/results/db_bench-$DATE" "$NUM" <<'PY'
import json, sys, platform, subprocess
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base, num = sys.argv[2], int(sys.argv[3])
def pick(engine, scaling):
    out, seen = [], {}
    for r in rows:
        if r["engine"] == engine and bool(r.get("scaling")) == scaling:
            n = seen.get(r["benchmark"], 0); seen[r["benchmark"]] = n + 1
            key = r["benchmark"] if n == 0 else f'{r["benchmark"]} ({n + 1})'
            if scaling: key = f'fillrandom x{r["threads"]} threads'
            out.append((key, r))
    return out
lines = [f"db_bench workloads, {num:,} entries, 16-byte keys, 100-byte values (ratio 0.5), Snappy; one run",
         "", "| workload | LevelDB 1.23 micros/op | Strata micros/op | LevelDB/Strata |", "|---|---:|---:|---:|"]
result = {"num": num, "machine": {"cpus": __import__("os").cpu_count(), "arch": platform.machine()}, "workloads": []}
for scaling in (False, True):
    l, s = dict(pick("leveldb", scaling)), dict(pick("strata", scaling))
    for k, sr in pick("strata", scaling):
        lr = l.get(k)
        ratio = lr["micros_per_op"] / sr["micros_per_op"] if lr and sr["micros_per_op"] > 0 else None
        lines.append(f'| {k} | {lr["micros_per_op"]:.3f} | {sr["micros_per_op"]:.3f} | {ratio:.2f} |' if lr else f"| {k} | - | {sr['micros_per_op']:.3f} | - |")
        result["workloads"].append({"workload": k, "leveldb": lr, "strata": sr, "ratio_leveldb_over_strata": ratio})
text = "\n".join(lines)
print(text)
open(base + ".md", "w").write(text + "\n")
json.dump(result, open(base + ".json", "w"), indent=1)
PY
