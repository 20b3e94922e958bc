#!/usr/bin/env bash
# Lint: the formatting check (.clang-format) and clang-tidy (.clang-tidy). .ci/run runs the
# format step and tidy over the product code; docs/architecture.md ("Tooling: format, lint,
# thread-safety analysis") says what is enforced where. Exits non-zero when a step finds
# something (or clang-tidy fails on a unit).
# Usage: cmake/lint.sh [format] [tidy]      (default: both)
#   format  clang-format --dry-run --Werror over every tracked .cc/.h in libpulse-core,
#           adapters, apps and tests (but tests/e2e, the end-to-end suites, kept byte-for-byte
#           as they were written); lists the files it would change.
#   tidy    clang-tidy over the product code's translation units (libpulse-core, adapters,
#           apps) from a compile database, in parallel; prints the findings and a count per
#           check. Headers are checked through the units that include them (HeaderFilterRegex).
# Environment knobs (all optional):
#   PULSE_LINT_BUILD_DIR  compile database directory (default: build/lint, configured with
#                         clang++ when it has no compile_commands.json; nothing is built)
#   PULSE_LINT_JOBS       clang-tidy processes at once (default: 2)
#   PULSE_LINT_PATHS      space-separated source folders tidy checks (default: the product code)
#   PULSE_LINT_EXCLUDE    space-separated folders left out: their units are not run and
#                         findings in their files (headers included) are not counted
#   PULSE_TIDY_CONFIG     a clang-tidy config file to use instead of .clang-tidy
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build_dir=${PULSE_LINT_BUILD_DIR:-$root/build/lint}
jobs=${PULSE_LINT_JOBS:-2}
read -r -a tidy_paths <<<"${PULSE_LINT_PATHS:-libpulse-core adapters apps}"
read -r -a tidy_exclude <<<"${PULSE_LINT_EXCLUDE:-}"
steps=("$@")
if [ ${#steps[@]} -eq 0 ]; then
  steps=(format tidy)
fi

status=0

lint_format() {
  echo "=== format: clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1)"
  local files=() bad=()
  mapfile -t files < <(git ls-files -- 'libpulse-core/*.cc' 'libpulse-core/*.h' \
    'adapters/*.cc' 'adapters/*.h' 'apps/*.cc' 'apps/*.h' 'tests/*.cc' 'tests/*.h' |
    grep -v '/node_modules/' | grep -v '^tests/e2e/')
  if [ ${#files[@]} -eq 0 ]; then
    echo "format: no files (lint.sh reads the file list from git: run it in a git checkout)"
    status=1
    return
  fi
  local f
  for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      bad+=("$f")
    fi
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf '  would reformat %s\n' "${bad[@]}"
    echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format" \
      "(clang-format -i FILE, or git clang-format for changed lines only)"
    status=1
  else
    echo "format: ${#files[@]} files clean"
  fi
}

lint_tidy() {
  echo "=== tidy: $(clang-tidy --version | grep -o 'version [0-9.]*' | head -1)"
  if [ ! -f "$build_dir/compile_commands.json" ]; then
    CXX=${CXX:-clang++} cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DPULSE_BUILD_TESTS=OFF >/dev/null
  fi
  local pattern exclude='^$' units=()
  pattern=$(printf '|%s' "${tidy_paths[@]}")
  pattern="^$root/(${pattern:1})/"
  if [ ${#tidy_exclude[@]} -gt 0 ]; then
    exclude=$(printf '|%s' "${tidy_exclude[@]}")
    exclude="^($root/)?(${exclude:1})/"
  fi
  mapfile -t units < <(sed -n 's/^  "file": "\(.*\)"$/\1/p' "$build_dir/compile_commands.json" |
    grep -E "$pattern" | grep -vE "$exclude" | sort -u)
  if [ ${#units[@]} -eq 0 ]; then
    echo "tidy: no translation unit under ${tidy_paths[*]} in $build_dir/compile_commands.json"
    status=1
    return
  fi
  local out
  out=$(mktemp -d)
  local start=$SECONDS
  # One log per unit, so parallel runs do not interleave their diagnostics.
  # shellcheck disable=SC2016  # the sh -c script expands its own arguments
  # A unit clang-tidy cannot check (it crashed, or a compile error) leaves a .failed file.
  printf '%s\n' "${units[@]}" | xargs -P "$jobs" -I{} sh -c \
    'log="$4/$(printf %s "$3" | tr / _)"
     clang-tidy --quiet -p "$1" ${2:+"--config-file=$2"} "$3" >"$log.log" 2>&1 ||
       echo "$3" >"$log.failed"' \
    _ "$build_dir" "${PULSE_TIDY_CONFIG:-}" {} "$out"
  # A header's finding shows once per unit that includes it: count each place once.
  cat "$out"/*.log | grep -E '^/[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[^]]+\]$' |
    grep -vE "$exclude" | sed "s|^$root/||" | sort -u >"$out/findings.txt" || true
  local n
  n=$(wc -l <"$out/findings.txt")
  if [ "$n" -gt 0 ]; then
    cat "$out/findings.txt"
    echo "--- findings per check"
    grep -oE '\[[^]]+\]$' "$out/findings.txt" | tr -d '[]' | tr ',' '\n' | sort | uniq -c |
      sort -rn
    echo "--- findings per folder"
    cut -d/ -f1-2 "$out/findings.txt" | sed 's/:.*//' | sort | uniq -c | sort -rn
    status=1
  fi
  local failed=()
  mapfile -t failed < <(cat "$out"/*.failed 2>/dev/null | sed "s|^$root/||")
  if [ ${#failed[@]} -gt 0 ]; then
    printf '  clang-tidy failed on %s\n' "${failed[@]}"
    status=1
  fi
  echo "tidy: $n findings, ${#failed[@]} units failed, in ${#units[@]} units" \
    "(${tidy_paths[*]}${tidy_exclude[*]:+ but ${tidy_exclude[*]}}), $((SECONDS - start))s" \
    "with $jobs jobs"
  rm -rf "$out"
}

for step in "${steps[@]}"; do
  case "$step" in
    format) lint_format ;;
    tidy) lint_tidy ;;
    *)
      echo "unknown step '$step' (format, tidy)" >&2
      exit 2
      ;;
  esac
done
exit "$status"
