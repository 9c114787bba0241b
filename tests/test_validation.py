"""Validation against analytic results (numbers are recorded in docs/validation.md).

1. One flow over an idle multi-hop path: handshake, per-hop serialization, propagation, switch delays and
   slow-start rounds, against a closed form.
2. Poisson arrivals of fixed-size packets into one switch port: mean queueing delay against M/D/1.
3. N long NewReno flows on one bottleneck: utilisation and Jain fairness.
4. Determinism: same seed, same flow table; another seed, another table.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import detailsim
from conftest import assert_invariants

RATE = 1e9
MSS = 1460
FULL = MSS + 40 + 30  # 1530 B on the wire
SMALL = 72  # SYN, SYN-ACK, ACK: 40 B padded to the 64 B minimum frame, plus the preamble (topology::Framing)
FWD = 4.224e-6
SPEEDUP = 4


def ser(wire: int, rate: float = RATE) -> float:
    return wire * 8 / rate


def one_way(wire: int, links: int, delay: float) -> float:
    """Store-and-forward latency of one frame over `links` equal links through `links - 1` CIOQ switches."""
    switches = links - 1
    return links * (ser(wire) + delay) + switches * (FWD + ser(wire, SPEEDUP * RATE))


@pytest.mark.parametrize("delay_us", [5.476, 50.0])
def test_single_flow_matches_analytic_time(delay_us):
    """fattree k=4, host 0 (pod 0) to host 15 (pod 3): 6 links, 5 switches. 70 segments with an initial
    window of 10: three slow-start rounds of 10, 20 and 40 segments, each sent back to back."""
    delay = delay_us * 1e-6
    segs = 70
    sc = {
        "run": {"duration": "1ms", "drain": "1s"},
        "topology": {"kind": "fattree", "k": 4, "link_delay": f"{delay_us}us"},
        "scheme": {"preset": "fh", "tcp": {"handshake": True, "initial_window": 10}},
        "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 15, "size_bytes": segs * MSS, "start_s": 0.0}]}],
    }
    r = detailsim.run(sc)
    fct = r.flows["fct"][0]
    links = 6
    handshake = 2 * one_way(SMALL, links, delay)
    rtt = one_way(FULL, links, delay) + one_way(SMALL, links, delay)
    rounds = [10, 20, 40]
    assert sum(rounds) == segs
    # round k starts one RTT after round k-1 as long as a round's burst is shorter than an RTT
    expected = handshake + (len(rounds) - 1) * rtt + (rounds[-1] - 1) * ser(FULL) + one_way(FULL, links, delay)
    if delay_us < 10:
        # at 5.476 us the path's BDP (~19 segments) is below the third round: the sender becomes
        # ACK-clocked at line rate after round 2 -- the bound is then the pipe, not the window.
        pipe = handshake + rtt + (segs - rounds[0] - 1) * ser(FULL) + one_way(FULL, links, delay)
        expected = max(pipe, handshake + rtt + (rounds[1] - 1) * ser(FULL) + one_way(FULL, links, delay))
    rel = abs(fct - expected) / expected
    print(f"delay {delay_us} us: simulated {fct * 1e6:.3f} us, analytic {expected * 1e6:.3f} us, error {rel:.2e}")
    assert rel < 0.01
    assert r.flows["retransmits"][0] == 0 and r.summary["drops"]["ingress_buffer"] == 0


def poisson_rows(load: float, senders: int, n: int, seed: int) -> list[dict]:
    """Poisson arrivals of single-segment flows to host 0. Senders take turns, so a sender's previous
    packet left its NIC long before its next one (128 inter-arrival times apart): the switch port sees the
    Poisson process unshaped."""
    rng = np.random.default_rng(seed)
    lam = load / ser(FULL)
    t = np.cumsum(rng.exponential(1 / lam, n))
    return [{"src": 1 + i % senders, "dst": 0, "size_bytes": MSS, "start_s": float(x)} for i, x in enumerate(t)]


def lindley(arrivals: np.ndarray, service: float) -> np.ndarray:
    """Exact waiting times of a FIFO single server with constant service: W[i] = max(0, W[i-1] + D - A[i])."""
    w = np.zeros(len(arrivals))
    gaps = np.diff(arrivals)
    acc = 0.0
    for i, g in enumerate(gaps, start=1):
        acc = max(0.0, acc + service - g)
        w[i] = acc
    return w


@pytest.mark.parametrize("load, n", [(0.3, 200_000), (0.6, 400_000), (0.9, 1_000_000)])
def test_md1_queueing_delay(load, n):
    senders = 128
    rows = poisson_rows(load, senders, n, seed=int(load * 10))
    sc = {
        "run": {"duration": f"{rows[-1]['start_s'] + 1e-6}s", "drain": "0.1s"},
        "topology": {"kind": "single_switch", "hosts": senders + 1, "buffer": "64MB"},
        "workload": [{"kind": "flows", "rows": rows}],
    }
    r = detailsim.run(sc)
    f = r.flows.sort("id")
    assert f["fct"].null_count() == 0 and r.summary["drops"]["ingress_buffer"] == 0
    base = 2 * ser(FULL) + 2 * 5.476e-6 + FWD + ser(FULL, SPEEDUP * RATE)
    wait = (f["fct"] - base).to_numpy()
    d = ser(FULL)
    # per packet: the simulated wait is the exact FIFO wait of these very arrivals (to picosecond rounding)
    exact = lindley(f["start"].to_numpy(), d)
    assert np.abs(wait - exact).max() < 1e-9
    # on average: M/D/1, Wq = rho D / (2 (1 - rho))
    md1 = load * d / (2 * (1 - load))
    rel = abs(wait.mean() - md1) / md1
    print(f"load {load}: {n} packets, mean wait {wait.mean() * 1e6:.3f} us, M/D/1 {md1 * 1e6:.3f} us, error {rel:.4f}")
    assert rel < 0.05
    assert_invariants(r.summary)


def jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


@pytest.mark.parametrize("n_flows", [4, 8])
def test_long_flows_share_bottleneck(n_flows):
    size = 16 * 2**20
    rows = [{"src": i, "dst": n_flows + i, "size_bytes": size, "start_s": 0.0} for i in range(n_flows)]
    sc = {
        "run": {"duration": "1ms", "drain": "5s"},
        "topology": {"kind": "dumbbell", "left": n_flows, "right": n_flows},
        # a receive window larger than the buffers, so that NewReno's AIMD, not the window, sets the shares
        "scheme": {"preset": "fh", "tcp": {"rwnd": "16MB"}},
        "workload": [{"kind": "flows", "rows": rows}],
    }
    r = detailsim.run(sc)
    f = r.flows
    assert f["fct"].null_count() == 0
    bott = r.ports.filter((pl.col("node") == "left") & (pl.col("peer") == "right"))
    util = bott["tx_bytes"][0] * 8 / (RATE * f["end"].max())
    thr = (f["size"] / f["fct"]).to_numpy()
    J = jain(thr)
    print(f"{n_flows} flows: utilisation {util:.4f}, Jain {J:.4f}, drops {r.summary['drops']['ingress_buffer']}")
    assert util >= 0.95
    assert J >= 0.95
    assert r.summary["drops"]["ingress_buffer"] > 0  # NewReno probes until the buffer overflows


def test_same_seed_same_table_other_seed_other_table():
    kw = dict(scheme="fh", duration="0.01s")
    a = detailsim.run("paper/steady", seed=7, **kw)
    b = detailsim.run("paper/steady", seed=7, **kw)
    c = detailsim.run("paper/steady", seed=8, **kw)
    assert a.flows.equals(b.flows)
    assert a.summary["events"] == b.summary["events"]
    assert not a.flows.equals(c.flows)


def test_issue10_before_after_table_is_generated_from_its_snapshot():
    """docs/validation.md's before/after table of every reproduction headline is what
    `benches/compare_models.py repro-table` renders from the committed snapshot."""
    import json
    import sys
    from pathlib import Path

    from detailsim.repro.docblocks import block_of

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "benches"))
    from compare_models import repro_table

    snap = json.loads((root / "docs" / "validation" / "issue10_reproductions.json").read_text())
    assert len(snap["before"]) >= 15 and set(snap["before"]) == set(snap["after"])
    text = (root / "docs" / "validation.md").read_text()
    src = "docs/validation/issue10_reproductions.json by `python benches/compare_models.py repro-table`"
    assert block_of(text, "issue10-reproductions", src) == repro_table(snap)


def _two_host_retrievals(handshake: bool, workload: dict) -> pl.DataFrame:
    sc = {
        "run": {"duration": "0.5s", "drain": "0.1s", "seed": 3},
        "topology": {"kind": "single_switch", "hosts": 2},
        "scheme": {"preset": "fh", "tcp": {"handshake": handshake, "initial_window": 3}},
        "workload": [workload],
    }
    r = detailsim.run(sc)
    assert r.summary["drops"]["ingress_buffer"] == 0 and r.summary["retransmits"] == 0
    return r.flows


@pytest.mark.parametrize("workload", [
    # DeTail's retrievals: a 10 B request, then the response
    {"kind": "retrieval", "rate": 20, "sizes": ["2KB", "8KB", "32KB"], "request_size": "10B"},
    # the PIAS testbed's client/server pattern: host 0 asks, the other host answers
    # (responses of 1-100 KB: each done long before the next request)
    {"kind": "cdf", "points": [[1000, 0.0], [100000, 1.0]], "rate": 40, "client": 0, "request_size": "10B"},
])
def test_a_retrieval_is_one_connection(workload):
    """A retrieval opens one connection: the request's SYN / SYN-ACK, then the response travels back on it.
    In an idle fabric (two hosts on one switch, retrievals tens of milliseconds apart) each FCT with the
    handshake is the FCT without it plus exactly one SYN round trip (16.472 us each way: two 72 B frames,
    two 5.476 us links, the switch's forwarding and crossbar), not two."""
    a = _two_host_retrievals(False, workload).sort("id")
    b = _two_host_retrievals(True, workload).sort("id")
    assert a.height >= 10 and a.select("size", "start").equals(b.select("size", "start"))
    syn_rtt = 2 * one_way(SMALL, 2, 5.476e-6)
    assert abs(syn_rtt - 32.944e-6) < 1e-9
    extra = (b["fct"] - a["fct"]).to_numpy()
    assert np.abs(extra - syn_rtt).max() < 1e-9, f"handshake adds {extra.min() * 1e6:.3f}-{extra.max() * 1e6:.3f} us"


def test_the_folds_under_alb_move_no_verdict_and_no_value_beyond_its_interval():
    """docs/validation.md, section 20: across the folds under ALB no graded claim changes its verdict and every
    value moves by less than the 95% interval of the difference of the two runs (element by element for a
    range); the value the section names as moving the most against its interval is that one, quoted as the
    snapshot holds it."""
    import json
    import math
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    snap = json.loads((root / "docs" / "validation" / "issue51_alb_fold.json").read_text())
    old, new = snap["before"]["claims"], snap["after"]["claims"]
    assert set(old) == set(new) and sum(old[i] != new[i] for i in new) >= 10, "the re-run experiments moved values"
    worst = (0.0, None)
    for i in new:
        assert old[i]["verdict"] == new[i]["verdict"], i
        a, b = old[i]["measured"], new[i]["measured"]
        va, vb, ca, cb = a["value"], b["value"], a.get("ci95"), b.get("ci95")
        if va is None or vb is None or va == vb:
            continue
        pairs = zip(va, vb, ca, cb) if isinstance(va, list) else [(va, vb, ca, cb)]
        for x, y, cx, cy in pairs:
            lim = math.hypot(cx or 0.0, cy or 0.0)
            assert abs(y - x) <= lim, f"{i}: {x} -> {y} beyond {lim}"
            if lim and abs(y - x) / lim > worst[0]:
                worst = (abs(y - x) / lim, (i, x, y, cx, cy))
    i, x, y, cx, cy = worst[1]
    text = (root / "docs" / "validation.md").read_text()
    assert f"`{i}` {x:g}% ± {cx:g} -> {y:g}% ± {cy:g}" in text, worst


def test_the_stored_claims_are_the_runs_after_the_folds_under_alb():
    """docs/reproduction.md's stores hold the model after the folds under ALB: every graded claim of
    docs/reproduction/claims.json measures what the snapshot's re-run at a70a181 measured (value, interval and
    seeds, the same to the last digit; the experiments it did not re-run kept their stored runs on both sides),
    so the experiments re-run since (at c98ee74) reproduced a70a181's runs exactly, and none is older."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    after = json.loads((root / "docs" / "validation" / "issue51_alb_fold.json").read_text())["after"]["claims"]
    stored = json.loads((root / "docs" / "reproduction" / "claims.json").read_text())
    assert {c["id"] for c in stored} == set(after) and len(stored) == 95
    for c in stored:
        a = after[c["id"]]
        got = {k: c["measured"].get(k) for k in ("value", "ci95", "seeds")}
        assert got == {k: a["measured"].get(k) for k in ("value", "ci95", "seeds")}, (c["id"], got, a["measured"])
        assert c["verdict"] == a["verdict"], c["id"]


@pytest.mark.parametrize("name", ["issue35_event_order", "issue35_calibration", "issue51_tie_order", "issue51_alb_fold"])
def test_issue35_before_after_tables_are_generated_from_their_snapshots(name):
    """docs/validation.md's before/after tables of every graded claim (across the switch to the node order;
    across the re-calibration on the node-order model) are what `benches/compare_models.py claims-table`
    renders from the committed snapshots."""
    import json
    import sys
    from pathlib import Path

    from detailsim.repro.docblocks import block_of

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "benches"))
    from compare_models import claims_table

    snap = json.loads((root / "docs" / "validation" / f"{name}.json").read_text())
    assert len(snap["after"]["claims"]) >= 80 and set(snap["before"]["claims"]) == set(snap["after"]["claims"])
    text = (root / "docs" / "validation.md").read_text()
    src = f"docs/validation/{name}.json by `python benches/compare_models.py claims-table`"
    assert block_of(text, name.replace("_", "-"), src) == claims_table(snap)
