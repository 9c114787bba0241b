"""The core's results are pinned: every golden flow table (tests/golden.py) hashes as recorded. A refactor
must keep them; a change meant to move results updates tests/data/golden_flows.json with
`python tests/golden.py --update` in the same commit."""

from __future__ import annotations

import json

import pytest

import golden

RECORDED = json.loads(golden.GOLDEN.read_text())
CASES = golden.cases()


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_flow_table_is_byte_identical(name):
    sc, ov = CASES[name]
    got = golden.fingerprint(sc, ov)
    assert got == RECORDED[name], f"{name}: results moved; if intended, run `python tests/golden.py --update`"


def test_the_fingerprint_sees_a_change():
    """A different seed gives a different hash (the fingerprint is not blind)."""
    sc, ov = CASES["fattree4/fh"]
    other = json.loads(json.dumps(sc))
    other["run"]["seed"] = 8
    assert golden.fingerprint(other, ov)["flows_sha256"] != RECORDED["fattree4/fh"]["flows_sha256"]


MATRIX = json.loads(golden.MATRIX.read_text())
MATRIX_CASES = golden.matrix_cases()


def test_every_bundled_scenario_and_scheme_is_in_the_matrix():
    assert sorted(MATRIX) == sorted(MATRIX_CASES)
    assert all(v["flows"] > 0 for v in MATRIX.values()), "a matrix case that starts no flow pins nothing"


@pytest.mark.parametrize("scenario", sorted({k.split(":")[0] for k in MATRIX_CASES}))
def test_matrix_flow_tables_are_byte_identical(scenario):
    """Every bundled scenario x scheme preset, short, in the node order (issue 35's redesign keeps them)."""
    bad = []
    for name, (sc, ov) in MATRIX_CASES.items():
        if name.split(":")[0] == scenario:
            got = golden.fingerprint(sc, ov)
            if got != MATRIX[name]:
                bad.append(f"{name}: was {MATRIX[name]}, now {got}")
    assert not bad, "results moved; if intended, run `python tests/golden.py --update`:\n" + "\n".join(bad)
