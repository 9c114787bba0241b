#!/bin/bash
# Paired timing of two builds of the core: OLD and NEW `examples/run_json` binaries alternated N times on
# the same scenario files (old first in odd rounds, new first in even ones); prints "case old|new
# user_seconds" lines, user time to the millisecond (bash's `time`, from the child's rusage), after a
# "# cpu: ..." line naming the processor. `WALL=1`: wall-clock seconds instead (for runs on more than one
# thread, whose user time adds up the threads'), said on a "# clock: wall" line.
#   OLD=/path/old/target/release/examples/run_json NEW=target/release/examples/run_json N=5 benches/pair.sh S1.json S2.json
set -euo pipefail
: "${OLD:?set OLD to the old run_json binary}" "${NEW:=target/release/examples/run_json}" "${N:=5}" "${WALL:=0}"
TIMEFORMAT=%3U
[ "$WALL" = 1 ] && TIMEFORMAT=%3R
# the processor and its data caches first, as the suite's stamps name them (`benches/bench.py --cpu`, the
# standard library only; `benches/pairsum.py` reads it back): the VM is not always on the same kind of host
echo "# cpu: $(python3 "$(dirname "$0")/bench.py" --cpu 2>/dev/null || echo unknown)"
[ "$WALL" = 1 ] && echo "# clock: wall"
for f in "$@"; do
  for i in $(seq "$N"); do
    order="old new"; [ $((i % 2)) -eq 0 ] && order="new old"
    for b in $order; do
      bin=$OLD; [ "$b" = new ] && bin=$NEW
      u=$( { time "$bin" "$f" > /dev/null 2>&1; } 2>&1 )
      echo "$(basename "$f" .json) $b $u"
    done
  done
done
