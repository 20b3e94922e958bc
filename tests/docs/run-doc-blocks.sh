#!/usr/bin/env bash
# Docs that cannot drift (docs/testing.md, "The docs test"): runs every fenced shell block
# (```sh, ```bash, ```console) of the given markdown files against a freshly started pulse-server.
#
#   run-doc-blocks.sh BUILD_DIR FILE.md|DIR...     (a DIR stands for its *.md files)
#
# Each file gets its own server (the demo fleet, a fresh data dir ./pulse-data in a temporary
# working directory, a loopback port) and one bash process that runs the file's blocks in order
# under `set -Eeo pipefail`, so a variable a block sets (token=...) is there for the next one.
# In that working directory `build/release` is the build tree, `pulse-server`, `pulse-cli` and
# `pulse-mcp` are on PATH, the default address 127.0.0.1:7655 (and localhost:7655) in a block is
# rewritten to the test server's, and PULSE_SERVER and PULSE_API_TOKEN (scopes '*') are set;
# curl fails on an HTTP error status (--fail-with-body), so a stale route or body fails the block.
# In a ```console block only the lines after "$ " (and their continuation lines) run.
#
# A block that cannot run here is marked on the last non-blank line before its fence:
#   <!-- docs-test: skip (the reason) -->
# A marker without a reason is an error. Exit 0 when every runnable block succeeded; the count
# of blocks that ran and were skipped is printed either way.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR FILE.md..." >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
shift
server_bin="$build_dir/apps/pulse-server/pulse-server"
for bin in "$server_bin" "$build_dir/apps/pulse-cli/pulse-cli" \
  "$build_dir/apps/pulse-mcp/pulse-mcp"; do
  [[ -x $bin ]] || { echo "docs-test: $bin is not built" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/pulse-docs-test.XXXXXX")
server_pid=""
cleanup() {
  if [[ -n $server_pid ]]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin"
for app in pulse-server pulse-cli pulse-mcp; do
  ln -s "$build_dir/apps/$app/$app" "$work/bin/$app"
done

# Writes FILE's blocks as a bash script on stdout; "#docs-test run NAME" and
# "#docs-test skip NAME REASON" lines name each block. Exit 3 on a marker without a reason.
extract() {
  awk -v file="$1" '
    function flush_marker() { if (marker != "") { pending = marker; marker = "" } }
    BEGIN { in_block = 0; pending = ""; marker = "" }
    {
      line = $0
      if (!in_block) {
        if (line ~ /^[ \t]*<!--[ \t]*docs-test:/) {
          if (line !~ /docs-test:[ \t]*skip[ \t]*\([^)]+\)[ \t]*-->/) {
            printf "%s:%d: docs-test marker needs the form <!-- docs-test: skip (reason) -->\n",
                   file, NR > "/dev/stderr"
            bad = 1
          }
          reason = line
          sub(/^.*skip[ \t]*\(/, "", reason)
          sub(/\)[ \t]*-->.*$/, "", reason)
          marker = reason
          next
        }
        if (line ~ /^[ \t]*```/) {
          lang = line
          sub(/^[ \t]*```/, "", lang)
          sub(/[ \t].*$/, "", lang)
          in_block = 1
          shell = (lang == "sh" || lang == "bash" || lang == "console")
          console = (lang == "console")
          continued = 0
          if (shell) {
            name = file ":" NR
            if (marker != "") {
              printf "#docs-test skip %s %s\n", name, marker
              skipping = 1
            } else {
              printf "#docs-test run %s\n__block=%s\n", name, name
              skipping = 0
            }
          }
          marker = ""
          next
        }
        if (line !~ /^[ \t]*$/) marker = ""
        next
      }
      if (line ~ /^[ \t]*```[ \t]*$/) {
        in_block = 0
        next
      }
      if (!shell || skipping) next
      if (console) {
        if (continued) {
          print line
        } else if (line ~ /^[ \t]*\$ /) {
          sub(/^[ \t]*\$ /, "", line)
          print line
        } else {
          next
        }
        continued = (line ~ /\\$/)
        next
      }
      print line
    }
    END { if (in_block) { printf "%s: unterminated fence\n", file > "/dev/stderr"; bad = 1 }
          exit bad ? 3 : 0 }
  ' "$1"
}

# Starts pulse-server in $1 (the working directory); sets server_pid and port.
start_server() {
  local dir=$1
  "$server_bin" --data-dir "$dir/pulse-data" --listen 127.0.0.1:0 >"$dir/server.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 1 200); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$dir/server.log" |
      head -n 1)
    [[ -n $port ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  echo "docs-test: pulse-server did not start:" >&2
  cat "$dir/server.log" >&2
  return 1
}

stop_server() {
  kill "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null
  server_pid=""
}

# A directory stands for its *.md files.
files=()
for arg in "$@"; do
  if [[ -d $arg ]]; then
    files+=("${arg%/}"/*.md)
  else
    files+=("$arg")
  fi
done

total_ran=0
total_skipped=0
failed=0
index=0
for md in "${files[@]}"; do
  index=$((index + 1))
  name=$md
  script=$(extract "$md") || {
    echo "docs-test: $name: malformed markers or fences" >&2
    failed=1
    continue
  }
  skipped=$(grep -c '^#docs-test skip ' <<<"$script")
  runnable=$(grep -c '^#docs-test run ' <<<"$script")
  while read -r _ _ block reason; do
    echo "docs-test: skip $block ($reason)"
  done < <(grep '^#docs-test skip ' <<<"$script")
  total_skipped=$((total_skipped + skipped))
  [[ $runnable -eq 0 ]] && continue

  dir="$work/$index"
  mkdir -p "$dir/build"
  ln -s "$build_dir" "$dir/build/release"
  start_server "$dir" || { failed=1; continue; }
  token=$("$server_bin" token create --data-dir "$dir/pulse-data" --name docs-test \
    --scopes '*' 2>/dev/null) || { echo "docs-test: token create failed" >&2; failed=1; }
  script=$(sed "s|127\.0\.0\.1:7655|127.0.0.1:$port|g; s|localhost:7655|127.0.0.1:$port|g" \
    <<<"$script")
  {
    echo 'set -Eeo pipefail'
    # An HTTP error fails the block (its body still printed); no progress meter.
    echo 'curl() { command curl --fail-with-body -sS "$@"; echo; }'
    echo 'trap '\''echo "docs-test: FAILED $__block (exit $?, after the line shown last)" >&2'\'' ERR'
    echo 'set -x'
    echo "$script"
    echo 'set +x'
  } >"$dir/blocks.sh"
  echo "docs-test: $name: $runnable block(s) against http://127.0.0.1:$port"
  (
    cd "$dir" &&
      PATH="$work/bin:$PATH" PULSE_SERVER="http://127.0.0.1:$port" PULSE_API_TOKEN="$token" \
        HOME="$dir" XDG_CONFIG_HOME="$dir/.config" \
        timeout 60 bash "$dir/blocks.sh" </dev/null >"$dir/blocks.log" 2>&1
  )
  status=$?
  if [[ $status -ne 0 ]]; then
    echo "docs-test: $name: a block failed (exit $status); its trace (set -x) and output:" >&2
    tail -n 40 "$dir/blocks.log" | cut -c 1-400 >&2
    echo "docs-test: the server's log:" >&2
    tail -n 20 "$dir/server.log" >&2
    failed=1
  else
    total_ran=$((total_ran + runnable))
  fi
  stop_server
done

echo "docs-test: $total_ran block(s) ran, $total_skipped skipped"
exit $failed
