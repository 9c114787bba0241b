"""The Python API: run() with overrides, the result's tables, CSV flow lists, custom topologies."""

from __future__ import annotations

import polars as pl
import pytest

import detailsim
from conftest import assert_invariants


def test_run_returns_summary_and_flows():
    r = detailsim.run("paper/steady", scheme="fh", seed=3, duration="0.005s")
    assert r.summary["seed"] == 3
    assert isinstance(r.flows, pl.DataFrame)
    assert r.flows.columns == ["id", "class", "src", "dst", "size", "priority", "start", "end", "fct", "fct_lower", "timeouts", "retransmits", "ideal", "bytes_delivered", "input_id", "slowdown", "window_bytes", "window_goodput_bps"]
    done = r.flows.filter(pl.col("fct").is_not_null())
    assert done.height == r.summary["flows"]["completed"]
    assert (done["end"] - done["start"] - done["fct"]).abs().max() < 1e-12
    # retrieval sizes are the mix, 2/8/32 KB
    sizes = set(r.flows.filter(pl.col("class").cast(pl.String).str.starts_with("retrieval"))["size"].to_list())
    assert sizes == {2048, 8192, 32768}
    assert_invariants(r.summary)


def test_the_summary_times_the_run_to_the_microsecond(monkeypatch):
    """`wall_s` is the run's loop timed to the microsecond, not the millisecond: the benchmark suite divides
    a few milliseconds' run by it (a 5 ms run read to the millisecond moves its throughput in steps of 20%)."""
    import types

    from detailsim.core import api

    ticks = iter([10.0, 10.0123456])
    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    base = {"topology": {"kind": "single_switch", "hosts": 4}, "run": {"duration": "1ms"},
            "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}]}
    r = detailsim.run(base)
    assert r.summary["wall_s"] == 0.012346


def test_overrides_by_keyword_and_set():
    base = {"topology": {"kind": "single_switch", "hosts": 4}, "run": {"duration": "2ms"},
            "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["8KB"]}]}
    a = detailsim.run(base, topology__link_rate="10Gbps")
    b = detailsim.run(base, set={"topology.link_rate": "10Gbps"})
    c = detailsim.run(base)
    assert a.flows.equals(b.flows)
    assert a.flows["fct"].mean() < c.flows["fct"].mean() / 3  # ten times faster links
    with pytest.raises(detailsim.ScenarioError, match=r"^topology.link_rate"):
        detailsim.run(base, topology__link_rate="quick")


def test_csv_flow_list(tmp_path):
    (tmp_path / "f.csv").write_text("src,dst,size_bytes,start_s,priority\n1,0,100000,0.0,0\n2,0,1460,0.0005,3\n")
    sc = tmp_path / "s.toml"
    sc.write_text(
        '[run]\nduration = "1ms"\n[topology]\nkind = "single_switch"\nhosts = 3\n'
        '[[workload]]\nkind = "flows"\nfile = "f.csv"\nclass = "mine"\n'
    )
    r = detailsim.run(sc)
    f = r.flows.sort("id")
    assert f["class"].cast(pl.String).to_list() == ["mine", "mine"]
    assert f["src"].to_list() == [1, 2] and f["priority"].to_list() == [0, 3]
    assert f["start"].to_list() == pytest.approx([0.0, 0.0005])
    assert f["fct"].null_count() == 0


def test_csv_errors_name_the_field(tmp_path):
    (tmp_path / "f.csv").write_text("src,dst,bytes\n1,0,10\n")
    sc = {"topology": {"kind": "single_switch", "hosts": 3},
          "workload": [{"kind": "flows", "file": str(tmp_path / "f.csv")}]}
    with pytest.raises(detailsim.ScenarioError, match=r"^workload\[0\]\.file: f\.csv lacks column\(s\) size_bytes, start_s"):
        detailsim.run(sc)
    (tmp_path / "g.csv").write_text("src,dst,size_bytes,start_s\n7,0,10,0\n")
    sc["workload"][0]["file"] = str(tmp_path / "g.csv")
    with pytest.raises(detailsim.ScenarioError, match=r"^workload\[0\]\.file: g\.csv row 1: src: host index must be below 3"):
        detailsim.run(sc)


def test_custom_topology_from_file(tmp_path):
    (tmp_path / "fabric.toml").write_text(
        'nodes = [{name = "a", kind = "host"}, {name = "b", kind = "host"}, {name = "s1", kind = "switch"}, {name = "s2", kind = "switch"}]\n'
        'links = [{a = "a", b = "s1"}, {a = "s1", b = "s2", rate = "100Mbps", delay = "1us"}, {a = "s2", b = "b"}]\n'
    )
    sc = {"topology": {"kind": "custom", "file": str(tmp_path / "fabric.toml")}, "run": {"duration": "1ms"},
          "workload": [{"kind": "flows", "rows": [{"src": 0, "dst": 1, "size_bytes": 125000, "start_s": 0.0}]}]}
    r = detailsim.run(sc)
    fct = r.flows["fct"][0]
    assert fct > 125000 * 8 / 100e6  # limited by the 100 Mbps middle link
    ports = r.ports.filter((pl.col("node") == "s1") & (pl.col("peer") == "s2"))
    assert ports["rate_bps"][0] == 100_000_000
    with pytest.raises(detailsim.ScenarioError, match=r"^topology.links\[0\].b: no node named"):
        detailsim.run({"topology": {"kind": "custom", "nodes": [{"name": "a", "kind": "host"}], "links": [{"a": "a", "b": "zz"}]}})


@pytest.mark.parametrize("kind, extra, hosts", [
    ("detail128", {}, 128), ("testbed16", {}, 16), ("fattree", {"k": 6}, 54),
    ("leaf_spine", {"leaves": 3, "spines": 2, "hosts_per_leaf": 5}, 15),
    ("single_switch", {"hosts": 7}, 7), ("dumbbell", {"left": 2, "right": 3}, 5),
])
def test_every_topology_runs(kind, extra, hosts):
    sc = {"topology": {"kind": kind, **extra}, "run": {"duration": "2ms"},
          "workload": [{"kind": "retrieval", "rate": 500, "sizes": ["4KB"]}]}
    r = detailsim.run(sc)
    assert r.summary["flows"]["completed"] == r.summary["flows"]["started"] > 0
    assert r.flows["src"].max() < hosts and r.flows["dst"].max() < hosts
    assert_invariants(r.summary)
