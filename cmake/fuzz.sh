#!/usr/bin/env bash
# The fuzzing run (docs/testing.md, "Fuzzing"): configures a clang build with coverage-
# instrumented libraries (PULSE_FUZZ=ON) under ASan+UBSan, builds every libFuzzer target of
# tests/fuzz, and runs each one after the other for a fixed number of executions, starting
# from its committed corpus. Prints executions, time and executions per second per target and
# a summary; exits non-zero when any target crashed, leaked, broke an invariant or raised a
# sanitizer report (the reproducer is left in <build>/fuzz-out/<target>/artifacts/).
# Environment knobs (all optional):
#   PULSE_FUZZ_RUNS      executions per target           (default: 1000000)
#   PULSE_FUZZ_TARGETS   space-separated target names    (default: all)
#   PULSE_FUZZ_BUILD_DIR build directory                 (default: build/fuzz)
#   PULSE_FUZZ_MAX_LEN   libFuzzer -max_len              (default: 4096)
#   PULSE_FUZZ_JOBS      build parallelism               (default: nproc)
#   PULSE_FUZZ_SEED      libFuzzer -seed; 0 picks one    (default: 1)
#   PULSE_FUZZ_SKIP_BUILD=1  reuse the build as it is
#   PULSE_FUZZ_MERGE=1   after a clean run, add the inputs of the run's scratch corpus that
#                        reach coverage the committed corpus does not (libFuzzer
#                        -set_cover_merge=1) to tests/fuzz/corpus/<target>/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_FUZZ_BUILD_DIR:-$root/build/fuzz}
runs=${PULSE_FUZZ_RUNS:-1000000}
max_len=${PULSE_FUZZ_MAX_LEN:-4096}
jobs=${PULSE_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
seed=${PULSE_FUZZ_SEED:-1}
all_targets="exec_classifier tool_arguments openai_stream ollama_stream anthropic_stream
gemini_stream mcp_message http_body secret_redactor"
targets=${PULSE_FUZZ_TARGETS:-$all_targets}

if [ "${PULSE_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  # Optimised a little (-O1) with assertions kept (no NDEBUG): RapidJSON's asserts catch misuse.
  CXX=${CXX:-clang++} cmake -S "$root" -B "$build_dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    -DPULSE_WERROR=ON -DPULSE_BUILD_TESTS=ON -DPULSE_SANITIZE=address,undefined -DPULSE_FUZZ=ON
  build_targets=()
  for t in $targets; do build_targets+=("${t}_fuzz"); done
  cmake --build "$build_dir" -j "$jobs" --target "${build_targets[@]}"
fi

if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

out_root=$build_dir/fuzz-out
summary=()
failed=0
for t in $targets; do
  bin=$build_dir/tests/fuzz/${t}_fuzz
  out=$out_root/$t
  rm -rf "$out"
  mkdir -p "$out/corpus" "$out/artifacts"
  args=(-runs="$runs" -seed="$seed" -max_len="$max_len" -rss_limit_mb=2048 -timeout=30
        -print_final_stats=1 -artifact_prefix="$out/artifacts/")
  if [ -f "$root/tests/fuzz/dict/$t.dict" ]; then
    args+=(-dict="$root/tests/fuzz/dict/$t.dict")
  fi
  echo "=== fuzz: $t ($runs executions) ==="
  start=$(date +%s.%N)
  status=0
  # New inputs go to the scratch corpus (first dir); the committed corpus is only read.
  "$bin" "${args[@]}" "$out/corpus" "$root/tests/fuzz/corpus/$t" >"$out/log" 2>&1 || status=$?
  end=$(date +%s.%N)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -1)
  execs=${execs:-0}
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  rate=$(awk -v n="$execs" -v s="$secs" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }')
  cov=$(grep -o 'cov: [0-9]*' "$out/log" | tail -1 | cut -d' ' -f2)
  result=ok
  if [ "$status" -ne 0 ] || [ -n "$(ls -A "$out/artifacts")" ]; then
    result="FAILED (exit $status; see $out/log and $out/artifacts/)"
    failed=1
    tail -n 40 "$out/log"
  fi
  line=$(printf '%-17s %9s execs %8ss %7s exec/s  cov %-6s %s' "$t" "$execs" "$secs" "$rate" \
    "${cov:-?}" "$result")
  if [ "$result" = ok ] && [ "${PULSE_FUZZ_MERGE:-0}" = 1 ]; then
    corpus=$root/tests/fuzz/corpus/$t
    before=$(find "$corpus" -type f | wc -l)
    "$bin" -set_cover_merge=1 -max_len="$max_len" -rss_limit_mb=2048 "$corpus" "$out/corpus" \
      >"$out/merge.log" 2>&1 || { echo "merge of $t failed, see $out/merge.log"; failed=1; }
    line="$line  +$(( $(find "$corpus" -type f | wc -l) - before )) corpus files"
  fi
  echo "$line"
  summary+=("$line")
done

echo "=== fuzz summary (runs=$runs, seed=$seed, max_len=$max_len) ==="
printf '%s\n' "${summary[@]}"
exit "$failed"
