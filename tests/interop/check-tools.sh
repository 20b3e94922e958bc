#!/usr/bin/env bash
# The interop_tools ctest: are the interop tests' npm tools installed and runnable?
# Usage: check-tools.sh NODE AIMOCK_CLI MANIFEST [PACKAGE_JSON...]
# Each PACKAGE_JSON is the package.json of a further pinned package that must be installed (the
# MCP SDK). Exit 0 when they are; when they are not: 1 with CI=true or PULSE_REQUIRE_INTEROP=1
# (CI must not lose the interop tests silently), else 77, which ctest reports as skipped.
set -uo pipefail
node=$1 aimock_cli=$2 manifest=$3
shift 3

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
# "<name> <version>" of an installed package.json, and the version the manifest pins for
# <name> ("" for none). node reads the JSON: it runs (checked above).
describe() {
  "$node" -e 'const fs = require("fs");
    const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    console.log(j.name + " " + j.version)' "$1"
}
pinned() {
  "$node" -e 'const fs = require("fs");
    const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    console.log((j.dependencies || {})[process.argv[2]] || "")' "$manifest" "$1"
}
found=$(describe "$(dirname "$aimock_cli")/../package.json" | sed 's|^@copilotkit/||')
for package_json in "$@"; do
  [ -f "$package_json" ] || missing "$(dirname "$package_json") is not installed"
  read -r name installed < <(describe "$package_json") || missing "$package_json does not parse"
  want=$(pinned "$name")
  if [ "$want" != "$installed" ]; then
    missing "$name ${installed:-?} is installed, but $manifest pins ${want:-nothing}"
  fi
  found="$found, $name $installed"
done
echo "interop tools: node $version ($node), $found"
