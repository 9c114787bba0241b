"""A preset is what its name says (issue 48): every preset that names a mechanism runs it without an extra
table, differs from its base on a workload that exercises the difference, and reports what the mechanism
did; slowdown is never below 1 (the ideal FCT is a flow's time alone in the fabric, checked by running
flows alone, on both switch models); the lossless priorities fit the default buffers."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import detailsim
from conftest import assert_invariants
from detailsim import _core
from detailsim.core.scenario import bundled_scenarios, prepare

WEBSEARCH = {"run": {"duration": "4ms", "drain": "30ms", "seed": 3},
             "topology": {"kind": "fattree", "k": 4, "link_rate": "10Gbps"},
             "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.6}]}
# at 1 Gbps 128 KB hold eight lossless priorities (the DeTail paper's), which MLFQ under PFC makes lossless
WEBSEARCH_1G = {**WEBSEARCH, "run": {"duration": "20ms", "drain": "100ms", "seed": 3},
                "topology": {"kind": "fattree", "k": 4, "link_rate": "1Gbps"}}
# 12 x 256 KB into one host at once, repeated: queues fill, PFC pauses, DIBS detours, pFabric drops
INCAST = {"run": {"duration": "6ms", "drain": "50ms", "seed": 3},
          "topology": {"kind": "fattree", "k": 4, "link_rate": "10Gbps"},
          "workload": [{"kind": "incast", "senders": 12, "total": "3MB", "repeats": 2, "gap": "1ms"},
                       {"kind": "cdf", "cdf": "websearch", "load": 0.3}]}

# DIBS detours what a full egress queue cannot take: the incast into small buffers
SMALL_BUFFERS = {**INCAST, "topology": {**INCAST["topology"], "buffer": "32KB"}}


def run(sc: dict, scheme: str, **sets) -> detailsim.Result:
    r = detailsim.run(json.loads(json.dumps(sc)), scheme=scheme, set=sets or None)
    assert_invariants(r.summary)
    return r


def table(r: detailsim.Result) -> pl.DataFrame:
    return r.flows.select("src", "dst", "size", "start", "fct").sort("start", "src", "dst", "size")


# (preset, its base, the workload that exercises the difference, the mechanism's own counter)
PAIRS = [
    ("pias", "dctcp", WEBSEARCH, ("mlfq", "demoted_packets")),
    ("detail_pias", "detail", WEBSEARCH_1G, ("mlfq", "demoted_packets")),
    ("las", "dctcp", WEBSEARCH, ("las", "overtakes")),
    ("pfabric", "dctcp", WEBSEARCH, ("pfabric", "overtakes")),
    ("l2dct", "dctcp", WEBSEARCH, ("l2dct", "ecn_marks")),
    ("dctcp", "tcp", WEBSEARCH, ("dctcp", "ecn_marks")),
    ("dibs", "dctcp", SMALL_BUFFERS, ("dibs", "detours")),
    ("detail", "lps", WEBSEARCH, ("ecn", "marks")),
    ("lps", "scatter", INCAST, ("pfc", "pause_frames")),
    ("pfc_only", "fh", INCAST, ("pfc", "pause_frames")),
    ("alb_only", "fh", WEBSEARCH, ("alb", "t1_bytes")),
    ("dcqcn", "hpcc", INCAST, ("dcqcn", "rate_cuts")),
    ("hpcc", "dcqcn", INCAST, ("hpcc", "window_cuts")),
]


@pytest.mark.parametrize("preset, base, sc, counter", PAIRS, ids=[f"{p}-vs-{b}" for p, b, *_ in PAIRS])
def test_a_preset_differs_from_its_base_and_its_mechanism_acts(preset, base, sc, counter):
    a, b = run(sc, preset), run(sc, base)
    assert not table(a).equals(table(b)), f"{preset} ran exactly as {base}"
    mech, key = counter
    got = a.summary["mechanisms"].get(mech, {}).get(key)
    assert got, f"{preset}: mechanisms.{mech}.{key} = {got!r} ({a.summary['mechanisms']})"


def test_every_preset_is_in_the_table_above_or_named_as_another_by_design():
    # `tcp` is `fh` under the name a newcomer looks for (the same row of the policy table): identical runs
    covered = {p for p, *_ in PAIRS} | {b for _, b, *_ in PAIRS}
    assert {name for name, _ in _core.presets()} - covered == {"fh"} - covered
    assert table(run(WEBSEARCH, "tcp")).equals(table(run(WEBSEARCH, "fh")))


def test_pias_needs_no_table_on_a_cdf_workload_and_reports_its_thresholds():
    """Issue 48's first finding: `--scheme pias` ran plain DCTCP with `mlfq_thresholds_bytes` empty."""
    r = run(WEBSEARCH, "pias")
    m = r.summary["mechanisms"]["mlfq"]
    want = json.loads(_core.pias_solve([[float(x), float(p)] for x, p in prepare(WEBSEARCH)[0]["workload"][0]["points"]],
                                       "websearch", 0.6, 8, "optimal"))["thresholds_bytes"]
    assert m["thresholds_bytes"] == want == r.summary["mlfq_thresholds_bytes"]
    assert (m["method"], m["queues"], m["load"], m["from"]) == ("optimal", 8, 0.6, "workload[0] (cdf websearch)")
    assert m["demoted_packets"] > 0
    # the command line prints the same
    assert detailsim.run(WEBSEARCH, scheme="pias").summary["mechanisms"]["mlfq"]["thresholds_bytes"] == want


def test_pias_derives_its_thresholds_from_a_flow_list():
    # 400 flows, a quarter of 1 MB, the rest 10 KB, spread over 40 ms from 16 hosts: the thresholds split the
    # two sizes, and the load offered on the hosts' 10 Gbps links is what the rows add up to
    rows = [{"src": i % 16, "dst": (i * 7 + 3) % 16 if (i * 7 + 3) % 16 != i % 16 else (i + 1) % 16,
             "size_bytes": 1_000_000 if i % 4 == 0 else 10_000, "start_s": i * 1e-4} for i in range(400)]
    sc = {**WEBSEARCH, "run": {"duration": "41ms", "drain": "30ms"}, "workload": [{"kind": "flows", "rows": rows}],
          "scheme": {"pias": {"queues": 2}}}
    r = run(sc, "pias")
    m = r.summary["mechanisms"]["mlfq"]
    span = 399e-4
    offered = sum(x["size_bytes"] for x in rows) * 8 / span / (16 * 10e9)
    assert m["offered_load"] == pytest.approx(offered, rel=1e-9) and m["load"] == pytest.approx(min(offered, 0.99))
    assert m["from"] == "offered traffic of workload[0] (flows)"
    assert len(m["thresholds_bytes"]) == 1 and 10_000 <= m["thresholds_bytes"][0] <= 1_000_000
    assert m["demoted_packets"] > 0
    assert not table(r).equals(table(run(sc, "dctcp")))


def test_pias_on_retrievals_mixes_their_sizes_by_rate():
    sc = {**WEBSEARCH, "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "64KB"], "weights": [3, 1]},
                                    {"kind": "background", "size": "1MB", "priority": 1}]}
    m = run(sc, "pias").summary["mechanisms"]["mlfq"]
    assert m["from"] == "offered traffic of workload[0] (retrieval)"
    # three quarters of the flows are 2 KB: with 2 queues the optimal split falls on one of the two sizes
    sol = detailsim.run(sc, scheme="pias", set={"scheme.pias": {"queues": 2}}).summary["mechanisms"]["mlfq"]
    assert sol["thresholds_bytes"][0] in (2048, 65536), sol


def test_pias_without_any_arrival_process_is_refused_naming_the_table():
    sc = {**WEBSEARCH, "workload": [{"kind": "background", "size": "1MB"}]}
    with pytest.raises(_core.ScenarioError) as e:
        detailsim.run(sc, scheme="pias")
    assert str(e.value).startswith("scheme.pias: pias derives its MLFQ thresholds") and "closed-loop background" in str(e.value)
    # a list needs no distribution
    r = run({**sc, "run": {"duration": "2ms", "drain": "10ms"}}, "pias", **{"scheme.pias": {"thresholds": ["100KB"]}})
    assert r.summary["mechanisms"]["mlfq"]["thresholds_bytes"] == [100 * 1024]


# ---- slowdown >= 1: the ideal FCT against flows run alone -------------------------------------------------

SWITCHES = {"cioq": {}, "shared": {"shared_buffer": {"size": "8MB"}}}
RATES = {"1Gbps": "128KB", "10Gbps": "128KB", "100Gbps": "1MB"}


def alone(scheme: str, switch: str, rate: str, sizes: list[int]) -> pl.DataFrame:
    """Each flow alone: one flow at a time across the fat tree's core, 20 ms apart."""
    rows = [{"src": 0, "dst": 15, "size_bytes": s, "start_s": 0.02 * i} for i, s in enumerate(sizes)]
    sc = {"run": {"duration": f"{0.02 * len(sizes)}s", "drain": "100ms"},
          "topology": {"kind": "fattree", "k": 4, "link_rate": rate, "buffer": RATES[rate], **SWITCHES[switch]},
          "workload": [{"kind": "flows", "rows": rows}]}
    r = run(sc, scheme)
    assert r.summary["flows"]["completed"] == len(sizes)
    return r.flows


@pytest.mark.parametrize("switch", sorted(SWITCHES))
@pytest.mark.parametrize("rate", sorted(RATES))
def test_a_flow_alone_takes_at_least_its_ideal_fct_and_a_line_rate_sender_takes_exactly_that(switch, rate):
    sizes = [100, 1460, 1461, 20_000, 300_000]
    for scheme in ("fh", "dctcp", "detail", "pfabric", "hpcc"):
        f = alone(scheme, switch, rate, sizes)
        assert (f["slowdown"] >= 1.0).all(), (scheme, f.select("size", "fct", "ideal", "slowdown"))
    # DCQCN's senders start at line rate with no window and no handshake: alone, a flow takes exactly the
    # ideal time (store-and-forward of its first frame, the rest back to back at the bottleneck)
    f = alone("dcqcn", switch, rate, sizes)
    assert f["fct"].to_list() == pytest.approx(f["ideal"].to_list(), rel=0, abs=1e-12), f.select("size", "fct", "ideal")


@st.composite
def loaded(draw):
    preset = draw(st.sampled_from([n for n, _ in _core.presets()]))
    rate = draw(st.sampled_from(sorted(RATES)))
    switch = draw(st.sampled_from(sorted(SWITCHES)))
    load = draw(st.sampled_from([0.2, 0.6]))
    sc = {"run": {"duration": "2ms" if rate != "1Gbps" else "6ms", "drain": "60ms", "seed": draw(st.integers(1, 50))},
          "topology": {"kind": "fattree", "k": 4, "link_rate": rate, "buffer": RATES[rate], **SWITCHES[switch]},
          "workload": [{"kind": "cdf", "cdf": draw(st.sampled_from(["websearch", "datamining"])), "load": load}]}
    if preset == "detail_pias":
        sc["scheme"] = {"pias": {"queues": 2}}  # MLFQ's levels are lossless under PFC: two fit the buffers
    return preset, sc


@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(loaded())
def test_no_slowdown_below_one_for_any_preset_switch_model_and_rate(case):
    preset, sc = case
    r = run(sc, preset)
    low = r.flows.filter(pl.col("slowdown") < 1.0)
    assert low.height == 0, (preset, sc["topology"], low.select("size", "fct", "ideal", "slowdown").head())


@pytest.mark.parametrize("scenario", sorted(bundled_scenarios()))
def test_no_slowdown_below_one_in_any_bundled_scenario_on_shared_buffers(scenario):
    """Done-when of issue 48: every bundled scenario under every preset on shared-buffer switches (the CIOQ
    ones are checked by every golden matrix case, tests/golden.py `check_slowdown`), short."""
    import golden

    for preset, _ in _core.presets():
        ov = {f"run.{k}": v for k, v in {**golden.MATRIX_RUN, "duration": golden.MATRIX_DURATION.get(scenario, "2ms")}.items()}
        sc, _ = prepare(scenario, scheme=preset, overrides={**ov, "topology.shared_buffer": {"size": "16MB"}, "run.threads": 1})
        sim = _core.Simulation(json.dumps(sc))
        sim.run_until(float("inf"))
        golden.check_slowdown(sim.flow_columns(), f"{scenario} {preset} shared")


# ---- lossless priorities that fit ---------------------------------------------------------------------------

LOSSLESS = ("detail", "lps", "dcqcn", "hpcc")


def test_where_physics_cannot_fit_the_message_names_the_smallest_buffer_and_it_runs():
    sc = {"run": {"duration": "1ms", "drain": "20ms"}, "topology": {"kind": "fattree", "k": 4, "link_rate": "100Gbps"},
          "workload": [{"kind": "cdf", "cdf": "websearch", "load": 0.5}]}
    for scheme in LOSSLESS:
        with pytest.raises(_core.ScenarioError) as e:
            detailsim.run(sc, scheme=scheme)
        msg = str(e.value)
        assert msg.startswith("scheme.pfc: ") and "the smallest buffer that holds them is " in msg, msg
        need = int(msg.split("the smallest buffer that holds them is ")[1].split(" B")[0])
        for rate in ("25Gbps", "100Gbps"):
            r = run(sc, scheme, **{"topology.buffer": f"{need}B", "topology.link_rate": rate})
            assert r.summary["flows"]["completed"] > 0 and r.summary["congestion_drops"] == 0
        with pytest.raises(_core.ScenarioError):
            detailsim.run(sc, scheme=scheme, set={"topology.buffer": f"{need - 1}B"})


def test_the_default_lossless_priorities_are_the_workloads_and_the_paper_s_thresholds_stay():
    # paper/steady: retrievals at priority 0, background at 1; the paper derives its thresholds for all
    # eight priorities and leaves them when fewer are used (000:287): 8,192 / 4,557 drain bytes at 1 GbE
    r = detailsim.run("paper/steady", scheme="detail", duration="2ms")
    assert r.summary["mechanisms"]["pfc"]["lossless_priorities"] == [0, 1]
    sc, _ = prepare("paper/steady", scheme="detail")
    explicit, _ = prepare("paper/steady", scheme="detail", overrides={"scheme.pfc.priorities": [0, 1, 2, 3, 4, 5, 6, 7]})
    for s in (sc, explicit):
        s["run"]["duration"] = "2ms"
    a, b = _core.Simulation(json.dumps(sc)), _core.Simulation(json.dumps(explicit))
    a.run_until(float("inf"))
    b.run_until(float("inf"))
    assert a.flow_columns() == b.flow_columns(), "the same thresholds, so the same run"
    # an MLFQ preset makes its demotion levels lossless too
    r = detailsim.run(WEBSEARCH, scheme="detail_pias", set={"scheme.pias": {"queues": 3}, "run.duration": "1ms"})
    assert r.summary["mechanisms"]["pfc"]["lossless_priorities"] == [0, 1, 2]


def test_the_lossless_matrix_in_the_docs_is_its_stored_result_and_still_holds_at_1_and_10_gbps():
    """docs/validation.md section 18 is generated from docs/validation/lossless_matrix.json; every case there
    passed, and the 1 and 10 Gbps cases still build as stored (status and the smallest buffer named)."""
    from pathlib import Path

    from detailsim.repro.matrix import BLOCK, DOC, DOC_JSON, SOURCE, lossless_case, markdown
    from detailsim.repro.docblocks import block_of

    root = Path(__file__).resolve().parents[1]
    rows = json.loads((root / DOC_JSON).read_text())
    assert block_of((root / DOC).read_text(), BLOCK, SOURCE) == markdown(rows)
    assert len(rows) == len(bundled_scenarios()) * 4 * 4
    assert all(r["status"] == "fits" or (r["status"] == "needs" and r["with_it"] == "builds") for r in rows)
    assert all(r["lossless"] and r["congestion_drops"] == 0 for r in rows)
    for r in rows:
        if r["rate"] in ("1Gbps", "10Gbps"):
            now = lossless_case(r["scenario"], r["scheme"], r["rate"], run_for=None)
            assert (now["status"], now.get("smallest_buffer_bytes")) == (r["status"], r.get("smallest_buffer_bytes")), r


def test_a_pool_too_small_for_its_pfc_headroom_is_a_case_that_needs_a_larger_pool():
    """The lossless matrix (detailsim.repro.matrix): a shared-buffer switch whose PFC headroom would fill its pool
    (the PIAS testbed's 4 MB behind 24 us links at 25 Gbps) is named with the pool the message bounds and built
    with the scenario's pool on top of the headroom; at 10 Gbps the same scenario fits its own pool."""
    from detailsim.repro.matrix import lossless_case

    r = lossless_case("paper/pias_testbed", "detail", "25Gbps", run_for=None)
    assert (r["status"], r["key"], r["with_it"]) == ("needs", "topology.shared_buffer.size", "builds"), r
    assert r["buffer_bytes"] == 4 * 2**20 and r["smallest_buffer_bytes"] > r["buffer_bytes"]
    assert r["built_with_bytes"] == r["smallest_buffer_bytes"] - 1 + r["buffer_bytes"]
    assert lossless_case("paper/pias_testbed", "detail", "10Gbps", run_for=None)["status"] == "fits"
