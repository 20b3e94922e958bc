#!/usr/bin/env bash
# HTTP load benchmark of pulse-server (issue 9), with wrk, against baselines measured in the
# same run:
#   1. nginx serving the exact bytes of GET /api/agent/capabilities as a static file against
#      pulse-server's manifest, then nginx serving the exact bytes of the findings list against
#      pulse-server's GET /api/ai/patrol/findings (over seeded findings), each pair alternated
#      A B A B: requests/s, p50, p99, and the pulse/nginx ratios of both;
#   2. GET /healthz without streams, then again while N agent event streams
#      (GET /api/agent/events) are held open: p99 and the with/without ratio;
#   3. GET /api/ai/sessions (a token lookup and a read), one request at a time, alone and then
#      while another process holds the database's write lock and a server write (PUT
#      operator-state) waits for it: median and max latency and their ratios.
# Everything runs on 127.0.0.1 with ephemeral ports and a temporary directory that is removed
# on exit, together with every process the script started. Timings never fail the script; it
# fails when a tool or process cannot start, or a request answered something else than 2xx.
# Prints a table, then the same figures as JSON (between "--- json" and "--- end").
# Usage: cmake/bench-http.sh            (cmake/bench.sh runs it after the Google Benchmarks)
# Environment knobs (all optional):
#   PULSE_BENCH_BUILD_DIR        build directory, shared with bench.sh (default: build/bench)
#   PULSE_BENCH_HTTP_NO_BUILD=1  use the binaries already built there (no configure or build;
#                                e.g. PULSE_BENCH_BUILD_DIR=build/test, an -O1 build)
#   PULSE_BENCH_HTTP_SECONDS     length of each measured wrk run          (default: 8)
#   PULSE_BENCH_HTTP_ROUNDS      nginx/pulse-server pairs (manifest, findings list), run A B A B
#                                (the reported figures are their means)   (default: 2)
#   PULSE_BENCH_HTTP_WARMUP      length of each warm-up run               (default: 2)
#   PULSE_BENCH_HTTP_THREADS     wrk threads                              (default: 2)
#   PULSE_BENCH_HTTP_CONNECTIONS wrk connections                          (default: 32)
#   PULSE_BENCH_HTTP_STREAMS     event streams held open in part 2        (default: 256)
#   PULSE_BENCH_HTTP_FINDINGS    findings seeded for the findings list    (default: 200)
#   PULSE_BENCH_HTTP_LOCK_READS  reads timed in part 3, each way          (default: 20)
#   PULSE_BENCH_HTTP_JSON        also write the JSON to this file
# wrk and nginx come from Debian's packages; when missing and running as root, the script
# installs them with apt-get.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${PULSE_BENCH_BUILD_DIR:-$root/build/bench}
seconds=${PULSE_BENCH_HTTP_SECONDS:-8}
rounds=${PULSE_BENCH_HTTP_ROUNDS:-2}
warmup=${PULSE_BENCH_HTTP_WARMUP:-2}
threads=${PULSE_BENCH_HTTP_THREADS:-2}
connections=${PULSE_BENCH_HTTP_CONNECTIONS:-32}
streams=${PULSE_BENCH_HTTP_STREAMS:-256}
findings=${PULSE_BENCH_HTTP_FINDINGS:-200}
lock_reads=${PULSE_BENCH_HTTP_LOCK_READS:-20}
json_out=${PULSE_BENCH_HTTP_JSON:-}

say() { echo "bench-http: $*" >&2; }
die() {
  say "$*"
  exit 1
}
# shellcheck source=cmake/bench-lib.sh
. "$root/cmake/bench-lib.sh"

# ---- tools ----
if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null || ! command -v curl >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    die "needs wrk, nginx and curl (Debian: apt-get install wrk nginx curl)"
  fi
  say "installing wrk, nginx and curl with apt-get"
  if ! apt-get install -y --no-install-recommends wrk nginx curl >/dev/null; then
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends wrk nginx curl >/dev/null
  fi
fi
nginx_bin=$(command -v nginx)

# ---- build (Release, the build dir bench.sh uses) ----
mkdir -p "$build_dir"
if [ "${PULSE_BENCH_HTTP_NO_BUILD:-0}" != 1 ]; then
  bench_build "$build_dir" "$build_dir/bench-http-build.log" pulse-server seed_findings sse_hold \
    hold_write_lock
fi
server_bin=$build_dir/apps/pulse-server/pulse-server
seed_bin=$build_dir/tests/bench/seed_findings
hold_bin=$build_dir/tests/bench/sse_hold
lock_bin=$build_dir/tests/bench/hold_write_lock

# ---- processes and cleanup ----
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pulse-bench-http-XXXXXX")
server_pid=""
nginx_pid=""
hold_pid=""
lock_pid=""
put_pid=""

cleanup() {
  stop_pid "$hold_pid"
  stop_pid "$put_pid"
  stop_pid "$lock_pid"
  stop_pid "$nginx_pid"
  stop_pid "$server_pid"
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- pulse-server: seeded findings, a token, an ephemeral port ----
data=$tmp/data
"$seed_bin" --data-dir "$data" --count "$findings" >/dev/null
token=$("$server_bin" token create --data-dir "$data" --name bench --scopes '*')
: >"$tmp/server.log"  # exists before the poll below reads it (the redirect is the child's)
"$server_bin" --data-dir "$data" --listen 127.0.0.1:0 --fleet demo --patrol-on-start off \
  --patrol-event-runs-per-hour 0 \
  --max-event-streams "$((streams + 16))" --max-streams-per-token "$((streams + 16))" 2>"$tmp/server.log" &
server_pid=$!
port=$(await_server_port "$tmp/server.log" "$server_pid")
[ -n "$port" ] || die "pulse-server did not start: $(tail -n5 "$tmp/server.log")"
pulse=http://127.0.0.1:$port

# ---- nginx: the manifest bytes as a static file, on a free port ----
# worker_processes 2: pulse-server runs every connection on a thread of its own and so may use
# both cores; two nginx workers may too. wrk shares the same two cores with either server.
www=$tmp/nginx/www
mkdir -p "$www" "$tmp/nginx/temp"
curl -fsS -o "$www/capabilities.json" "$pulse/api/agent/capabilities"
token_header="X-API-Token: $token"
curl -fsS -H "$token_header" -o "$www/findings.json" "$pulse/api/ai/patrol/findings"
# Run as root, nginx's workers drop to nobody: they must be able to reach the file (the data
# dir inside $tmp stays 0700).
chmod 0711 "$tmp" "$tmp/nginx"
chmod 0755 "$www"
chmod 0644 "$www/capabilities.json" "$www/findings.json"

free_port() {  # a loopback port nothing listens on right now
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

start_nginx() {  # nginx on $nginx_port in the foreground of a background job
  cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/temp/body;
  proxy_temp_path $tmp/nginx/temp/proxy;
  fastcgi_temp_path $tmp/nginx/temp/fastcgi;
  uwsgi_temp_path $tmp/nginx/temp/uwsgi;
  scgi_temp_path $tmp/nginx/temp/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    location = /api/agent/capabilities {
      default_type application/json;
      alias $www/capabilities.json;
    }
    location = /api/ai/patrol/findings {
      default_type application/json;
      alias $www/findings.json;
    }
  }
}
EOF
  "$nginx_bin" -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" \
    2>>"$tmp/nginx/start.log" &
  nginx_pid=$!
  for _ in $(seq 50); do
    curl -fsS -o /dev/null "http://127.0.0.1:$nginx_port/api/agent/capabilities" 2>/dev/null &&
      return 0
    kill -0 "$nginx_pid" 2>/dev/null || break
    sleep 0.1
  done
  stop_pid "$nginx_pid"
  nginx_pid=""
  return 1
}

nginx_port=""
for _ in 1 2 3; do
  nginx_port=$(free_port) || die "no free loopback port for nginx"
  start_nginx && break
  nginx_port=""
done
[ -n "$nginx_port" ] ||
  die "nginx did not start: $(tail -n5 "$tmp/nginx/start.log" "$tmp/nginx/error.log" 2>/dev/null)"
static=http://127.0.0.1:$nginx_port
curl -fsS "$static/api/agent/capabilities" | cmp -s - "$www/capabilities.json" ||
  die "nginx does not serve the manifest bytes"
curl -fsS "$static/api/ai/patrol/findings" | cmp -s - "$www/findings.json" ||
  die "nginx does not serve the findings list bytes"

# ---- wrk runs ----
# Latency figures in milliseconds; wrk prints them with a unit (us, ms, s).
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.3f", n }'
}

declare -A rps p50 p99 total errors
run_wrk() {  # name seconds url [header]
  local name=$1 duration=$2 url=$3 header=${4:-}
  local out=$tmp/wrk-$name.txt
  local args=(-t"$threads" -c"$connections" -d"${duration}s" --timeout 5s --latency)
  [ -n "$header" ] && args+=(-H "$header")
  timeout $((duration + 30)) wrk "${args[@]}" "$url" >"$out" 2>&1 || die "wrk failed: $(cat "$out")"
  rps[$name]=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  p50[$name]=$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")")
  p99[$name]=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  total[$name]=$(awk '/requests in/ {print $1}' "$out")
  # Socket errors (connect, read, write, timeout) plus non-2xx/3xx answers.
  errors[$name]=$(awk '/^  Socket errors:/ {gsub(",", ""); s += $4 + $6 + $8 + $10}
                       /^  Non-2xx or 3xx responses:/ {s += $5} END {print s + 0}' "$out")
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# Percent of CPU time idle machine-wide over 2 s: how much of the machine other work took just
# before the run (the load average also counts this script's own previous runs for minutes).
idle_pct() {
  local a b
  read -r -a a < <(head -n1 /proc/stat)
  sleep 2
  read -r -a b < <(head -n1 /proc/stat)
  awk -v i=$((b[4] + b[5] - a[4] - a[5])) \
    -v t=$((b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + b[7] + b[8] - a[1] - a[2] - a[3] - a[4] - a[5] - a[6] - a[7] - a[8])) \
    'BEGIN { if (t == 0) print "100"; else printf "%.0f", 100 * i / t }'
}

# The findings list is a JSON array of findings, each with one loop_state. nginx serves the
# bytes saved above; the server must still answer the same (nothing writes findings meanwhile).
curl -fsS -H "$token_header" -o "$tmp/findings.json" "$pulse/api/ai/patrol/findings"
cmp -s "$tmp/findings.json" "$www/findings.json" || die "the findings list changed during set-up"
findings_count=$(grep -o '"loop_state":' "$tmp/findings.json" | wc -l)
findings_bytes=$(wc -c <"$tmp/findings.json")
manifest_bytes=$(wc -c <"$www/capabilities.json")
load_start=$(loadavg)
idle_start=$(idle_pct)
say "pulse-server on :$port, nginx on :$nginx_port; warming up"

run_wrk warm-static "$warmup" "$static/api/agent/capabilities"
run_wrk warm-manifest "$warmup" "$pulse/api/agent/capabilities"
run_wrk warm-static-findings "$warmup" "$static/api/ai/patrol/findings"
run_wrk warm-findings "$warmup" "$pulse/api/ai/patrol/findings" "$token_header"
run_wrk warm-healthz "$warmup" "$pulse/healthz"
say "measuring (${seconds}s per run)"
# nginx and pulse-server alternate (A B A B ...): other work on a shared machine then weighs on
# both alike, and the ratio of each pair is reported beside the ratio of the means.
round_ratios=""
findings_round_ratios=""
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "null"; else printf "%.2f", a / b }'; }
for r in $(seq "$rounds"); do
  run_wrk "static-$r" "$seconds" "$static/api/agent/capabilities"
  run_wrk "manifest-$r" "$seconds" "$pulse/api/agent/capabilities"
  round_ratios="$round_ratios x$(ratio "${rps[manifest-$r]}" "${rps[static-$r]}")"
done
for r in $(seq "$rounds"); do
  run_wrk "static-findings-$r" "$seconds" "$static/api/ai/patrol/findings"
  run_wrk "findings-$r" "$seconds" "$pulse/api/ai/patrol/findings" "$token_header"
  findings_round_ratios="$findings_round_ratios x$(ratio "${rps[findings-$r]}" \
    "${rps[static-findings-$r]}")"
done
mean_of() {  # mean_of ARRAY-NAME KIND: the mean over the rounds of ${ARRAY[KIND-r]}
  local -n values=$1
  local r list=""
  for r in $(seq "$rounds"); do list="$list ${values[$2-$r]}"; done
  echo "$list" | awk '{ for (i = 1; i <= NF; i++) s += $i; printf "%.3f", s / NF }'
}
for kind in static manifest static-findings findings; do
  rps[$kind]=$(mean_of rps "$kind")
  p50[$kind]=$(mean_of p50 "$kind")
  p99[$kind]=$(mean_of p99 "$kind")
  total[$kind]=0
  errors[$kind]=0
  for r in $(seq "$rounds"); do
    total[$kind]=$((total[$kind] + total[$kind-$r]))
    errors[$kind]=$((errors[$kind] + errors[$kind-$r]))
  done
done
run_wrk healthz "$seconds" "$pulse/healthz"

say "opening $streams event streams"
"$hold_bin" --port "$port" --token "$token" --streams "$streams" --max-seconds 120 \
  >"$tmp/hold.out" 2>"$tmp/hold.err" &
hold_pid=$!
for _ in $(seq 400); do
  grep -q '^holding' "$tmp/hold.out" && break
  kill -0 "$hold_pid" 2>/dev/null || die "sse_hold failed: $(cat "$tmp/hold.err")"
  sleep 0.1
done
grep -q '^holding' "$tmp/hold.out" || die "the event streams did not open in 40 s"
open_streams=$(curl -fsS -H "$token_header" "$pulse/metrics" |
  awk '/^pulse_http_open_streams/ {print $2}')
run_wrk warm-healthz-streams "$warmup" "$pulse/healthz"
run_wrk healthz-streams "$seconds" "$pulse/healthz"
kill -TERM "$hold_pid"
wait "$hold_pid" && streams_ok=true || streams_ok=false
hold_pid=""
streams_end=$(sed -n 's/^open //p' "$tmp/hold.out")

# ---- part 3: reads while another process holds the write lock and a server write waits ----
# One GET at a time; prints "HTTP_CODE SECONDS" per request.
timed_reads() {
  for _ in $(seq "$lock_reads"); do
    curl -sS -o /dev/null -w '%{http_code} %{time_total}\n' -H "$token_header" \
      "$pulse/api/ai/sessions" || echo "000 0"
  done
}
# median and max of the second column, in ms; the count of non-200 codes.
read_stats() {
  sort -k2 -g "$1" | awk '{ t[NR] = $2 * 1000; if ($1 != "200") bad++ }
    END { printf "%.3f %.3f %d\n", t[int((NR + 1) / 2)], t[NR], bad + 0 }'
}
say "timing reads alone, then under another process's write lock"
timed_reads >"$tmp/reads-free.txt"
: >"$tmp/lock.out"
"$lock_bin" --data-dir "$data" --millis 3000 >"$tmp/lock.out" 2>"$tmp/lock.err" &
lock_pid=$!
[ -n "$(await_line "$tmp/lock.out" 's/^(locked)$/\1/p' "$lock_pid" 100)" ] ||
  die "hold_write_lock did not take the lock: $(cat "$tmp/lock.err")"
# A server write that has to wait for the lock (the server's busy timeout, 5 s, outlasts it).
curl -sS -o "$tmp/put.body" -w '%{http_code} %{time_total}\n' -X PUT \
  -H "$token_header" -H 'Content-Type: application/json' \
  -d '{"intentionallyOffline":false,"neverAutoRemediate":false,"note":"bench-http"}' \
  "$pulse/api/resources/vm:102/operator-state" >"$tmp/put.txt" &
put_pid=$!
sleep 0.3
timed_reads >"$tmp/reads-locked.txt"
grep -q '^released' "$tmp/lock.out" && lock_held_throughout=false || lock_held_throughout=true
wait "$put_pid" || true
put_pid=""
wait "$lock_pid" || die "hold_write_lock failed: $(cat "$tmp/lock.err")"
lock_pid=""
read -r free_p50 free_max free_bad < <(read_stats "$tmp/reads-free.txt")
read -r locked_p50 locked_max locked_bad < <(read_stats "$tmp/reads-locked.txt")
read -r put_code put_secs <"$tmp/put.txt" || true
put_code=${put_code:-0}
put_secs=${put_secs:-0}
load_end=$(loadavg)

server_5xx=$(grep -c ' answered 5' "$tmp/server.log" || true)

# ---- report ----
rps_ratio=$(ratio "${rps[manifest]}" "${rps[static]}")
p99_ratio=$(ratio "${p99[manifest]}" "${p99[static]}")
p50_ratio=$(ratio "${p50[manifest]}" "${p50[static]}")
findings_rps_ratio=$(ratio "${rps[findings]}" "${rps[static-findings]}")
findings_p50_ratio=$(ratio "${p50[findings]}" "${p50[static-findings]}")
findings_p99_ratio=$(ratio "${p99[findings]}" "${p99[static-findings]}")
streams_p99_ratio=$(ratio "${p99[healthz-streams]}" "${p99[healthz]}")
locked_p50_ratio=$(ratio "$locked_p50" "$free_p50")
locked_max_ratio=$(ratio "$locked_max" "$free_max")
wrk_version=$(wrk --version 2>&1 | head -n1 | awk '{print $2}' || true)
nginx_version=$("$nginx_bin" -v 2>&1 | sed 's/.*nginx\///')

label() {
  case $1 in
    static) echo "nginx static manifest (baseline)" ;;
    manifest) echo "pulse-server GET /api/agent/capabilities" ;;
    static-findings) echo "nginx static findings list (baseline)" ;;
    findings) echo "pulse-server GET /api/ai/patrol/findings" ;;
    healthz) echo "pulse-server GET /healthz" ;;
    healthz-streams) echo "pulse-server GET /healthz, $streams streams open" ;;
  esac
}

echo
echo "pulse-server HTTP load: wrk $wrk_version -t$threads -c$connections -d${seconds}s," \
  "$(nproc) CPUs, idle before the run ${idle_start}%," \
  "load average $load_start (start) / $load_end (end)"
echo "manifest $manifest_bytes bytes; findings list $findings_count findings," \
  "$findings_bytes bytes; nginx $nginx_version, 2 workers"
echo
printf '| %-46s | %10s | %9s | %9s | %9s | %6s |\n' run "req/s" "p50 ms" "p99 ms" requests errors
printf '|%s|%s:|%s:|%s:|%s:|%s:|\n' "$(printf -- '-%.0s' {1..48})" "$(printf -- '-%.0s' {1..11})" \
  "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..10})" \
  "$(printf -- '-%.0s' {1..7})"
for name in static manifest static-findings findings healthz healthz-streams; do
  printf '| %-46s | %10s | %9s | %9s | %9s | %6s |\n' "$(label "$name")" "${rps[$name]}" \
    "${p50[$name]}" "${p99[$name]}" "${total[$name]}" "${errors[$name]}"
done
echo
echo "manifest, pulse-server / nginx, mean of $rounds alternating pairs: req/s x$rps_ratio," \
  "p50 x$p50_ratio, p99 x$p99_ratio; req/s per pair:$round_ratios"
echo "findings list, pulse-server / nginx, mean of $rounds alternating pairs:" \
  "req/s x$findings_rps_ratio, p50 x$findings_p50_ratio, p99 x$findings_p99_ratio;" \
  "req/s per pair:$findings_round_ratios"
echo "/healthz p99 with $streams streams open / without: x$streams_p99_ratio" \
  "(server gauge pulse_http_open_streams during the run: ${open_streams:-?};" \
  "streams still open at the end: ${streams_end:-?})"
echo "GET /api/ai/sessions x$lock_reads, one at a time: alone p50 $free_p50 ms, max $free_max ms;" \
  "under a foreign write lock with a server write waiting p50 $locked_p50 ms, max $locked_max ms" \
  "(x$locked_p50_ratio, x$locked_max_ratio; lock held throughout: $lock_held_throughout;" \
  "the waiting PUT answered $put_code after ${put_secs} s)"
echo "server log lines for 5xx replies: $server_5xx"

json_run() {
  local name=$1
  printf '"%s":{"rps":%s,"p50_ms":%s,"p99_ms":%s,"requests":%s,"errors":%s}' "$name" \
    "${rps[$name]}" "${p50[$name]}" "${p99[$name]}" "${total[$name]}" "${errors[$name]}"
}
json=$(
  printf '{"date":"%s","cpus":%s,"idle_pct_before":%s,"loadavg_start":"%s","loadavg_end":"%s",' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(nproc)" "$idle_start" "$load_start" "$load_end"
  printf '"wrk":{"version":"%s","threads":%s,"connections":%s,"seconds":%s,"rounds":%s},' \
    "$wrk_version" "$threads" "$connections" "$seconds" "$rounds"
  printf '"nginx":{"version":"%s","workers":2},"manifest_bytes":%s,' "$nginx_version" \
    "$manifest_bytes"
  printf '"findings":{"count":%s,"bytes":%s},"streams":%s,"runs":{' "$findings_count" \
    "$findings_bytes" "$streams"
  json_run static
  printf ','
  json_run manifest
  printf ','
  json_run static-findings
  printf ','
  json_run findings
  printf ','
  json_run healthz
  printf ','
  json_run healthz-streams
  printf '},"ratios":{"manifest_rps_pulse_over_nginx":%s,"manifest_p50_pulse_over_nginx":%s,' \
    "$rps_ratio" "$p50_ratio"
  printf '"manifest_p99_pulse_over_nginx":%s,"healthz_p99_streams_over_none":%s,' \
    "$p99_ratio" "$streams_p99_ratio"
  printf '"manifest_rps_per_pair":"%s",' "${round_ratios# }"
  printf '"findings_rps_pulse_over_nginx":%s,"findings_p50_pulse_over_nginx":%s,' \
    "$findings_rps_ratio" "$findings_p50_ratio"
  printf '"findings_p99_pulse_over_nginx":%s,"findings_rps_per_pair":"%s"},' \
    "$findings_p99_ratio" "${findings_round_ratios# }"
  printf '"open_streams_gauge":%s,"streams_open_at_end":"%s","server_5xx_log_lines":%s,' \
    "${open_streams:-null}" "${streams_end:-}" "$server_5xx"
  printf '"reads_under_foreign_lock":{"reads":%s,"alone_p50_ms":%s,"alone_max_ms":%s,' \
    "$lock_reads" "$free_p50" "$free_max"
  printf '"locked_p50_ms":%s,"locked_max_ms":%s,"p50_ratio":%s,"max_ratio":%s,' \
    "$locked_p50" "$locked_max" "$locked_p50_ratio" "$locked_max_ratio"
  printf '"lock_held_throughout":%s,"waiting_put_status":%s,"waiting_put_seconds":%s}}' \
    "$lock_held_throughout" "$put_code" "$put_secs"
)
echo
echo "--- json"
echo "$json"
echo "--- end"
[ -z "$json_out" ] || echo "$json" >"$json_out"

failed=0
for name in static manifest static-findings findings healthz healthz-streams; do
  [ "${errors[$name]}" = 0 ] || failed=1
done
[ "$streams_ok" = true ] || failed=1
[ "$server_5xx" = 0 ] || failed=1
[ "$free_bad" = 0 ] && [ "$locked_bad" = 0 ] && [ "$put_code" = 200 ] || failed=1
if [ "$failed" != 0 ]; then
  say "errors during the run (see the errors column, the stream count, the 5xx lines and" \
    "the part 3 line: every read and the waiting PUT must answer 200)"
  say "server log tail: $(tail -n5 "$tmp/server.log")"
  exit 1
fi
