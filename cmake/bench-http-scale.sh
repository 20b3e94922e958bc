#!/usr/bin/env bash
# HTTP figures at scale (issue 29): pulse-server over 1k, 10k, 100k (and, on request, 1M)
# stored findings and a fleet of 1,000 resources, measured with wrk --latency against the same
# routes of a server over 1k findings, run alternately in the same run (A B A B):
#   * GET /api/ai/patrol/findings?limit=50, the first page again and again (after the first
#     read it comes from the findings page cache while nothing is written);
#   * the first 20 pages of 50 in turn, each through its cursor, from one wrk thread: 20 keys
#     cycling through a 16-entry LRU cache, so every request reads, decodes and encodes its page;
#   * GET /api/agent/fleet-context (1,000 resources, each with its finding counts);
# and the server's VmRSS and VmHWM (peak) after its runs. Findings are seeded with
# `seed_findings --bulk` into a fresh data dir per size; each finding is on its own resource
# vm:1000+i, and the fleet file lists vm:1000 to vm:1998 and one node, so fleet-context counts
# the findings of the first 999 of them.
# Everything runs on 127.0.0.1 with ephemeral ports in a temporary directory removed on exit,
# together with every process the script started. Timings never fail the script; it fails when
# a tool or process cannot start, or a request answered something else than 2xx.
# Prints a table, then the same figures as JSON (between "--- json" and "--- end").
# Usage: cmake/bench-http-scale.sh
# Environment knobs (all optional):
#   PULSE_BENCH_BUILD_DIR         build directory (default: build/bench, as bench-http.sh)
#   PULSE_BENCH_HTTP_NO_BUILD=1   use the binaries already built there
#   PULSE_BENCH_SCALE_SIZES       finding counts measured against 1k   (default: "10000 100000";
#                                 add 1000000 for 1M: about 1 GB of data dir, minutes to seed)
#   PULSE_BENCH_SCALE_SECONDS     length of each measured wrk run      (default: 5)
#   PULSE_BENCH_SCALE_ROUNDS      alternating baseline/size pairs      (default: 2)
#   PULSE_BENCH_SCALE_CONNECTIONS wrk connections                      (default: 4)
#   PULSE_BENCH_SCALE_JSON        also write the JSON to this file
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_BENCH_BUILD_DIR:-$root/build/bench}
sizes=${PULSE_BENCH_SCALE_SIZES:-10000 100000}
seconds=${PULSE_BENCH_SCALE_SECONDS:-5}
rounds=${PULSE_BENCH_SCALE_ROUNDS:-2}
connections=${PULSE_BENCH_SCALE_CONNECTIONS:-4}
json_out=${PULSE_BENCH_SCALE_JSON:-}
baseline_size=1000
pages=20

say() { echo "bench-http-scale: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# shellcheck source=cmake/bench-lib.sh
. "$root/cmake/bench-lib.sh"

if ! command -v wrk >/dev/null || ! command -v curl >/dev/null; then
  die "needs wrk and curl (Debian: apt-get install wrk curl)"
fi

mkdir -p "$build_dir"
if [ "${PULSE_BENCH_HTTP_NO_BUILD:-0}" != 1 ]; then
  bench_build "$build_dir" "$build_dir/bench-http-scale-build.log" pulse-server seed_findings
fi
server_bin=$build_dir/apps/pulse-server/pulse-server
seed_bin=$build_dir/tests/bench/seed_findings

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pulse-bench-scale-XXXXXX")
declare -A server_pids=()
cleanup() {
  local n
  for n in "${!server_pids[@]}"; do stop_pid "${server_pids[$n]}"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the fleet: one node and 999 VMs, vm:1000 ... vm:1998 ----
fleet=$tmp/fleet.json
write_bench_fleet "$fleet"

declare -A ports=() tokens=() seed_secs=() db_bytes=() start_secs=()
start_server() {  # start_server N: seeds N findings into a fresh data dir and starts a server
  local n=$1 data=$tmp/data-$1 t0 t1
  t0=$(date +%s.%N)
  "$seed_bin" --data-dir "$data" --count "$n" --bulk >/dev/null || die "seeding $n failed"
  t1=$(date +%s.%N)
  seed_secs[$n]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  db_bytes[$n]=$(du -sb "$data" | cut -f1)
  tokens[$n]=$("$server_bin" token create --data-dir "$data" --name bench --scopes '*')
  : >"$tmp/server-$n.log"
  "$server_bin" --data-dir "$data" --listen 127.0.0.1:0 --fleet "$fleet" --patrol-on-start off \
    --patrol-event-runs-per-hour 0 2>"$tmp/server-$n.log" &
  server_pids[$n]=$!
  # Up to 120 s: start-up reads the data dir (see the figures at 1M).
  t0=$(date +%s.%N)
  ports[$n]=$(await_line "$tmp/server-$n.log" 's/.*listening on 127\.0\.0\.1:([0-9]+).*/\1/p' \
    "${server_pids[$n]}" 1200)
  t1=$(date +%s.%N)
  start_secs[$n]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  [ -n "${ports[$n]}" ] || die "pulse-server ($n) did not start: $(tail -n5 "$tmp/server-$n.log")"
}

# The first $pages pages' paths (limit=50), through X-Next-Cursor, one per line.
collect_pages() {  # collect_pages N
  local n=$1 path="/api/ai/patrol/findings?limit=50" next i
  : >"$tmp/pages-$n.txt"
  for i in $(seq "$pages"); do
    echo "$path" >>"$tmp/pages-$n.txt"
    [ "$i" -lt "$pages" ] || break
    next=$(curl -fsS -D - -o /dev/null -H "X-API-Token: ${tokens[$n]}" \
      "http://127.0.0.1:${ports[$n]}$path" | tr -d '\r' | sed -n 's/^[Xx]-[Nn]ext-[Cc]ursor: //p')
    [ -n "$next" ] || die "page $i of $n findings has no next cursor"
    path="/api/ai/patrol/findings?limit=50&cursor=$next"
  done
}

cat >"$tmp/cycle.lua" <<'EOF'
local paths = {}
for line in io.lines(os.getenv("PULSE_SCALE_PAGES")) do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
EOF

to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.3f", n }'
}
declare -A rps p50 p99 errors
run_wrk() {  # run_wrk NAME N ROUTE: ROUTE is page1, pages or fleet
  local name=$1 n=$2 route=$3 out=$tmp/wrk-$1.txt
  local base=http://127.0.0.1:${ports[$n]}
  local args=(-c"$connections" -d"${seconds}s" --timeout 5s --latency -H "X-API-Token: ${tokens[$n]}")
  case $route in
    page1) args+=(-t2 "$base/api/ai/patrol/findings?limit=50") ;;
    pages) args+=(-t1 -s "$tmp/cycle.lua" "$base/api/ai/patrol/findings") ;;
    fleet) args+=(-t2 "$base/api/agent/fleet-context") ;;
  esac
  PULSE_SCALE_PAGES=$tmp/pages-$n.txt timeout $((seconds + 30)) wrk "${args[@]}" >"$out" 2>&1 ||
    die "wrk failed: $(cat "$out")"
  rps[$name]=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  p50[$name]=$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")")
  p99[$name]=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  errors[$name]=$(awk '/^  Socket errors:/ {gsub(",", ""); s += $4 + $6 + $8 + $10}
                       /^  Non-2xx or 3xx responses:/ {s += $5} END {print s + 0}' "$out")
}
mean() { echo "$@" | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.3f", s / NF }'; }
rss_kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }

say "seeding $baseline_size findings and starting the baseline server"
start_server "$baseline_size"
collect_pages "$baseline_size"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A result=()  # result[N,ROUTE,figure]
all_names=()
for n in $sizes; do
  say "seeding $n findings"
  start_server "$n"
  collect_pages "$n"
  for route in page1 pages fleet; do
    run_wrk "warm-$n-$route" "$n" "$route"
    run_wrk "warm-base-$n-$route" "$baseline_size" "$route"
    base_p99="" size_p99="" base_rps="" size_rps="" base_p50="" size_p50=""
    for r in $(seq "$rounds"); do
      run_wrk "base-$n-$route-$r" "$baseline_size" "$route"
      run_wrk "size-$n-$route-$r" "$n" "$route"
      all_names+=("base-$n-$route-$r" "size-$n-$route-$r")
      base_p99="$base_p99 ${p99[base-$n-$route-$r]}"
      size_p99="$size_p99 ${p99[size-$n-$route-$r]}"
      base_p50="$base_p50 ${p50[base-$n-$route-$r]}"
      size_p50="$size_p50 ${p50[size-$n-$route-$r]}"
      base_rps="$base_rps ${rps[base-$n-$route-$r]}"
      size_rps="$size_rps ${rps[size-$n-$route-$r]}"
    done
    result[$n,$route,base_p99]=$(mean "$base_p99")
    result[$n,$route,p99]=$(mean "$size_p99")
    result[$n,$route,base_p50]=$(mean "$base_p50")
    result[$n,$route,p50]=$(mean "$size_p50")
    result[$n,$route,base_rps]=$(mean "$base_rps")
    result[$n,$route,rps]=$(mean "$size_rps")
  done
  result[$n,rss_mb]=$(awk -v k="$(rss_kb "${server_pids[$n]}" VmRSS)" 'BEGIN { printf "%.1f", k / 1024 }')
  result[$n,hwm_mb]=$(awk -v k="$(rss_kb "${server_pids[$n]}" VmHWM)" 'BEGIN { printf "%.1f", k / 1024 }')
  stop_pid "${server_pids[$n]}"
  unset "server_pids[$n]"
  rm -rf "$tmp/data-$n"
done
n=$baseline_size
result[$n,rss_mb]=$(awk -v k="$(rss_kb "${server_pids[$n]}" VmRSS)" 'BEGIN { printf "%.1f", k / 1024 }')
result[$n,hwm_mb]=$(awk -v k="$(rss_kb "${server_pids[$n]}" VmHWM)" 'BEGIN { printf "%.1f", k / 1024 }')
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

failed=0
for name in "${all_names[@]}"; do
  [ "${errors[$name]}" = 0 ] || failed=1
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "null"; else printf "%.2f", a / b }'; }
echo
echo "pulse-server at scale: wrk -c$connections -d${seconds}s --latency, $rounds alternating" \
  "pairs against $baseline_size findings, $(nproc) CPUs, load average $load_start (start) /" \
  "$load_end (end); fleet of 1,000 resources"
echo "baseline ($baseline_size findings) server: VmRSS ${result[$baseline_size,rss_mb]} MB," \
  "VmHWM ${result[$baseline_size,hwm_mb]} MB"
echo
printf '| %9s | %-34s | %9s | %9s | %9s | %11s | %9s |\n' findings route "req/s" "p50 ms" \
  "p99 ms" "p99 at 1k" "p99 ×1k"
echo "|----------:|:-----------------------------------|----------:|----------:|----------:|------------:|----------:|"
route_label() {
  case $1 in
    page1) echo "findings?limit=50 (page 1, cached)" ;;
    pages) echo "findings?limit=50, pages 1-20" ;;
    fleet) echo "fleet-context (1,000 resources)" ;;
  esac
}
for n in $sizes; do
  for route in page1 pages fleet; do
    printf '| %9s | %-34s | %9s | %9s | %9s | %11s | %9s |\n' "$n" "$(route_label "$route")" \
      "${result[$n,$route,rps]}" "${result[$n,$route,p50]}" "${result[$n,$route,p99]}" \
      "${result[$n,$route,base_p99]}" \
      "x$(ratio "${result[$n,$route,p99]}" "${result[$n,$route,base_p99]}")"
  done
  echo "|           | server VmRSS ${result[$n,rss_mb]} MB, VmHWM ${result[$n,hwm_mb]} MB; seeded in ${seed_secs[$n]} s, listening after ${start_secs[$n]} s, data dir $((${db_bytes[$n]} / 1048576)) MB | | | | | |"
done

json=$(
  printf '{"date":"%s","cpus":%s,"loadavg_start":"%s","loadavg_end":"%s",' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$load_start" "$load_end"
  printf '"wrk":{"connections":%s,"seconds":%s,"rounds":%s},"baseline":{"findings":%s,' \
    "$connections" "$seconds" "$rounds" "$baseline_size"
  printf '"rss_mb":%s,"hwm_mb":%s},"sizes":[' "${result[$baseline_size,rss_mb]}" \
    "${result[$baseline_size,hwm_mb]}"
  first=1
  for n in $sizes; do
    [ "$first" = 1 ] || printf ','
    first=0
    printf '{"findings":%s,"rss_mb":%s,"hwm_mb":%s,"seed_seconds":%s,"start_seconds":%s,' \
      "$n" "${result[$n,rss_mb]}" "${result[$n,hwm_mb]}" "${seed_secs[$n]}" "${start_secs[$n]}"
    printf '"data_dir_bytes":%s' "${db_bytes[$n]}"
    for route in page1 pages fleet; do
      printf ',"%s":{"rps":%s,"p50_ms":%s,"p99_ms":%s,"base_rps":%s,"base_p50_ms":%s,' "$route" \
        "${result[$n,$route,rps]}" "${result[$n,$route,p50]}" "${result[$n,$route,p99]}" \
        "${result[$n,$route,base_rps]}" "${result[$n,$route,base_p50]}"
      printf '"base_p99_ms":%s,"p99_over_base":%s}' "${result[$n,$route,base_p99]}" \
        "$(ratio "${result[$n,$route,p99]}" "${result[$n,$route,base_p99]}")"
    done
    printf '}'
  done
  printf ']}'
)
echo
echo "--- json"
echo "$json"
echo "--- end"
[ -z "$json_out" ] || echo "$json" >"$json_out"
if [ "$failed" != 0 ]; then
  say "a wrk run had socket errors or non-2xx answers (see the JSON's runs)"
  exit 1
fi
