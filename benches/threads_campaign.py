"""Every bundled scenario, with its own scheme and the presets it takes, run with `run.event_order = "node"`
on one thread and split in two parts on two (`run.threads = 2`): the flows frame, ports frame, time series
and summary (but the event count, the peak of packets in flight and the wall time) must be the same.

    .venv/bin/python benches/threads_campaign.py [--duration 3ms]

Prints a line per refused or different combination and a closing count; exit status 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import sys

import detailsim
from detailsim import _core
from detailsim.scenario import bundled_scenarios

SCHEMES = [None, "fh", "detail", "dctcp", "pfabric", "pias", "dibs", "las", "lps"]
# what may differ between the two: lapsed timers dropped at other moments, the parts' peaks added up
SAME_BUT = {"events", "max_in_flight", "wall_s"}


def strip(d, drop=SAME_BUT):
    if isinstance(d, dict):
        return {k: strip(v, drop) for k, v in d.items() if k not in drop}
    if isinstance(d, list):
        return [strip(v, drop) for v in d]
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", default="3ms")
    a = ap.parse_args()
    names = list(bundled_scenarios())
    counts = {"same": 0, "refused": 0, "different": 0}
    node = {"run.event_order": "node"}
    for sc in names:
        if sc.startswith("live/"):
            continue
        for scheme in SCHEMES:
            try:
                one = detailsim.run(sc, scheme=scheme, duration=a.duration, set=node)
            except _core.ScenarioError:
                continue  # the preset does not fit the scenario
            try:
                two = detailsim.run(sc, scheme=scheme, duration=a.duration, set=node | {"run.threads": 2})
            except _core.ScenarioError as e:
                counts["refused"] += 1
                print(f"refused {sc} {scheme}: {e}", flush=True)
                continue
            same = one.flows.equals(two.flows) and one.ports.equals(two.ports) and strip(one.summary) == strip(two.summary)
            same = same and ((one.timeseries is None and two.timeseries is None) or one.timeseries.equals(two.timeseries))
            counts["same" if same else "different"] += 1
            if not same:
                print(f"DIFFERENT {sc} {scheme}", flush=True)
    print(json.dumps(counts))
    return 1 if counts["different"] else 0


if __name__ == "__main__":
    sys.exit(main())
