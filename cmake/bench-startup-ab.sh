#!/usr/bin/env bash
# Start-up time and memory of two pulse-server builds over the same stored findings (issue 29),
# alternated A B A B so a busy moment cannot land on one side. Each run starts a server on a
# fresh copy of one data dir (N findings, each on its own resource vm:1000+i, written by
# `seed_findings --bulk`, and a fleet file of one node and vm:1000..vm:1998, as
# bench-http-scale.sh uses), then prints how long it took to listen, its VmRSS and VmHWM (peak)
# then, and again after 20 rounds of a findings page, fleet-context and the Patrol status.
# The data dir is seeded once by SEED_BIN; use the older build's seed tool, since a newer server
# migrates an older schema but an older server refuses a newer one. The newer server's copy is
# migrated once before the runs, so no run times a migration.
# Usage: cmake/bench-startup-ab.sh OLD_SERVER NEW_SERVER SEED_BIN [N (default 100000)]
# Environment: PULSE_BENCH_STARTUP_ROUNDS  alternating pairs (default 2)
# Everything runs on 127.0.0.1 in a temporary directory removed on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "bench-startup-ab: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# shellcheck source=cmake/bench-lib.sh
. "$root/cmake/bench-lib.sh"
[ $# -ge 3 ] || die "usage: $0 OLD_SERVER NEW_SERVER SEED_BIN [N]"
old_bin=$1 new_bin=$2 seed_bin=$3 count=${4:-100000}
rounds=${PULSE_BENCH_STARTUP_ROUNDS:-2}
for b in "$old_bin" "$new_bin" "$seed_bin"; do
  [ -x "$b" ] || die "not an executable: $b"
done
command -v curl >/dev/null || die "needs curl"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pulse-bench-startup-XXXXXX")
server_pid=""
cleanup() {
  stop_pid "$server_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fleet=$tmp/fleet.json
write_bench_fleet "$fleet"

say "seeding $count findings"
"$seed_bin" --data-dir "$tmp/old-data" --count "$count" --bulk >/dev/null || die "seeding failed"
cp -r "$tmp/old-data" "$tmp/new-data"
"$new_bin" token list --data-dir "$tmp/new-data" >/dev/null || die "the new server cannot open it"

kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
run() {  # run LABEL SERVER DATA
  local label=$1 bin=$2 data=$3 d=$tmp/run t0 t1 port token rss0 hwm0 rss1 hwm1
  rm -rf "$d"
  cp -r "$data" "$d"
  token=$("$bin" token create --data-dir "$d" --name bench --scopes '*' 2>/dev/null)
  : >"$tmp/server.log"
  t0=$(date +%s.%N)
  "$bin" --data-dir "$d" --listen 127.0.0.1:0 --fleet "$fleet" --patrol-on-start off \
    --patrol-event-runs-per-hour 0 2>"$tmp/server.log" &
  server_pid=$!
  port=$(await_line "$tmp/server.log" 's/.*listening on 127\.0\.0\.1:([0-9]+).*/\1/p' \
    "$server_pid" 1200)
  t1=$(date +%s.%N)
  [ -n "$port" ] || die "$label did not start: $(tail -n5 "$tmp/server.log")"
  rss0=$(kb "$server_pid" VmRSS)
  hwm0=$(kb "$server_pid" VmHWM)
  for _ in $(seq 20); do
    for route in '/api/ai/patrol/findings?limit=50' /api/agent/fleet-context \
      /api/agent/patrol-control/status; do
      curl -fsS -o /dev/null -H "X-API-Token: $token" "http://127.0.0.1:$port$route" ||
        die "$label: $route failed"
    done
  done
  rss1=$(kb "$server_pid" VmRSS)
  hwm1=$(kb "$server_pid" VmHWM)
  stop_pid "$server_pid"
  server_pid=""
  awk -v l="$label" -v a="$t0" -v b="$t1" -v r0="$rss0" -v h0="$hwm0" -v r1="$rss1" \
    -v h1="$hwm1" 'BEGIN {
      printf "%-3s listening after %5.2f s | at start: RSS %6.1f MB, peak %6.1f MB | " \
        "after 60 requests: RSS %6.1f MB, peak %6.1f MB\n", l, b - a, r0 / 1024, h0 / 1024,
        r1 / 1024, h1 / 1024 }'
}
say "$count findings, $rounds alternating pairs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
for _ in $(seq "$rounds"); do
  run old "$old_bin" "$tmp/old-data"
  run new "$new_bin" "$tmp/new-data"
done
