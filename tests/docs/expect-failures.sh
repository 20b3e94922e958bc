#!/usr/bin/env bash
# The docs test fails on a stale command: runs run-doc-blocks.sh on the pages in fixtures/ and
# checks that each one fails for its reason.  expect-failures.sh BUILD_DIR
set -uo pipefail
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
status=0
expect() {  # expect FIXTURE TEXT...: run-doc-blocks.sh fails on FIXTURE and prints each TEXT
  local fixture=$1
  shift
  local out
  out=$(bash run-doc-blocks.sh "$build_dir" "fixtures/$fixture" 2>&1)
  if [[ $? -eq 0 ]]; then
    echo "FAIL: fixtures/$fixture passed; it must fail:"
    echo "$out"
    status=1
    return
  fi
  for text in "$@"; do
    if ! grep -qF -- "$text" <<<"$out"; then
      echo "FAIL: fixtures/$fixture: the output lacks: $text"
      echo "$out"
      status=1
    fi
  done
}
expect stale.md "FAILED fixtures/stale.md:12" "unknown command 'findigns'" \
  "skip fixtures/stale.md:8 (kept out on purpose)" "0 block(s) ran, 1 skipped"
expect bad-marker.md "fixtures/bad-marker.md:3: docs-test marker needs the form"
expect stale-route.md "FAILED fixtures/stale-route.md:3" "404"
[[ $status -eq 0 ]] && echo "ok: every stale page failed for its reason"
exit $status
