#!/usr/bin/env bash
# The interop_tools ctest: are the interop tests' npm tools installed and runnable?
# Usage: check-tools.sh NODE AIMOCK_CLI MANIFEST
# Exit 0 when they are; when they are not: 1 with CI=true or PULSE_REQUIRE_INTEROP=1 (CI must
# not lose the interop tests silently), else 77, which ctest reports as skipped.
set -uo pipefail
node=$1 aimock_cli=$2 manifest=$3

fix="run cmake/install-node-tools.sh, then reconfigure"
missing() {
  if [ "${CI:-}" = true ] || [ "${PULSE_REQUIRE_INTEROP:-0}" = 1 ]; then
    echo "FAIL: $*; the interop tests did not run ($fix)" >&2
    exit 1
  fi
  echo "SKIP: $*; the interop tests are not registered ($fix)"
  exit 77
}

[ -x "$node" ] || missing "no node at $node"
[ -f "$aimock_cli" ] || missing "aimock is not installed ($aimock_cli)"
version=$("$node" --version 2>/dev/null | sed 's/^v//') || missing "$node does not run"
min=$(sed -n 's/.*"node": *">=\([0-9.]*\)".*/\1/p' "$manifest" | head -n 1)
if [ "$(printf '%s\n%s\n' "$min" "$version" | sort -V | head -n 1)" != "$min" ]; then
  missing "node $version at $node is older than $min"
fi
"$node" "$aimock_cli" --help >/dev/null 2>&1 || missing "aimock does not start on node $version"
aimock_version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$(dirname "$aimock_cli")/../package.json")
echo "interop tools: node $version ($node), aimock $aimock_version"
