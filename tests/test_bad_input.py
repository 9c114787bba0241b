"""Bad input of every kind ends in one line that names the field and what is allowed (exit code 2, or
ScenarioError from the API), never in a traceback, a panic or a hang; a failure of the core itself is one
line with exit code 3 and the scenario saved. Each class of failure the fuzzer (detailsim.fuzz) or a
reader found has its own test here."""

from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import detailsim
from detailsim import ScenarioError, fuzz
from conftest import run_cli

SMALL = {"run": {"duration": "2ms", "drain": "20ms"}, "topology": {"kind": "single_switch", "hosts": 4},
         "scheme": {"preset": "fh"}, "workload": [{"kind": "retrieval", "rate": 500, "sizes": ["2KB"]}]}


def small(**changes):
    sc = json.loads(json.dumps(SMALL))
    for path, v in changes.items():
        cur = sc
        parts = path.split("__")
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur.setdefault(p, {})
        cur[parts[-1]] = v
    return sc


def error_of(sc) -> str:
    with pytest.raises(ScenarioError) as e:
        detailsim.run(sc)
    msg = str(e.value)
    assert "\n" not in msg, msg
    return msg


# ---------------------------------------------------------------- the fuzzer, a few hundred cases per test run

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31))
def test_mutated_inputs_end_in_a_clean_error_or_a_run(tmp_path_factory, i):
    bases, csv_text, cdf_text = fuzz._inputs()
    kind, payload, desc = fuzz.make_case(i, 12345, bases, csv_text, cdf_text)
    outcome = fuzz.run_case(kind, payload, tmp_path_factory.mktemp("fuzz"))
    assert not outcome.startswith("FAIL"), f"{desc}: {outcome}"


def test_the_mutator_changes_what_it_says_and_is_deterministic():
    rng = random.Random(7)
    base = {"run": {"duration": "1ms"}, "workload": [{"kind": "retrieval", "rate": 5}]}
    seen = set()
    for _ in range(200):
        m, what = fuzz.mutate(base, rng)
        assert m != base or what[0].startswith("scale"), what
        seen.add(what[0].split()[0])
    assert seen >= {"wrong_type", "number", "float", "unit", "delete", "add", "container", "scale"}
    # chained mutations never build a cycle (a worker of the first campaign died on one: the constants
    # the mutator inserts were shared objects, later mutated in place)
    for _ in range(500):
        m, _ = fuzz.mutate(base, rng, n=4)
        m, _ = fuzz.mutate(m, rng, n=4)
        json.dumps(m)
    assert fuzz.WRONG_TYPES[9:13] == [[], [1, 2], {}, {"a": 1}]
    a = fuzz.make_case(5, 1, *fuzz._inputs())
    b = fuzz.make_case(5, 1, *fuzz._inputs())
    assert a[2] == b[2] and json.dumps(a[1], default=str) == json.dumps(b[1], default=str)


def test_a_campaign_runs_every_case_once(tmp_path):
    """The campaign's own machinery: cases split over worker processes, every one reported once."""
    rep = fuzz.campaign(40, 2, seed=3, out=tmp_path / "r.json", log_every=1e9)
    assert sum(rep["outcomes"].values()) == 40 and not rep["failures"], rep
    assert json.loads((tmp_path / "r.json").read_text())["cases"] == 40


# ---------------------------------------------------------------- the shapes the front end reads (issue 12's tracebacks)


@pytest.mark.parametrize("sc, field", [
    (small(workload=1.5), "workload: must be a list of tables"),
    (small(workload=[3]), "workload[0]: must be a table"),
    (small(run="fast"), "run: must be a table"),
    (small(topology=[1]), "topology: must be a table"),
    (small(scheme__tcp=[1, 2]), "scheme.tcp: must be a table"),
    (small(workload__0__kind=7), "workload[0].kind: must be a string"),
    (small(topology__file=1.5), "topology.file: must be a string"),
    (small(workload__0__sizes=[[1], "2KB"]), "workload[0].sizes[0]: "),
    (small(workload__0__rate=math.nan), "workload[0].rate: must be a finite number, got nan"),
    (small(run__duration=math.inf), "run.duration: must be a finite number"),
    (small(workload__0__bogus=1), "workload[0].bogus: unknown field"),
])
def test_wrong_shapes_name_the_field(sc, field):
    assert error_of(sc).startswith(field)


def test_pias_table_values_are_checked():
    sc = small(scheme={"preset": "pias", "pias": {"queues": "eight"}},
               workload=[{"kind": "cdf", "cdf": "websearch", "load": 0.3}])
    assert error_of(sc).startswith("scheme.pias.queues: a whole number of queues, 1 to 8")
    sc["scheme"]["pias"] = {"queues": 2.5}
    assert error_of(sc).startswith("scheme.pias.queues")
    sc["scheme"]["pias"] = {"thresholds": 3}
    assert error_of(sc).startswith("scheme.pias.thresholds: ")
    # the load the thresholds are derived from, named where it was given
    sc["scheme"]["pias"] = {}
    sc["workload"][0]["load"] = "high"
    assert error_of(sc).startswith("workload[0].load: a load in (0, 1) (the PIAS thresholds are derived from it), got a string 'high'")
    sc["scheme"]["pias"] = {"load": 1.5}
    assert error_of(sc).startswith("scheme.pias.load: a load in (0, 1)")


# ---------------------------------------------------------------- sizes, periods and arithmetic


@pytest.mark.parametrize("topo, field", [
    ({"kind": "leaf_spine", "leaves": 2**31, "spines": 4, "hosts_per_leaf": 16}, "topology.leaves: "),
    ({"kind": "leaf_spine", "leaves": 4000, "spines": 4000, "hosts_per_leaf": 1}, "topology.leaves: "),
    ({"kind": "single_switch", "hosts": 2**31}, "topology.hosts: 2147483648 hosts; at most 100000"),
    ({"kind": "dumbbell", "left": 2**32 - 1, "right": 2**32 - 1}, "topology.left: "),
    ({"kind": "single_switch", "hosts": 4, "frame_overhead": "1MB"}, "topology.frame_overhead: "),
    ({"kind": "single_switch", "hosts": 4, "min_frame": "5GB"}, "topology.min_frame: "),
])
def test_fabrics_too_large_or_malformed_are_refused_at_once(topo, field):
    t0 = time.perf_counter()
    assert error_of(small(topology=topo)).startswith(field)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("changes, field", [
    ({"scheme": {"preset": "detail", "pfc": {"watchdog_timeout": "1ps"}}}, "scheme.pfc.watchdog_timeout: must be at least 1ns"),
    ({"scheme": {"preset": "detail", "pfc": {"deadlock_check": "1ps"}}}, "scheme.pfc.deadlock_check: must be at least 1ns"),
    ({"workload__0__burst_period": "1ps", "workload__0__burst_length": "1ps", "workload__0__burst_rate": 9},
     "workload[0].burst_period: must be at least 1ns"),
    ({"run__sample": "1ps"}, "run.sample: must be at least 1us"),
    ({"run__sample": "1us", "run__duration": "100s", "topology": {"kind": "fattree", "k": 8}}, "run.sample: 7.68e10 port samples over run.duration; at most 2e8"),
    ({"run__max_wall": "1ns"}, "run.max_wall: must be at least 1ms"),
    ({"scheme__tcp": {"initial_window": 2**32 - 1}}, "scheme.tcp.initial_window: must be 1 to 1000000"),
    ({"run__duration": "18000000s"}, "run.duration: expected a non-negative duration such as \"25us\" (units ps, ns, us, ms, s) of at most 1000000s"),
    ({"workload__0__sizes": ["2KB", "inf"]}, "workload[0].sizes[1]: must be 1B to 2^50 B (1024 TB), got inf"),
    ({"topology__link_rate": "1000Tbps"}, "topology.link_rate: "),
    ({"run__max_events": 0}, "run.max_events: must be at least 1"),
    ({"workload__0__rate": 1e12}, "workload[0].rate: would start about 8.000e9 flows in this run; at most 5e7"),
    ({"workload": [{"kind": "background", "flows_per_server": 2**31, "size": "1MB"}]}, "workload[0].flows_per_server: 8589934592 background flows at once; at most 1000000"),
])
def test_endless_or_overflowing_values_are_refused(changes, field):
    sc = small(**{k: v for k, v in changes.items() if "__" in k})
    sc.update({k: v for k, v in changes.items() if "__" not in k})
    assert error_of(sc).startswith(field)


def test_custom_fabrics_host_to_host_and_split():
    nodes = [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}, {"name": "c", "kind": "host"},
             {"name": "s", "kind": "switch"}]
    sc = small(topology={"kind": "custom", "nodes": nodes, "links": [{"a": "a", "b": "s"}, {"a": "b", "b": "c"}]})
    assert error_of(sc).startswith('topology.links[1]: joins two hosts ("b" and "c")')
    nodes.append({"name": "t", "kind": "switch"})
    sc["topology"]["links"] = [{"a": "a", "b": "s"}, {"a": "b", "b": "s"}, {"a": "c", "b": "t"}]
    assert error_of(sc) == 'topology.links: host "c" cannot reach host "a": the fabric is split in parts'


# ---------------------------------------------------------------- CSV flow lists and CDF files


def _flows(tmp_path: Path, text: str, duration: str = "10ms") -> dict:
    f = tmp_path / "flows.csv"
    f.write_text(text) if isinstance(text, str) else f.write_bytes(text)
    return small(run__duration=duration, workload=[{"kind": "flows", "file": str(f)}])


@pytest.mark.parametrize("text, msg", [
    ("src,dst,size_bytes,start_s\n0,1,1000,0\n0,1,1000,nan\n", "flows.csv row 2: start_s must be a start time in seconds, finite and >= 0, got 'nan'"),
    ("src,dst,size_bytes,start_s\n0,1,1000,inf\n", "flows.csv row 1: start_s must be"),
    ("src,dst,size_bytes,start_s\n0,1,-5,0\n", "flows.csv row 1: size_bytes must be a whole number of bytes from 1 to 2^50, got '-5'"),
    ("src,dst,size_bytes,start_s\n0,1,1e3,0\n", "flows.csv row 1: size_bytes must be"),
    ("src,dst,size_bytes,start_s,priority\n0,1,10,0,9\n", "flows.csv row 1: priority must be 0 (highest) to 7 (lowest), got '9'"),
    ("src,dst,size_bytes,start_s\n0,0,10,0\n", "flows.csv row 1: dst must differ from src"),
    ("src,dst,size_bytes,start_s\n0,9,10,0\n", "flows.csv row 1: dst: host index must be below 4"),
    ("src,dst,size_bytes,start_s,colour\n0,1,10,0,red\n", "flows.csv has unknown column(s) 'colour'"),
    ("src,dst,size_bytes,start_s\n", "flows.csv has no flows"),
    (b"\x00\xff\xfe\x01garbage\x99", "workload[0].file: "),
])
def test_csv_errors_name_file_and_row(tmp_path, text, msg):
    m = error_of(_flows(tmp_path, text))
    assert m.startswith("workload[0].file: ") and msg in m, m


@pytest.mark.parametrize("text", ["0 0\n100 nan\n", "0 0\n100 0.5\n50 1\n", "0 0\n100 0.5\n", b"\x89PNG\r\n\x1a\n\x00\x00", "0 0\n1e400 1\n"])
def test_bad_cdf_files(tmp_path, text):
    f = tmp_path / "sizes.cdf"
    f.write_text(text) if isinstance(text, str) else f.write_bytes(text)
    sc = small(scheme={"preset": "dctcp"}, workload=[{"kind": "cdf", "cdf": str(f), "load": 0.3}])
    assert error_of(sc).startswith("workload[0].cdf: sizes.cdf")


# ---------------------------------------------------------------- sweeps, analyze, the CLI


@pytest.mark.parametrize("spec, msg", [
    ({"base": "paper/verification", "seeds": 2**62}, "sweep.seeds: a number of seeds from 1 to 100000"),
    ({"base": "paper/verification", "seeds": [1, "2"]}, "sweep.seeds: "),
    ({"base": "paper/verification", "axes": {"workload.rate": list(range(1, 1001))}, "seeds": 101}, "sweep: 101000 runs"),
    ({"base": "paper/verification", "axes": {"run.duration": "1ms"}}, "axes.run.duration: must be a non-empty list"),
    ({"base": 5}, "sweep.base: required"),
])
def test_bad_sweeps(spec, msg):
    from detailsim.core.sweep import load_sweep

    with pytest.raises(ScenarioError) as e:
        load_sweep(spec)
    assert str(e.value).startswith(msg), str(e.value)


def test_analyze_bad_where_and_binary_cdf(tmp_path, cli):
    out = tmp_path / "run"
    cli("run", "paper/verification", "--duration", "5ms", "--out", str(out), check=True)
    r = cli("analyze", "workflow", "--fct-from", str(out), "--where", "size=big", "--deadline", "10ms")
    assert r.returncode == 2 and r.stderr.strip() == "error: --where 'size=big': column 'size' holds numbers, got 'big'", r.stderr
    r = cli("analyze", "workflow", "--fct-from", str(out), "--where", "size", "--deadline", "10ms")
    assert r.returncode == 2 and "expected COLUMN=VALUE" in r.stderr
    b = tmp_path / "fct.cdf"
    b.write_bytes(bytes(range(256)))
    r = cli("analyze", "workflow", "--fct-from", str(b), "--deadline", "10ms")
    assert r.returncode == 2 and "fct.cdf: not a text file (expected a CDF" in r.stderr and "Traceback" not in r.stderr


def test_a_panic_of_the_core_is_one_line_exit_3_with_the_scenario_saved(cli, monkeypatch):
    monkeypatch.setenv("DETAILSIM_TEST_PANIC", "1")
    r = cli("run", "examples/dumbbell", "--duration", "1ms")
    assert r.returncode == 3, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, r.stderr
    assert line.startswith("internal error: DETAILSIM_TEST_PANIC is set (at crates/py/src/lib.rs:") and line.endswith("please report it")
    saved = Path(line.split("scenario saved to ")[1].split(";")[0])
    rec = json.loads(saved.read_text())
    assert rec["scenario"]["topology"]["kind"] == "dumbbell"
    saved.unlink()
    # the API raises InternalError (a RuntimeError), not a PanicException
    with pytest.raises(RuntimeError, match="DETAILSIM_TEST_PANIC"):
        detailsim.run("examples/dumbbell", duration="1ms")


@pytest.mark.parametrize(("threads", "part"), [(2, "0"), (2, "1"), (3, "2")])
def test_a_panic_in_a_part_of_a_split_run_exits_3_at_once(cli, monkeypatch, threads, part):
    """A part that panics on its thread ends the run (the other parts do not wait for it at the barrier
    forever): one line, exit 3, the scenario saved, the failing part's own panic and place."""
    monkeypatch.setenv("DETAILSIM_TEST_PANIC_PART", part)
    t0 = time.perf_counter()
    r = cli("run", "paper/steady", "--duration", "20ms", "--set", f"run.threads={threads}")
    took = time.perf_counter() - t0
    assert r.returncode == 3, r.stderr
    line = r.stderr.strip()
    where = "(at crates/model/src/sim/parts/rounds.rs:"
    assert "\n" not in line and line.startswith(f"internal error: DETAILSIM_TEST_PANIC_PART={part} is set {where}"), line
    saved = Path(line.split("scenario saved to ")[1].split(";")[0])
    assert json.loads(saved.read_text())["scenario"]["run"]["threads"] == threads
    saved.unlink()
    # the panic comes in the first window: what remains is start-up and exit
    assert took < 10, took


def test_max_events_and_max_wall_end_a_run_cleanly(cli, tmp_path):
    r = cli("run", "paper/steady", "--duration", "50ms", "--max-events", "20000", "--json", "--out", str(tmp_path / "o"))
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["incomplete"].startswith("run.max_events (20000) reached at ") and s["events"] == 20000
    assert "warning: run incomplete: run.max_events (20000)" in r.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["incomplete"] == s["incomplete"]
    t0 = time.perf_counter()
    r = cli("run", "paper/steady", "--duration", "10s", "--max-wall", "1s", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["incomplete"].startswith("run.max_wall")
    assert time.perf_counter() - t0 < 60
    assert detailsim.run(small(), run__max_events=1).summary["incomplete"].startswith("run.max_events (1)")
    assert detailsim.run(small()).summary["incomplete"] is None


def test_a_bad_input_writes_nothing(cli, tmp_path):
    out = tmp_path / "o"
    r = cli("run", "examples/dumbbell", "--set", "workload.0.rate=-1", "--out", str(out))
    assert r.returncode == 2 and r.stderr.startswith("error: workload[0].rate: ") and r.stderr.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_flow_rows_after_the_window_are_reported_not_dropped_silently(tmp_path, cli):
    f = tmp_path / "flows.csv"
    f.write_text("src,dst,size_bytes,start_s\n0,1,1000,0\n0,1,1000,0.5\n1,2,1000,0.7\n")
    sc = tmp_path / "s.toml"
    sc.write_text(f'[run]\nduration = "10ms"\n[topology]\nkind = "single_switch"\nhosts = 4\n'
                  f'[[workload]]\nkind = "flows"\nfile = "{f}"\n')
    r = cli("run", str(sc), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["flow_rows_not_started"] == [{"workload": 0, "rows": 2}]
    assert "warning: workload[0]: 2 flow row(s) start at or after run.duration and never start" in r.stderr
    assert detailsim.run(str(sc), duration="1s").summary["flow_rows_not_started"] == []


def test_both_cdf_readers_are_one_reader(tmp_path):
    """A flow-size CDF (workload cdf) and an FCT CDF (analyze --fct-from) are read by one reader
    (cdf.numeric_rows): the same damaged line gets the same message, naming the file and the line."""
    from detailsim._core import ScenarioError
    from detailsim.core.analyze import load_cdf
    from detailsim.core.cdf import load_points

    bad = tmp_path / "sizes.cdf"
    bad.write_text("# size p\n100 0.5\n200 x\n")
    msgs = []
    for read, field in ((lambda: load_points(str(bad), field="cdf"), "cdf"), (lambda: load_cdf(bad, "ms"), "--fct-from")):
        with pytest.raises(ScenarioError) as e:
            read()
        msgs.append(str(e.value).removeprefix(f"{field}: "))
    assert msgs[0].split(" (expected")[0] == msgs[1].split(" (expected")[0] == "sizes.cdf:3: not numbers", msgs
