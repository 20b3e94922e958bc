#!/usr/bin/env bash
# Memory growth soak of pulse-server (issue 13). Not part of ctest nor CI.
# Runs the real pulse-server (Release build, fresh data dir, loopback, demo fleet) against the
# loopback fake model provider (bench_chat_load --serve-provider: every chat first gets a turn
# of 4 parallel read tool calls, then a final text), and drives a steady mix one request at a
# time:
#   each cycle: one chat (POST /api/ai/chat, streamed to its end), the findings list
#   (GET /api/ai/patrol/findings), one short agent event stream (GET /api/agent/events, held
#   1 s); every 30 s one Patrol run (POST /api/ai/patrol/run, polled until it finishes).
# One agent event stream also stays open for the whole soak. The server's VmRSS is sampled
# from /proc/<pid>/status every 10 s. Prints the series, then the growth: the median of the
# samples of the first minute against the median of the samples of the last minute.
# Exits 1 when the server dies or a request fails (non-2xx, or a chat that did not end
# answered); the RSS figures never fail it.
# Usage: cmake/soak-rss.sh
# Environment knobs (all optional):
#   PULSE_SOAK_SECONDS     length of the soak                         (default: 600)
#   PULSE_SOAK_INTERVAL    seconds between RSS samples                (default: 10)
#   PULSE_BENCH_BUILD_DIR  build directory, shared with bench.sh      (default: build/bench)
#   PULSE_BENCH_DIR        where the temporary data dir goes          (default: /tmp)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_BENCH_BUILD_DIR:-$root/build/bench}
seconds=${PULSE_SOAK_SECONDS:-600}
interval=${PULSE_SOAK_INTERVAL:-10}
patrol_every=30

say() { echo "soak-rss: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# shellcheck source=cmake/bench-lib.sh
. "$root/cmake/bench-lib.sh"
command -v curl >/dev/null || die "needs curl"

# ---- build (Release) ----
mkdir -p "$build_dir"
bench_build "$build_dir" "$build_dir/soak-build.log" pulse-server bench_chat_load
server_bin=$build_dir/apps/pulse-server/pulse-server
fake_bin=$build_dir/tests/bench/bench_chat_load

# ---- processes and cleanup ----
tmp=$(mktemp -d "${PULSE_BENCH_DIR:-/tmp}/pulse-soak-XXXXXX")
server_pid=""
fake_pid=""
events_pid=""

cleanup() {
  stop_pid "$events_pid"
  stop_pid "$server_pid"
  stop_pid "$fake_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

: >"$tmp/fake.out"  # exist before the background job opens them: the loops below read them
: >"$tmp/server.log"
"$fake_bin" --serve-provider >"$tmp/fake.out" 2>"$tmp/fake.err" &
fake_pid=$!
provider=$(await_line "$tmp/fake.out" 's/^fake provider on //p' "$fake_pid" 100)
[ -n "$provider" ] || die "the fake provider did not start: $(cat "$tmp/fake.err")"

data=$tmp/data
token=$("$server_bin" token create --data-dir "$data" --name soak --scopes '*')
"$server_bin" --data-dir "$data" --listen 127.0.0.1:0 --provider openai-compatible \
  --provider-base-url "$provider/v1" --model test-model 2>"$tmp/server.log" &
server_pid=$!
port=$(await_server_port "$tmp/server.log" "$server_pid")
[ -n "$port" ] || die "pulse-server did not start: $(tail -n5 "$tmp/server.log")"
pulse=http://127.0.0.1:$port
auth="X-API-Token: $token"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || echo 0; }

# One agent event stream for the whole soak.
curl -sS -N -H "$auth" "$pulse/api/agent/events" >/dev/null 2>&1 &
events_pid=$!

chats=0
lists=0
streams=0
patrols=0
errors=0
fail() {
  errors=$((errors + 1))
  say "$*"
}

chat() {
  local code
  code=$(curl -sS -N -o "$tmp/chat.txt" -w '%{http_code}' -X POST -H "$auth" \
    -H 'Content-Type: application/json' --max-time 60 \
    -d "{\"message\":\"Are vm:101 and vm:105 healthy? ($chats)\"}" "$pulse/api/ai/chat" || true)
  chats=$((chats + 1))
  if [ "$code" != 200 ] || ! grep -q '"outcome":"answered"' "$tmp/chat.txt"; then
    fail "chat $chats: HTTP $code: $(tail -c 300 "$tmp/chat.txt" 2>/dev/null)"
  fi
}

findings() {
  local code
  code=$(curl -sS -o /dev/null -w '%{http_code}' -H "$auth" --max-time 30 \
    "$pulse/api/ai/patrol/findings" || true)
  lists=$((lists + 1))
  [ "$code" = 200 ] || fail "findings list: HTTP $code"
}

short_stream() {  # held 1 s; curl's timeout exit (28) is the expected end
  local code
  code=$(curl -sS -N -o /dev/null -w '%{http_code}' -H "$auth" --max-time 1 \
    "$pulse/api/agent/events" 2>/dev/null || true)
  streams=$((streams + 1))
  [ "$code" = 200 ] || fail "agent events: HTTP $code"
}

patrol() {
  local code run_id status
  code=$(curl -sS -o "$tmp/patrol.json" -w '%{http_code}' -X POST -H "$auth" \
    -H 'Content-Type: application/json' -d '{}' --max-time 30 "$pulse/api/ai/patrol/run" || true)
  patrols=$((patrols + 1))
  if [ "$code" = 409 ]; then
    return 0  # a scheduled run is still going: not an error
  fi
  if [ "$code" != 200 ]; then
    fail "patrol run: HTTP $code: $(head -c 300 "$tmp/patrol.json")"
    return 0
  fi
  run_id=$(sed -n 's/.*"run_id":"\([^"]*\)".*/\1/p' "$tmp/patrol.json")
  for _ in $(seq 600); do
    status=$(curl -sS -H "$auth" --max-time 10 "$pulse/api/ai/patrol/runs/$run_id" |
      sed -n 's/.*"status":"\([^"]*\)".*/\1/p' | head -n1 || true)
    [ "$status" != running ] && break
    sleep 0.1
  done
  [ "$status" != running ] || fail "patrol run $run_id still running after 60 s"
}

say "pulse-server pid $server_pid on :$port, fake provider $provider; soaking ${seconds}s"
declare -a sample_t sample_rss
start=$(date +%s)
next_sample=$start
next_patrol=$((start + 5))
echo "t_s rss_kib"
while :; do
  now=$(date +%s)
  kill -0 "$server_pid" 2>/dev/null || die "pulse-server died: $(tail -n5 "$tmp/server.log")"
  if [ "$now" -ge "$next_sample" ]; then
    sample_t+=($((now - start)))
    sample_rss+=("$(rss_kib)")
    echo "${sample_t[-1]} ${sample_rss[-1]}"
    next_sample=$((next_sample + interval))
  fi
  [ $((now - start)) -ge "$seconds" ] && break
  chat
  findings
  short_stream
  if [ "$now" -ge "$next_patrol" ]; then
    patrol
    next_patrol=$((now + patrol_every))
  fi
done

median() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
total=${sample_t[-1]}
window() {  # the samples taken from $1 s to $2 s
  local i
  for i in "${!sample_t[@]}"; do
    if [ "${sample_t[$i]}" -ge "$1" ] && [ "${sample_t[$i]}" -le "$2" ]; then
      echo "${sample_rss[$i]}"
    fi
  done
}
first=$(window 0 60 | median)
last=$(window $((total - 60)) "$total" | median)
echo
echo "soak: ${total}s, ${#sample_t[@]} samples every ${interval}s; $chats chats, $lists findings lists," \
  "$streams short event streams, $patrols patrol runs, $errors errors;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v a="$first" -v b="$last" -v t="$total" 'BEGIN {
  printf "RSS median, first minute %d KiB, last minute %d KiB: %+d KiB (%+.1f %%) over %d s\n",
    a, b, b - a, (a > 0 ? 100 * (b - a) / a : 0), t }'
[ "$errors" = 0 ] || exit 1
