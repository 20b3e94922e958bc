#!/usr/bin/env bash
# One fuzz smoke (a ctest, label `fuzz`): replays the committed corpus, then fuzzes a fixed
# number of runs with a fixed seed. New inputs go to a scratch corpus in the build tree, never
# into tests/fuzz/corpus. Usage: smoke.sh FUZZER SCRATCH_DIR CORPUS_DIR RUNS MAX_LEN [DICT]
set -euo pipefail
fuzzer=$1 scratch=$2 corpus=$3 runs=$4 max_len=$5 dict=${6:-}
rm -rf "$scratch"
mkdir -p "$scratch/corpus" "$scratch/artifacts"
args=(-runs="$runs" -seed=1 -max_len="$max_len" -rss_limit_mb=2048 -timeout=30
      -print_final_stats=1 -artifact_prefix="$scratch/artifacts/")
if [ -n "$dict" ]; then
  args+=(-dict="$dict")
fi
exec "$fuzzer" "${args[@]}" "$scratch/corpus" "$corpus"
