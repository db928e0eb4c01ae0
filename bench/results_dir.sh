# Sourced by the benchmark scripts: where a run writes its reports (NAME-<date>[-N], see
# result_base).
#   default:             target/bench-results/ (ignored by git: running a benchmark, or
#                        `npm start`, leaves the checkout clean)
#   STRATA_BENCH_SAVE=1: bench/results/, the reference results kept in the repository
#                        (`npm run bench:save`, on purpose only)
if [ "${STRATA_BENCH_SAVE:-0}" = 1 ]; then
  RESULTS_DIR=bench/results
else
  RESULTS_DIR=${STRATA_RESULTS_DIR:-target/bench-results}
fi
mkdir -p "$RESULTS_DIR"
export RESULTS_DIR

# result_base NAME: where today's report NAME goes, without its extension: NAME-<date>, or,
# when saving to bench/results and a report of that name is already there, NAME-<date>-2,
# -3, ...: a second saved run on one day never overwrites the first (its .md/.json, the
# reports of every script here, are what is checked).
result_base() {
  local base="$RESULTS_DIR/$1-$(date -u +%F)" candidate n=2
  candidate=$base
  if [ "${STRATA_BENCH_SAVE:-0}" = 1 ]; then
    while [ -e "$candidate.md" ] || [ -e "$candidate.json" ]; do
      candidate="$base-$n"
      n=$((n + 1))
    done
  fi
  echo "$candidate"
}
