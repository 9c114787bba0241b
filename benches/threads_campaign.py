"""Every bundled scenario, with its own scheme and the presets it takes, run on one thread and split in N
parts on N threads (`run.threads = N`, 2 by default): the flows frame, ports frame, time series and summary
(but the wall time and the thread count) must be the same.

    .venv/bin/python benches/threads_campaign.py [--duration 3ms] [--threads N]

Prints a line per refused or different combination and a closing count; exit status 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import sys

import detailsim
from detailsim import _core
from detailsim.core.scenario import bundled_scenarios

SCHEMES = [None, "fh", "detail", "dctcp", "pfabric", "pias", "dibs", "las", "lps"]
# what may differ between the two (the wall time; how many parts and the rounds they met after)
SAME_BUT = {"wall_s", "threads", "rounds", "rounds_per_sim_ms"}


def strip(d, drop=SAME_BUT):
    if isinstance(d, dict):
        return {k: strip(v, drop) for k, v in d.items() if k not in drop}
    if isinstance(d, list):
        return [strip(v, drop) for v in d]
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", default="3ms")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    names = list(bundled_scenarios())
    counts = {"same": 0, "refused": 0, "different": 0}
    one_thread = {"run.threads": 1}
    for sc in names:
        if sc.startswith("live/"):
            continue
        for scheme in SCHEMES:
            try:
                one = detailsim.run(sc, scheme=scheme, duration=a.duration, set=one_thread)
            except _core.ScenarioError:
                continue  # the preset does not fit the scenario
            try:
                two = detailsim.run(sc, scheme=scheme, duration=a.duration, set={"run.threads": a.threads})
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
