"""The plain formats other datacenter simulators exchange, read into a scenario and written from a run.

In (the scenario front end calls these from `scenario.resolve`):

* the HPCC simulator's topology file (`[topology] kind = "hpcc", file = "topology.txt"`): a first line
  "N S L" (nodes, switches, links), a second with the S switch ids, then L lines "a b rate delay
  error_rate" (rate like "100Gbps", delay like "0.001ms"). Node ids run 0..N-1; those not listed as
  switches are hosts, numbered as hosts in id order. A node becomes "n<id>" in the custom topology.
* its flow file (`[[workload]] kind = "hpcc_flows", file = "flow.txt"`): a first line with the number of
  flows, then "src dst priority_group dst_port size start_time" lines (node ids, bytes, seconds). With an
  HPCC topology src and dst are its node ids; on any other topology they are host indices.
* csg-htsim's connection matrix (`[[workload]] kind = "htsim_cm", file = "cm.txt"`): "Nodes N",
  "Connections M" (and "Triggers T", "Failures F") header lines, then "src->dst [id I] [start T] [size B]
  [prio P]" lines, src and dst host indices, B in bytes, T in picoseconds as csg-htsim's loader reads it
  (`ConnectionMatrix::load` in sim/datacenter/connection_matrix.cpp: "start is in picoseconds already";
  it parses T with `stof`, a 32-bit float, so htsim itself rounds a start above 2^24 ps, about 16.8 us,
  to 24 significant bits: we keep the file's exact value). `start_unit` ("ps", "ns", "us", "ms", "s")
  reads another unit: the same project's `ConnectionMatrix::save` writes microseconds. Flows started by a
  trigger, and failures, are refused (this simulator has no equivalent yet), naming the line.

Both flow formats may be gzipped (read by content: the gzip magic bytes, whatever the file's name). Each
row keeps its id in the input as the flow table's `input_id`: htsim's connection id (`id I`; the line
where a connection has none), the HPCC flow file's line.

Out: `write_hpcc_fct` writes a run's finished flows as the HPCC simulator's fct.txt lines ("sip dip sport
dport size start_time fct standalone_fct": addresses in hex as HPCC numbers its nodes, times in ns), read
by Parsimon- and m3-style tools; the standalone FCT is the flow's ideal one (alone in the idle fabric).

Every error names the file, the line (counted from 1) and what is allowed; the front end turns it into a
scenario error (exit 2).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._core import ScenarioError

_RATE = re.compile(r"^(\d+(?:\.\d+)?)(G|M|K)?bps$", re.IGNORECASE)
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)(s|ms|us|ns)$")


def _lines(path: Path, field: str) -> list[tuple[int, str]]:
    """The file's non-empty lines with their numbers (from 1); a gzipped file (by its magic bytes) is
    decompressed first."""
    import gzip
    import zlib

    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{field}: no such file {str(path)!r}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{field}: {path.name} is neither text nor gzipped text (UTF-8)") from None
    except (OSError, EOFError, zlib.error) as e:
        raise ScenarioError(f"{field}: cannot read {str(path)!r}: {e}") from None
    return [(i + 1, ln.strip()) for i, ln in enumerate(text.splitlines()) if ln.strip()]


def _int(tok: str, where: str, what: str, lo: int = 0, hi: int = 2**50) -> int:
    try:
        v = int(tok)
    except ValueError:
        raise ScenarioError(f"{where}: {what} must be a whole number, got {tok!r}") from None
    if not lo <= v <= hi:
        raise ScenarioError(f"{where}: {what} must be {lo} to {hi}, got {v}")
    return v


def _float(tok: str, where: str, what: str) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise ScenarioError(f"{where}: {what} must be a number, got {tok!r}") from None
    if not (v >= 0 and v < 1e9):
        raise ScenarioError(f"{where}: {what} must be a finite number >= 0, got {tok!r}")
    return v


def read_hpcc_topology(path: Path, field: str = "topology.file") -> tuple[list[dict[str, str]], list[dict[str, Any]], dict[int, int]]:
    """An HPCC topology file: the custom topology's nodes and links, and each host's node id -> host index."""
    lines = _lines(path, field)
    name = path.name
    if len(lines) < 2:
        raise ScenarioError(f"{field}: {name} must hold a line 'nodes switches links' and a line of switch ids")
    n0, head = lines[0]
    toks = head.split()
    if len(toks) != 3:
        raise ScenarioError(f"{field}: {name} line {n0}: expected 'nodes switches links' (three whole numbers), got {head!r}")
    n = _int(toks[0], f"{field}: {name} line {n0}", "the node count", 2, 1 << 20)
    s = _int(toks[1], f"{field}: {name} line {n0}", "the switch count", 1, n - 1)
    nl = _int(toks[2], f"{field}: {name} line {n0}", "the link count", 1, 1 << 22)
    n1, sw_line = lines[1]
    ids = sw_line.split()
    if len(ids) != s:
        raise ScenarioError(f"{field}: {name} line {n1}: {s} switch ids expected (the first line says so), got {len(ids)}")
    switches = set()
    for t in ids:
        v = _int(t, f"{field}: {name} line {n1}", "a switch id", 0, n - 1)
        if v in switches:
            raise ScenarioError(f"{field}: {name} line {n1}: switch id {v} listed twice")
        switches.add(v)
    rows = lines[2:]
    if len(rows) != nl:
        where = f"line {rows[nl][0]}" if len(rows) > nl else "the end of the file"
        raise ScenarioError(f"{field}: {name}: {nl} links expected (line {n0} says so), found {len(rows)} (at {where})")
    nodes = [{"name": f"n{i}", "kind": "switch" if i in switches else "host"} for i in range(n)]
    links = []
    for ln, text in rows:
        t = text.split()
        where = f"{field}: {name} line {ln}"
        if len(t) != 5:
            raise ScenarioError(f"{where}: expected 'src dst rate delay error_rate' (five fields), got {text!r}")
        a = _int(t[0], where, "src", 0, n - 1)
        b = _int(t[1], where, "dst", 0, n - 1)
        m = _RATE.match(t[2])
        if not m or float(m.group(1)) <= 0:
            raise ScenarioError(f"{where}: rate must be like 100Gbps, 25Gbps or 400Mbps, got {t[2]!r}")
        d = _DELAY.match(t[3])
        if not d:
            raise ScenarioError(f"{where}: delay must be like 0.001ms, 1us or 500ns, got {t[3]!r}")
        err = _float(t[4], where, "error_rate")
        if err != 0:
            raise ScenarioError(f"{where}: error_rate must be 0 (this simulator loses no frame to bit errors), got {t[4]!r}")
        bps = float(m.group(1)) * {"g": 1e9, "m": 1e6, "k": 1e3}.get((m.group(2) or "").lower(), 1.0)
        if not 1 <= bps <= 100e12:
            raise ScenarioError(f"{where}: rate must be 1bps to 100Tbps, got {t[2]!r}")
        if float(d.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[d.group(2)] > 1e6:
            raise ScenarioError(f"{where}: delay must be at most 1000000s, got {t[3]!r}")
        if a == b:
            raise ScenarioError(f"{where}: a link must join two different nodes")
        if a not in switches and b not in switches:
            raise ScenarioError(f"{where}: joins two hosts ({a} and {b}); a host links to a switch")
        links.append({"a": f"n{a}", "b": f"n{b}", "rate": t[2], "delay": t[3]})
    hosts = {i: k for k, i in enumerate(i for i in range(n) if i not in switches)}
    return nodes, links, hosts


def read_hpcc_flows(path: Path, field: str, host_of: dict[int, int] | None) -> list[dict[str, Any]]:
    """An HPCC flow file as `flows` rows; `host_of` maps an HPCC topology's node ids to host indices (None:
    the ids are host indices)."""
    lines = _lines(path, field)
    name = path.name
    if not lines:
        raise ScenarioError(f"{field}: {name} is empty; expected a line with the number of flows, then one flow per line")
    n0, head = lines[0]
    count = _int(head.split()[0] if head.split() else head, f"{field}: {name} line {n0}", "the number of flows", 1, 1 << 26)
    if len(head.split()) != 1:
        raise ScenarioError(f"{field}: {name} line {n0}: expected the number of flows alone, got {head!r}")
    rows = lines[1:]
    if len(rows) < count:
        raise ScenarioError(f"{field}: {name}: {count} flows expected (line {n0} says so), found {len(rows)}")
    out = []
    for ln, text in rows[:count]:
        t = text.split()
        where = f"{field}: {name} line {ln}"
        if len(t) != 6:
            raise ScenarioError(f"{where}: expected 'src dst priority_group dst_port size start_time' (six fields), got {text!r}")
        src, dst = (_int(x, where, w) for x, w in ((t[0], "src"), (t[1], "dst")))
        if host_of is not None:
            for v, w in ((src, "src"), (dst, "dst")):
                if v not in host_of:
                    raise ScenarioError(f"{where}: {w} {v} is not a host of the HPCC topology (a switch, or beyond its nodes)")
            src, dst = host_of[src], host_of[dst]
        if src == dst:
            raise ScenarioError(f"{where}: dst must differ from src")
        pg = _int(t[2], where, "priority_group", 0, 7)
        _int(t[3], where, "dst_port", 0, 65535)
        size = _int(t[4], where, "size", 1)
        start = _float(t[5], where, "start_time (seconds)")
        out.append({"src": src, "dst": dst, "size_bytes": size, "start_s": start, "priority": pg, "line": ln, "id": ln})
    if len(rows) > count:
        raise ScenarioError(f"{field}: {name} line {rows[count][0]}: more flows than line {n0} announces ({count})")
    return out


START_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
# the longest run a scenario may ask for (run.duration): a start beyond it can never be reached
MAX_START_S = 1e6


def read_htsim_cm(path: Path, field: str, start_unit: str = "ps", unit_field: str = "start_unit") -> list[dict[str, Any]]:
    """A csg-htsim connection matrix as `flows` rows (host indices; start in `start_unit`, picoseconds as
    csg-htsim's loader reads it; a missing start is t = 0)."""
    if start_unit not in START_UNITS:
        raise ScenarioError(f"{unit_field}: one of {', '.join(START_UNITS)} (the unit of the file's start times), got {start_unit!r}")
    scale = START_UNITS[start_unit]
    lines = _lines(path, field)
    name = path.name
    header: dict[str, tuple[int, int]] = {}
    rows = []
    for ln, text in lines:
        t = text.split()
        where = f"{field}: {name} line {ln}"
        if t[0].startswith("#"):
            continue
        if t[0] in ("Nodes", "Connections", "Triggers", "Failures"):
            if len(t) != 2:
                raise ScenarioError(f"{where}: expected '{t[0]} COUNT', got {text!r}")
            header[t[0]] = (_int(t[1], where, f"the {t[0].lower()} count", 0, 1 << 26), ln)
            continue
        if t[0] in ("trigger", "failure"):
            raise ScenarioError(f"{where}: {t[0]}s are not supported (flows start at their start time; no failure lines)")
        if "->" not in t[0]:
            raise ScenarioError(f"{where}: expected 'src->dst [id I] [start T] [size B] [prio P]' or a header line, got {text!r}")
        a, _, b = t[0].partition("->")
        if "Nodes" not in header:
            raise ScenarioError(f"{where}: a connection before the 'Nodes N' line")
        n = header["Nodes"][0]
        src = _int(a, where, "src", 0, n - 1)
        dst = _int(b, where, "dst", 0, n - 1)
        if src == dst:
            raise ScenarioError(f"{where}: dst must differ from src")
        flow: dict[str, Any] = {"src": src, "dst": dst, "start_s": 0.0, "priority": 0, "line": ln}
        i = 1
        while i < len(t):
            key = t[i]
            if i + 1 >= len(t):
                raise ScenarioError(f"{where}: {key!r} needs a value")
            val = t[i + 1]
            if key == "start":
                try:
                    v = float(val)
                except ValueError:
                    raise ScenarioError(f"{where}: start ({start_unit}) must be a number, got {val!r}") from None
                if not (v >= 0 and v * scale <= MAX_START_S):
                    starts = [float(x) for _, tx in lines for k2, x in zip(tx.split()[1::2], tx.split()[2::2]) if k2 == "start" and _num(x)]
                    span = f"the file's starts span {min(starts):.10g} to {max(starts):.10g} {start_unit}" if starts else "no start parses"
                    raise ScenarioError(f"{where}: start {val} {start_unit} is {v * scale:.6g} s; a start must be >= 0 and at most "
                                        f"{MAX_START_S:.0e} s (the longest run); {span}: if they are in another unit, set {unit_field} "
                                        f"({', '.join(START_UNITS)})")
                flow["start_s"] = v * scale
            elif key == "size":
                flow["size_bytes"] = _int(val, where, "size (bytes)", 1)
            elif key == "id":
                flow["id"] = _int(val, where, "id", 1)
            elif key == "prio":
                _int(val, where, "prio", 0)
            elif key in ("trigger", "send_done_trigger", "recv_done_trigger"):
                raise ScenarioError(f"{where}: {key} is not supported (flows start at their start time)")
            else:
                raise ScenarioError(f"{where}: unknown token {key!r}; allowed: id, start, size, prio")
            i += 2
        if "size_bytes" not in flow:
            raise ScenarioError(f"{where}: size is required (this simulator has no flows of unbounded size)")
        flow.setdefault("id", ln)
        rows.append(flow)
    for key in ("Nodes", "Connections"):
        if key not in header:
            raise ScenarioError(f"{field}: {name} has no '{key} N' line")
    want, ln = header["Connections"]
    if want != len(rows):
        raise ScenarioError(f"{field}: {name} line {ln}: {want} connections announced, {len(rows)} found")
    for key in ("Triggers", "Failures"):
        if header.get(key, (0, 0))[0]:
            raise ScenarioError(f"{field}: {name} line {header[key][1]}: {key.lower()} are not supported")
    return rows


def _num(x: str) -> bool:
    try:
        float(x)
        return True
    except ValueError:
        return False


def _ip(node: int) -> int:
    """The address the HPCC simulator gives node `node` (`node_id_to_ip`)."""
    return 0x0B000001 + (node // 256) * 0x00010000 + (node % 256) * 0x00000100


def host_node_ids(scenario: dict[str, Any]) -> list[int] | None:
    """For a run on a topology read from an HPCC file (nodes named n<id>), each host's HPCC node id; None
    otherwise (host indices stand for node ids)."""
    topo = scenario.get("topology", {})
    nodes = topo.get("nodes") if topo.get("kind") == "custom" else None
    if not nodes or not all(re.fullmatch(r"n\d+", str(x.get("name", ""))) for x in nodes):
        return None
    return [int(x["name"][1:]) for x in nodes if x.get("kind") == "host"]


def write_hpcc_fct(flows: Any, out: Path, node_ids: list[int] | None = None) -> int:
    """The finished flows of a run (`flows.parquet`'s frame) as HPCC fct.txt lines, in order of completion;
    the number of lines written. Source ports count the flows from 10000 (HPCC numbers them per pair; no
    tool that reads the file uses them), the destination port is HPCC's default 100. Where the run's flows
    came from an input file (a flow list, an HPCC flow file, an htsim connection matrix), a ninth column
    gives each flow's `input_id` (its line, or htsim's connection id), so the lines join one-to-one with
    the other simulator's own; readers that take HPCC's eight columns by position are unaffected."""
    import polars as pl

    done = flows.filter(pl.col("fct").is_not_null()).sort(["end", "id"])
    node = (lambda h: node_ids[h]) if node_ids is not None else (lambda h: h)
    tmp = out.with_name(out.name + ".tmp")
    ids = "input_id" in done.columns and done["input_id"].null_count() < done.height
    with open(tmp, "w") as f:
        for i, r in enumerate(done.iter_rows(named=True)):
            ideal = r["ideal"] if r["ideal"] is not None else 0.0
            tail = f" {r['input_id'] if r['input_id'] is not None else 0}" if ids else ""
            f.write(
                f"{_ip(node(r['src'])):08x} {_ip(node(r['dst'])):08x} {10000 + i % 55536} 100 {r['size']} "
                f"{round(r['start'] * 1e9)} {round(r['fct'] * 1e9)} {round(ideal * 1e9)}{tail}\n"
            )
    tmp.replace(out)
    return done.height
