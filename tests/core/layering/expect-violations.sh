#!/usr/bin/env bash
# Proves the layering checker can fail: it must reject every planted violation in bad/
# (7 includes + 7 calls + 3 breaches of the module order in bad/MODULES) and accept good/.
set -uo pipefail
checker=$1 fixtures=$2
out=$(bash "$checker" "$fixtures/bad" 2>&1)
status=$?
if [ "$status" -eq 0 ]; then
  echo "FAIL: the checker accepted a tree full of violations"; echo "$out"; exit 1
fi
count=$(grep -c ': banned ' <<<"$out")
if [ "$count" -ne 14 ]; then
  echo "FAIL: expected 14 violations, the checker reported $count"; echo "$out"; exit 1
fi
for needle in "'<iostream>'" "'<thread>'" "'httplib'" "'pulse/adapters/'" "'SQLiteCpp'" \
              "'CLI/'" "'<fstream>'" "'system_clock::now'" "'steady_clock::now'" "'getenv'" \
              "'std::thread'" "'rand('" "'std::cout'" "'throw'"; do
  grep -q -- "$needle" <<<"$out" || { echo "FAIL: no report for $needle"; echo "$out"; exit 1; }
done
order=$(grep -c ': module order: ' <<<"$out")
if [ "$order" -ne 3 ]; then
  echo "FAIL: expected 3 module-order violations, the checker reported $order"; echo "$out"; exit 1
fi
for needle in "model may not include loop" "ports may not include json" "'unlisted' is not listed"; do
  grep -q -- "$needle" <<<"$out" || { echo "FAIL: no report for $needle"; echo "$out"; exit 1; }
done
if ! bash "$checker" "$fixtures/good" >/dev/null 2>&1; then
  echo "FAIL: the checker rejected a clean tree"; bash "$checker" "$fixtures/good"; exit 1
fi
echo "layering checker rejects all 17 planted violations and accepts the clean tree"
