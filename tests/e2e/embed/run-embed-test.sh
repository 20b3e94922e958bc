#!/usr/bin/env bash
# Usage: run-embed-test.sh BUILD_DIR CONSUMER_SRC WORK_DIR CXX [SANITIZER_FLAGS (;-separated)]
# Installs the built project into WORK_DIR/prefix, builds the consumer against it with
# find_package(PulseCore), and runs it. Any failure fails the test.
set -euo pipefail
build_dir=$1 consumer_src=$2 work=$3 cxx=$4 sanitize=${5:-}
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
test -f "$work/prefix/lib/cmake/PulseCore/PulseCoreConfig.cmake" ||
  { echo "PulseCoreConfig.cmake was not installed" >&2; exit 1; }
flags=${sanitize//;/ }
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$consumer_src" -B "$work/build" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$work/configure.log" ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
"$work/build/pulse_embed_consumer"
