#!/usr/bin/env bash
# Checks bench/rucksdb.sh end to end at a tiny size (part of `npm test`, a few seconds once the
# harnesses are built): every workload on LevelDB, RocksDB and Strata (the build `cargo test`
# left in target/debug, or STRATA_BIN), one round, the report's tables, JSON and chart; and that
# a workload whose check fails stops the run. The figures themselves are not checked (too small
# to mean anything).
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d "${TMPDIR:-/tmp}/strata-rucksdb.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "bench/test-rucksdb: FAIL: $*" >&2; exit 1; }
BIN=${STRATA_BIN:-target/debug/strata}
[ -x "$BIN" ] || cargo build --quiet --bin strata

STRATA_RESULTS_DIR=$T bash bench/rucksdb.sh --num=2000 --rounds=1 --strata="$BIN" >"$T/out" 2>"$T/err" ||
  fail "the run failed: $(tail -5 "$T/err")"
BASE=$T/rucksdb-$(date -u +%F)
python3 - "$BASE" <<'PY' || fail "the report (see above)"
import json, os, sys
base = sys.argv[1]
md = open(base + ".md").read()
r = json.load(open(base + ".json"))
engines = ["leveldb", "strata", "rocksdb"]
want = ["put_100b", "put_1kb", "put_10kb", "get_memtable", "get_sstable", "get_not_found", "delete",
        "read_write_50_50"] + [f"concurrent_writes x{t}" for t in (1, 2, 4, 8)]
got = {w["workload"]: w for g in r["groups"] for w in g["workloads"]}
assert list(got) == want, list(got)
for name, w in got.items():
    for e in engines:
        assert w[e]["ops_per_s"] and w[e]["ops_per_s"] > 0, (name, e)
    assert w["rucksdb_ops_per_s"], name           # RucksDB's published figure for every row
    row = next(l for l in md.splitlines() if l.startswith(f"| {name} |"))
    assert row.count("|") == 9 and " - |" not in row, row   # 3 systems and 2 ratios filled
assert got["get_not_found"]["rucksdb_ops_per_s"] == 4_908_700
rows = r["latency"]["rows"]
for e in engines:
    assert rows[e]["flushes"] >= 1 and rows[e]["busy_ops"] >= 1, (e, rows[e])
    assert rows[e]["latency"]["ops"] == 4096, rows[e]
    lat = rows[e]["latency"]
    assert lat["p50_us"] <= lat["p99_us"] <= lat["p999_us"] <= lat["max_us"], lat
for title in ("## Puts (ops/s)", "## Gets (ops/s)", "## Concurrent writers (total ops/s)",
              "## Write latency while memtable flushes run (µs)", "| flushes completed during the puts |"):
    assert title in md, title
try:
    import matplotlib  # noqa: F401
    assert os.path.getsize(base + ".svg") > 0 and os.path.getsize(base + ".png") > 0
except ImportError:
    pass
PY

# A failed check fails the run: get_memtable's 1,000 keys of 1 KB cannot stay in a 100 KB
# memtable, on every engine.
for e in leveldb rocksdb strata; do
  if [ "$e" = strata ]; then cmd=("$BIN" bench); else cmd=(target/bench/"${e}"_bench); fi
  set +e
  "${cmd[@]}" --benchmarks=get_memtable --num=2000 --write_buffer_size=100000 --db="$T/$e" >/dev/null 2>"$T/$e.err"
  status=$?
  set -e
  [ "$status" = 1 ] || fail "$e: a failed check exited with $status, not 1"
  grep -q "get_memtable: check failed: a table was written" "$T/$e.err" || fail "$e: $(cat "$T/$e.err")"
done
echo "bench/test-rucksdb: ok (12 workloads and the latency table on LevelDB, RocksDB and Strata; failed checks fail)"
