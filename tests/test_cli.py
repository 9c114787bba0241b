"""The command line: schema of --json, listings, outputs, and bad input (one line naming the field, exit 2,
nothing written)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import assert_invariants, run_cli

SCHEMA_KEYS = [
    "scenario", "scheme", "seed", "sim_time_s", "wall_s", "events", "link_traversals", "flows", "fct",
    "drops", "timeouts", "retransmits", "pfc", "ecn_marks",
]


def test_run_json_schema():
    r = run_cli("run", "paper/steady", "--scheme", "fh", "--duration", "0.01s", "--json", check=True)
    s = json.loads(r.stdout)
    for k in SCHEMA_KEYS:
        assert k in s, k
    assert s["scenario"] == "paper/steady" and s["scheme"] == "fh" and s["seed"] == 1
    assert set(s["flows"]) == {"started", "completed"}
    assert set(s["fct"]) == {"retrieval/2KB", "retrieval/8KB", "retrieval/32KB", "background"}
    for cls in ("retrieval/2KB", "retrieval/8KB", "retrieval/32KB"):
        st = s["fct"][cls]
        assert {"count", "mean_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms"} <= set(st)
        assert st["count"] > 500
        assert 0 < st["p50_ms"] <= st["p99_ms"] <= st["p999_ms"] <= st["max_ms"]
    assert {"pause_frames", "paused_time_s"} <= set(s["pfc"])
    assert s["link_traversals"] > 0 and s["events"] > s["link_traversals"]
    assert_invariants(s)


def test_out_dir_and_table(tmp_path):
    out = tmp_path / "res"
    r = run_cli("run", "paper/steady", "--duration", "0.005s", "--out", str(out), check=True)
    assert "retrieval/2KB" in r.stdout and "p99.9" in r.stdout
    flows = pl.read_parquet(out / "flows.parquet")
    summary = json.loads((out / "summary.json").read_text())
    assert flows.height == summary["flows"]["started"]
    assert flows.columns == ["id", "class", "src", "dst", "size", "priority", "start", "end", "fct", "fct_lower", "timeouts", "retransmits", "ideal", "bytes_delivered", "input_id", "slowdown", "window_bytes", "window_goodput_bps"]
    ports = pl.read_parquet(out / "ports.parquet")
    assert ports.height == 2 * 224  # detail128 has 224 links
    assert json.loads((out / "scenario.json").read_text())["topology"]["kind"] == "detail128"


def test_listings():
    r = run_cli("scenarios", check=True)
    assert "paper/steady" in r.stdout
    r = run_cli("schemes", check=True)
    assert r.stdout.splitlines()[0].startswith("fh")
    assert "scatter" in r.stdout


@pytest.mark.parametrize(
    "args, field",
    [
        (["--set", "topology.bogus=1"], "topology.bogus"),
        (["--set", "topology.link_rate=-1Gbps"], "topology.link_rate"),
        (["--set", "topology.kind=torus"], "topology.kind"),
        (["--scheme", "nonesuch"], "scheme.preset"),
        (["--set", "run.drain=10 fortnights"], "run.drain"),
        (["--set", "topology.buffer=12XB"], "topology.buffer"),
        (["--set", "workload.0.rate=-3"], "workload[0].rate"),
        (["--set", "workload.0.sizes=[]"], "workload[0].sizes"),
        (["--set", "workload.1.kind=telepathy"], "workload[1]"),
        (["--set", "scheme.tcp.rto_min=fast"], "scheme.tcp.rto_min"),
    ],
)
def test_bad_input(tmp_path, args, field):
    out = tmp_path / "never"
    r = run_cli("run", "paper/steady", "--duration", "0.001s", "--out", str(out), *args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {field}"), lines[0]
    assert not out.exists()
    assert r.stdout == ""


def test_unknown_scenario():
    r = run_cli("run", "paper/nonexistent")
    assert r.returncode == 2
    assert "paper/steady" in r.stderr  # lists what exists


def test_malformed_toml(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text("[topology\nkind = 'single_switch'\n")
    r = run_cli("run", str(p))
    assert r.returncode == 2 and "not valid TOML" in r.stderr


def test_every_command_that_runs_a_scenario_declares_its_options_once():
    """run, live and check-split take SCENARIO, --scheme, --set, --seed and --duration from one declaration
    (cli._scenario_options): the same names and help (live adds what its seed means)."""
    from detailsim.cli import main as cli_main

    def opts(name):
        cmd = cli_main.commands[name]
        return {p.name: (p.opts, getattr(p, "help", None)) for p in cmd.params if p.name in ("scheme", "sets", "seed", "duration")}

    run, live, check = opts("run"), opts("live"), opts("check-split")
    assert set(run) == set(live) == set(check) == {"scheme", "sets", "seed", "duration"}
    assert run["scheme"] == live["scheme"] == check["scheme"]
    assert run["sets"] == live["sets"] and check["sets"][1].startswith(run["sets"][1].rstrip("."))
    assert live["seed"][1].startswith(run["seed"][1].rstrip("."))
