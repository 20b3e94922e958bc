#!/usr/bin/env bash
# Builds the benchmarks in Release and runs each of them, printing their reports. Benchmarks
# measure against baselines taken in the same run and never fail on timings (tests/bench/).
# Usage: cmake/bench.sh [google-benchmark flags...], e.g. --benchmark_filter=Finding
# Environment knobs (all optional):
#   PULSE_BENCH_BUILD_DIR  build directory                    (default: build/bench)
#   PULSE_BENCH_DIR        where benchmarks put their files   (default: /tmp; use the data disk
#                          to measure the disk pulse-server will really write to)
#   PULSE_BENCH_HTTP       0 skips the HTTP load benchmark (cmake/bench-http.sh, wrk against
#                          the real pulse-server and nginx; about 90 s), which runs last
#   PULSE_BENCH_LOAD       0 skips bench_chat_load (100 concurrent chat sessions through the
#                          real pulse-server and the fake provider; a plain program that
#                          ignores the Google Benchmark flags)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_BENCH_BUILD_DIR:-$root/build/bench}

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPULSE_BUILD_TESTS=ON \
  -DPULSE_SANITIZE= >/dev/null
# Every benchmark executable target: bench_<name> or <name>_bench.
mapfile -t targets < <(ninja -C "$build_dir" -t targets all |
  sed -n -E 's/^((bench_[A-Za-z0-9_]+)|([A-Za-z0-9_]+_bench)): phony$/\1/p' | sort -u)
if [ "${#targets[@]}" -eq 0 ]; then
  echo "bench.sh: no benchmark targets found" >&2
  exit 1
fi
cmake --build "$build_dir" --target "${targets[@]}"

status=0
while IFS= read -r -d '' exe; do
  if [ "$(basename "$exe")" = bench_chat_load ] && [ "${PULSE_BENCH_LOAD:-1}" = 0 ]; then
    continue
  fi
  echo "=== $(basename "$exe")"
  "$exe" "$@" || status=1
done < <(find "$build_dir/tests/bench" -maxdepth 1 -type f -perm -u+x \( -name 'bench_*' -o -name '*_bench' \) \
  -print0 | sort -z)

if [ "${PULSE_BENCH_HTTP:-1}" != 0 ]; then
  echo "=== bench-http.sh"
  PULSE_BENCH_BUILD_DIR=$build_dir "$root/cmake/bench-http.sh" || status=1
fi
exit "$status"
