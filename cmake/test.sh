#!/usr/bin/env bash
# The test command: install missing packages, configure (warnings are errors), build everything, run every ctest.
# Environment knobs (all optional):
#   PULSE_BUILD_DIR   build directory            (default: build/test, or build/test-<sanitizers>)
#   PULSE_SANITIZE    e.g. address,undefined     (default: none)
#   CXX               compiler                   (default: the system c++)
#   PULSE_CTEST_ARGS  extra ctest arguments, e.g. "-L core"
#   PULSE_CTEST_TIMEOUT  seconds a test without its own TIMEOUT may run (default: 600): a hung
#                     test fails by name instead of holding CI until its deadline
#   PULSE_REQUIRE_INTEROP=1  fail, as CI does, when the interop tests' npm tools are missing
#   PULSE_TEST_PHASE  all (default): build, the main suite, then the transport suite;
#                     build: configure and build only; main: build and the main suite only;
#                     transport: build (a no-op when built) and the transport suite only
#                     (.ci/run runs them apart, so the transport suite's latency figures run on
#                     an otherwise idle machine, and one build's compile overlaps the other's
#                     main suite)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=${PULSE_SANITIZE:-}
default_dir=$root/build/test
if [ -n "$sanitize" ]; then
  default_dir=$root/build/test-${sanitize//,/-}
fi
build_dir=${PULSE_BUILD_DIR:-$default_dir}
jobs=$(nproc 2>/dev/null || echo 2)
phase=${PULSE_TEST_PHASE:-all}
case "$phase" in
  all | build | main | transport) ;;
  *)
    echo "test.sh: PULSE_TEST_PHASE must be all, build, main or transport, not '$phase'" >&2
    exit 2
    ;;
esac

# Idempotent: a no-op when every package is already installed.
"$root/cmake/install-deps.sh"
# The interop tests' pinned npm tools; offline once installed. Fails under CI=true when they
# cannot be installed, warns (and the interop tests are skipped) elsewhere.
"$root/cmake/install-node-tools.sh"

# Both builds keep line tables only (-g1): stacks still name file:line, and full debug info
# costs a third of the compile time. The plain build is optimised at -O1, which keeps GCC's
# flow-based warnings (maybe-uninitialized, null dereference, ...) at half the cost of -O2; the
# sanitizer build is unoptimised. `quickstart.sh` builds the apps in Release (-O3).
build_type_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
  -DPULSE_BUILD_BENCHMARKS=ON)
if [ -n "$sanitize" ]; then
  # The benchmarks register no test and time nothing meaningful under sanitizers.
  build_type_args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1"
    -DPULSE_BUILD_BENCHMARKS=OFF)
fi
cmake -S "$root" -B "$build_dir" -G Ninja \
  "${build_type_args[@]}" \
  -DPULSE_WERROR=ON -DPULSE_BUILD_TESTS=ON \
  -DPULSE_SANITIZE="$sanitize" \
  -DPULSE_TRANSPORT_ATTACK_TESTS=ON
cmake --build "$build_dir" -j "$jobs"
if [ "$phase" = build ]; then
  exit 0
fi

if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ "$phase" != transport ]; then
  # shellcheck disable=SC2086
  ctest --test-dir "$build_dir" --output-on-failure --timeout "${PULSE_CTEST_TIMEOUT:-600}" \
    -j "$jobs" -LE transport ${PULSE_CTEST_ARGS:-}
fi
if [ "$phase" = main ]; then
  exit 0
fi
# The HTTP transport attack suite (tests/fault/TRANSPORT.md), alone: it measures latency and
# memory. The plain build runs the acceptance length (60 s per attack, 10,000 streams); the
# sanitizer build, several times slower and with ASan's memory overhead (~100 MB idle), 15 s per
# attack and 1,000 streams unless PULSE_ATTACK_SECONDS / PULSE_ATTACK_STREAMS say otherwise.
if [ -n "$sanitize" ]; then
  export PULSE_ATTACK_SECONDS=${PULSE_ATTACK_SECONDS:-15}
  export PULSE_ATTACK_STREAMS=${PULSE_ATTACK_STREAMS:-1000}
fi
# shellcheck disable=SC2086
ctest --test-dir "$build_dir" --output-on-failure --timeout "${PULSE_CTEST_TIMEOUT:-600}" \
  -j 1 -L transport ${PULSE_CTEST_ARGS:-}
