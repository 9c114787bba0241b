"""`detailsim check-split` / `detailsim.core.api.check_split`: with run.event_order = "node" a scenario's nodes
act on each other only through events a grid interval apart, so a run split in parts (each part of the
fabric a window of the lookahead at a time, taking turns on one thread as threads would run them) ends as
the ordinary run does."""

import pytest
from click.testing import CliRunner

from detailsim.core.api import check_split
from detailsim.cli import main

# bundled scenarios with their own scheme and others: retrievals and background flows (steady), faults
# (degraded), DIBS detours, PIAS tagging, workflows, incast, a leaf-spine fabric
CASES = [
    ("paper/steady", "fh"),
    ("paper/steady", "detail"),
    ("paper/steady", "dctcp"),
    ("paper/steady", "pfabric"),
    ("paper/degraded", None),
    ("paper/dibs", None),
    ("paper/pias_websearch", None),
    ("paper/partition_aggregate", None),
    ("paper/sequential", "lps"),
    ("paper/incast", None),  # (one fetch: a split run does not repeat an incast yet)
    ("examples/leaf_spine", "las"),
]


@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize(("scenario", "scheme"), CASES)
def test_the_split_schedule_ends_as_the_ordinary_run_does(scenario, scheme, parts):
    sets = {"workload.0.repeats": 1} if scenario == "paper/incast" else None
    r = check_split(scenario, scheme=scheme, duration="2ms", set=sets, parts=parts)
    assert r["window_s"] > 0
    assert r["same"], r


@pytest.mark.parametrize("sets", [
    {"run.measure_from": "0.5ms", "run.measure_to": "1.5ms"},  # window edges snapshot every flow
    {"run.sample": "100us"},  # samples read every port
])
def test_fabric_wide_events_run_at_a_barrier(sets):
    r = check_split("paper/steady", scheme="detail", duration="2ms", set=sets)
    assert r["same"], r


def test_a_fault_during_the_run_runs_at_a_barrier():
    # the link goes down 1 ms in, while both halves carry traffic; routes change fabric-wide
    r = check_split("paper/disconnected", duration="3ms", set={"fault.0.at": "1ms"})
    assert r["same"], r


def test_the_removed_push_order_is_refused_naming_the_field():
    # the fabric-wide push order (the default until issue 35) is gone: the node order is the only one
    for cmd in ("check-split", "run"):
        res = CliRunner().invoke(main, [cmd, "paper/steady", "--duration", "1ms", "--set", "run.event_order=push"])
        assert res.exit_code == 2, res.output
        assert "run.event_order" in res.output and "removed" in res.output and "node" in res.output, res.output


def test_a_fault_that_shortens_the_lookahead_is_checked_with_the_windows_two_threads_use():
    # every agg-core link of a k = 4 DeTail fat tree made 10x faster at t = 0: a PAUSE takes effect sooner
    # on them; check-split once ran windows of the fabric grid and said "same" where two threads failed
    faults = [{"kind": "degrade", "link": f"agg_core#{i}", "rate": "10Gbps"} for i in range(16)]
    sc = {"run": {"duration": "5ms"}, "topology": {"kind": "fattree", "k": 4, "buffer": "512KB"}, "scheme": {"preset": "detail"},
          "fault": faults, "workload": [{"kind": "incast", "total": "4MB"}]}
    r = check_split(sc)
    assert r["same"], r
    # the window is the cut's lookahead after the fault, shorter than without it
    assert r["window_s"] < check_split({**sc, "fault": []})["window_s"], r


def test_cli_reports_same_and_exits_0():
    res = CliRunner().invoke(main, ["check-split", "paper/steady", "--duration", "2ms", "--scheme", "detail"])
    assert res.exit_code == 0, res.output
    # the cut's lookahead: the core links' delay plus the forwarding delay (docs/architecture.md)
    assert "window 9.700 us" in res.output and res.output.strip().endswith("same")


def test_a_bad_event_order_is_refused_naming_the_field():
    res = CliRunner().invoke(main, ["check-split", "paper/steady", "--set", "run.event_order=sideways"])
    assert res.exit_code == 2
    assert "run.event_order" in res.output and "node" in res.output


def test_flow_rows_of_different_senders_close_in_time():
    # a flow list is walked per sender (one chain through every row would have one
    # host's event schedule another host's a microsecond later, faster than any window)
    rows = [{"src": s, "dst": d, "size_bytes": n, "start_s": t}
            for s, d, n, t in [(0, 5, 3000, 0.0), (15, 2, 3000, 1e-6), (1, 9, 3000, 2e-6), (15, 3, 30000, 2e-6), (0, 3, 3000, 5e-4)]]
    sc = {"run": {"duration": "1ms"}, "topology": {"kind": "fattree", "k": 4}, "scheme": {"preset": "fh"},
          "workload": [{"kind": "flows", "rows": rows}]}
    r = check_split(sc)
    assert r["same"], r
    # the rows start when they say, in either order
    import detailsim

    flows = detailsim.run(sc).flows.sort("start")
    assert flows["start"].to_list() == [0.0, 1e-6, 2e-6, 2e-6, 5e-4]


def test_check_split_takes_the_number_of_parts():
    res = CliRunner().invoke(main, ["check-split", "paper/steady", "--duration", "1ms", "--parts", "5"])
    assert res.exit_code == 0, res.output
    assert "same" in res.output
    res = CliRunner().invoke(main, ["check-split", "paper/steady", "--duration", "1ms", "--parts", "1"])
    assert res.exit_code == 2 and "--parts" in res.output, res.output
