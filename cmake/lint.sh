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
#   PULSE_TIDY_RECORD=1   after the run, write the keys of the clean units to PULSE_TIDY_CACHE
#   PULSE_TIDY_ALL=1      check every unit, whatever PULSE_TIDY_CACHE says
#   PULSE_TIDY_CACHE      the clean units' keys (default: cmake/tidy-clean.txt, committed)
# The cache: clang-tidy takes 10-20 s of CPU a unit (docs/architecture.md, "Tooling"), and most
# units are as they were when tidy last passed on them. A unit's key is the sha256 of
# clang-tidy's version, the config, the unit's compile command and its preprocessed text (every
# header it reads, system headers included), with this checkout's path taken out; a unit whose
# key is in the cache is not run again. Only PULSE_TIDY_RECORD=1 writes the cache, and only the
# keys of units that were clean, so CI (which never records) checks exactly the units whose
# input changed since a clean run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build_dir=${PULSE_LINT_BUILD_DIR:-$root/build/lint}
jobs=${PULSE_LINT_JOBS:-2}
read -r -a tidy_paths <<<"${PULSE_LINT_PATHS:-libpulse-core adapters apps}"
read -r -a tidy_exclude <<<"${PULSE_LINT_EXCLUDE:-}"
tidy_cache=${PULSE_TIDY_CACHE:-$root/cmake/tidy-clean.txt}
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
  # The cache of clean units (tidy_cache, above): each unit's key, from its preprocessed text.
  local config=${PULSE_TIDY_CONFIG:-$root/.clang-tidy} salt
  salt=$( (clang-tidy --version | grep -o 'version [0-9.]*' | head -1; cat "$config") |
    sha256sum | cut -c1-64)
  tidy_commands "$out"
  # shellcheck disable=SC2016  # the sh -c script expands its own arguments
  # A unit that does not preprocess gets no key (never clean in the cache): clang-tidy runs on it.
  printf '%s\n' "${units[@]}" | xargs -P "$jobs" -I{} sh -c \
    'name=$(printf %s "$3" | tr / _)
     if (cd "$(cat "$4/$name.dir")" && eval "$(cat "$4/$name.pre")") >"$4/$name.i" 2>/dev/null
     then
       { printf "%s\n" "$2"; cat "$4/$name.cmd" "$4/$name.i"; } | sed "s|$1|@|g" |
         sha256sum | cut -c1-64 >"$4/$name.key"
     else
       echo none >"$4/$name.key"
     fi
     rm -f "$4/$name.i"' \
    _ "$root" "$salt" {} "$out"
  local todo=() skipped=0 unit name key
  for unit in "${units[@]}"; do
    name=$(printf %s "$unit" | tr / _)
    key=$(cat "$out/$name.key")
    if [ -z "${PULSE_TIDY_ALL:-}" ] && [ -f "$tidy_cache" ] &&
      grep -qxF "$key ${unit#"$root"/}" "$tidy_cache"; then
      skipped=$((skipped + 1))
      touch "$out/$name.clean"
    else
      todo+=("$unit")
    fi
  done
  echo "tidy: ${#units[@]} units; $skipped unchanged since a clean run (${tidy_cache#"$root"/})," \
    "${#todo[@]} to check"
  # One log per unit, so parallel runs do not interleave their diagnostics.
  # A unit clang-tidy cannot check (it crashed, or a compile error) leaves a .failed file.
  # shellcheck disable=SC2016  # the sh -c script expands its own arguments
  [ ${#todo[@]} -eq 0 ] || printf '%s\n' "${todo[@]}" | xargs -P "$jobs" -I{} sh -c \
    'log="$4/$(printf %s "$3" | tr / _)"
     clang-tidy --quiet -p "$1" ${2:+"--config-file=$2"} "$3" >"$log.log" 2>&1 ||
       echo "$3" >"$log.failed"' \
    _ "$build_dir" "${PULSE_TIDY_CONFIG:-}" {} "$out"
  # A header's finding shows once per unit that includes it: count each place once.
  local finding='^/[^ ]+:[0-9]+:[0-9]+: (warning|error): .*\[[^]]+\]$'
  cat "$out"/*.log 2>/dev/null | grep -E "$finding" | grep -vE "$exclude" | sed "s|^$root/||" |
    sort -u >"$out/findings.txt" || true
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
  echo "tidy: $n findings, ${#failed[@]} units failed, in ${#todo[@]} of ${#units[@]} units" \
    "(${tidy_paths[*]}${tidy_exclude[*]:+ but ${tidy_exclude[*]}}), $((SECONDS - start))s" \
    "with $jobs jobs"
  if [ -n "${PULSE_TIDY_RECORD:-}" ]; then
    tidy_record "$out" "$finding" "$exclude" "${units[@]}"
  fi
  rm -rf "$out"
}

# For each unit of the compile database, in `out`: NAME.dir (where its command runs), NAME.cmd
# (the command) and NAME.pre (the command that writes its preprocessed text to stdout, comments
# kept for NOLINT: -E -P -C in place of -o OBJECT -c). JSON's \\ and \" are undone; the command
# stays shell-quoted, as CMake wrote it, for eval.
tidy_commands() {
  local out=$1
  awk -v out="$out" '
    function unjson(s) { gsub(/\\\\/, "\001", s); gsub(/\\"/, "\"", s); gsub(/\001/, "\\", s); return s }
    /^  "directory": "/ { dir = unjson(substr($0, 17, length($0) - 18)) }
    /^  "command": "/ { cmd = unjson(substr($0, 15, length($0) - 16)) }
    /^  "file": "/ {
      file = unjson(substr($0, 12, length($0) - 12))
      name = file; gsub(/\//, "_", name)
      pre = cmd; sub(/ -o [^ ]+ -c /, " -E -P -C ", pre)
      print dir > (out "/" name ".dir"); close(out "/" name ".dir")
      print cmd > (out "/" name ".cmd"); close(out "/" name ".cmd")
      print pre > (out "/" name ".pre"); close(out "/" name ".pre")
    }' "$build_dir/compile_commands.json"
}

# PULSE_TIDY_RECORD: writes tidy_cache anew: the keys of this run's clean units (skipped as
# unchanged, or checked without a finding or a failure), and the entries of units this run did
# not cover (other PULSE_LINT_PATHS) as they were.
tidy_record() {
  local out=$1 finding=$2 exclude=$3
  shift 3
  local unit name rel keep
  keep=$(mktemp)
  if [ -f "$tidy_cache" ]; then
    grep -v '^#' "$tidy_cache" >"$keep" || true
  fi
  for unit in "$@"; do
    rel=${unit#"$root"/}
    awk -v r="$rel" '$2 != r' "$keep" >"$keep.new"
    mv "$keep.new" "$keep"
    name=$(printf %s "$unit" | tr / _)
    if [ "$(cat "$out/$name.key")" = none ]; then
      continue
    fi
    if [ -f "$out/$name.clean" ] || { [ -f "$out/$name.log" ] && [ ! -f "$out/$name.failed" ] &&
      ! grep -E "$finding" "$out/$name.log" | grep -qvE "$exclude"; }; then
      echo "$(cat "$out/$name.key") $rel" >>"$keep"
    fi
  done
  {
    echo "# Written by PULSE_TIDY_RECORD=1 cmake/lint.sh tidy: a unit whose key is here was clean;"
    echo "# lint.sh skips it while its key (clang-tidy's version, the config, its compile command and"
    echo "# its preprocessed text) is unchanged. Never edit by hand (docs/architecture.md, Tooling)."
    sort -k2 "$keep"
  } >"$tidy_cache"
  rm -f "$keep"
  echo "tidy: recorded $(grep -vc '^#' "$tidy_cache") clean units in ${tidy_cache#"$root"/}"
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
