"""The layers of the Rust core, read from its source: congestion control is components behind one
interface (issue 50), and the transport reads no scenario configuration."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "crates" / "model" / "src"
TRANSPORT = SRC / "transport"
CC = TRANSPORT / "cc"


def _code(p: Path) -> str:
    """A Rust file without its comments and without its `#[cfg(test)] mod tests` block."""
    text = re.sub(r"//[^\n]*", "", p.read_text())
    return text.split("#[cfg(test)]")[0]


def _variants(enum: str, text: str) -> list[str]:
    body = re.search(r"pub enum " + enum + r"\s*\{(.*?)\n\}", text, re.S)
    assert body, f"no enum {enum}"
    return re.findall(r"^\s*([A-Z]\w*)\s*[,(]", body.group(1), re.M)


def test_the_transport_reads_no_configuration():
    """`config` maps a scenario into the transport's parameter types; nothing in transport/ imports it
    (its unit tests may take a preset)."""
    for p in TRANSPORT.rglob("*.rs"):
        if p.name.endswith("_tests.rs"):
            continue
        assert "crate::config" not in _code(p), f"{p.relative_to(SRC)} reads config"


def test_every_congestion_control_is_a_file_behind_the_controller_interface():
    mod = (CC / "mod.rs").read_text()
    kinds = _variants("CongestionControl", mod)
    arms = _variants("Cc", mod)
    assert kinds == ["NewReno", "Dctcp", "L2dct", "Pfabric", "Dcqcn", "Hpcc", "Timely"]
    assert arms == kinds, "one Cc arm per CongestionControl variant, in its order"
    for k in kinds:
        f = CC / f"{k.lower()}.rs"
        assert f.exists(), f"{k}: no transport/cc/{f.name}"
        assert re.search(r"impl (super::)?Controller for \w+", _code(f)), f"{f.name} implements no Controller"
        assert f"CongestionControl::{k} =>" in mod, f"Cc::new builds no {k}"


def test_the_sender_names_no_algorithm():
    """TcpSender keeps the window machinery and asks its controller: it never tests which algorithm runs."""
    code = _code(TRANSPORT / "tcp.rs")
    sender = code[code.index("pub struct TcpSender"):code.index("pub struct AckOut")]
    named = re.findall(r"CongestionControl::\w+|Cc::(?!new\b)\w+|p\.cc\s*==", sender)
    assert not named, f"TcpSender branches on the algorithm: {named}"


def _struct_fields(text: str, name: str) -> list[tuple[str, str]]:
    """(field, type) of `struct name { ... }` in Rust source `text`."""
    m = re.search(r"pub struct " + name + r"\s*\{(.*?)\n\}", re.sub(r"//[^\n]*", "", text), re.S)
    assert m, f"no struct {name}"
    return re.findall(r"^\s*(?:pub(?:\(crate\))?\s+)?(\w+):\s*([^,\n]+),", m.group(1), re.M)


def test_the_simulator_is_grouped_by_responsibility_not_by_wrapping():
    """Issue 50: `Sim` has at most 25 fields, and none of its fields is a grouping of fewer than four
    (the host side, the records and the clock are structs of their own; small groups are inlined)."""
    sim_src = (SRC / "sim" / "mod.rs").read_text()
    state = (SRC / "sim" / "state.rs").read_text() + (SRC / "sim" / "hosts.rs").read_text()
    fields = _struct_fields(sim_src, "Sim")
    assert len(fields) <= 25, f"Sim has {len(fields)} fields"
    groups = {t.strip() for _, t in fields} & set(re.findall(r"pub struct (\w+)", state))
    assert {"Hosts", "Records", "Clock"} <= groups
    for g in groups:
        n = len(_struct_fields(state, g))
        assert n >= 4, f"Sim's {g} groups only {n} fields"


def test_split_run_concerns_stay_in_sim_parts():
    """Issue 50: what a run split in parts needs of the simulator's state (`Sim::split`) is read and written in
    `sim/parts/` only; the rest of the simulator asks it through methods defined there (`owns`, `lead_part`,
    `diverts`, `striped_id`, `samples_flow`, ...)."""
    uses = [f"{f.relative_to(SRC)}: {ln.strip()}" for f in sorted(SRC.rglob("*.rs")) if "parts" not in f.relative_to(SRC).parts
            for ln in f.read_text().splitlines() if "self.split" in ln or ".split.part" in ln]
    assert not uses, uses
