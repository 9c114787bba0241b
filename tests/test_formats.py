"""The formats other simulators exchange (python/detailsim/core/formats.py): the HPCC simulator's topology and
flow files and csg-htsim's connection matrices read into scenarios, HPCC's fct.txt written from a run;
damaged files refused naming the file and the line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import detailsim
from conftest import assert_invariants, run_cli
from detailsim.core.formats import read_hpcc_flows, read_hpcc_topology, read_htsim_cm

EXAMPLES = Path(__file__).resolve().parents[1] / "python" / "detailsim" / "scenarios" / "examples"


def test_the_bundled_hpcc_example_runs_with_its_node_ids_mapped_to_hosts():
    r = detailsim.run("examples/hpcc_small", set={"run.threads": 1})
    assert_invariants(r.summary)
    f = r.flows.sort("start")
    assert f.height == 8 and f["fct"].null_count() == 0
    # HPCC node ids 0-5 and 9 are the hosts (6, 7, 8 are switches): host indices 0-5 and 6
    first = f.row(0, named=True)
    assert (first["src"], first["dst"], first["size"]) == (0, 3, 2_000_000)
    last_to_host0 = f.filter(pl.col("dst") == 0).row(0, named=True)
    assert last_to_host0["src"] == 6 and last_to_host0["size"] == 100_000
    assert first["start"] == pytest.approx(1e-4) and (f["priority"] == 0).all()
    nodes, links, hosts = read_hpcc_topology(EXAMPLES / "hpcc_small_topology.txt")
    assert [n["kind"] for n in nodes].count("switch") == 3 and len(links) == 9 and hosts[9] == 6


def test_the_bundled_htsim_example_reads_start_times_in_picoseconds_and_keeps_the_connection_ids():
    r = detailsim.run("examples/htsim_cm", set={"run.threads": 1})
    assert_invariants(r.summary)
    f = r.flows
    assert f.height == 8 and f["fct"].null_count() == 0
    # 0 (four), 50 us (two), 100 us and 100.7 us, as picoseconds in the file (csg-htsim's ConnectionMatrix::load)
    assert sorted(f["start"].to_list()) == pytest.approx([0, 0, 0, 0, 50e-6, 50e-6, 100e-6, 100.7e-6], rel=1e-12)
    assert f.filter(pl.col("dst") == 0).height == 4
    # each flow keeps its connection id: "11->14 id 7 start 100700000" is the flow from host 11 to 14
    assert sorted(f["input_id"].to_list()) == list(range(1, 9))
    assert f.filter(pl.col("input_id") == 7).select("src", "dst").row(0) == (11, 14)


CM_10MS = "Nodes 16\nConnections 3\n0->1 id 11 start 0 size 1000\n2->3 id 12 start 1000888672 size 1000\n4->5 id 13 start 9999634797 size 1000\n"


def test_htsim_start_times_up_to_ten_ms_in_picoseconds_run_and_gzip_is_read_by_content(tmp_path):
    """Issue 48: a matrix csg-htsim reads (starts up to 9,999,634,797 ps for 10 ms) was refused at its first
    start above 1e9, and a gzipped one failed with a raw codec error."""
    import gzip

    (tmp_path / "cm.txt").write_text(CM_10MS)
    (tmp_path / "cm.gz.txt").write_bytes(gzip.compress(CM_10MS.encode()))  # gzip whatever the name says
    (tmp_path / "cm.cm.gz").write_bytes(gzip.compress(CM_10MS.encode()))
    rows = [read_htsim_cm(tmp_path / n, "workload[0].file") for n in ("cm.txt", "cm.gz.txt", "cm.cm.gz")]
    assert rows[0] == rows[1] == rows[2]
    assert [r["start_s"] for r in rows[0]] == pytest.approx([0, 1.000888672e-3, 9.999634797e-3], rel=1e-15)
    assert [r["id"] for r in rows[0]] == [11, 12, 13]
    sc = {"run": {"duration": "11ms", "drain": "5ms", "threads": 1}, "topology": {"kind": "fattree", "k": 4, "link_rate": "10Gbps"},
          "workload": [{"kind": "htsim_cm", "file": str(tmp_path / "cm.cm.gz")}]}
    f = detailsim.run(sc).flows.sort("input_id")
    assert f["input_id"].to_list() == [11, 12, 13] and f["fct"].null_count() == 0
    assert f["start"].to_list() == pytest.approx([0, 1.000888672e-3, 9.999634797e-3], rel=1e-12)
    # another unit, by start_unit: the same file read as nanoseconds puts the last start at 10 s
    us = [read_htsim_cm(tmp_path / "cm.txt", "workload[0].file", "ns")[k]["start_s"] for k in (1, 2)]
    assert us == pytest.approx([1.000888672, 9.999634797])
    with pytest.raises(detailsim.ScenarioError, match=r"workload\[0\].start_unit: one of ps, ns, us, ms, s"):
        detailsim.run({**sc, "workload": [{**sc["workload"][0], "start_unit": "fortnights"}]})


def test_a_start_out_of_range_says_what_it_found_and_what_would_fit(tmp_path):
    (tmp_path / "cm.txt").write_text(CM_10MS)
    with pytest.raises(detailsim.ScenarioError) as e:
        read_htsim_cm(tmp_path / "cm.txt", "workload[0].file", "ms", "workload[0].start_unit")
    msg = str(e.value)
    assert msg.startswith("workload[0].file: cm.txt line 4: start 1000888672 ms is 1.00089e+06 s"), msg
    assert "the file's starts span 0 to 9999634797 ms" in msg and "set workload[0].start_unit (ps, ns, us, ms, s)" in msg, msg


def test_input_ids_survive_into_the_flow_table_and_the_export(tmp_path):
    (tmp_path / "cm.txt").write_text("Nodes 16\nConnections 2\n0->1 id 40 start 0 size 3000\n# no id: its line\n2->3 start 5 size 100\n")
    (tmp_path / "s.toml").write_text('[run]\nduration = "1ms"\ndrain = "5ms"\n[topology]\nkind = "fattree"\nk = 4\n'
                                     '[[workload]]\nkind = "htsim_cm"\nfile = "cm.txt"\n')
    run_cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "run"), "-q", check=True)
    f = pl.read_parquet(tmp_path / "run" / "flows.parquet").sort("size")
    assert f["input_id"].to_list() == [5, 40]
    run_cli("export", str(tmp_path / "run"), "--format", "hpcc-fct", check=True)
    lines = [ln.split() for ln in (tmp_path / "run" / "fct.txt").read_text().splitlines()]
    assert sorted((int(x[4]), int(x[8])) for x in lines) == [(100, 5), (3000, 40)]
    # a CSV flow list numbers its data rows; generated flows have none
    (tmp_path / "f.csv").write_text("src,dst,size_bytes,start_s\n0,1,500,0\n2,3,700,0\n")
    r = detailsim.run({"run": {"duration": "1ms"}, "topology": {"kind": "fattree", "k": 4},
                       "workload": [{"kind": "flows", "file": str(tmp_path / "f.csv")}, {"kind": "retrieval", "rate": 1000, "sizes": ["2KB"]}]})
    listed = r.flows.filter(pl.col("class") == "flow").sort("size")
    assert listed["input_id"].to_list() == [1, 2]
    assert r.flows.filter(pl.col("class") != "flow")["input_id"].null_count() == r.flows.height - 2


def test_an_hpcc_flow_file_runs_exactly_as_the_same_flows_listed(tmp_path):
    # the same four flows as a flow list and as an HPCC flow file (host indices on a non-HPCC topology)
    rows = [(0, 4, 300_000, 0.0), (1, 5, 300_000, 0.0), (2, 6, 200_000, 1e-4), (3, 7, 100_000, 2e-4)]
    (tmp_path / "flow.txt").write_text(f"{len(rows)}\n" + "".join(f"{s} {d} 0 100 {b} {t}\n" for s, d, b, t in rows))
    base = {"run": {"duration": "1ms", "drain": "20ms", "threads": 1}, "topology": {"kind": "dumbbell", "left": 4, "right": 4}}
    listed = {**base, "workload": [{"kind": "flows", "rows": [{"src": s, "dst": d, "size_bytes": b, "start_s": t} for s, d, b, t in rows]}]}
    hpcc = {**base, "workload": [{"kind": "hpcc_flows", "file": str(tmp_path / "flow.txt")}]}
    a, b = detailsim.run(listed), detailsim.run(hpcc)
    cols = ["src", "dst", "size", "start", "end", "retransmits"]
    assert a.flows.select(cols).equals(b.flows.select(cols))


def test_hpcc_fct_export_round_trips(tmp_path):
    out = tmp_path / "run"
    run_cli("run", "examples/hpcc_small", "--out", str(out), "-q", "--set", "run.threads=1", check=True)
    p = run_cli("export", str(out), "--format", "hpcc-fct", check=True)
    assert "8 finished flows" in p.stdout
    lines = (out / "fct.txt").read_text().splitlines()
    flows = pl.read_parquet(out / "flows.parquet").sort(["end", "id"])
    assert len(lines) == flows.height == 8
    for line, r in zip(lines, flows.iter_rows(named=True)):
        sip, dip, sport, dport, size, start, fct, ideal, input_id = line.split()
        assert int(input_id) == r["input_id"]  # the HPCC flow file's line
        # HPCC numbers node n 0x0b000001 + (n / 256) * 0x10000 + (n % 256) * 0x100; host 6 is HPCC node 9
        node = {i: i for i in range(6)} | {6: 9}
        assert int(sip, 16) == 0x0B000001 + node[r["src"]] * 0x100 and int(dip, 16) == 0x0B000001 + node[r["dst"]] * 0x100
        assert (int(size), int(start), int(fct), int(ideal)) == (r["size"], round(r["start"] * 1e9), round(r["fct"] * 1e9), round(r["ideal"] * 1e9))
        assert int(dport) == 100 and int(sport) >= 10000
    # a run that is not one
    p = run_cli("export", str(tmp_path), "--format", "hpcc-fct")
    assert p.returncode == 2 and "not a run directory" in p.stderr


DAMAGED = [
    # (file, text, what the message must say)
    ("topology.txt", "4 1 3\n3\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n", "3 links expected (line 1 says so), found 2"),
    ("topology.txt", "4 1 3\n3\n0 3 10Gbps 1us 0\n1 3 10Gbit 1us 0\n2 3 10Gbps 1us 0\n", "topology.txt line 4: rate must be like 100Gbps"),
    ("topology.txt", "4 1 3\n3\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0.01\n2 3 10Gbps 1us 0\n", "line 4: error_rate must be 0"),
    ("topology.txt", "4 1 3\n3\n0 3 10Gbps 1us 0\n1 2 10Gbps 1us 0\n2 3 10Gbps 1us 0\n", "line 4: joins two hosts"),
    ("topology.txt", "4 1 3\n3 2\n0 3 10Gbps 1us 0\n", "line 2: 1 switch ids expected"),
    ("flow.txt", "2\n0 1 3 100 1000 0\n1 3 3 100 1000 0\n", "flow.txt line 3: dst 3 is not a host of the HPCC topology"),
    ("flow.txt", "2\n0 1 3 100 1000 0\n1 2 3 100 -5 0\n", "flow.txt line 3: size must be 1 to"),
    ("flow.txt", "3\n0 1 3 100 1000 0\n1 2 3 100 1000 0\n", "3 flows expected (line 1 says so), found 2"),
    ("flow.txt", "1\n0 1 3 100 1000\n", "line 2: expected 'src dst priority_group dst_port size start_time'"),
    ("cm.txt", "Nodes 3\nConnections 1\n0->1 start 0\n", "cm.txt line 3: size is required"),
    ("cm.txt", "Nodes 3\nConnections 1\n0->5 start 0 size 100\n", "cm.txt line 3: dst must be 0 to 2"),
    ("cm.txt", "Nodes 3\nConnections 2\n0->1 start 0 size 100\n", "cm.txt line 2: 2 connections announced, 1 found"),
    ("cm.txt", "Nodes 3\nConnections 1\n0->1 id 1 trigger 2 size 100\n", "cm.txt line 3: trigger is not supported"),
    ("cm.txt", "Nodes 3\nConnections 1\n0->1 start 0 size 100 colour red\n", "cm.txt line 3: unknown token 'colour'"),
]


@pytest.mark.parametrize("name,text,says", DAMAGED)
def test_a_damaged_file_is_refused_naming_its_line(tmp_path, name, text, says):
    good_topo = "4 1 3\n3\n0 3 10Gbps 1us 0\n1 3 10Gbps 1us 0\n2 3 10Gbps 1us 0\n"
    (tmp_path / "topology.txt").write_text(good_topo)
    (tmp_path / "flow.txt").write_text("1\n0 1 3 100 1000 0\n")
    (tmp_path / "cm.txt").write_text("Nodes 3\nConnections 1\n0->1 start 0 size 1000\n")
    (tmp_path / name).write_text(text)
    kind = "htsim_cm" if name == "cm.txt" else "hpcc_flows"
    (tmp_path / "s.toml").write_text(f'[run]\nduration = "1ms"\n[topology]\nkind = "hpcc"\nfile = "topology.txt"\n'
                                     f'[[workload]]\nkind = "{kind}"\nfile = "{name if name != "topology.txt" else "flow.txt"}"\n')
    p = run_cli("run", str(tmp_path / "s.toml"), "-q")
    assert p.returncode == 2, p.stderr
    assert says in p.stderr, p.stderr
    assert name in p.stderr


def test_the_core_names_the_line_of_a_row_it_refuses(tmp_path):
    # host 20 exists in no k = 4 fat tree (16 hosts): only the core knows; its message names the file's line
    (tmp_path / "cm.txt").write_text("Nodes 32\nConnections 2\n# a comment\n0->1 start 0 size 100\n0->20 start 0 size 100\n")
    sc = {"run": {"duration": "1ms"}, "topology": {"kind": "fattree", "k": 4}, "workload": [{"kind": "htsim_cm", "file": str(tmp_path / "cm.txt")}]}
    with pytest.raises(detailsim.ScenarioError, match=r"workload\[0\].file: cm.txt line 5: dst: host index must be below 16"):
        detailsim.run(sc)


def test_readers_refuse_what_they_cannot_represent(tmp_path):
    f = tmp_path / "cm.txt"
    f.write_text("Nodes 4\nConnections 1\nTriggers 1\n0->1 start 0 size 10\ntrigger id 1 oneshot\n")
    with pytest.raises(detailsim.ScenarioError, match="cm.txt line 5: triggers are not supported"):
        read_htsim_cm(f, "workload[0].file")
    f.write_text("2\n0 1 3 100 10 0\n1 0 3 100 10 0\n1 0 3 100 10 0\n")
    with pytest.raises(detailsim.ScenarioError, match="line 4: more flows than line 1 announces"):
        read_hpcc_flows(f, "workload[0].file", None)
    sc = json.loads(json.dumps({"topology": {"kind": "hpcc", "file": "x.txt", "nodes": []}}))
    with pytest.raises(detailsim.ScenarioError, match='topology.nodes: not with kind "hpcc"'):
        detailsim.run(sc)


def test_a_ten_ms_htsim_matrix_with_elephants_runs_and_its_short_flows_finish(tmp_path):
    """Issue 48's done-when: a gzipped connection matrix as csg-htsim reads it for a 10 ms run on a k = 8,
    10 Gbps fat tree (start times in picoseconds up to about 10^10): 18,741 short flows between random hosts
    and 32 flows of 100 MB. The short ones finish within a 10 ms drain; the elephants cannot (each needs
    80 ms at line rate); every flow keeps its connection id."""
    import gzip

    import numpy as np

    rng = np.random.default_rng(48)
    n_short, n_long, hosts = 18_741, 32, 128
    src = rng.integers(0, hosts, n_short + n_long)
    dst = (src + rng.integers(1, hosts, n_short + n_long)) % hosts
    size = np.concatenate([np.round(10 ** rng.uniform(2, 5, n_short)).astype(np.int64), np.full(n_long, 100_000_000)])
    start = np.sort(rng.integers(0, 10_000_000_000, n_short + n_long))
    start[-1] = 9_999_634_797
    rng.shuffle(size)  # elephants start anywhere in the 10 ms
    lines = [f"{s}->{d} id {i + 1} start {t} size {b}" for i, (s, d, t, b) in enumerate(zip(src, dst, start, size))]
    (tmp_path / "cm.gz").write_bytes(gzip.compress(("Nodes 128\nConnections %d\n" % len(lines) + "\n".join(lines) + "\n").encode()))
    sc = {"run": {"duration": "10ms", "drain": "10ms"}, "topology": {"kind": "fattree", "k": 8, "link_rate": "10Gbps"},
          "scheme": {"preset": "dctcp"}, "workload": [{"kind": "htsim_cm", "file": str(tmp_path / "cm.gz")}]}
    r = detailsim.run(sc)
    assert_invariants(r.summary)
    f = r.flows
    assert f.height == n_short + n_long and sorted(f["input_id"].to_list()) == list(range(1, n_short + n_long + 1))
    short, long = f.filter(pl.col("size") < 100_000_000), f.filter(pl.col("size") == 100_000_000)
    assert short.height == n_short and short["fct"].null_count() == 0
    assert long.height == n_long and long["fct"].null_count() == n_long
    assert f["start"].max() == pytest.approx(9.999634797e-3, rel=1e-12)


def test_gzipped_hpcc_files_run_as_the_plain_ones_and_keep_their_lines(tmp_path):
    import gzip

    for name in ("hpcc_small_topology.txt", "hpcc_small_flow.txt"):
        (tmp_path / name).write_bytes(gzip.compress((EXAMPLES / name).read_bytes()))
    sc = {"run": {"duration": "2ms", "drain": "20ms", "threads": 1}, "topology": {"kind": "hpcc", "file": str(tmp_path / "hpcc_small_topology.txt"), "buffer": "1MB"},
          "workload": [{"kind": "hpcc_flows", "file": str(tmp_path / "hpcc_small_flow.txt")}]}
    plain = json.loads(json.dumps(sc))
    plain["topology"]["file"] = str(EXAMPLES / "hpcc_small_topology.txt")
    plain["workload"][0]["file"] = str(EXAMPLES / "hpcc_small_flow.txt")
    a, b = detailsim.run(sc).flows, detailsim.run(plain).flows
    assert a.drop("id").sort("input_id").equals(b.drop("id").sort("input_id"))
    # the flow file's lines 2.. are its flows, in order
    assert sorted(a["input_id"].to_list()) == list(range(2, 2 + a.height))
