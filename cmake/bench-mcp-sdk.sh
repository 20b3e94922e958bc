#!/usr/bin/env bash
# The MCP tools/call round trip as the official TypeScript SDK client sees it (issue 29):
# pulse-mcp with the real pulse-server behind it, against the SDK's own stdio server answering
# the same tool from memory with the bytes pulse-server returned (tests/interop/mcp/sdk_bench.mjs
# and sdk_baseline_server.mjs), in one run, alternating A B / B A. Prints each server's p50, p99
# and mean and the pulse-mcp / SDK-server ratios, then "summary: ...".
# Everything runs on 127.0.0.1 with an ephemeral port and a temporary directory that is removed
# on exit, together with every process the script started. Timings never fail the script; it
# fails when a tool or process cannot start or a reply was not the tool's result.
# Usage: cmake/bench-mcp-sdk.sh
# Environment knobs (all optional):
#   PULSE_BENCH_BUILD_DIR       build directory, shared with bench.sh (default: build/bench)
#   PULSE_BENCH_MCP_NO_BUILD=1  use the binaries already built there (no configure or build;
#                               e.g. PULSE_BENCH_BUILD_DIR=build/h, an -O1 build)
#   PULSE_BENCH_MCP_TOOL        get_fleet_context (default) or get_patrol_control_status
#   PULSE_BENCH_MCP_ROUNDS      measured rounds, one call to each server (default: 2000)
#   PULSE_BENCH_MCP_WARMUP      warm-up rounds (default: 200)
#   PULSE_BENCH_MCP_JSON        also write the figures as JSON to this file
#   PULSE_INTEROP_NODE_MODULES  where cmake/install-node-tools.sh installed node and the SDK
#                               (default: tests/interop/node_modules)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_BENCH_BUILD_DIR:-$root/build/bench}
tool=${PULSE_BENCH_MCP_TOOL:-get_fleet_context}
rounds=${PULSE_BENCH_MCP_ROUNDS:-2000}
warmup=${PULSE_BENCH_MCP_WARMUP:-200}
modules=${PULSE_INTEROP_NODE_MODULES:-$root/tests/interop/node_modules}

say() { echo "bench-mcp-sdk: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# shellcheck source=cmake/bench-lib.sh
. "$root/cmake/bench-lib.sh"

node=$modules/.pulse-tools/node
if [ ! -x "$node" ] || [ ! -f "$modules/@modelcontextprotocol/sdk/package.json" ]; then
  die "no node or MCP SDK under $modules: run cmake/install-node-tools.sh"
fi

mkdir -p "$build_dir"
if [ "${PULSE_BENCH_MCP_NO_BUILD:-0}" != 1 ]; then
  bench_build "$build_dir" "$build_dir/bench-mcp-sdk-build.log" pulse-server pulse-mcp
fi
server_bin=$build_dir/apps/pulse-server/pulse-server
mcp_bin=$build_dir/apps/pulse-mcp/pulse-mcp
if [ ! -x "$server_bin" ] || [ ! -x "$mcp_bin" ]; then
  die "no pulse-server or pulse-mcp in $build_dir"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pulse-bench-mcp-sdk-XXXXXX")
server_pid=""
cleanup() {
  stop_pid "$server_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# pulse-server on the built-in demo fleet, an agent token (what pulse-mcp runs with), a port.
data=$tmp/data
token=$("$server_bin" token create --data-dir "$data" --name bench-mcp --kind agent \
  --scopes monitoring:read)
: >"$tmp/server.log"  # exists before the poll below reads it (the redirect is the child's)
"$server_bin" --data-dir "$data" --listen 127.0.0.1:0 2>"$tmp/server.log" &
server_pid=$!
port=$(await_server_port "$tmp/server.log" "$server_pid")
[ -n "$port" ] || die "pulse-server did not start: $(tail -n5 "$tmp/server.log")"

json_args=()
[ -n "${PULSE_BENCH_MCP_JSON:-}" ] && json_args=(--json "$PULSE_BENCH_MCP_JSON")
say "$tool: $rounds rounds after $warmup warm-up rounds ($(nproc) cores, $build_dir)"
"$node" "$root/tests/interop/mcp/sdk_bench.mjs" --modules "$modules" --mcp "$mcp_bin" \
  --server "http://127.0.0.1:$port" --token "$token" --tool "$tool" --rounds "$rounds" \
  --warmup "$warmup" "${json_args[@]}"
