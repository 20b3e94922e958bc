#!/usr/bin/env bash
# The C++ transition tables and the spin model's must agree row for row (docs/model.md).
# Usage: check-tables.sh MODEL_TABLE_DUMP MODEL_DIR WORK_DIR
#   MODEL_TABLE_DUMP  prints the tables from the real C++ (SessionFsm, EffectOf, BatchGate,
#                     the action graph and the CAS of ActionStore)
#   MODEL_DIR/tables.pml  prints the same tables from the model's inlines (fsm.pml,
#                     actions.pml), which session.pml and lifecycle*.pml verify
# Any difference fails with the diff (- model, + C++). Exit 77 (skipped) without spin, unless
# CI=true (then 1).
set -euo pipefail
dump=${1:?usage: check-tables.sh MODEL_TABLE_DUMP MODEL_DIR WORK_DIR}
model_dir=${2:?usage: check-tables.sh MODEL_TABLE_DUMP MODEL_DIR WORK_DIR}
work=${3:?usage: check-tables.sh MODEL_TABLE_DUMP MODEL_DIR WORK_DIR}

if ! command -v spin >/dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "check-tables: spin is not installed (required under CI; cmake/install-deps.sh installs it)" >&2
    exit 1
  fi
  echo "check-tables: spin is not installed; skipped (apt-get install spin)"
  exit 77
fi

mkdir -p "$work"
rows='^(effect|fsm|batch|edge|astate|cas|plan|COUNTER_DEPENDENT|RESTORE_FAILED) '
"$dump" >"$work/cxx.raw"
grep -E "$rows" "$work/cxx.raw" >"$work/cxx.txt" || true
# Simulation of a deterministic model: any seed gives the same output (checked with two).
(cd "$model_dir" && spin -n1 -T tables.pml) >"$work/model.raw" 2>&1
(cd "$model_dir" && spin -n7 -T tables.pml) >"$work/model7.raw" 2>&1
grep -E "$rows" "$work/model.raw" >"$work/model.txt" || true
grep -E "$rows" "$work/model7.raw" >"$work/model7.txt" || true

status=0
if ! grep -q '1 process created' "$work/model.raw" || grep -qiE 'error|assertion' "$work/model.raw"; then
  echo "check-tables: the table simulation of the model did not run to its end:" >&2
  grep -viE "$rows" "$work/model.raw" | tail -20 >&2
  status=1
fi
if ! cmp -s "$work/model.txt" "$work/model7.txt"; then
  echo "check-tables: the model's tables depend on the simulation seed (a nondeterministic if)" >&2
  diff "$work/model.txt" "$work/model7.txt" | head -20 >&2
  status=1
fi
for side in model cxx; do
  if [ ! -s "$work/$side.txt" ]; then
    echo "check-tables: no rows from the $side side" >&2
    status=1
  fi
done
for kind in effect fsm batch edge astate cas; do
  printf 'check-tables: %-6s model %5d rows, C++ %5d rows\n' "$kind" \
    "$(grep -c "^$kind " "$work/model.txt" || true)" "$(grep -c "^$kind " "$work/cxx.txt" || true)"
done
if ! diff -u --label "model (libpulse-core/model/tables.pml)" --label "C++ (model_table_dump)" \
  "$work/model.txt" "$work/cxx.txt" >"$work/tables.diff"; then
  echo "check-tables: the C++ and the model disagree ($(grep -c '^[-+][a-zA-Z]' "$work/tables.diff") rows):" >&2
  head -80 "$work/tables.diff" >&2
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "check-tables: $(wc -l <"$work/cxx.txt") rows identical"
fi
exit "$status"
