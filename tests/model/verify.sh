#!/usr/bin/env bash
# Verifies every LTL property of one spin model exhaustively (docs/model.md).
# Usage: verify.sh MODEL.pml WORK_DIR
#   - spin -a generates one verifier with every `ltl` claim; it is compiled with plain cc
#     (never with the sanitizer flags of the build: CFLAGS is ignored);
#   - a plain safety pass (-noclaim) checks assertions and invalid end states (deadlocks);
#   - each property runs as ./pan -a -N <name> over the full state space. Properties named
#     reach_* state that something never happens and must be VIOLATED (they prove the model
#     reaches the behaviour the real properties talk about); every other one must hold;
#   - a comment `@gap MACRO PROPERTY` documents a known gap of the C++: with -DMACRO the model
#     includes the gap and PROPERTY must be violated (so fixing the C++ and the model flags it).
# Each run must finish with "errors: 0" (or >0 for reach_*) and without "max search depth too
# small" (no truncation). Prints one line per property with the state count and time.
# Exit 77 (skipped) when spin or cc is missing, unless CI=true (then 1).
set -euo pipefail
model=${1:?usage: verify.sh MODEL.pml WORK_DIR}
work=${2:?usage: verify.sh MODEL.pml WORK_DIR}
depth=${PULSE_SPIN_DEPTH:-100000}

for tool in spin cc; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [ "${CI:-}" = "true" ]; then
      echo "verify: '$tool' is not installed (required under CI; cmake/install-deps.sh installs it)" >&2
      exit 1
    fi
    echo "verify: '$tool' is not installed; skipped (apt-get install spin)"
    exit 77
  fi
done

model_dir=$(cd "$(dirname "$model")" && pwd)
name=$(basename "$model" .pml)
mkdir -p "$work"
cd "$work"
failures=0

# build DIR [MACRO]: the model (copied, so that trails replay here) -> spin -a -> cc:
# DIR/pan (every claim) and, without MACRO, DIR/pan_safety (no claim: deadlocks and
# assertions). Prints the claim names.
build() {
  local dir=$1 macro=${2:-}
  mkdir -p "$dir"
  (
    cd "$dir"
    rm -f pan pan_safety pan.[chmbtp] ./*.trail ./*.pml
    cp "$model_dir"/*.pml .
    local defs=()
    if [ -n "$macro" ]; then
      defs=("-D$macro")
    fi
    spin "${defs[@]}" -a "$name.pml" >spin.out 2>&1 || { cat spin.out >&2; exit 1; }
    # Generated code: its warnings are not ours. Plain cc, no sanitizers: this is a search.
    env -u CFLAGS cc -w -O2 -DCOLLAPSE -DVECTORSZ=1024 -o pan pan.c
    if [ -z "$macro" ]; then
      env -u CFLAGS cc -w -O2 -DCOLLAPSE -DVECTORSZ=1024 -DNOCLAIM -DSAFETY -o pan_safety pan.c
    fi
  )
  sed -n 's/.*the model contains [0-9]* never claims: //p' "$dir/spin.out" | tr -d ',' |
    tr ' ' '\n' | grep -v '^$' | sort
}

# run DIR BINARY ARGS...: runs it; prints "errors states transitions seconds truncated"
run() {
  local dir=$1 bin=$2
  shift 2
  local out
  out=$(cd "$dir" && "./$bin" -m"$depth" "$@" 2>&1) || true
  printf '%s\n' "$out" >"$dir/last.out"
  local errors states transitions seconds truncated=0
  errors=$(printf '%s\n' "$out" | sed -n 's/.*errors: \([0-9]*\).*/\1/p' | tail -1)
  states=$(printf '%s\n' "$out" | sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' | tail -1)
  transitions=$(printf '%s\n' "$out" | sed -n 's/^ *\([0-9.e+]*\) transitions (= stored+matched).*/\1/p' | tail -1)
  seconds=$(printf '%s\n' "$out" | sed -n 's/^pan: elapsed time \([0-9.e+]*\).*/\1/p' | tail -1)
  if printf '%s\n' "$out" | grep -q 'max search depth too small'; then
    truncated=1
  fi
  echo "${errors:-?} ${states:-?} ${transitions:-?} ${seconds:-?} $truncated"
}

start_ns=$(date +%s%N)
mapfile -t claims < <(build main)
if [ "${#claims[@]}" -eq 0 ]; then
  echo "verify: $name has no ltl properties" >&2
  exit 1
fi

printf '%-34s %-9s %-9s %12s %12s %8s\n' "$name property" expected result states transitions seconds
report() {
  local prop=$1 expected=$2 errors=$3 states=$4 transitions=$5 seconds=$6 truncated=$7 dir=$8
  local result=fail
  if [ "$truncated" = 1 ]; then
    result=truncated
  elif [ "$expected" = holds ] && [ "$errors" = 0 ]; then
    result=holds
  elif [ "$expected" = violated ] && [ "$errors" != 0 ] && [ "$errors" != "?" ]; then
    result=violated
  fi
  printf '%-34s %-9s %-9s %12s %12s %8s\n' "$prop" "$expected" "$result" "$states" "$transitions" "$seconds"
  if [ "$result" != "$expected" ]; then
    failures=$((failures + 1))
    echo "---- $prop: expected $expected, got $result (pan output in $work/$dir/last.out)"
    tail -25 "$work/$dir/last.out"
    if [ "$expected" = holds ] && ls "$work/$dir"/*.trail >/dev/null 2>&1; then
      echo "---- counter-example (spin -t -g $name.pml in $work/$dir):"
      trail "$dir" | tail -80
    fi
  fi
}

# trail DIR [MACRO]: the counter-example of the last failing run: the model's own steps (not
# the included tables' internals), then the final values.
trail() {
  local dir=$1 macro=${2:-}
  local defs=()
  if [ -n "$macro" ]; then
    defs=("-D$macro")
  fi
  (cd "$work/$dir" && spin "${defs[@]}" -t -p "$name.pml" 2>&1 |
    grep -E "^ *[0-9]+:.*$name.pml:[0-9]+ .*\[|violated|^#processes|^\s+[a-z_]+(\[[0-9]\])? = " |
    grep -vE '\[(i|n|e[012]|v|res|s|r|tries|chk|mine|approvals|next) = |\[\(1\)\]|\[else\]|goto|DO\]|IF\]|^\s+(bg_i|bg_sim|bg_v|i|n|e[012]) = ' |
    sed -e 's/^ *\([0-9]*\):\s*proc  *\([0-9]*\) (\([A-Za-z]*\)[^)]*) [^ ]*:\([0-9]*\) (state [0-9]*)/\1: \3 line \4/') || true
}

# The model itself: no assertion violated, no invalid end state (deadlock), full search.
read -r e s t sec tr < <(run main pan_safety)
report "(safety: deadlocks, assertions)" holds "$e" "$s" "$t" "$sec" "$tr" main

for prop in "${claims[@]}"; do
  expected=holds
  case "$prop" in reach_*) expected=violated ;; esac
  read -r e s t sec tr < <(run main pan -a -N "$prop")
  report "$prop" "$expected" "$e" "$s" "$t" "$sec" "$tr" main
  rm -f main/*.trail
done

# Known gaps: the property must fail once the gap is modelled.
while read -r macro prop; do
  [ -z "$macro" ] && continue
  build "gap_$macro" "$macro" >/dev/null
  read -r e s t sec tr < <(run "gap_$macro" pan -a -N "$prop")
  report "$prop [with $macro]" violated "$e" "$s" "$t" "$sec" "$tr" "gap_$macro"
  if [ "${PULSE_SPIN_TRAILS:-0}" = 1 ] && ls "gap_$macro"/*.trail >/dev/null 2>&1; then
    echo "---- known gap $macro: counter-example for $prop"
    trail "gap_$macro" "$macro"
  fi
done < <(sed -n 's/.*@gap \([A-Z_][A-Z0-9_]*\) \([a-z_][a-z0-9_]*\).*/\1 \2/p' "$model")

elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
printf 'verify: %s: %d claim(s), %d failure(s), %d.%03d s\n' "$name" "${#claims[@]}" "$failures" \
  $((elapsed_ms / 1000)) $((elapsed_ms % 1000))
[ "$failures" -eq 0 ]
