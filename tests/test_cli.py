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


def _run_on_a_terminal(*args: str) -> tuple[int, str, str]:
    """Run the CLI with its stderr on a pseudo-terminal (where a progress bar would show); (code, stdout,
    what the terminal received)."""
    import os
    import pty
    import subprocess

    from conftest import CLI, ROOT

    master, slave = pty.openpty()
    p = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=slave, cwd=ROOT, text=True)
    os.close(slave)
    out, _ = p.communicate(timeout=120)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


def test_a_short_run_on_a_terminal_shows_no_progress_bar_and_its_table_starts_on_its_own_line():
    code, out, term = _run_on_a_terminal("run", "examples/incast")
    assert code == 0
    assert "simulated" not in term and "%" not in term, term
    assert out.startswith("class "), out[:80]


def test_the_progress_bar_has_one_label_and_leaves_a_clean_line():
    import io

    from detailsim.cli import Progress

    f = io.StringIO()
    p = Progress(file=f, after=0.0)
    for now in (0.05, 0.1, 0.2):
        p(now, 0.2)
    p.close()
    text = f.getvalue()
    frames = [x for x in text.split("\r") if x.strip()]
    assert frames and all(x.count("simulated") == 1 for x in frames), frames
    assert "simulated 0.200 of 0.200 s" in text and "100%" in text
    assert text.endswith("\r") and "\n" not in text  # the line is cleared; what follows starts at its beginning
    q = Progress(file=io.StringIO(), after=3600.0)
    q(0.1, 0.2)
    assert q.bar is None  # not shown before `after` seconds


def test_out_refuses_a_non_empty_directory_unless_forced(tmp_path):
    out = tmp_path / "o"
    run_cli("run", "examples/incast", "--out", str(out), check=True)
    before = (out / "summary.json").read_text()
    r = run_cli("run", "examples/incast", "--seed", "2", "--out", str(out))
    assert r.returncode == 2 and "--out" in r.stderr and "--force" in r.stderr
    assert (out / "summary.json").read_text() == before
    run_cli("run", "examples/incast", "--seed", "2", "--out", str(out), "--force", check=True)
    assert json.loads((out / "summary.json").read_text())["seed"] == 2
    (tmp_path / "empty").mkdir()
    run_cli("run", "examples/incast", "--out", str(tmp_path / "empty"), check=True)


def test_a_scenario_without_a_workload_is_refused(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('[topology]\nkind = "single_switch"\nhosts = 4\n')
    r = run_cli("run", str(sc))
    assert r.returncode == 2 and r.stderr.startswith("error: workload: the scenario has no [[workload]]"), r.stderr
    assert "incast" in r.stderr and "hpcc_flows" in r.stderr


@pytest.mark.parametrize("args, hint", [
    (["--set", "topology.lnk_rate=10Gbps"], "did you mean `link_rate`?"),
    (["--scheme", "detial"], "did you mean `detail`?"),
    (["--set", "workload.0.kind=incst"], "did you mean `incast`?"),
    (["--set", "run.durtion=1ms"], "did you mean `duration`?"),
    (["--set", "scheme.ecn=1"], "did you mean one of `ecn_marking`, `ecn_threshold`?"),
    (["--set", "topology.kind=fatree"], "did you mean `fattree`?"),
])
def test_a_misspelt_name_gets_the_closest_allowed_one(args, hint):
    r = run_cli("run", "examples/incast", *args)
    assert r.returncode == 2 and r.stderr.strip().endswith(hint), r.stderr
    assert r.stderr.count("\n") == 1


def test_misspelt_names_of_the_front_end_get_a_suggestion_too():
    r = run_cli("run", "examples/incats")
    assert r.returncode == 2 and r.stderr.strip().endswith("did you mean 'examples/incast'?"), r.stderr
    r = run_cli("reproduce", "incst")
    assert r.returncode == 2 and r.stderr.strip().endswith("did you mean 'incast'?"), r.stderr
    r = run_cli("reference", "workload.cfd")
    assert r.returncode == 2 and r.stderr.strip().endswith("did you mean 'workload.cdf'?"), r.stderr


def test_scenarios_show_prints_a_bundled_scenario_and_init_writes_one_that_runs(tmp_path):
    import tomllib

    r = run_cli("scenarios", "--show", "examples/incast", check=True)
    assert tomllib.loads(r.stdout)["workload"][0]["file"] == "incast16.csv"
    assert "reads incast16.csv" in r.stderr
    path = tmp_path / "mine.toml"
    run_cli("init", str(path), check=True)
    text = path.read_text()
    assert text.count("#") > 20  # commented
    r = run_cli("run", str(path), "--json", check=True)
    s = json.loads(r.stdout)
    assert s["scheme"] == "dctcp" and s["flows"]["completed"] == s["flows"]["started"] > 10
    assert run_cli("init", str(path)).returncode == 2
    run_cli("init", str(path), "--force", check=True)


def test_export_csv_writes_the_flow_table_as_it_is(tmp_path):
    out = tmp_path / "r"
    run_cli("run", "examples/incast", "--out", str(out), check=True)
    run_cli("export", str(out), "--format", "csv", check=True)
    back = pl.read_csv(out / "flows.csv")
    flows = pl.read_parquet(out / "flows.parquet")
    assert back.columns == flows.columns and back.height == flows.height == 16
    assert back["fct"].to_list() == pytest.approx(flows["fct"].to_list())
