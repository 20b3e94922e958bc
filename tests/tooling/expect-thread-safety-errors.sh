#!/usr/bin/env bash
# Proves clang's thread-safety analysis is on and can fail the build: the fixture compiles
# clean as written, and each planted lock mistake (PULSE_PLANT 1..3) is a -Wthread-safety error.
# Usage: expect-thread-safety-errors.sh CXX FIXTURE [INCLUDE_DIR...]
set -uo pipefail
cxx=$1 fixture=$2
shift 2
includes=()
for dir in "$@"; do
  case "$dir" in
    /usr/include | /usr/local/include | "") ;;  # implicit: -I would reorder the system headers
    *) includes+=("-I$dir") ;;
  esac
done
compile() {
  "$cxx" -std=c++20 -fsyntax-only -Wthread-safety -Werror "${includes[@]}" "$@" "$fixture" 2>&1
}
if ! out=$(compile -DPULSE_PLANT=0); then
  echo "FAIL: the clean fixture does not compile"; echo "$out"; exit 1
fi
expected=("" "writing variable 'n_' requires holding mutex 'mu_'"
  "calling function 'ResetLocked' requires holding mutex 'mu_'"
  "cannot call function 'Get' while mutex 'mu_' is held")
for plant in 1 2 3; do
  if out=$(compile -DPULSE_PLANT=$plant); then
    echo "FAIL: planted mistake $plant compiled"; exit 1
  fi
  if ! grep -q -- "${expected[$plant]}.*-Wthread-safety" <<<"$out"; then
    echo "FAIL: planted mistake $plant failed for another reason"; echo "$out"; exit 1
  fi
done
echo "-Wthread-safety rejects all 3 planted lock mistakes and accepts the clean fixture"
