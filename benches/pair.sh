#!/bin/bash
# Paired timing of two builds of the core: OLD and NEW `examples/run_json` binaries alternated N times on
# the same scenario files; prints "case old|new user_seconds" lines.
#   OLD=/path/old/target/release/examples/run_json NEW=target/release/examples/run_json N=5 benches/pair.sh S1.json S2.json
set -euo pipefail
: "${OLD:?set OLD to the old run_json binary}" "${NEW:=target/release/examples/run_json}" "${N:=5}"
t=$(mktemp)
trap 'rm -f "$t"' EXIT
for f in "$@"; do
  for _ in $(seq "$N"); do
    for b in old new; do
      bin=$OLD; [ "$b" = new ] && bin=$NEW
      /usr/bin/time -f "%U" -o "$t" "$bin" "$f" > /dev/null 2>&1
      echo "$(basename "$f" .json) $b $(tail -1 "$t")"
    done
  done
done
