# Shell functions shared by the benchmark scripts (bench-http.sh, soak-rss.sh); sourced, not run.
# Each script defines say and die before sourcing this file.

# bench_build BUILD_DIR LOG TARGET...: configures BUILD_DIR as the Release build bench.sh uses
# and builds the targets; on failure prints the log's tail and dies.
bench_build() {
  local dir=$1 log=$2
  shift 2
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPULSE_BUILD_TESTS=ON \
    -DPULSE_SANITIZE= >/dev/null
  if ! cmake --build "$dir" --target "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    die "the build failed ($log)"
  fi
}

# stop_pid PID: SIGTERM, then SIGKILL after 5 s; reaps the child. No-op for an empty or dead PID.
stop_pid() {
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# await_line FILE SED_SCRIPT PID TRIES: polls FILE every 0.1 s (at most TRIES times, while PID
# lives) until `sed -n SED_SCRIPT` prints something, and prints its first line. FILE must exist
# before the process that writes it starts (create it with `: >FILE`).
await_line() {
  local file=$1 script=$2 pid=$3 tries=$4 found=""
  for _ in $(seq "$tries"); do
    found=$(sed -n -E "$script" "$file" | head -n1)
    [ -n "$found" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  printf '%s' "$found"
}

# The bound port from pulse-server's `listening on 127.0.0.1:PORT` line in LOG, or nothing.
await_server_port() {  # LOG PID
  await_line "$1" 's/.*listening on 127\.0\.0\.1:([0-9]+).*/\1/p' "$2" 200
}

# write_bench_fleet FILE: the fleet file of the scale benchmarks (bench-http-scale.sh,
# bench-startup-ab.sh): one node and 999 VMs, vm:1000 ... vm:1998, the resources that
# `seed_findings` puts its first 999 findings on.
write_bench_fleet() {
  {
    printf '{"schema_version":1,"name":"bench-scale","nodes":[{"id":"node:pve1","name":"pve1",'
    printf '"status":"online"}],"vms":['
    for i in $(seq 0 998); do
      [ "$i" = 0 ] || printf ','
      printf '{"id":"vm:%d","vmid":%d,"name":"bench-vm-%d","node":"node:pve1","status":"running"}' \
        $((1000 + i)) $((1000 + i)) "$i"
    done
    printf ']}\n'
  } >"$1"
}
