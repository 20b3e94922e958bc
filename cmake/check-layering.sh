#!/usr/bin/env bash
# The dependency rule as a test (STYLE rule 2). Usage: check-layering.sh DIR
# Fails when a C++ file under DIR includes an adapter, app or I/O header, or calls a function
# that reaches the world directly (time, threads, environment, randomness, console, files)
# or throws. Time, threads, ids and output go through the core's ports instead.
# Line comments are ignored, so a comment may explain a rule without tripping it.
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

violations=0
while IFS= read -r -d '' file; do
  # Strip line comments, keep line numbers.
  stripped=$(sed -e 's|//.*$||' "$file")
  lineno=0
  while IFS= read -r line; do
    lineno=$((lineno + 1))
    if [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include ]]; then
      for pat in "${banned_includes[@]}"; do
        if [[ "$line" == *"$pat"* ]]; then
          echo "$file:$lineno: banned include '$pat': $line"
          violations=$((violations + 1))
        fi
      done
      continue
    fi
    for i in "${!banned_calls[@]}"; do
      if [[ "$line" =~ ${call_regexes[$i]} ]]; then
        echo "$file:$lineno: banned call '${banned_calls[$i]}': $line"
        violations=$((violations + 1))
      fi
    done
  done <<<"$stripped"
done < <(find "$dir" -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

if [ "$violations" -gt 0 ]; then
  echo "layering: $violations violation(s) in $dir" >&2
  exit 1
fi
echo "layering: $dir is clean"
