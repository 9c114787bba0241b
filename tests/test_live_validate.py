"""The run-vs-live comparison's statistics and the table docs/live.md shows (no namespaces needed)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from detailsim.repro import live_validate as lv

ROOT = Path(__file__).resolve().parent.parent


def test_a_shift_is_found_and_the_host_delay_explains_it():
    rng = np.random.default_rng(3)
    run = rng.exponential(0.002, 3000) + 0.001
    host = np.full_like(run, 0.0005)
    live = run + host  # live is run plus exactly the hosts' delay
    c = lv.compare_class(run, live, host)
    assert c["count"] == 3000
    for q in ("p50", "p99", "p999"):
        d = c[q]
        assert abs(d["live"]["diff_ms"] - 0.5) < 1e-9
        lo, hi = d["live"]["diff_ci95_ms"]
        assert lo > 0, "a 0.5 ms shift of every flow is significant"
        assert abs(d["live_net"]["diff_ms"]) < 1e-9 and d["live_net"]["diff_ci95_ms"] == [0.0, 0.0]
        assert abs(d["host_delay_ms"] - 0.5) < 1e-9


def test_the_docs_table_is_what_the_stored_validation_generates():
    res = json.loads((ROOT / lv.DOC_JSON).read_text())
    assert lv.doc_block(ROOT) == lv.table(res), "docs/live.md is stale: run `detailsim live-validate --update-docs`"
    # the stored validation covers what the issue asks: FH and DeTail at three rates, every size class
    assert {(c["scheme"], c["rate"]) for c in res["cases"]} == {(s, r) for s in ("fh", "detail") for r in lv.DEFAULT_RATES}
    for c in res["cases"]:
        assert set(c["classes"]) == {"retrieval/2KB", "retrieval/8KB", "retrieval/32KB"}
        assert all(v["count"] >= 1000 for v in c["classes"].values()), "p99.9 needs at least 1,000 flows"
        assert c["emulator"]["ring_drops"] == 0
