#!/usr/bin/env bash
# One command for a newcomer: install what is missing, build, and run pulse-server on its
# embedded defaults (SQLite in ./pulse-data, the demo fleet, 127.0.0.1:7655).
# Extra arguments are passed to pulse-server, e.g. ./cmake/quickstart.sh --listen 127.0.0.1:8080
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/cmake/install-deps.sh"
# The console's pinned build tools (esbuild, Preact, uPlot), so the server it starts serves the
# console at / (docs/console.md); without them it warns and the server says the console is not
# built.
"$root/cmake/install-node-tools.sh"
build_dir=${PULSE_BUILD_DIR:-$root/build/release}
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPULSE_BUILD_TESTS=OFF
cmake --build "$build_dir" -j "$(nproc 2>/dev/null || echo 2)" --target pulse-server pulse-cli pulse-mcp
exec "$build_dir/apps/pulse-server/pulse-server" "$@"
