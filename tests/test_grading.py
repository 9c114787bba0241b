"""The one strict grading rule, the labels, the quotes, and the generated verdict tables in the docs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from detailsim.repro.claims import DETAIL_SCENARIOS
from detailsim.repro.grading import (LABELS, VERDICTS, Band, Claim, assess, bands, ci95, converged, grade, regrade, regrade_resolution, resolution,
                               seeds_to_decide)
from detailsim.repro.docblocks import block_of, render_block
from detailsim.repro.reproduce import (CITED_PREFIX, CALIBRATION_SOURCE, DOC_CALIBRATION, DOC_CLAIMS, DOC_LINES, DOCS_WITH_BLOCKS, calibration_markdown,
                                 generated_blocks)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("paper,lo,hi,half", [
    (70, 52.5, 87.5, 17.5), (-50, -62.5, -37.5, 12.5), (0, 0, 0, 0), (7.2, 5.4, 9.0, 1.8),
    ([96, None], 96, math.inf, None), ([None, 0.1], -math.inf, 0.1, None),
])
def test_the_band_is_25_percent_for_every_unit_and_a_bound_is_literal(paper, lo, hi, half):
    (b,) = bands(paper)
    assert b.lo == pytest.approx(lo) and b.hi == pytest.approx(hi) and (b.half == pytest.approx(half) if half is not None else b.half is None)
    assert len(bands([43, 79])) == 2 and bands(None) == []


@pytest.mark.parametrize("band,m,ci,want", [
    (Band.around(70), 60, 7, "in"),             # the whole interval [53, 67] inside [52.5, 87.5]
    (Band.around(70), 60, 10, "undecided"),     # [50, 70] reaches out of the band: the point alone no longer decides
    (Band.around(70), 50, 2, "out"),            # the whole interval below the band
    (Band.around(70), 50, 10, "undecided"),     # [40, 60] straddles the band's edge
    (Band.around(70), 20, 20, "out"),           # wide, but wholly outside
    (Band.around(35.25 / 0.75 * 1.0), 35.8, 6.4, "undecided"),  # the bursty low end: [29.4, 42.2] against >= 35.25
    (Band(96, math.inf, None), 97, 0.5, "in"), (Band(96, math.inf, None), 93, 2.5, "out"),
    (Band(96, math.inf, None), 97, 2, "undecided"),  # the interval straddles the bound
    (Band.around(0), 0, 0, "in"), (Band.around(0), 1, 0, "out"),
    (Band.around(70), 60, None, "undecided"),   # one seed: no interval
    (Band.around(70), float("nan"), 1, "out"),
])
def test_one_end_is_decided_by_its_whole_interval(band, m, ci, want):
    assert assess(band, m, ci) == want


def test_verdicts():
    assert grade(70, "%", 65, True, 5, over=True) == "reproduced"
    assert grade(7.2, "ms", 8.0, None, 1) == "reproduced"
    assert grade(7.2, "ms", 10.8, None, 1) == "not reproduced", "times get the same 25% as everything else (no factor 1.5)"
    assert grade(70, "%", 20, True, 5, over=True) == "direction only"
    assert grade(70, "%", 20, True, 5, over=None) == "not reproduced", "outside, and the direction not established over the interval"
    assert grade(70, "%", -20, False, 5, over=False) == "not reproduced"
    assert grade(70, "%", 65, False, 5, over=False) == "not reproduced", "the right size with the wrong direction is not a reproduction"
    assert grade(None, "%", 65, True, 5, over=True) == "direction only", "no paper number: at best direction only"
    assert grade(None, "%", 65, True, 5, over=None) == "inconclusive", "the direction at one end of the interval only"
    assert grade(None, "%", 65, False, 5, over=False) == "not reproduced"
    assert grade(70, "%", 65, True, 30, over=True) == "inconclusive", "an interval reaching out of the band decides nothing"
    assert grade(70, "%", 65, True, None) == "inconclusive", "one seed"
    # bounds are literal, and the interval must clear them
    assert grade([2000, None], "ms", 1334, None, 10) == "not reproduced"
    assert grade([96, None], "%", 72, True, 1, over=True) == "direction only"
    assert grade([None, 10], "ms", 15, None, 1) == "not reproduced"
    assert grade([None, 0.1], "%", 0.125, None, 0.001) == "not reproduced"
    # a range end by end
    assert grade([43, 79], "%", [45, 80], True, [3, 3], over=True) == "reproduced"
    assert grade([43, 79], "%", [20, 80], True, [3, 3], over=True) == "direction only"
    assert grade([43, 79], "%", [40, 80], True, [30, 3], over=True) == "inconclusive"
    assert grade([43, 79], "%", [20, 80], True, [3, 30], over=True) == "direction only", "one end wholly outside decides the claim"
    # a number against several measured values: each graded
    assert grade(14.3, "%", [13, 15], True, [1, 1], over=True) == "reproduced"
    assert grade(14.3, "%", [13, 25], True, [1, 1], over=True) == "direction only"
    # the holes, closed: an edge value with most of its interval outside, a direction over zero
    assert grade([47, 83], "%", [35.8, 44.6], True, [6.4, 3.8], over=True) != "reproduced"
    assert grade([None, -50], "%", -3.8, False, 4.4) == "not reproduced"


def test_the_direction_over_the_interval():
    from detailsim.repro.grading import direction_over, excludes_zero, stored_over

    positive = lambda v: (min(v) if isinstance(v, list) else v) > 0  # noqa: E731
    assert direction_over(positive, 10, 4) is True and direction_over(positive, 3, 4) is None and direction_over(positive, -10, 4) is False
    assert direction_over(positive, [10, 20], [12, 5]) is None and direction_over(positive, [10, 20], [4, 5]) is True
    assert direction_over(positive, 10, None) is None and direction_over(None, 10, 1) is None
    le10 = lambda v: v <= 10  # noqa: E731 - a similarity read as "within 10%"
    assert direction_over(le10, 3.0, 2.0, 10) is True and direction_over(le10, 9.0, 2.0, 10) is None
    assert direction_over(le10, 13.0, 2.0, 10) is False and direction_over(le10, 0.0, 3.2, 10) is True, "zero inside is fine for a similarity"
    assert direction_over(positive, 3.0, 2.0) is True and direction_over(positive, [3.0, 8.0], [4.0, 1.0]) is None, "a sign needs zero excluded"
    assert excludes_zero(0.4, 5.2) is False and excludes_zero([10, -8], [4, 3]) is True
    # a claim stored before the rule: its direction read as a sign
    stored = {"direction_matches": True, "measured": {"value": -3.8, "ci95": 4.4}}
    assert stored_over(stored) is None
    assert stored_over({**stored, "measured": {"value": 12.0, "ci95": 4.4}}) is True
    assert stored_over({**stored, "direction_over_interval": False}) is False


def test_the_rule_sentence_names_what_the_code_does():
    from detailsim.repro.grading import RULE

    for words in ("± 25%", "whole 95% interval lies inside", "both ends of the interval", "keeps the verdict both share"):
        assert words in RULE, words


def test_a_claim_on_a_lower_bound_is_reproduced_only_when_the_bound_decides_it():
    # p99.9 >= 2.5 s against "over 2 s": the bound alone decides it
    assert grade([2000, None], "ms", 2500, None, 100, unbounded=1e12) == "reproduced"
    # a cut of at least 60% against 50 +- 12.5%: unbounded it could be anything up to 100%
    assert grade(50, "%", 60, True, 5, unbounded=100, over=True) == "inconclusive"
    assert "longer drain" in resolution(50, 60, 5, True, 6, unbounded=100, over=True)
    assert grade(50, "%", 90, True, 5, unbounded=100, over=True) == "direction only", "both ends outside the band"
    # at least 29% (a mean over the flows that finished) against 50 +- 12.5%, 100% unbounded: below the band at
    # the bound and above it unbounded, the same verdict at both ends, but the true value may lie in the band
    assert grade(50, "%", 29, True, 5, unbounded=100, over=True) == "inconclusive"
    assert "longer drain" in resolution(50, 29, 5, True, 6, unbounded=100, over=True)
    assert grade(50, "%", 29, True, 5, unbounded=31, over=True) == "direction only", "bound and unbounded both below the band"


def test_seeds_to_decide_and_the_resolution_note():
    # 3 seeds, half-width 20 around 65 against [52.5, 87.5]: inside, the interval must shrink to 12.5 (the nearer edge)
    sd = 20 * math.sqrt(3) / 4.303
    n = seeds_to_decide(70, 65, 20, 3)
    from detailsim.repro.grading import t975

    assert n is not None and t975(n - 1) * sd / math.sqrt(n) <= 12.5 < t975(n - 2) * sd / math.sqrt(n - 1)
    assert resolution(70, 65, 20, True, 3, over=True) == f"{n} seeds at this spread"
    assert resolution(70, 65, None, True, 1) == "at least 2 seeds or runs (one has no interval)"
    assert resolution(70, 65, 5, True, 3, over=True) is None
    # a point estimate on the band's bound (70 +- 25%: 52.5) is not decided by more seeds, and says so in words
    # that read after "needs"
    assert resolution(70, 52.5, 5, True, 6, over=True) == (
        "more than more seeds can give: the point estimate sits on a bound of the band, or an end has no interval")


def test_a_value_that_moves_more_than_its_interval_keeps_the_verdict_both_share():
    assert converged(60, 58, 5) is True and converged(60, 50, 5) is False and converged(60, None, 5) is None
    assert converged([40, 80], [41, 70], [3, 3]) is False
    assert grade(70, "%", 65, True, 5, check=64, over=True) == "reproduced"
    assert grade(70, "%", 65, True, 5, check=50, over=True) == "inconclusive", "the check on half the seeds falls out of the band"
    assert "half the seeds" in resolution(70, 65, 5, True, 6, check=50, over=True)
    # decided far outside on both: the not-converged value keeps its verdict (issue 49: disconnected's 78.6 / 62 against 17)
    assert grade(17, "ms", 78.6, None, 7.4, check=62) == "not reproduced"


def test_confidence_interval_is_students_t():
    assert ci95([1.0]) is None
    # mean 2, sd 1, n 3: t(2) = 4.303
    assert ci95([1.0, 2.0, 3.0]) == pytest.approx(4.303 / 3 ** 0.5)
    c = Claim("x.y", "x", "words", 50, "%", "Figure 1", 48.0, 3.0, True, "how", 3, quote="q", source="f.txt:1", direction_ci=True)
    j = c.to_json()
    assert j["verdict"] == "reproduced" and j["paper"] == {"value": 50, "unit": "%", "where": "Figure 1"} and j["label"] == "held out"
    assert j["measured"]["value"] == 48.0 and j["measured"]["ci95"] == 3.0 and j["check"] is None
    c.set_check(30.0, "seeds 1-2 of 4")
    assert c.verdict == "inconclusive" and c.to_json()["check"] == {"value": 30.0, "how": "seeds 1-2 of 4", "converged": False}


def _claims() -> list[dict]:
    return json.loads((ROOT / DOC_CLAIMS).read_text())


def test_every_verdict_follows_from_its_numbers():
    """claims.json, re-graded claim by claim from its own numbers by the rule, gives the verdicts it states."""
    from detailsim.repro.claims import WITHIN

    claims = _claims()
    assert len(claims) >= 60
    ids = [c["id"] for c in claims]
    assert len(ids) == len(set(ids))
    for c in claims:
        assert c["label"] in LABELS and c["verdict"] in VERDICTS, c["id"]
        assert c["verdict"] == regrade(c, WITHIN.get(c["id"])), c["id"]
        assert c["resolve"] == regrade_resolution(c, WITHIN.get(c["id"])), c["id"]


def test_labels_keep_calibration_and_construction_apart():
    """Figure 9 is the calibration set (docs/reproduction.md, "The model"); claims that hold by an enforced
    invariant are by construction; neither is counted among the held-out verdicts."""
    claims = _claims()
    cal = {c["id"] for c in claims if c["label"] == "calibration"}
    assert cal and all(c["paper"]["where"] == "Figure 9" for c in claims if c["id"] in cal)
    assert all(c["label"] == "calibration" for c in claims if c["paper"]["where"] == "Figure 9")
    assert {"steady.no_congestion_drops", "incast.lossless"} <= {c["id"] for c in claims if c["label"] == "by construction"}
    counts = generated_blocks(claims)["claims-counts"]
    held = [c for c in claims if c["label"] == "held out"]
    assert counts.startswith(f"{len(held)} claims graded held out under the equivalence rule: **{sum(c['verdict'] == 'reproduced' for c in held)} reproduced**")
    from detailsim.repro.claims import SEEN

    assert {c["id"] for c in claims if c["label"] == "seen"} == set(SEEN) & {c["id"] for c in claims}
    assert all(c["label_note"] for c in claims if c["label"] in ("seen", "property"))


def _norm(s: str) -> str:
    return " ".join(s.split())


def test_every_claim_quotes_its_paper():
    """Each claim's quote stands on the line of the paper its source names. The lines are kept in
    docs/reproduction/paper_lines.json (written by `reproduce --update-docs` from ../shared/papers); where the
    papers themselves are at hand, each kept line is checked against its file too."""
    claims = _claims()
    lines = json.loads((ROOT / DOC_LINES).read_text())
    # a paper we do not have as a file (DCQCN, HPCC): its statement stands in docs/reproduction.md's
    # "Cited papers" table, beside the source it is cited as
    cited = (ROOT / "docs" / "reproduction.md").read_text().split("### Cited papers", 1)[1].split("\n## ", 1)[0]
    for c in claims:
        if c["source"].startswith(CITED_PREFIX):
            row = next((r for r in cited.splitlines() if f"`{c['source']}`" in r), None)
            assert row is not None and _norm(c["quote"]) in _norm(row), f"{c['id']}: {c['source']} and its statement are not in Cited papers"
            assert c["paper"]["value"] is None or c["label"] == "property", f"{c['id']}: no number of a cited paper is graded (a property is ours)"
            continue
        assert c["quote"] and c["source"] in lines, c["id"]
        assert _norm(c["quote"]) in _norm(lines[c["source"]]), f"{c['id']}: {c['quote']!r} is not on {c['source']}"
    papers = ROOT.parent / "shared" / "papers"
    if papers.is_dir():
        for src, text in lines.items():
            f, n = src.rsplit(":", 1)
            assert (papers / f).read_text().splitlines()[int(n) - 1] == text, src


def test_the_docs_show_what_claims_json_and_the_calibration_generate():
    claims = _claims()
    blocks = generated_blocks(claims)
    for rel, names in DOCS_WITH_BLOCKS.items():
        text = (ROOT / rel).read_text()
        for n in names:
            assert block_of(text, n) == blocks[n], f"{rel}: the {n} block is not what claims.json generates (run `detailsim reproduce all --update-docs`)"
    points = json.loads((ROOT / DOC_CALIBRATION).read_text())
    text = (ROOT / "docs" / "reproduction.md").read_text()
    assert block_of(text, "calibration", CALIBRATION_SOURCE) == calibration_markdown(points)
    from detailsim.repro.readings import READINGS_SOURCE, load_readings, readings_markdown

    from detailsim.repro.reproduce import REPROS

    assert block_of(text, "readings", READINGS_SOURCE) == readings_markdown(claims, load_readings(ROOT), {n: r.base for n, r in REPROS.items()})
    # the adopted model is the calibration's winner, in every DeTail scenario
    import tomllib

    best = points[0]["point"]
    for name in ("steady", "bursty", "disconnected", "degraded", "sequential", "partition_aggregate", "scatter", "verification", "incast", "long_flows"):
        sc = tomllib.loads((ROOT / "python" / "detailsim" / "scenarios" / "paper" / f"{name}.toml").read_text())["scheme"]
        for k, v in best.items():
            path = k.split(".")[1:]
            got = sc
            for p in path:
                got = got.get(p, {}) if isinstance(got, dict) else {}
            assert got == v, f"paper/{name}: {k} = {got!r}, the calibration chose {v!r}"


def test_the_adopted_calibrations_result_and_its_history_are_what_their_stores_generate():
    """The issue-49 calibration (docs/reproduction/calibration.json) is the declared grid's: 48 points at the
    declared rates, its winner's background at its reading (one flow in progress per server, within 25%);
    the prose's bound on FH's 99.9th percentile holds at every point. Issue 34's table, kept as history, is
    generated from its store."""
    points = json.loads((ROOT / DOC_CALIBRATION).read_text())
    assert len(points) == 48 and points[0]["bg_ok"] and all(abs(v - 1) <= 0.25 for v in points[0]["bg_in_progress"].values())
    assert {p["bg_rate"] for p in points} <= {5, 7, 10, 14, 20}
    text = (ROOT / "docs" / "reproduction.md").read_text()
    assert "at every point FH's 99.9th percentile is at least 1.8 times\nthe paper's 7.2 ms" in text
    assert min(p["fh_p999"] for p in points) >= 1.8 * 7.2
    old = json.loads((ROOT / "docs" / "validation" / "issue34_calibration.json").read_text())
    src = "docs/validation/issue34_calibration.json (issue 34's calibration, the model before issue 49)"
    assert len(old) == 80 and block_of(text, "calibration-issue34", src) == calibration_markdown(old)


def test_render_block_replaces_only_between_markers():
    text = "a\n<!-- generated:claims-counts from docs/reproduction/claims.json by `detailsim reproduce --update-docs`; do not edit -->\nold\n<!-- end generated:claims-counts -->\nb\n"
    new = render_block(text, "claims-counts", "new")
    assert new.startswith("a\n<!--") and new.endswith("-->\nb\n") and "old" not in new and block_of(new, "claims-counts") == "new"
    with pytest.raises(ValueError, match="claims-glance"):
        render_block(text, "claims-glance", "x", "README.md")


def test_sample_note_names_the_buckets_under_the_minimum():
    import polars as pl

    from detailsim.repro.reproduce import MIN_FLOWS, is_size_bucket, sample_note

    assert is_size_bucket("small") and is_size_bucket("retrieval/8KB") and is_size_bucket("background/16MB")
    assert not is_size_bucket("workflow/partition-aggregate/40") and not is_size_bucket("incast") and not is_size_bucket("ping")
    st = pl.DataFrame({"scheme": ["a", "a", "b", "b", "a"], "class": ["small", "large", "small", "large", "workflow/x"],
                       "count": [900, 150, 900, 260, 3], "measured": [900, 199, 900, 260, 3]})
    note = sample_note(st, ["scheme"], ["small", "large", "workflow/x"])
    # measured flows count (finished or not); workflows are not size buckets
    assert note.startswith(f"**Fewer than {MIN_FLOWS} flows** in 1 reported size bucket:") and "scheme = a, large: 199" in note
    ok = sample_note(st.filter(pl.col("scheme") == "b"), ["scheme"], ["small", "large"])
    assert ok == f"Every reported size bucket holds at least {MIN_FLOWS} flows at every point (smallest: 260, scheme = b, large)."
    assert sample_note(st, ["scheme"], ["workflow/x"]) == ""


def _experiment_tables(text: str):
    """(experiment, row) for every row of the generated per-experiment tables of docs/reproduction.md."""
    exp, head = None, None
    for line in text.splitlines():
        if line.startswith("### "):
            exp, head = line[4:].split(":")[0], None
        elif line.startswith("| ") and " class " in line and " flows " in line:
            head = [c.strip() for c in line.strip().strip("|").split("|")]
        elif head and line.startswith("| "):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == len(head):
                yield exp, dict(zip(head, cells))
        elif not line.startswith("|"):
            head = None


def test_every_reported_size_bucket_holds_enough_flows():
    """Every point of a full reproduction pools at least MIN_FLOWS flows in each reported size bucket (the
    generated tables in docs/reproduction.md, from `detailsim reproduce all --update-docs`)."""
    from detailsim.repro.reproduce import MIN_FLOWS, is_size_bucket

    rows = list(_experiment_tables((ROOT / "docs" / "reproduction.md").read_text()))
    assert len({e for e, _ in rows}) >= 20
    small = [(e, r["class"], r["flows"], r["unfinished"]) for e, r in rows
             if is_size_bucket(r["class"]) and int(r["flows"]) + int(r["unfinished"]) < MIN_FLOWS]
    assert not small, f"{len(small)} reported size buckets under {MIN_FLOWS} flows, e.g. {small[:5]}"


def test_every_held_out_claim_not_reproduced_has_a_demonstrated_cause():
    """Each held-out claim of claims.json that is not `reproduced` is named (by id) in a bullet of
    docs/reproduction.md's "Claims that do not reproduce", and that bullet demonstrates its cause (a run
    that changes the named choice), says the paper gives no number (which caps the verdict), for an
    inconclusive claim says what was run to resolve it, or says plainly that the cause is not demonstrated
    and which run would (never silently)."""
    claims = _claims()
    text = (ROOT / "docs" / "reproduction.md").read_text()
    section = text.split("## Claims that do not reproduce, and why", 1)[1].split("\n## ", 1)[0]
    bullets = ["* " + b for b in section.split("\n* ")[1:]]
    missing, weak = [], []
    for c in claims:
        if c["verdict"] == "reproduced" or c["label"] != "held out":
            continue
        mine = [b for b in bullets if f"`{c['id']}`" in b]
        if not mine:
            missing.append(c["id"])
        elif not any("*Demonstrated*" in b or (c["paper"]["value"] is None and c["verdict"] == "direction only" and "no number" in b)
                     or (c["verdict"] == "inconclusive" and "*Inconclusive*" in b)
                     or ("*Not demonstrated*" in b and " would " in b)
                     or (c["verdict"] == "not reproduced" and "the paper's gap" in b and f"`{c['id']}`" in b.split("the paper's gap")[0].rsplit(". ", 1)[-1])
                     for b in mine):
            weak.append(c["id"])
    assert not missing, f"claims not reproduced that the section does not name: {missing}"
    assert not weak, f"claims whose bullet neither demonstrates a cause nor says the paper gives no number: {weak}"


def test_the_detail_scenarios_carry_the_calibrations_chosen_point():
    """The choices the DeTail paper leaves open are the declared calibration's best point
    (docs/reproduction/calibration.json, first entry), in every DeTail paper scenario that sets them: when
    a model change moves the calibration's choice, the scenarios follow it (and the reproductions are run
    again), never the other way round."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    best = json.loads((root / DOC_CALIBRATION).read_text())[0]["point"]
    checked = 0
    for f in sorted((root / "scenarios" / "paper").glob("*.toml")):
        sc = tomllib.loads(f.read_text())
        scheme = sc.get("scheme", {})
        if f.stem not in DETAIL_SCENARIOS:
            continue  # not one of the DeTail scenarios the calibration is for
        for key, want in best.items():
            cur = sc
            for part in key.split("."):
                cur = cur[part]
            assert cur == want, f"{f.name}: {key} = {cur!r}, the calibration chose {want!r}"
        rate = json.loads((root / DOC_CALIBRATION).read_text())[0].get("bg_rate")
        assert "priority_eviction" not in scheme, f"{f.name}: priority eviction is not a reading of the text (docs/model.md)"
        for w in sc.get("workload", []):
            if w.get("kind") == "background" and f.stem != "long_flows":  # Figure 14's stays closed (000:426)
                assert w.get("rate") == rate, f"{f.name}: background rate {w.get('rate')}, the calibration chose {rate}"
        checked += 1
    assert checked == len(DETAIL_SCENARIOS)


def test_why_each_claim_does_not_reproduce_is_generated_from_the_stores():
    """"Claims that do not reproduce, and why" is what detailsim.repro.why generates from claims.json, the readings'
    claims and the demonstrations' measurements; an entry quotes each claim's value, interval and what would
    decide it from claims.json, and a claim no entry names is an error, not a silent omission."""
    from detailsim.repro.demonstrations import load_demos
    from detailsim.repro.readings import load_readings
    from detailsim.repro.reproduce import REPROS
    from detailsim.repro.why import ENTRIES, WHY_SOURCE, why_markdown
    from detailsim.repro.grading import fmt_measured

    claims = _claims()
    text = (ROOT / "docs" / "reproduction.md").read_text()
    block = why_markdown(claims, load_readings(ROOT), load_demos(ROOT), {n: r.base for n, r in REPROS.items()})
    assert block_of(text, "why", WHY_SOURCE) == block
    for c in claims:
        if c["label"] == "held out" and c["verdict"] != "reproduced":
            assert f"`{c['id']}`" in block and fmt_measured(c) in block, c["id"]
            if c.get("resolve"):
                assert c["resolve"] in block, c["id"]
    # a claim that fails and that no entry names stops the generation
    stray = dict(claims[0], id="steady.made_up", label="held out", verdict="not reproduced", paper={"value": 1, "unit": "ms", "where": ""})
    with pytest.raises(ValueError, match="steady.made_up"):
        why_markdown([*claims, stray], {}, {}, {n: r.base for n, r in REPROS.items()})
    assert len({i for e in ENTRIES for i in e.claims}) == sum(len(e.claims) for e in ENTRIES)  # each claim under one entry


def test_the_las_entry_reads_the_overall_mean_from_its_demonstration():
    """`pias_leafspine.beats_las_overall`'s entry: the overall mean of each variant is its classes' means weighted by
    their finished counts, the unfinished are counted and said to make the cut a bound; without the stored
    demonstration the entry names the command that would run it."""
    from detailsim.repro.reproduce import REPROS
    from detailsim.repro.why import Ctx, _pias_las

    claims, bases = _claims(), {n: r.base for n, r in REPROS.items()}
    rec = {"command": "detailsim demonstrate las_arrivals_on", "seeds": 3, "measured": {
        "las": {"small": {"count": 90, "unfinished": 0, "mean_ms": 1.0, "mean_all_lb_ms": 1.0},
                "large": {"count": 10, "unfinished": 5, "mean_ms": 100.0, "mean_all_lb_ms": 200.0}},
        "pias": {"small": {"count": 90, "unfinished": 0, "mean_ms": 0.5, "mean_all_lb_ms": 0.5},
                 "large": {"count": 15, "unfinished": 0, "mean_ms": 60.0, "mean_all_lb_ms": 60.0}}}}
    text = _pias_las(Ctx(claims, {}, {"las_arrivals_on": rec}, bases))
    # finished: LAS (90 x 1 + 10 x 100) / 100 = 10.9 ms, PIAS (90 x 0.5 + 15 x 60) / 105 = 9.0 ms, a cut of 17.4%;
    # with the unfinished at their age: LAS (90 x 1 + 15 x 200) / 105 = 29.43 ms, PIAS 9.0 ms, a cut of 69.4%
    assert "PIAS's mean FCT over the flows that finished is 9.00 ms against LAS's 10.90 ms, a cut of 17.4%" in text
    assert "5 of LAS's 105 flows and 0 of PIAS's 105 are still unfinished" in text
    assert "the means are at least 9.00 and 29.43 ms, a cut of 69.4%" in text
    assert ("*Demonstrated* in part" in text) == (17.4 > next(c for c in claims if c["id"] == "pias_leafspine.beats_las_overall")["measured"]["value"])
    bare = _pias_las(Ctx(claims, {}, {}, bases))
    assert "*Not demonstrated* yet: `detailsim demonstrate las_arrivals_on`" in bare


def test_the_large_dm_entry_reads_the_large_flows_from_its_demonstration():
    """`pias_leafspine.large_dm`'s entry quotes the large flows' means (finished, and with the unfinished at their
    age) and the cuts they give, from the stored demonstration; without it, the command that would run it."""
    from detailsim.repro.reproduce import REPROS
    from detailsim.repro.why import Ctx, _pias_large_dm

    claims, bases = _claims(), {n: r.base for n, r in REPROS.items()}
    def large(mean: float, lb: float, left: int, n: int) -> dict:
        return {"large": {"count": n - left, "mean_ms": mean, "mean_all_lb_ms": lb, "unfinished": left, "measured": n},
                "small": {"count": 500, "mean_ms": 1.0, "mean_all_lb_ms": 1.0, "unfinished": 0, "measured": 500}}

    rec = {"command": "detailsim demonstrate dm_arrivals_on", "seeds": 3,
           "measured": {"dctcp": large(200.0, 400.0, 3, 30), "pias": large(150.0, 200.0, 1, 30)}}
    text = _pias_large_dm(Ctx(claims, {}, {"dm_arrivals_on": rec}, bases))
    assert "PIAS's mean FCT over the large flows that finished is 150.0 ms against DCTCP's 200.0 ms, a cut of 25.0%" in text
    assert "3 of DCTCP's 30 large flows and 1 of PIAS's 30 are still unfinished" in text
    assert "the means are at least 200.0 and 400.0 ms, a cut of 50.0%" in text and "*Demonstrated* in part" in text
    assert "*Not demonstrated* yet: `detailsim demonstrate dm_arrivals_on`" in _pias_large_dm(Ctx(claims, {}, {}, bases))


def test_the_memcached_entry_reads_the_server_time_demonstration():
    """The memcached claims' entry: PIAS's cuts of DCTCP's mean and 99th percentile at load 0.8, and DCTCP's means
    over the background loads, computed from the stored `memcached_server_time` record, and each set against the
    bands the rule grades the paper's ranges in; without the record, the command that would run it."""
    from detailsim.repro.reproduce import REPROS
    from detailsim.repro.why import Ctx, _pias_host

    claims, bases = _claims(), {n: r.base for n, r in REPROS.items()}
    k = "workflow/partition-aggregate/15"
    loads = ("none", 0.5, 0.6, 0.7, 0.8)
    means = {"none": 0.65, 0.5: 0.80, 0.6: 0.85, 0.7: 0.95, 0.8: 1.00}
    measured, variants = {}, {}
    for q in (20, 40):
        for load in loads:
            measured[f"dctcp_{q}qps_{load}"] = {k: {"mean_ms": means[load] + (0.01 if q == 40 else 0.0), "p99_ms": 2.0}}
            variants[f"dctcp_{q}qps_{load}"] = {}
        measured[f"pias_{q}qps_0.8"] = {k: {"mean_ms": 0.71, "p99_ms": 1.5}}
        variants[f"pias_{q}qps_0.8"] = {}
    rec = {"command": "detailsim demonstrate memcached_server_time", "seeds": 4, "set": {"workload.0.server_time": "400us"},
           "variants": variants, "measured": measured}
    text = _pias_host(Ctx(claims, {}, {"memcached_server_time": rec}, bases))
    # mean cuts (1.00 - 0.71) / 1.00 = 29.0% and (1.01 - 0.71) / 1.01 = 29.7%; p99 cut (2.0 - 1.5) / 2.0 = 25.0%
    assert "every server taking 400 µs on each request" in text and "the base query takes 0.660 ms" in text
    assert "PIAS cuts DCTCP's mean query time by 29.0% and 29.7% at 20 and 40 queries/s" in text
    assert "its 99th percentile by 25.0% and 25.0%" in text
    assert "becomes 0.810-1.010 ms at 40 queries/s and 0.800-1.000 ms at 20" in text
    # 29.0-29.7% against 28-30% (bands 21-35 and 22.5-37.5): inside; 25% against 20-27%: inside; DCTCP's 0.81-1.01 ms
    # against 1.016-1.189 ms (bands 0.762-1.27 and 0.892-1.486): inside
    assert "the mean cut is inside the bands" in text and "the 99th-percentile cut inside" in text
    assert "DCTCP's means inside at 40 queries/s" in text
    assert "stays 15% below the paper's" in text  # 1 - 1.01 / 1.189
    measured["pias_40qps_0.8"][k]["p99_ms"] = 0.5  # a 75% cut: outside
    assert "the 99th-percentile cut outside" in _pias_host(Ctx(claims, {}, {"memcached_server_time": rec}, bases))
    assert "*Not demonstrated* yet: `detailsim demonstrate memcached_server_time`" in _pias_host(Ctx(claims, {}, {}, bases))


def test_the_readings_within_the_declared_distance_of_the_best_are_the_declared_ones():
    """docs/reproduction.md, "Across the readings": the calibration's points within 0.1 of the best are graded
    as readings; each differs from the adopted point in exactly the grid keys of one declared reading."""
    from detailsim.repro.readings import CAL_WITHIN, READINGS, within_best

    points = json.loads((ROOT / "docs/reproduction/calibration.json").read_text())
    best = points[0]["point"]
    near = within_best(points)
    assert near and all(round(p["distance"], 3) <= round(points[0]["distance"] + CAL_WITHIN, 3) for p in near)
    changed = [{k: v for k, v in p["point"].items() if best[k] != v} for p in near]
    declared = [r.grid for r in READINGS.values() if r.grid]
    assert sorted(map(str, changed)) == sorted(map(str, declared)), (changed, declared)
    # the next point is outside the rule: the rule, not the reader, drew the line
    rest = [p for p in points if p.get("bg_ok", True)][len(near) + 1:]
    assert rest and round(rest[0]["distance"], 3) > round(points[0]["distance"] + CAL_WITHIN, 3)
    # the distances the prose quotes for the last points within the line, and the line, are the store's
    prose = " ".join((ROOT / "docs" / "reproduction.md").read_text().split())
    d = sorted(p["distance"] for p in near[-2:])
    line = points[0]["distance"] + CAL_WITHIN
    assert f"at {d[1]:.4f} and the two together at {d[0]:.4f}, the line at {line:.4f}" in prose
    # and the first point outside the line, by rank
    assert f"rank {len(near) + 2} outside at {rest[0]['distance']:.3f}" in prose


def test_a_claim_is_the_papers_gap_only_when_no_reading_reproduces_it():
    from detailsim.repro.readings import READINGS, readings_markdown, readings_rows
    from detailsim.repro.reproduce import REPROS

    bases = {n: r.base for n, r in REPROS.items()}

    def claim(id_, exp, verdict, label="held out"):
        return {"id": id_, "experiment": exp, "claim": id_, "label": label, "verdict": verdict, "resolve": None}

    adopted = [claim("steady.a", "steady", "reproduced"), claim("steady.b", "steady", "not reproduced"),
               claim("sequential.c", "sequential", "not reproduced"), claim("steady.d", "steady", "inconclusive"),
               claim("steady.seen", "steady", "reproduced", "seen"), claim("pias_testbed.x", "pias_testbed", "reproduced")]
    runs = {n: [claim("steady.a", "steady", "reproduced"), claim("steady.b", "steady", "not reproduced"),
                claim("sequential.c", "sequential", "reproduced" if n == "frontends_first" else "not reproduced"),
                claim("steady.d", "steady", "not reproduced")] for n in READINGS if n != "frontends_first"}
    runs["frontends_first"] = [claim("sequential.c", "sequential", "reproduced")]
    rows = {r["id"]: r for r in readings_rows(adopted, runs, bases)}
    assert set(rows) == {"steady.a", "steady.b", "sequential.c", "steady.d"}  # held out, DeTail only
    assert rows["steady.a"]["under"] == "all" and not rows["steady.a"]["gap"]
    assert rows["steady.b"]["under"] == "none" and rows["steady.b"]["gap"]
    # the placement is not in the steady scenario: the adopted runs stand for it
    assert rows["steady.b"]["by"]["frontends_first"] == {"verdict": "not reproduced", "same": True}
    assert rows["sequential.c"]["under"] == "some" and not rows["sequential.c"]["gap"]
    assert rows["steady.d"]["under"] == "none" and not rows["steady.d"]["gap"]  # inconclusive once: not decided
    md = readings_markdown(adopted, runs, bases)
    assert "the paper's gap: 1" in md and "| `steady.b` | ✗ | " + "✗ | " * (len(READINGS) - 1) + "✗ (=) | none (the paper's gap) |" in md
    # with a reading not yet run nothing is called the paper's gap
    partial = {k: v for k, v in runs.items() if k != "egress_eighths"}
    assert not any(r["gap"] for r in readings_rows(adopted, partial, bases))
    assert "none so far" in readings_markdown(adopted, partial, bases)


def test_a_reading_is_stored_experiment_by_experiment_and_called_in_part_until_every_claim_is_graded():
    """`reproduce NAME --reading R --update-docs` replaces the claims of the experiments it ran and keeps
    the others; the table says the reading is run in part, and calls nothing the paper's gap, while a
    claim the reading applies to has no verdict under it."""
    from detailsim.repro.readings import READINGS, merge_reading, readings_markdown, readings_rows
    from detailsim.repro.reproduce import REPROS

    def claim(id_, exp, verdict):
        return {"id": id_, "experiment": exp, "claim": id_, "label": "held out", "verdict": verdict, "resolve": None}

    kept = [claim("steady.a", "steady", "reproduced"), claim("bursty.b", "bursty", "not reproduced")]
    merged = merge_reading(kept, [claim("scatter.c", "scatter", "not reproduced"), claim("bursty.b", "bursty", "reproduced")],
                           ["scatter", "bursty"], list(REPROS))
    assert [c["id"] for c in merged] == ["scatter.c", "steady.a", "bursty.b"]  # in the reproductions' order
    assert merged[2]["verdict"] == "reproduced"  # the fresh run replaced the stored one
    bases = {n: r.base for n, r in REPROS.items()}
    adopted = [claim("steady.a", "steady", "not reproduced"), claim("degraded.d", "degraded", "not reproduced")]
    every_but_one = {n: [claim("steady.a", "steady", "not reproduced"), claim("degraded.d", "degraded", "not reproduced")] for n in READINGS}
    every_but_one["rto_linux"] = [claim("steady.a", "steady", "not reproduced")]  # degraded not yet run under it
    md = readings_markdown(adopted, every_but_one, bases)
    assert "rto_linux (in part)" in md and "egress_eighths (in part)" not in md
    rows = {r["id"]: r for r in readings_rows(adopted, every_but_one, bases)}
    assert rows["steady.a"]["gap"] and not rows["degraded.d"]["gap"]  # a claim every reading has graded is decided
    assert "paper's gap: " not in md  # the heading counts the gap only once every reading is whole


def test_a_declared_reading_runs_only_the_reproductions_whose_scenario_has_its_keys():
    from detailsim.repro.readings import READINGS, reproductions_for
    from detailsim.repro.reproduce import REPROS

    every = reproductions_for(REPROS)
    assert "calibrate" not in every and "pias_testbed" not in every and {"steady", "bursty", "disconnected", "sequential"} <= set(every)
    assert "steady_closed_background" not in every  # a demonstration: no claims
    assert reproductions_for(REPROS, READINGS["frontends_first"].scenarios) == [
        "sequential", "partition_aggregate", "page_creation"]


def test_the_experiments_block_rewrites_the_sections_out_holds_and_keeps_the_others(tmp_path):
    from detailsim.repro.reproduce import experiments_block

    out = tmp_path / "out"
    (out / "scatter").mkdir(parents=True)
    (out / "scatter" / "table.md").write_text("## scatter: title\n\nNEW TABLE\n")
    (tmp_path / "docs" / "reproduction").mkdir(parents=True)
    old = "### scatter: old title\n\nOLD TABLE\n\n### incast: Section 4.3.4\n\nINCAST TABLE\n\n### gone: no longer a reproduction\n\nX\n"
    new = experiments_block(out, tmp_path, old)
    assert "NEW TABLE" in new and "OLD TABLE" not in new
    assert "### incast: Section 4.3.4\n\nINCAST TABLE\n" in new and "gone" not in new
    assert new.index("### scatter") < new.index("### incast")  # in ORDER


def test_a_claim_cites_its_paper_by_name_and_section():
    """Reports and docs name the paper and the section (or slide) a claim's line falls in, not the text
    file; the copied headings stand on their lines of the papers where the papers are at hand."""
    from detailsim.repro.papers import DETAIL_SECTIONS, SECTIONS, TITLES, cite

    assert cite("000_76fdfa378bc5f2cf.txt:410") == "DeTail (technical report) §6.3 Microbenchmarks, line 410"
    assert cite("000_76fdfa378bc5f2cf.txt:303") == "DeTail (technical report) §4.3.4 End-Host Timers, line 303"
    assert cite("003_5c3f0d64251b88f8.txt:239") == "PIAS (NSDI 2015), line 239"
    assert cite("cited:hpcc (Figure 11)").startswith("Li et al., HPCC") and cite("cited:hpcc (Figure 11)").endswith("(Figure 11)")
    assert [n for n, _ in DETAIL_SECTIONS] == sorted(n for n, _ in DETAIL_SECTIONS)
    for c in _claims():
        shown = cite(c["source"])
        assert ".txt" not in shown and "line" in shown or c["source"].startswith(CITED_PREFIX), (c["id"], shown)
    papers = ROOT.parent / "shared" / "papers"
    if papers.is_dir():
        for f, heads in SECTIONS.items():
            text = (papers / f).read_text().splitlines()
            for n, h in heads:
                line = text[n - 1].strip()
                if h.startswith("slide "):
                    assert line == "slide-" + h.split()[1], (f, n, line)
                else:
                    number = h.split()[0].lstrip("§")
                    assert line.startswith(number), (f, n, line, h)
        assert set(TITLES) == {p.name for p in papers.glob("*.txt")}
    md = (ROOT / "docs" / "reproduction.md").read_text()
    assert "000\\_76fdfa378bc5f2cf.txt" not in md.split("generated:claims-glance", 1)[1].split("end generated:claims-glance")[0]


def test_the_modern_findings_are_generated_from_the_modern_tables():
    """docs/reproduction.md's "What it finds" for DeTail beside DCQCN and HPCC quotes the 8-seed tables of
    the same document, and each comparison's wording follows them (a number in prose is generated)."""
    from detailsim.repro.docblocks import block_of
    from detailsim.repro.modern import FINDS_SOURCE, modern_findings, section_tables

    doc = (ROOT / "docs" / "reproduction.md").read_text()
    assert block_of(doc, "modern-finds", FINDS_SOURCE) == modern_findings(doc)
    steady = section_tables(doc, "modern_steady")[0]
    detail8 = next(r for r in steady if r["scheme"] == "detail" and r["class"] == "retrieval/8KB")["p99 ms"]
    assert f"retrievals {detail8.split('±')[0].strip()} ms (steady)" in modern_findings(doc)  # as the table prints it
    fat = section_tables(doc, "modern_fattree")[0]
    hpcc = next(r for r in fat if (r["workload.0.cdf"], r["scheme"], r["link_rate"], r["class"]) == ("hadoop", "hpcc", "100Gbps", "small"))
    assert f"/ {hpcc['p99 ms'].split('±')[0].strip()} ms (web search / Hadoop) under HPCC" in modern_findings(doc)
    # the wording turns with the numbers: make DCTCP the fastest and the lead is no longer DeTail's
    fake = doc.replace(f"| {detail8} |", "| 99.000 ± 0.1 |", 1)
    assert "DeTail's stack keeps the shortest tails" not in modern_findings(fake)
