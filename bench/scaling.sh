#!/usr/bin/env bash
# Scaling: fillrandom, then compact, then 1,000,000 random reads, at 10x-spaced sizes (default
# 1 M, 10 M and 40 M entries of 16-byte keys and 100-byte values: ~116 MB, ~1.2 GB and
# ~4.6 GB of raw data), Strata (`strata bench`) and Google's LevelDB (bench/leveldb_bench.cc,
# built by bench/db_bench.sh) in one run; on-disk footprint after the compaction. Shows whether
# throughput holds as data grows. Writes bench/results/scaling-<date>[-N].{json,md}.
#
#   bash bench/scaling.sh [N ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/platform.sh
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(1000000 10000000 40000000)
OUT=target/bench
mkdir -p "$OUT"
if [ ! -x "$OUT/leveldb_bench" ]; then
  bash bench/db_bench.sh --num=1000 >/dev/null
fi
cargo build --release --quiet --bin strata
COMMON=(--value_size=100 --compression_ratio=0.5 --compression=snappy --json)
ROOT=$(mktemp -d /tmp/strata-scaling.XXXX)
trap 'rm -rf "$ROOT"' EXIT
JSONL=$OUT/scaling.jsonl
: >"$JSONL"

for n in "${SIZES[@]}"; do
  for engine in leveldb strata; do
    db=$ROOT/$engine-$n
    if [ "$engine" = strata ]; then bin=(target/release/strata bench); else bin=("$OUT/leveldb_bench"); fi
    echo "[scaling] $engine, $n entries" >&2
    "${bin[@]}" --benchmarks=fillrandom,compact --num="$n" --db="$db" "${COMMON[@]}" |
      sed "s/^{/{\"engine\":\"$engine\",\"n\":$n,/" >>"$JSONL"
    "${bin[@]}" --benchmarks=readrandom --use_existing_db=1 --num="$n" --reads=1000000 --db="$db" "${COMMON[@]}" |
      sed "s/^{/{\"engine\":\"$engine\",\"n\":$n,/" >>"$JSONL"
    bytes=$(bench_bytes "$db")
    echo "{\"engine\":\"$engine\",\"n\":$n,\"benchmark\":\"footprint\",\"bytes\":$bytes}" >>"$JSONL"
    rm -rf "$db"
  done
done

source bench/results_dir.sh
python3 - "$JSONL" "$(result_base scaling)" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base = sys.argv[2]
sizes = sorted({r["n"] for r in rows})
def get(engine, n, bench):
    for r in rows:
        if r["engine"] == engine and r["n"] == n and r["benchmark"] == bench:
            return r
lines = ["Scaling: fillrandom, compact, 1,000,000 readrandom; 16-byte keys, 100-byte values (ratio 0.5), Snappy; one run",
         "", "| entries | workload | LevelDB 1.23 | Strata | LevelDB/Strata |", "|---:|---|---:|---:|---:|"]
out = []
for n in sizes:
    for bench, unit in (("fillrandom", "us/op"), ("compact", "s"), ("readrandom", "us/op"), ("footprint", "MB")):
        l, s = get("leveldb", n, bench), get("strata", n, bench)
        if not (l and s):
            continue
        if bench == "footprint":
            lv, sv = l["bytes"] / 1e6, s["bytes"] / 1e6
        elif bench == "compact":
            lv, sv = l["micros_per_op"] / 1e6, s["micros_per_op"] / 1e6
        else:
            lv, sv = l["micros_per_op"], s["micros_per_op"]
        ratio = lv / sv if sv else None
        lines.append(f"| {n:,} | {bench} ({unit}) | {lv:.3f} | {sv:.3f} | {ratio:.2f} |")
        out.append({"entries": n, "workload": bench, "unit": unit, "leveldb": lv, "strata": sv, "ratio_leveldb_over_strata": ratio})
text = "\n".join(lines)
print(text)
open(base + ".md", "w").write(text + "\n")
json.dump({"rows": out}, open(base + ".json", "w"), indent=1)
PY
