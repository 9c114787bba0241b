"""`detailsim crosscheck` (issue 37): the table in docs/validation.md is generated from the stored results,
and this simulator's half of every case still gives exactly the stored figures (ns-3 itself runs in `make
crosscheck`, not here: its wheel takes minutes to install)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from detailsim import crosscheck as X

ROOT = Path(__file__).resolve().parents[1]


def stored() -> list[dict]:
    return json.loads((ROOT / X.DOC_JSON).read_text())


def test_the_docs_table_is_generated_from_the_stored_results():
    res = stored()
    assert [r["case"] for r in res] == list(X.CASES)
    assert X.doc_block(ROOT) == X.table(res)
    for r in res:
        c = X.CASES[r["case"]]
        assert r["ours_headline"] == X.headline(c, r["ours"]) and r["ns3_headline"] == X.headline(c, r["ns3"])


@pytest.mark.parametrize("name", list(X.CASES))
def test_this_side_of_each_case_gives_the_stored_figures(name):
    r = next(r for r in stored() if r["case"] == name)
    assert X.run_ours(X.CASES[name]) == r["ours"]


def test_the_cases_are_built_alike_on_both_sides():
    # what the module promises each side shares: the frame, the queues, TCP's settings
    for c in X.CASES.values():
        sc = X.ours_scenario(c)
        t, tcp = sc["topology"], sc["scheme"]["tcp"]
        assert (t["frame_overhead"], t["min_frame"], t["forwarding_delay"]) == (2, 42, "0us")
        assert t["egress_buffer"] == f"{c.queue * X.WIRE}B" and X.WIRE == 1448 + 40 + 2
        assert (tcp["mss"], tcp["initial_window"], tcp["rto_min"], tcp["delayed_ack"]) == (1448, c.initial_window, c.min_rto, False)
        assert sc["scheme"].get("ecn_threshold") == (f"{c.mark * X.WIRE}B" if c.mark else None)


def test_an_unknown_case_is_refused():
    p = run_cli("crosscheck", "--case", "nope")
    assert p.returncode == 2 and "no case 'nope'" in p.stderr


def test_this_side_alone_is_rerun_over_the_stored_ns3_figures(tmp_path):
    out = tmp_path / "cc.json"
    p = run_cli("crosscheck", "--ours-only", "--case", "incast_rto10ms", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text()) == stored()
