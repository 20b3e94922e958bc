#!/usr/bin/env bash
# The dependency rule as a test (STYLE rule 2). Usage: check-layering.sh DIR
# Fails when a C++ file under DIR includes an adapter, app or I/O header, or calls a function
# that reaches the world directly (time, threads, environment, randomness, console, files)
# or throws. Time, threads, ids and output go through the core's ports instead.
# Line comments are ignored, so a comment may explain a rule without tripping it.
# When DIR has a MODULES file (libpulse-core/MODULES: module names, lowest first; "name: a b"
# narrows a module to exactly those), it also fails when a file under include/pulse/core/<m>/
# or src/<m>/ includes pulse/core/<x>/ for an <x> that is not <m> and not allowed below <m>,
# or when <m> is not listed at all.
set -euo pipefail
dir=${1:?usage: check-layering.sh DIR}

banned_includes=(
  'pulse/adapters/' 'pulse/apps/' 'httplib' 'SQLiteCpp' 'sqlite3' 'CLI/' 'sodium/randombytes'
  '<thread>' '<fstream>' '<iostream>' '<cstdio>' '<stdio.h>' '<filesystem>' '<future>'
  '<random>' '<csignal>' '<unistd.h>' '<sys/' '<netinet/' '<curl/' 'absl/time/clock.h'
)
banned_calls=(
  'system_clock::now' 'steady_clock::now' 'high_resolution_clock::now' 'absl::Now('
  'getenv' 'secure_getenv' 'std::thread' 'std::jthread' 'std::async' 'pthread_create'
  'rand(' 'random_device' 'randombytes' 'std::cout' 'std::cerr' 'std::clog' 'printf('
  'fopen(' 'throw' 'exit(' 'system('
)

# Each call pattern must start at an identifier boundary (so "Operand(" is not "rand(").
call_regexes=()
for pat in "${banned_calls[@]}"; do
  escaped=$(printf '%s' "$pat" | sed -e 's/[][\\.*^$(){}+?|]/\\&/g')
  if [[ "$pat" =~ [A-Za-z0-9_]$ ]]; then
    call_regexes+=("(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|\$)")
  else
    call_regexes+=("(^|[^A-Za-z0-9_])${escaped}")
  fi
done

# One pass of grep per file picks the lines worth checking.
candidate_regex='^[[:space:]]*#[[:space:]]*include'
for re in "${call_regexes[@]}"; do
  candidate_regex+="|$re"
done

declare -A module_rank=() module_allowed=()
modules_file="$dir/MODULES"
if [ -f "$modules_file" ]; then
  rank=0
  while IFS= read -r entry; do
    entry=${entry%%#*}
    [[ "$entry" =~ ^[a-z] ]] || continue
    name=${entry%%:*}
    name=${name// /}
    module_rank[$name]=$rank
    if [[ "$entry" == *:* ]]; then
      module_allowed[$name]=" ${entry#*:} "
    fi
    rank=$((rank + 1))
  done <"$modules_file"
fi

# The module a file belongs to ("" for files outside a module folder).
module_of() {
  local rel=${1#"$dir"/}
  case "$rel" in
    include/pulse/core/*/*) rel=${rel#include/pulse/core/} ;;
    src/*/*) rel=${rel#src/} ;;
    *) echo ""; return ;;
  esac
  echo "${rel%%/*}"
}

# Whether module $1 may include module $2.
may_include() {
  local from=$1 to=$2
  [ "$from" = "$to" ] && return 0
  [ -n "${module_rank[$to]+x}" ] || return 1
  if [ -n "${module_allowed[$from]+x}" ]; then
    [[ "${module_allowed[$from]}" == *" $to "* ]]
    return
  fi
  [ "${module_rank[$to]}" -lt "${module_rank[$from]}" ]
}

violations=0
while IFS= read -r -d '' file; do
  module=""
  if [ ${#module_rank[@]} -gt 0 ]; then
    module=$(module_of "$file")
    if [ -n "$module" ] && [ -z "${module_rank[$module]+x}" ]; then
      echo "$file: module order: '$module' is not listed in $modules_file"
      violations=$((violations + 1))
      module=""
    fi
  fi
  # Strip line comments, then look only at the lines that could break a rule (includes and lines
  # matching a banned call), numbered as in the file.
  candidates=$(sed -e 's|//.*$||' "$file" | grep -nE "$candidate_regex" || true)
  while IFS= read -r numbered; do
    [ -n "$numbered" ] || continue
    lineno=${numbered%%:*}
    line=${numbered#*:}
    if [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include ]]; then
      for pat in "${banned_includes[@]}"; do
        if [[ "$line" == *"$pat"* ]]; then
          echo "$file:$lineno: banned include '$pat': $line"
          violations=$((violations + 1))
        fi
      done
      if [ -n "$module" ] && [[ "$line" =~ \"pulse/core/([a-z_]+)/ ]]; then
        target=${BASH_REMATCH[1]}
        if ! may_include "$module" "$target"; then
          echo "$file:$lineno: module order: $module may not include $target: $line"
          violations=$((violations + 1))
        fi
      fi
      continue
    fi
    for i in "${!banned_calls[@]}"; do
      if [[ "$line" =~ ${call_regexes[$i]} ]]; then
        echo "$file:$lineno: banned call '${banned_calls[$i]}': $line"
        violations=$((violations + 1))
      fi
    done
  done <<<"$candidates"
done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

if [ "$violations" -gt 0 ]; then
  echo "layering: $violations violation(s) in $dir" >&2
  exit 1
fi
echo "layering: $dir is clean"
