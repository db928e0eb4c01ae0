#!/usr/bin/env bash
# The map at any size (issue 18), one run: a 160,000-chunk world (`strata gen-world`, 400 × 400
# chunks, kept in ~/.cache/strata/map-400), drawn by the native CLI (`strata world map`, one
# call per layer) and by the viewer in headless Chromium from the picked folder
# (bench/map-browser.mjs: first picture, map drawn, page ready, a close-up screen of block
# tiles at three places, memory; times and memory from separate runs, the memory sampler
# taking a share of a core). Report:
# $RESULTS_DIR/map-<UTC date>.md (target/bench-results/ unless STRATA_BENCH_SAVE=1).
#
#   npm run bench:map            (or: bash bench/map.sh [WORLD_DIR])
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/results_dir.sh
cargo build --release --bin strata >/dev/null
cli=target/release/strata
world=${1:-$HOME/.cache/strata/map-400}
if [[ ! -f $world/level.dat ]]; then
  echo "== generating $world (400 × 400 chunks)"
  rm -rf "$world"
  "$cli" gen-world "$world" --chunks-x 400 --chunks-z 400 --seed 7
fi
day=$(date -u +%F)
report=$(result_base map).md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo "# The map at any size, $day"
  echo
  echo "World: \`$world\` ($("$cli" world chunks "$world") chunks in the Overworld, $(du -sh "$world/db" | cut -f1) on disk). Machine: $(nproc) cores, $(uname -m)."
  echo
  echo "## Native CLI, one \`strata world map\` call per layer (4 pixels per chunk)"
  echo
  echo "| layer | seconds | peak RSS (MiB) |"
  echo "|---|---:|---:|"
} >"$report"
for layer in relief surface height biome; do
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$cli" world map "$world" --out "$tmp/$layer.png" --layer "$layer" --scale 4 >/dev/null
  read -r secs kb <"$tmp/time"
  echo "| $layer | $secs | $((kb / 1024)) |" >>"$report"
done
{
  echo
  echo "## The viewer in Chromium (picked folder), milliseconds from the open's start"
  echo
  echo "Each row is two runs: the times from one without the memory sampler (it reads every Chromium process's smaps_rollup, about 24 ms a sample: a quarter of one of the two cores at 10 samples a second), the memory from one with it (its first picture in the last column)."
  echo
  echo "| layer | map helpers | world open | chunk index | first picture | map drawn | page ready | bands | close-up screen (slowest of 3) | then the surface layer | chunk index pass: ranges, by helpers | PSS page + workers at ready, peak (MiB) | PSS all processes at ready, peak (MiB) | first picture with the sampler |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} >>"$report"
for run in "relief 0" "relief 1"; do
  read -r layer helpers <<<"$run"
  node bench/map-browser.mjs "$world" --layer "$layer" --helpers "$helpers" --switch-layer surface --sample-ms 0 --json "$tmp/times.json" | tail -3
  node bench/map-browser.mjs "$world" --layer "$layer" --helpers "$helpers" --switch-layer surface --sample-ms 100 --json "$tmp/memory.json" | tail -3
  node -e '
    const fs = require("fs");
    const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const m = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
    const t = r.times, mib = (n) => (n / 2 ** 20).toFixed(0);
    const pass = r.pass ? `${r.pass.ranges}, ${r.pass.byHelpers}` : "whole";
    console.log(`| ${r.layer} | ${r.switched.helpers.helpers} | ${t.opened} | ${t.chunkIndex} | ${t.firstPicture} | ${t.mapDrawn} | ${t.ready} | ${r.bands} | ${Math.max(...r.closeUp.map((c) => c.ms))} | ${r.switched.ms} | ${pass} | ${mib(m.pss.peakAtReady.renderer)}, ${mib(m.pss.peak.renderer)} | ${mib(m.pss.peakAtReady.all)}, ${mib(m.pss.peak.all)} | ${m.times.firstPicture} |`);
  ' "$tmp/times.json" "$tmp/memory.json" >>"$report"
  browser=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).browser)' "$tmp/times.json")
done
echo >>"$report"
echo "Browser: $browser. One run each; absolute times on a shared machine are noise, compare within the run." >>"$report"
echo "== $report"
cat "$report"
