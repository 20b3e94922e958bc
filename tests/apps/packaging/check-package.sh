#!/usr/bin/env bash
# The install tree and the .deb (cmake/PulseDebian.cmake, apps/CMakeLists.txt): `cmake --install`
# puts the four apps' man pages into share/man/man1 and the systemd units of pulse-server and
# pulse-agent into lib/systemd/system; CPack builds a .deb holding the apps, the man pages, the
# units (ExecStart at the configured bindir) and the post-install step that creates the pulse
# user.
#   check-package.sh BUILD_DIR FULL_BINDIR
set -euo pipefail
build=$(cd "$1" && pwd)
bindir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/pulse-package-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" >/dev/null
man1="$work/prefix/share/man/man1"
for app in pulse-server pulse-cli pulse-mcp pulse-agent; do
  [[ -s $man1/$app.1 ]] || fail "cmake --install left out $man1/$app.1"
  upper=$(tr 'a-z' 'A-Z' <<<"$app")
  grep -q "^\.TH $upper \"1\"" "$man1/$app.1" || fail "$app.1 has no .TH header"
  grep -q '^\.SH NAME' "$man1/$app.1" || fail "$app.1 has no NAME section"
done
grep -q 'findings' "$man1/pulse-cli.1" || fail "pulse-cli.1 does not list the findings command"
grep -q 'token' "$man1/pulse-server.1" || fail "pulse-server.1 does not mention tokens"
unit="$work/prefix/lib/systemd/system/pulse-server.service"
[[ -s $unit ]] || fail "cmake --install left out the systemd unit"
grep -q "^ExecStart=$bindir/pulse-server --data-dir /var/lib/pulse" "$unit" ||
  fail "the unit does not start $bindir/pulse-server"
grep -q '^User=pulse$' "$unit" || fail "the unit does not run as the pulse user"
agent_unit="$work/prefix/lib/systemd/system/pulse-agent.service"
[[ -s $agent_unit ]] || fail "cmake --install left out pulse-agent's systemd unit"
grep -q "^ExecStart=$bindir/pulse-agent " "$agent_unit" ||
  fail "pulse-agent's unit does not start $bindir/pulse-agent"
grep -q -- '--token-file /etc/pulse-agent/token' "$agent_unit" ||
  fail "pulse-agent's unit does not read the token from /etc/pulse-agent/token"

cpack --config "$build/CPackConfig.cmake" -B "$work/pkg" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$work"/pkg/*.deb)
[[ -n $deb ]] || fail "cpack made no .deb"
contents=$(dpkg-deb -c "$deb")
for path in "$bindir/pulse-server" "$bindir/pulse-cli" "$bindir/pulse-mcp" "$bindir/pulse-agent" \
  "/share/man/man1/pulse-cli.1" "/share/man/man1/pulse-agent.1" \
  "/lib/systemd/system/pulse-server.service" "/lib/systemd/system/pulse-agent.service"; do
  grep -q -- "$path\$" <<<"$contents" || fail "the .deb lacks $path"
done
info=$(dpkg-deb -I "$deb")
grep -q 'postinst' <<<"$info" || fail "the .deb has no postinst"
grep -q 'Depends:.*adduser' <<<"$info" || fail "the .deb does not depend on adduser"
dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./postinst | grep -q 'adduser --system' ||
  fail "the postinst does not create the pulse user"
echo "ok: man pages, unit and $(basename "$deb")"
