"""The analysis tools under benches/ keep working against the current core."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import bench_script

ROOT = Path(__file__).resolve().parent.parent


def test_partition_bound_on_a_small_fat_tree(tmp_path):
    sys.path.insert(0, str(ROOT / "benches"))
    try:
        import partition_bound
    finally:
        sys.path.pop(0)
    sc = {
        "run": {"duration": "0.3ms", "seed": 1, "warmup": "0s", "drain": "5ms"},
        "topology": {"kind": "fattree", "k": 4, "link_rate": "10Gbps", "buffer": "1MB"},
        "scheme": {"preset": "fh"},
        "workload": [
            {"kind": "retrieval", "rate": 20000, "sizes": ["2KB", "32KB"], "priority": 0, "request_size": "10B"},
            {"kind": "background", "flows_per_server": 1, "size": "200KB", "priority": 1},
        ],
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(sc))
    r = partition_bound.bound(str(path))
    # the default link delay plus forwarding delay
    assert r["lookahead_us"] == pytest.approx(9.7)
    assert r["frames"] > 1000 and sum(r["frames_by_half"]) == r["frames"]
    # both halves carry traffic, some of it across the cut; two halves can at best halve the time
    assert min(r["frames_by_half"]) > 0.3 * r["frames"]
    assert 0 < r["crossing_the_cut_pct"] < 100
    assert 1.0 < r["best_speedup_2_cores"] <= 2.0
    # four parts (one pod each in k = 4) can at best quarter it and do better than two; eight cannot be made
    assert r["best_speedup_2_cores"] < r["best_speedup_4_cores"] <= 4.0
    assert r["crossing_the_cut_pct"] < r["crossing_the_cuts_pct_4"] < 100
    assert r["best_speedup_8_cores"] is None and r["best_speedup_16_cores"] is None
    # only aggregation-core links cross a cut between pods: their tier's delay sets the window
    topo = {"link_delay": "2us", "forwarding_delay": "1us", "tiers": {"agg_core": {"delay": "500ns"}, "host": {"delay": "100ns"}}}
    assert partition_bound.lookahead_ps(topo) == 1_500_000
    assert partition_bound.lookahead_ps({"link_delay": "2us", "forwarding_delay": "1us"}) == 3_000_000
    # the halves follow the pods: in a k = 4 fat tree hosts h0-h7 are pods 0-1
    names = [f"h{i}" for i in range(16)] + [f"tor{p}_{t}" for p in range(4) for t in range(2)] + [f"core{c}" for c in range(4)]
    side = partition_bound.side_of(names + ["agg3_0"])
    assert list(side[:16]) == [0] * 8 + [1] * 8
    assert list(side[16:24]) == [0] * 4 + [1] * 4
    assert list(side[24:28]) == [0, 0, 1, 1]


def test_threads_campaign_counts_same_and_refused(monkeypatch, capsys):
    sys.path.insert(0, str(ROOT / "benches"))
    try:
        import threads_campaign
    finally:
        sys.path.pop(0)
    # one scenario that splits (leaf-spine) and one the split run refuses (paper/incast repeats)
    monkeypatch.setattr(threads_campaign, "bundled_scenarios", lambda: {"examples/leaf_spine": "", "paper/incast": ""})
    monkeypatch.setattr(threads_campaign, "SCHEMES", [None])
    monkeypatch.setattr(sys, "argv", ["threads_campaign.py", "--duration", "1ms"])
    assert threads_campaign.main() == 0
    out = capsys.readouterr().out
    assert json.loads(out.strip().splitlines()[-1]) == {"same": 1, "refused": 1, "different": 0}
    assert "refused paper/incast" in out


def test_the_suite_runs_a_case_and_counts_it(monkeypatch, capsys):
    """`bench.py --case NAME --json`: the case runs in a child process and its instructions are counted (here
    by a stand-in for perf / callgrind, which would take a run under valgrind); the two-thread and busy runs
    are never counted."""
    bench = bench_script("bench")
    asked = []
    monkeypatch.setattr(bench, "count_instructions", lambda name: asked.append(name) or (1234.0, "callgrind"))
    probes = []
    monkeypatch.setattr(bench, "memory_probe", lambda: probes.append(1) or {"0.25": 5.0, "4": 50.0, "32": 90.0})
    monkeypatch.setattr(sys, "argv", ["bench.py", "--case", "rdma_incast_shared_hpcc", "--json", "--repeat", "2"])
    bench.main()
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["case"] == "rdma_incast_shared_hpcc" and row["link_traversals"] > 0
    assert row["runs"] == 2 and len(row["traversals_per_s_runs"]) == 2
    assert row["traversals_per_s"] == max(row["traversals_per_s_runs"]), "the fastest of the runs is kept"
    assert asked == ["rdma_incast_shared_hpcc"]
    assert len(probes) == 2, "the machine's memory is probed before and after the suite"
    assert row["instructions_per_traversal"] == 1234.0 and row["instructions_source"] == "callgrind"
    assert not bench.counted("steady_fh_0.2s_2t") and not bench.counted("steady_fh_0.2s_busy") and bench.counted("fattree32_fh_1ms")


def test_the_fastest_of_a_case_s_runs_is_kept_and_a_bad_repeat_refused(monkeypatch, capsys):
    """`--repeat N`: of N runs of a case the one whose core loop took least wall time is its row, every run's
    traversals per second stored beside it in the order run, and the table says how many; fewer than one run
    is refused with the option's name and what is allowed."""
    bench = bench_script("bench")
    runs = [{"case": "c", "core_wall_s": w, "traversals_per_s": 1e6 / w, "peak_rss_mb": 100 + i} for i, w in enumerate([2.0, 1.0, 1.5])]
    best = bench.fastest(runs)
    assert best["core_wall_s"] == 1.0 and best["peak_rss_mb"] == 101
    assert best["runs"] == 3 and best["traversals_per_s_runs"] == [5e5, 1e6, 1e6 / 1.5]
    with pytest.raises(ValueError):
        bench.fastest([])
    row = {"case": "fattree8_fh_5ms", "sim_s": 0.006, "events_per_traversal": 1.18, "instructions_per_traversal": None,
           "traversals_per_s": 8e6, "wall_per_sim_s": 5.0, "peak_rss_mb": 98.0}
    data = {"date": "2026-11-29", "commit": "abc1234", "machine": "x86_64", "rows": [row]}
    assert "one process per case" in bench.markdown(data)
    data["rows"] = [row | {"runs": 3}]
    assert "each case timed in 3 processes of its own and the fastest kept" in bench.markdown(data)
    monkeypatch.setattr(sys, "argv", ["bench.py", "--case", "fattree8_fh_5ms", "--repeat", "0"])
    with pytest.raises(SystemExit) as e:
        bench.main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--repeat" in err and "1 or more" in err


def test_perf_counts_are_divided_by_the_traversals_of_the_run_they_counted(monkeypatch):
    """`count_instructions` under perf: the case's process less the set-up-only process, divided by the
    traversals that counted run printed (not by those of another run, such as the stored one that
    `--update-instructions` counts again)."""
    bench = bench_script("bench")
    runs = []

    def perf(args):
        runs.append(args)
        return (1000, '{"case": "x"}') if "--setup-only" in args else (9000, 'log line\n{"case": "x", "link_traversals": 40}\n')

    monkeypatch.setattr(bench, "_instructions", perf)
    monkeypatch.setattr(bench, "_callgrind", lambda args: pytest.fail("perf counted: callgrind is not asked"))
    assert bench.count_instructions("fattree8_fh_5ms") == (200.0, "perf")
    assert [a[-1] for a in runs] == ["fattree8_fh_5ms", "--setup-only"]
    # without perf, callgrind's count over its own run's traversals
    monkeypatch.setattr(bench, "_instructions", lambda args: None)
    monkeypatch.setattr(bench, "_callgrind", lambda args: (5000, 25))
    assert bench.count_instructions("fattree8_fh_5ms") == (200.0, "callgrind")


def test_the_memory_probe_times_a_load_per_working_set():
    """`bench.py --probe` and the suite's stamp: nanoseconds per dependent load through 0.25, 4 and 32 MiB
    (the core's pointer chase); a size outside what the core allows is refused, naming the field."""
    from detailsim import _core

    bench = bench_script("bench")
    p = bench.memory_probe(steps=20_000)
    assert list(p) == ["0.25", "4", "32"] and all(v > 0 for v in p.values())
    assert bench._probe_text({"0.25": 5.0, "4": 61.25}) == "0.25 MiB 5.0 ns, 4 MiB 61.2 ns"
    assert _core.load_latency_ns(1.0, 20_000, per_page=True) > 0
    for bad, field in [({"mib": 0.0}, "mib"), ({"mib": float("nan")}, "mib"), ({"mib": 1.0, "steps": 0}, "steps"), ({"mib": 0.0, "per_page": True}, "mib")]:
        with pytest.raises(ValueError, match=field):
            _core.load_latency_ns(**bad)


def test_probe_alone_prints_the_loads_and_runs_no_case(monkeypatch, capsys):
    """`bench.py --probe` (`make bench ARGS=--probe`) prints the machine's loads, as text or as JSON, and
    runs no case."""
    bench = bench_script("bench")
    monkeypatch.setattr(bench, "memory_probe", lambda: {"0.25": 5.0, "4": 150.0, "32": 210.5})
    monkeypatch.setattr(bench, "run_case", lambda *a, **k: pytest.fail("--probe runs no case"))
    monkeypatch.setattr(bench.subprocess, "run", lambda *a, **k: pytest.fail("--probe starts no child"))
    monkeypatch.setattr(bench, "cpu", lambda: "Some CPU (family 6, model 207); L1d 48K, L2 2048K")
    monkeypatch.setattr(sys, "argv", ["bench.py", "--probe"])
    bench.main()
    assert capsys.readouterr().out.strip().splitlines() == [
        "cpu: Some CPU (family 6, model 207); L1d 48K, L2 2048K",
        "dependent load: 0.25 MiB 5.0 ns, 4 MiB 150.0 ns, 32 MiB 210.5 ns",
    ]
    monkeypatch.setattr(sys, "argv", ["bench.py", "--probe", "--json"])
    bench.main()
    assert json.loads(capsys.readouterr().out) == {"cpu": "Some CPU (family 6, model 207); L1d 48K, L2 2048K", "load_ns": {"0.25": 5.0, "4": 150.0, "32": 210.5}}


def test_the_processor_is_named_with_its_data_caches(tmp_path):
    """`bench.cpu`: the kernel's model name, family and model, and one core's data and unified caches by
    level (not the instruction cache); "unknown" where there is no /proc/cpuinfo. Every stamp of a run
    carries it (the VM is not always placed on the same kind of host)."""
    bench = bench_script("bench")
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n"
                    "model name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu: vme\n\nprocessor\t: 1\nmodel name\t: other\n")
    caches = tmp_path / "cache"
    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "32K"), (2, "Unified", "2048K"), (3, "Unified", "266240K")]):
        d = caches / f"index{i}"
        d.mkdir(parents=True)
        for f, v in [("level", level), ("type", kind), ("size", size)]:
            (d / f).write_text(f"{v}\n")
    assert bench.cpu(str(info), str(caches)) == "Intel(R) Xeon(R) Processor (family 6, model 207); L1d 48K, L2 2048K, L3 266240K"
    assert bench.cpu(str(info), str(tmp_path / "none")) == "Intel(R) Xeon(R) Processor (family 6, model 207)"
    assert bench.cpu(str(tmp_path / "missing")) == "unknown"
    assert "cpu" in bench._stamp() and bench._stamp()["cpu"] == bench.cpu()
    # one implementation: the package's, which each reproduction's timing.json names too
    from detailsim.machine import processor

    assert processor(str(info), str(caches)) == bench.cpu(str(info), str(caches)) and processor() == bench.cpu()


def test_a_stamp_names_the_files_changed_but_not_committed(tmp_path, monkeypatch):
    """A measurement made with uncommitted changes says which files (`bench._stamp` through
    `git status --porcelain`): a clean tree adds nothing, a few are named, many are counted."""
    bench = bench_script("bench")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q", str(tmp_path)], check=True)
    for n in ["a.md", "b.rs", "c.py", "d.txt", "e.txt"]:
        (tmp_path / n).write_text("one\n")
    subprocess.run(git + ["-C", str(tmp_path), "add", "."], check=True)
    subprocess.run(git + ["-C", str(tmp_path), "commit", "-q", "-m", "start"], check=True)
    monkeypatch.chdir(tmp_path)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert bench._stamp()["commit"] == head
    (tmp_path / "a.md").write_text("two\n")
    (tmp_path / "untracked.txt").write_text("not counted\n")
    assert bench._stamp()["commit"] == f"{head} (with uncommitted changes to a.md)"
    for n in ["b.rs", "c.py", "d.txt", "e.txt"]:
        (tmp_path / n).write_text("two\n")
    assert bench._stamp()["commit"] == f"{head} (with uncommitted changes to a.md, b.rs, c.py and 2 more)"


def test_pairsum_summarises_rounds_and_refuses_a_broken_file(tmp_path, capsys):
    """`benches/pairsum.py`: per case, best and median of each build, their ratios and the rounds the new
    build won (a round is two consecutive lines of one case, in either order); a file whose lines do not
    pair up is refused with the lines named."""
    pairsum = bench_script("pairsum")
    f = tmp_path / "p.txt"
    f.write_text("a old 2.000\na new 1.000\na new 1.500\na old 1.000\na old 3.000\na new 2.000\nb old 1.0\nb new 1.0\n")
    (a, b) = pairsum.read(f)
    assert a.case == "a" and a.old == (2.0, 1.0, 3.0) and a.new == (1.0, 1.5, 2.0)
    assert a.won == 2 and b.won == 0, "a tie is not a win"
    assert a.cells() == ("1.000 / 2.000 s", "1.000 / 1.500 s (1.00x / 1.33x)", "2 of 3")
    assert pairsum.main([str(f)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "a | 1.000 / 2.000 s | 1.000 / 1.500 s (1.00x / 1.33x) | 2 of 3"
    assert pairsum.cpu(f) is None, "a file from before pair.sh named the processor"
    # pair.sh's first line names the processor; the summary repeats it and the rounds are read as before
    f.write_text("# cpu: Intel(R) Xeon(R) Processor (family 6, model 207)\n" + f.read_text())
    assert pairsum.cpu(f) == "Intel(R) Xeon(R) Processor (family 6, model 207)" and pairsum.read(f) == [a, b]
    assert pairsum.main([str(f)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["# p.txt: Intel(R) Xeon(R) Processor (family 6, model 207)",
                                                      "a | 1.000 / 2.000 s | 1.000 / 1.500 s (1.00x / 1.33x) | 2 of 3"]
    for bad, what in [("a old 1\n", "not whole rounds"), ("a old 1\nb new 1\n", "lines 1-2"), ("a old 1\na old 2\n", "lines 1-2"),
                      ("# cpu: x\na old 1\na new 1\n\na old 1\nb new 1\n", "lines 5-6")]:
        f.write_text(bad)
        with pytest.raises(ValueError, match=what):
            pairsum.read(f)


def test_pair_sh_names_the_processor_and_alternates_the_builds(tmp_path):
    """`benches/pair.sh`: a `# cpu:` line, then per round one line per build, old first in odd rounds and
    new first in even ones, each with the build's user seconds; `pairsum.py` reads the file back."""
    old, new = tmp_path / "old.sh", tmp_path / "new.sh"
    for b in (old, new):
        b.write_text("#!/bin/sh\nexit 0\n")
        b.chmod(0o755)
    scn = tmp_path / "s.json"
    scn.write_text("{}")
    out = subprocess.run(["bash", str(ROOT / "benches" / "pair.sh"), str(scn)], env={**os.environ, "OLD": str(old), "NEW": str(new), "N": "2"},
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0].startswith("# cpu: ") and len(lines[0]) > len("# cpu: ")
    # the processor as the suite's stamps name it (`bench.py --cpu`: one reader of /proc/cpuinfo and the caches)
    bench = bench_script("bench")
    assert lines[0] == f"# cpu: {bench.cpu()}"
    assert [ln.split()[:2] for ln in lines[1:]] == [["s", "old"], ["s", "new"], ["s", "new"], ["s", "old"]]
    assert all(float(ln.split()[2]) >= 0 for ln in lines[1:])
    pairsum = bench_script("pairsum")
    f = tmp_path / "pairs.txt"
    f.write_text(out)
    assert pairsum.cpu(f) == lines[0][len("# cpu: "):] and [p.case for p in pairsum.read(f)] == ["s"]
    # `WALL=1` (runs on more than one thread): wall-clock seconds, said on the line after the processor's; a
    # build that sleeps takes wall time and next to no user time
    for b in (old, new):
        b.write_text("#!/bin/sh\nsleep 0.2\n")
    out = subprocess.run(["bash", str(ROOT / "benches" / "pair.sh"), str(scn)], env={**os.environ, "OLD": str(old), "NEW": str(new), "N": "1", "WALL": "1"},
                         capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[1] == "# clock: wall" and [ln.split()[1] for ln in lines[2:]] == ["old", "new"]
    assert all(float(ln.split()[2]) >= 0.2 for ln in lines[2:]), lines


def test_the_size_sweep_keeps_each_size_s_fastest_run_and_counts_a_fat_tree_s_ports():
    """`benches/sizes.py`: a k-ary fat tree has k^3/4 hosts and 5k^2/4 switches of k ports; per size the
    fastest run's nanoseconds per event, every run's beside it, and the ratio to the smallest size."""
    sizes = bench_script("sizes")
    assert (sizes.hosts(8), sizes.ports(8)) == (128, 768)
    assert (sizes.hosts(32), sizes.ports(32)) == (8192, 49152)
    runs = [{"k": 8, "events": 1000, "traversals": 800, "core_wall_s": 2e-4}, {"k": 32, "events": 1000, "traversals": 900, "core_wall_s": 5e-4},
            {"k": 8, "events": 1000, "traversals": 800, "core_wall_s": 1e-4}, {"k": 32, "events": 1000, "traversals": 900, "core_wall_s": 3e-4}]
    rows = sizes.summarise(runs)
    assert [r["k"] for r in rows] == [8, 32]
    assert rows[0]["ns_per_event_runs"] == [200.0, 100.0] and rows[0]["ns_per_event"] == 100.0 and rows[0]["ratio"] == 1.0
    assert rows[1]["ns_per_event"] == 300.0 and rows[1]["ratio"] == 3.0 and rows[1]["ports"] == 49152
    data = {"date": "d", "commit": "c", "machine": "m", "cpu": "p", "scheme": "fh", "rounds": 2, "rows": rows,
            "probe": {"before": {"lines": {"1": 7.0, "16": 130.0}, "pages": {"1": 6.0, "16": 21.0}},
                      "after": {"lines": {"1": 7.2, "16": 131.0}, "pages": {"1": 6.1, "16": 22.0}}}}
    md = sizes.markdown(data)
    assert "| 32 | 8,192 | 49,152 | 25.2 | 1ms | 1,000 | 300 | 3.00x |" in md
    assert "| ns per dependent load, before | 7 | 130 |" in md
    assert "| the same, one line per 4 KiB page, after | 6 | 22 |" in md


def test_the_size_sweep_runs_one_size_in_a_process_of_its_own():
    """`benches/sizes.py --child K` runs size K once and prints its events and the core loop's wall time as
    JSON (what the sweep reads back); a bad option is refused."""
    out = subprocess.run([sys.executable, str(ROOT / "benches" / "sizes.py"), "--child", "8", "--scheme", "fh"],
                         capture_output=True, text=True, check=True, cwd=ROOT, timeout=300)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["k"] == 8 and r["events"] > 1_000_000 and r["traversals"] > 1_000_000 and r["core_wall_s"] > 0
    bad = subprocess.run([sys.executable, str(ROOT / "benches" / "sizes.py"), "--rounds", "0"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode != 0 and "--rounds" in bad.stderr


def test_code_lines_counts_each_line_at_its_most_run_instruction(tmp_path, capsys):
    """`benches/code_lines.py`: from a callgrind profile with `--dump-instr=yes`, the 64-byte code lines by how
    often they run per event (each at its most executed instruction), a call's inclusive cost left out,
    relative addresses and compressed function names followed; a bad event count refused."""
    cl = bench_script("code_lines")
    prof = tmp_path / "callgrind.out"
    prof.write_text(
        "# callgrind format\nversion: 1\npositions: instr line\nevents: Ir\n\n"
        "fn=(1) hot\n0x1000 10 100\n+4 * 100\n+60 * 50\n"  # line 0x1000 (100 runs), line 0x1040 (50)
        "cfn=(2) cold\ncalls=1 0x2000 1\n* * 999999\n"  # the call's inclusive cost: not an execution
        "fn=(2)\n0x2000 20 1\n+0x40 * 3\n"  # two lines of `cold`, run once and three times
    )
    runs, owner = cl.read(prof)
    assert runs == {0x1000: 100, 0x1004: 100, 0x1040: 50, 0x2000: 1, 0x2040: 3}
    assert owner[0x2040] == "cold" and owner[0x1040] == "hot"
    by_line = cl.lines(runs, owner)
    assert by_line == {0x1000 // 64: (100, "hot"), 0x1040 // 64: (50, "hot"), 0x2000 // 64: (1, "cold"), 0x2040 // 64: (3, "cold")}
    # 100 events: lines run >= 1 per event: one (100 runs); >= 0.1: two; >= 0.01: all four
    assert cl.footprint(by_line, 100) == {1.0: 0.0625, 0.1: 0.125, 0.01: 0.25, 0.001: 0.25}
    assert cl.by_function(by_line, 100) == {"hot": [0.125, 0.0, 0.0], "cold": [0.0, 0.125, 0.0]}
    cl.main([str(prof), "100", "--functions", "2"])
    out = capsys.readouterr().out
    assert "lines run >= 0.01 per event: 0.2 KiB" in out and "instructions 254" in out and out.rstrip().endswith("cold")
    with pytest.raises(SystemExit):
        cl.main([str(prof), "0"])
    assert "events: the run's event count, at least 1" in capsys.readouterr().err


def test_the_targets_are_judged_from_the_stores_at_their_thresholds(tmp_path):
    """benches/targets.py reads the pairs (best over best), the suite's counts and the size sweep's ratio,
    and calls a target met exactly when its figure is on the right side of its threshold."""
    import json

    targets = bench_script("targets")
    (tmp_path / targets.PAIRS).parent.mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    # k = 8 FH: 1.20 / 0.80 = 1.5x exactly (met at the order change's 1.5x); k = 8 DeTail just short of 1.1x
    rounds = {"k8_fh_60ms": [(1.2, 0.8), (1.3, 0.9)], "k8_detail_60ms": [(1.099, 1.0), (1.2, 1.1)],
              "steady_fh": [(2.0, 1.5), (2.1, 1.6)], "steady_detail": [(2.0, 2.1), (2.0, 2.2)]}
    lines = ["# cpu: test", "# builds: old a, new b"]
    for case, rs in rounds.items():
        for old, new in rs:
            lines += [f"{case} old {old}", f"{case} new {new}"]
    (tmp_path / targets.PAIRS).write_text("\n".join(lines) + "\n")
    suite = {"fattree8_fh_5ms": (1.5, 1150.0), "steady_fh_0.2s": (1.51, 1300.0),
             "fattree8_detail_5ms": (1.8, 1400.0), "steady_detail_0.2s": (1.79, 1600.0)}
    (tmp_path / targets.SUITE).write_text(json.dumps({"date": "d", "commit": "c", "instructions": {"date": "d2", "commit": "c2"}, "rows": [
        {"case": c, "events_per_traversal": e, "instructions_per_traversal": i} for c, (e, i) in suite.items()]}))
    (tmp_path / targets.SIZES).write_text(json.dumps({"date": "d", "commit": "c", "rows": [
        {"k": 8, "ns_per_event": 100.0}, {"k": 32, "ns_per_event": 131.0}]}))
    got = {(t.name, t.case): (round(v, 4), ok) for t, v, ok in targets.rows(tmp_path)}
    assert got[("after the order change", "k8_fh_60ms")] == (1.5, True)
    assert got[("exact tier", "k8_detail_60ms")] == (1.099, False)
    assert got[("exact tier", "steady_fh")] == (1.3333, True) and got[("after the order change", "steady_fh")] == (1.3333, True)
    assert got[("exact tier", "steady_detail")] == (0.9524, False)
    assert got[("instructions per traversal", "fattree8_fh_5ms")] == (1150.0, True)
    assert got[("events per traversal, FH", "fattree8_fh_5ms")] == (1.5, True)
    assert got[("events per traversal, FH", "steady_fh_0.2s")] == (1.51, False)
    assert got[("events per traversal, DeTail", "steady_detail_0.2s")] == (1.79, True)
    assert got[("an event at k = 32 against k = 8", "k32_vs_k8")] == (1.31, False)
    table = targets.markdown(tmp_path)
    assert "| exact tier | k = 8 DeTail 60 ms | ≥ 1.10x | 1.099x | no |" in table
    assert table.startswith(f"Speed-ups: `{targets.PAIRS}` (old a, new b; ") and "(docs/benchmarks.json, d, c); instructions per traversal: its count of d2 at c2." in table
    # a run of the whole suite counted its instructions itself: no separate stamp to name
    stored = json.loads((tmp_path / targets.SUITE).read_text())
    del stored["instructions"]
    (tmp_path / targets.SUITE).write_text(json.dumps(stored))
    assert "(docs/benchmarks.json, d, c); instructions per traversal: its count of the same run." in targets.markdown(tmp_path)
    assert table.endswith(f"{sum(ok for *_, ok in targets.rows(tmp_path))} of {len(targets.TARGETS)} met.")
    # a pair file with a case the table does not know is refused, naming it
    (tmp_path / targets.PAIRS).write_text("# cpu: test\nk9_fh old 1\nk9_fh new 1\n")
    with pytest.raises(ValueError, match="k9_fh"):
        targets.rows(tmp_path)
    # and one that does not say which builds it paired, naming what it lacks
    (tmp_path / targets.PAIRS).write_text("# cpu: test\nk8_fh_60ms old 1\nk8_fh_60ms new 1\n")
    with pytest.raises(ValueError, match="no '# builds:' line"):
        targets.markdown(tmp_path)
