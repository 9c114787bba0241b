"""The one grading rule, and the generated verdict tables in the docs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detailsim.grading import Claim, ci95, grade, within
from detailsim.reproduce import DOC_CLAIMS, DOCS_WITH_BLOCKS, block_of, generated_blocks, render_block

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("paper,unit,measured,ok", [
    (70, "%", 70, True), (70, "%", 53, True), (70, "%", 52, False), (70, "%", 87.5, True), (70, "%", 88, False),
    (-50, "%", -62, True), (-50, "%", -37, False),
    (0, "count", 0, True), (0, "count", 1, False),
    (7.2, "ms", 10.8, True), (7.2, "ms", 10.9, False), (7.2, "ms", 4.8, True), (7.2, "ms", 4.7, False),
    ([43, 79], "%", [40, 80], True), ([43, 79], "%", [60, 70], False), ([43, 79], "%", [33, 98], True), ([43, 79], "%", [30, 79], False),
    ([96, None], "%", 72, True), ([96, None], "%", 71, False), ([96, None], "%", [75, 99], True),
    ([None, 0.1], "%", 0.125, True), ([None, 0.1], "%", 0.13, False),
    ([2000, None], "ms", 1334, True), ([2000, None], "ms", 1333, False),
    ([None, -50], "%", -38, True), ([None, -50], "%", -37, False),
])
def test_the_tolerance_of_each_unit(paper, unit, measured, ok):
    assert within(paper, unit, measured) is ok


def test_verdicts():
    assert grade(70, "%", 65, True) == "reproduced"
    assert grade(70, "%", 20, True) == "direction only"
    assert grade(70, "%", -20, False) == "not reproduced"
    assert grade(70, "%", 65, False) == "not reproduced", "the right size with the wrong direction is not a reproduction"
    assert grade(None, "%", 65, True) == "direction only", "no paper number: at best direction only"
    assert grade(None, "%", 65, False) == "not reproduced"
    assert grade(7.2, "ms", 7.0, None) == "reproduced"
    assert grade(7.2, "ms", 20.0, None) == "not reproduced", "a bare level has no direction to fall back on"
    assert grade(70, "%", float("nan"), True) == "direction only"


def test_confidence_interval_is_students_t():
    assert ci95([1.0]) is None
    # mean 2, sd 1, n 3: t(2) = 4.303
    assert ci95([1.0, 2.0, 3.0]) == pytest.approx(4.303 / 3 ** 0.5)
    c = Claim("x.y", "x", "words", 50, "%", "Figure 1", 48.0, 3.0, True, "how", 3)
    j = c.to_json()
    assert j["verdict"] == "reproduced" and j["paper"] == {"value": 50, "unit": "%", "where": "Figure 1"}
    assert j["measured"]["value"] == 48.0 and j["measured"]["ci95"] == 3.0


def test_the_docs_show_the_claims_json_verdicts():
    """docs/reproduction.md's claims-at-a-glance table and the counts in it and in README are generated from
    docs/reproduction/claims.json; each verdict there follows from its own numbers by the rule."""
    claims = json.loads((ROOT / DOC_CLAIMS).read_text())
    assert len(claims) >= 20
    ids = [c["id"] for c in claims]
    assert len(ids) == len(set(ids))
    for c in claims:
        assert c["verdict"] == grade(c["paper"]["value"], c["paper"]["unit"], c["measured"]["value"], c["direction_matches"]), c["id"]
        assert set(c) == {"id", "experiment", "claim", "paper", "measured", "direction_matches", "verdict"}
    blocks = generated_blocks(claims)
    for rel, names in DOCS_WITH_BLOCKS.items():
        text = (ROOT / rel).read_text()
        for n in names:
            assert block_of(text, n) == blocks[n], f"{rel}: the {n} block is not what claims.json generates (run `detailsim reproduce all --update-docs`)"


def test_render_block_replaces_only_between_markers():
    text = "a\n<!-- generated:claims-counts from docs/reproduction/claims.json by `detailsim reproduce --update-docs`; do not edit -->\nold\n<!-- end generated:claims-counts -->\nb\n"
    new = render_block(text, "claims-counts", "new")
    assert new.startswith("a\n<!--") and new.endswith("-->\nb\n") and "old" not in new and block_of(new, "claims-counts") == "new"
    with pytest.raises(ValueError, match="claims-glance"):
        render_block(text, "claims-glance", "x", "README.md")


def test_sample_note_names_the_buckets_under_the_minimum():
    import polars as pl

    from detailsim.reproduce import MIN_FLOWS, is_size_bucket, sample_note

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
    """Issue 11: every point of a full reproduction pools at least MIN_FLOWS flows in each reported size
    bucket (the generated tables in docs/reproduction.md, from `detailsim reproduce all --update-docs`)."""
    from detailsim.reproduce import MIN_FLOWS, is_size_bucket

    rows = list(_experiment_tables((ROOT / "docs" / "reproduction.md").read_text()))
    assert len({e for e, _ in rows}) >= 20
    small = [(e, r["class"], r["flows"], r["unfinished"]) for e, r in rows
             if is_size_bucket(r["class"]) and int(r["flows"]) + int(r["unfinished"]) < MIN_FLOWS]
    assert not small, f"{len(small)} reported size buckets under {MIN_FLOWS} flows, e.g. {small[:5]}"


def test_every_claim_not_reproduced_has_a_demonstrated_cause():
    """Issue 11: each claim of claims.json that is not `reproduced` is named (by id) in a bullet of
    docs/reproduction.md's "Claims that do not reproduce", and that bullet demonstrates its cause (a run
    that changes the named choice), or says the paper gives no number (which caps the verdict)."""
    claims = json.loads((ROOT / DOC_CLAIMS).read_text())
    text = (ROOT / "docs" / "reproduction.md").read_text()
    section = text.split("## Claims that do not reproduce, and why", 1)[1].split("\n## ", 1)[0]
    bullets = ["* " + b for b in section.split("\n* ")[1:]]
    missing, weak = [], []
    for c in claims:
        if c["verdict"] == "reproduced":
            continue
        mine = [b for b in bullets if f"`{c['id']}`" in b]
        if not mine:
            missing.append(c["id"])
        elif not any("*Demonstrated*" in b or (c["paper"]["value"] is None and "no number" in b) for b in mine):
            weak.append(c["id"])
    assert not missing, f"claims not reproduced that the section does not name: {missing}"
    assert not weak, f"claims whose bullet neither demonstrates a cause nor says the paper gives no number: {weak}"
