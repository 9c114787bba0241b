"""The scenario reference's `[scheme]` knob tables, generated from the core's one declaration of each knob
(crates/model/src/config/knobs.rs: schema field, check, how it overrides the preset, unit and meaning).
docs/scenarios.md holds them between generated markers; `detailsim reference --update-docs` rewrites them
and tests/test_docs.py checks they are current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import _core

SOURCE = "crates/model/src/config/knobs.rs by `detailsim reference --update-docs`"
FIELDS_SOURCE = "crates/model/src/config/sections.rs by `detailsim reference --update-docs`"
DOC = Path("docs/scenarios.md")


def sections() -> dict[str, tuple[str, str]]:
    """Table prefix -> (block name, the second column's header), one per knob table the core declares
    (`scheme.` first, then each `[scheme.X]` in the core's order): a new table needs nothing here."""
    out: dict[str, tuple[str, str]] = {}
    for k in knobs():
        prefix = k["key"].rsplit(".", 1)[0] + "."
        out.setdefault(prefix, ("knobs-" + prefix[:-1], "values" if prefix == "scheme." else "unit"))
    return out


BASE = "fh"
# the section after `[scheme]` in docs/scenarios.md: a new knob table's block goes before it
WORKLOAD_HEADING = "## `[[workload]]`"


def knobs() -> list[dict[str, Any]]:
    """Every knob: key, unit, meaning, and its value under each preset (as the reference shows it)."""
    return json.loads(_core.knob_table())


def default_cell(presets: list[list[str]]) -> str:
    """The `fh` preset's value, then the presets that differ, grouped by value in the presets' order."""
    values = dict(presets)
    base = values[BASE]
    groups: dict[str, list[str]] = {}
    for name, v in presets:
        if v != base:
            groups.setdefault(v, []).append(name)
    if not groups:
        return base
    return base + " (" + "; ".join(", ".join(f"`{n}`" for n in names) + f": {v}" for v, names in groups.items()) + ")"


def table(prefix: str) -> str:
    """The markdown table of the knobs directly under `prefix` (e.g. "scheme.tcp.")."""
    _, second = sections()[prefix]
    lines = [f"| key | {second} | default (`{BASE}`; other presets where they differ) | meaning |", "|---|---|---|---|"]
    if prefix == "scheme.":
        lines.append('| `preset` | a name above | `"fh"` | the policy row to start from; the keys below override it |')
    for k in knobs():
        rest = k["key"][len(prefix):]
        if k["key"].startswith(prefix) and "." not in rest:
            lines.append(f"| `{rest}` | {k['unit']} | {default_cell(k['presets'])} | {k['meaning']}".rstrip() + " |")
    return "\n".join(lines)


# the presets table's columns: header -> knob
PRESET_COLUMNS = {"load balancing": "scheme.load_balancing", "flow control": "scheme.flow_control",
                  "scheduling": "scheme.scheduling", "switch ECN": "scheme.ecn_marking", "source ECN": "scheme.source_ecn",
                  "congestion control": "scheme.tcp.congestion_control", "fast retransmit": "scheme.tcp.fast_retransmit",
                  "RTO min": "scheme.tcp.rto_min"}


def presets_table() -> str:
    """Every preset, in the core's order: what it stands for and the value it gives each policy knob (the
    same values the knob tables show)."""
    by = {k["key"]: dict(k["presets"]) for k in knobs()}
    lines = ["| preset | " + " | ".join(PRESET_COLUMNS) + " | what it stands for |", "|---|" + "---|" * (len(PRESET_COLUMNS) + 1)]
    for name, desc in _core.presets():
        lines.append(f"| `{name}` | " + " | ".join(by[k][name] for k in PRESET_COLUMNS.values()) + f" | {desc} |")
    return "\n".join(lines)


def fields() -> list[dict[str, Any]]:
    """Every key of the sections declared as the knobs are (`config/sections.rs`): key, unit, default, meaning."""
    return json.loads(_core.section_table())


def field_sections() -> list[str]:
    """The prefixes of the declared sections (e.g. "topology.shared_buffer."), in the core's order."""
    out: list[str] = []
    for f in fields():
        prefix = f["key"].rsplit(".", 1)[0] + "."
        if prefix not in out:
            out.append(prefix)
    return out


def field_table(prefix: str) -> str:
    """The markdown table of a declared section's own keys (not those of the sections nested in it)."""
    lines = ["| key | unit | default | meaning |", "|---|---|---|---|"]
    for f in fields():
        if f["key"].startswith(prefix) and "." not in f["key"][len(prefix):]:
            lines.append(f"| `{f['key'][len(prefix):]}` | {f['unit']} | {f['default']} | {f['meaning']} |")
    return "\n".join(lines)


def update_docs(doc: Path = DOC) -> bool:
    """Rewrite the generated tables in `doc`; a knob table that has no block yet gets one, with a heading,
    at the end of the `[scheme]` section. Whether anything changed."""
    from .docblocks import _block, render_block

    text = old = doc.read_text()
    text = render_block(text, "presets", presets_table(), str(doc), SOURCE)
    for prefix, (name, _) in sections().items():
        begin, end = _block(name, SOURCE)
        if begin not in text:
            at = text.index(WORKLOAD_HEADING)
            text = text[:at] + f"### `[{prefix[:-1]}]`\n\n{begin}\n{end}\n\n" + text[at:]
        text = render_block(text, name, table(prefix), str(doc), SOURCE)
    for prefix in field_sections():
        # a declared section's block sits where its prose introduces it (render_block names a missing one)
        text = render_block(text, "fields-" + prefix[:-1], field_table(prefix), str(doc), FIELDS_SOURCE)
    doc.write_text(text)
    return text != old


def all_sections() -> list[tuple[str, str, str]]:
    """Every section of a scenario as `detailsim reference` prints it: (name, heading, Markdown table), in
    the order of docs/scenarios.md: run, topology and its tables, scheme (presets, then every knob and
    declared table), workload.<kind> per kind, fault."""
    from .scenario_keys import KEYS
    from .scenario_keys import table as key_table

    out = [("run", "[run]", key_table("run"))]
    declared = field_sections()
    for prefix in [p for p in declared if p.startswith("topology.")]:
        out.append((prefix[:-1], f"[{prefix[:-1]}]", field_table(prefix)))
    out.append(("scheme.presets", "[scheme] preset = NAME: the presets", presets_table()))
    for prefix in sections():
        out.append((prefix[:-1], f"[{prefix[:-1]}]", table(prefix)))
    for prefix in [p for p in declared if p.startswith("scheme.")]:
        out.append((prefix[:-1], f"[{prefix[:-1]}]", field_table(prefix)))
    for name in [s for s in KEYS if s.startswith("workload.")]:
        kind = name.split(".", 1)[1]
        out.append((name, f'[[workload]] kind = "{kind}"', key_table(name)))
    out.append(("fault", "[[fault]]", key_table("fault")))
    return out
