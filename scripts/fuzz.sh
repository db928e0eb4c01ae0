#!/usr/bin/env bash
# Long fuzzing run (not in CI; CI replays the corpus and its mutations in tests/fuzz_replay.rs):
# seeds fuzz/corpus/<target> from the real worlds (the replay test writes them), then runs
# every cargo-fuzz target for SECONDS each (default 120) and prints executions and findings.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs the nightly toolchain; installs cargo-fuzz when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
shift || true
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(block table log version_edit decompress nbt mcworld)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

corpus=$PWD/fuzz/corpus
if [[ ! -d $corpus/block ]]; then
  echo "== seed corpus from ../shared/worlds"
  STRATA_FUZZ_CORPUS_OUT=$corpus cargo test --release --test fuzz_replay -- --nocapture >/dev/null
fi
cargo +nightly fuzz build -O >/dev/null

summary=()
for t in "${targets[@]}"; do
  log=fuzz/artifacts/$t.log
  mkdir -p fuzz/artifacts/"$t"
  echo "== $t: ${seconds}s"
  set +e
  cargo +nightly fuzz run -O "$t" "$corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=2048 \
    -timeout=10 -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  crashes=$(find fuzz/artifacts/"$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' -o -name 'leak-*' \) | wc -l)
  summary+=("$t: $execs executions, coverage $cov, findings $crashes, exit $rc")
done
echo "== summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
