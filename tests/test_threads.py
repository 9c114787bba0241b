"""`run.threads = N`: the run split in N parts of the fabric, each on its own thread. The results are the
one-thread run's: the same flow table, row by row, and the same counters, the event count and the peak of
packets in flight included."""

import pytest
from click.testing import CliRunner

import detailsim
from detailsim.cli import main

# what may differ: the wall time. (The event count is the same: a fabric-wide event counts in the first part
# only, and a cancelled timer is not counted, whenever each part's queue drops it; so is the peak of packets
# in flight: counted at the grid's multiples, which the parts' samples add up to exactly.)
SAME_BUT = {"wall_s", "events_per_s", "sim_s_per_wall_s", "threads", "rounds", "rounds_per_sim_ms"}


def _strip(d, drop):
    if isinstance(d, dict):
        return {k: _strip(v, drop) for k, v in d.items() if k not in drop}
    if isinstance(d, list):
        return [_strip(v, drop) for v in d]
    return d


CASES = [
    ("paper/steady", "fh"),  # a measurement window
    ("paper/steady", "detail"),  # PFC: sweeps at barriers
    ("paper/partition_aggregate", None),  # workflows
    ("examples/leaf_spine", "pfabric"),  # rank ties
    ("paper/degraded", None),  # a link degraded
    ("paper/disconnected", None),  # a link down (at 1 ms: during the run)
]


def _sets(scenario):
    sets = ({"fault.0.at": "1ms"} if scenario == "paper/disconnected" else {})
    return sets | ({"run.measure_from": "1ms", "run.measure_to": "2.5ms"} if scenario == "paper/steady" else {})


@pytest.mark.parametrize("threads", [2, 3, 4])
@pytest.mark.parametrize(("scenario", "scheme"), CASES)
def test_threads_give_the_one_thread_results(scenario, scheme, threads):
    """2, 3 and 4 parts (3 splits edge switches from some of their hosts, 4 does not on a k = 4 fat tree):
    the one-part flow table, ports and summary, with PFC, faults and a measurement window."""
    one = detailsim.run(scenario, scheme=scheme, duration="3ms", set=_sets(scenario) | {"run.threads": 1})
    split = detailsim.run(scenario, scheme=scheme, duration="3ms", set=_sets(scenario) | {"run.threads": threads})
    assert one.flows.height > 50
    assert split.summary["threads"] == threads
    # the rounds the parts met after: one a window at most (and at least one a simulated lookahead), none unsplit
    assert one.summary["rounds"] == 0 and split.summary["rounds"] > 0 and split.summary["rounds_per_sim_ms"] > 0
    assert one.flows.equals(split.flows), "the same flow table, ids and row order included"
    assert _strip(one.summary, SAME_BUT) == _strip(split.summary, SAME_BUT)
    assert one.ports.equals(split.ports)


def test_threads_are_checked_with_a_clear_error():
    for bad in ("0", "65", "many"):
        res = CliRunner().invoke(main, ["run", "paper/steady", "--duration", "1ms", "--set", f"run.threads={bad}"])
        assert res.exit_code == 2, res.output
        assert "run.threads" in res.output and "1 to 64" in res.output and "auto" in res.output, res.output
    # more parts than hosts
    res = CliRunner().invoke(main, ["run", "examples/dumbbell", "--duration", "1ms", "--set", "run.threads=64"])
    assert res.exit_code == 2, res.output
    assert "run.threads" in res.output and "64 parts need at least 64 hosts" in res.output, res.output
    res = CliRunner().invoke(
        main, ["run", "paper/steady", "--duration", "1ms", "--set", "run.threads=2", "--set", "run.max_events=1000"]
    )
    assert res.exit_code != 0
    assert "run.max_events" in res.output and "not supported in a run split in parts" in res.output, res.output


def test_two_threads_sample_what_one_thread_samples():
    sets = {"run.sample": "200us"}
    one = detailsim.run("paper/steady", scheme="detail", duration="3ms", set=sets)
    two = detailsim.run("paper/steady", scheme="detail", duration="3ms", set=sets | {"run.threads": 2})
    assert one.timeseries is not None and one.timeseries.height > 1000
    assert one.timeseries.equals(two.timeseries)
    assert one.flows.equals(two.flows)


@pytest.mark.parametrize(("free", "scenario", "sets", "parts"), [
    ("2", "paper/steady", {}, 2),  # two cores free, 128 hosts: split in two
    ("4", "paper/steady", {}, 4),  # four cores free: four parts
    ("64", "paper/steady", {}, 16),  # at least 8 hosts a part
    ("4", "examples/incast", {}, 2),  # 16 hosts: at most two parts
    ("1", "paper/steady", {}, 1),  # one core free: one thread
    ("2", "examples/dumbbell", {}, 1),  # too few hosts to gain
    ("2", "paper/steady", {"run.max_events": 10**9}, 1),  # what a split run refuses: one thread, no error
    ("2", "paper/steady", {"run.threads": 1}, 1),  # said, not auto
])
def test_auto_threads_split_only_where_it_gains_and_can(monkeypatch, free, scenario, sets, parts):
    """`run.threads = "auto"` (the default): as many parts as cores are free, with at least 8 hosts each,
    when that is two or more and the scenario can be split; one otherwise, never an error."""
    import json

    from detailsim import _core
    from detailsim.core.scenario import prepare

    monkeypatch.setenv("DETAILSIM_FREE_CORES", free)
    sc, _ = prepare(scenario, overrides={"run.threads": "auto"} | sets)
    sim = _core.Simulation(json.dumps(sc))
    assert sim.parts == parts
    assert (sim.split_window_s is not None) == (parts > 1)


def test_a_single_run_is_auto_and_the_library_one_thread(monkeypatch):
    """`detailsim run` / `detailsim.run` leave `run.threads` to "auto"; `_core.Simulation` (the library, which
    a caller may look into as it runs) takes one thread unless told."""
    import json

    from detailsim import _core
    from detailsim.core import api
    from detailsim.core.scenario import prepare

    monkeypatch.setenv("DETAILSIM_FREE_CORES", "2")
    sc, _ = prepare("paper/steady")
    assert "threads" not in sc.get("run", {})
    assert _core.Simulation(json.dumps(sc)).split_window_s is None
    seen = []
    real = _core.Simulation

    def spy(js):
        seen.append(json.loads(js)["run"].get("threads"))
        return real(js)

    monkeypatch.setattr(_core, "Simulation", spy)
    api.execute({**sc, "run": {**sc["run"], "duration": "100us"}}, "steady")
    assert seen == ["auto"]


def test_sweeps_and_traced_runs_take_one_thread():
    from detailsim.core.api import one_thread_unless_set

    assert one_thread_unless_set({"run": {"duration": "1ms"}})["run"] == {"duration": "1ms", "threads": 1}
    assert one_thread_unless_set({"run": {"threads": "auto"}})["run"]["threads"] == 1
    assert one_thread_unless_set({"run": {"threads": 2}})["run"]["threads"] == 2


def test_both_parts_done_run_to_the_end_together():
    """Both parts done at different times (DeTail, a long drain): the one behind catches up before the
    other runs on to the end, so nothing sent across the cut is due in the other's past. (Before: the first
    part ran alone to the end, more than a window ahead, and an internal error stopped the run at 42.9 ms.)
    Three parts likewise."""
    sets = {"run.drain": "0.3s"}
    one = detailsim.run("paper/steady", scheme="detail", duration="10ms", set=sets)
    for n in (2, 3):
        split = detailsim.run("paper/steady", scheme="detail", duration="10ms", set=sets | {"run.threads": n})
        assert one.flows.height > 2000 and one.flows.equals(split.flows)
        assert _strip(one.summary, SAME_BUT) == _strip(split.summary, SAME_BUT)
        assert one.ports.equals(split.ports)


def test_the_run_line_says_how_many_threads_ran_it():
    two = CliRunner().invoke(main, ["run", "paper/steady", "--duration", "1ms", "--set", "run.threads=2"])
    assert two.exit_code == 0, two.output
    assert " s wall, 2 threads)" in two.output, two.output
    one = CliRunner().invoke(main, ["run", "paper/steady", "--duration", "1ms", "--set", "run.threads=1"])
    assert one.exit_code == 0 and " s wall)" in one.output and "threads)" not in one.output, one.output


def test_detailsim_run_builds_the_simulator_once(monkeypatch, tmp_path):
    """`detailsim run` validates by building the simulator it then runs (with --pcap too): one build."""
    from click.testing import CliRunner

    from detailsim import _core
    from detailsim.cli import main

    built = []
    real = _core.Simulation

    def spy(js):
        built.append(js)
        return real(js)

    monkeypatch.setattr(_core, "Simulation", spy)
    r = CliRunner().invoke(main, ["run", "examples/dumbbell", "--duration", "1ms", "--quiet",
                                  "--pcap", str(tmp_path / "t.pcap"), "--pcap-filter", "flow=0"])
    assert r.exit_code == 0, r.output
    assert len(built) == 1
