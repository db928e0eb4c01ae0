# Sourced by the benchmark scripts: where a run writes its reports.
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
