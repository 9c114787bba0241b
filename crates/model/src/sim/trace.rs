//! Packet traces for debugging: every frame that starts on a selected egress port (or belongs to a selected
//! flow), and every PFC frame a selected port sends, recorded as columns. The Python side writes them as a
//! pcap with real Ethernet / IPv4 / TCP headers and 802.1Qbb MAC Control frames.

use crate::packet::{Packet, PacketId};
use crate::sim::Sim;
use crate::transport::tcp::SegKind;
use detailsim_engine::Time;
use serde::Deserialize;

/// What to capture: application flow ids, node names (all their egress ports), and links by
/// [transmitting node, receiving node].
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    #[serde(default)]
    pub flows: Vec<u64>,
    #[serde(default)]
    pub nodes: Vec<String>,
    #[serde(default)]
    pub ports: Vec<[String; 2]>,
}

pub const KIND_DATA: u8 = 0;
pub const KIND_ACK: u8 = 1;
pub const KIND_SYN: u8 = 2;
pub const KIND_SYNACK: u8 = 3;
pub const KIND_PFC: u8 = 4;

#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Flow ids asked for (the flow table's). Ids are given at the end of the run (by where flows start),
    /// so with flow ids asked for every flow packet is held with its flow's id during the run (`app`;
    /// u64::MAX: captured for its port alone) until `keep_flows` keeps the asked-for flows' ones.
    flows: std::collections::HashSet<u64>,
    app: Vec<u64>,
    /// Egress ports whose frames are captured.
    ports: Vec<bool>,
    pub t_ps: Vec<u64>,
    /// The transmitting port (fabric port index), and its node and the receiving node.
    pub port: Vec<u32>,
    pub from: Vec<u32>,
    pub to: Vec<u32>,
    pub kind: Vec<u8>,
    /// Host indices of the packet's source and destination.
    pub src: Vec<u32>,
    pub dst: Vec<u32>,
    pub sport: Vec<u16>,
    pub dport: Vec<u16>,
    /// Data: sequence number of the first byte; ACK: the cumulative acknowledgement.
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    pub flags: Vec<u8>,
    pub ecn: Vec<u8>,
    pub prio: Vec<u8>,
    /// PFC frames: priorities paused and unpaused.
    pub pause: Vec<u8>,
    pub unpause: Vec<u8>,
}

impl Sim {
    /// Start capturing what `spec` selects. Unknown names are an error naming them.
    pub fn set_trace(&mut self, spec: &TraceSpec) -> Result<(), String> {
        if self.is_part() {
            return Err("run.threads: a packet trace is not supported in a run split in two parts yet (set run.threads = 1)".into());
        }
        let find = |name: &str| self.fab.topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| format!("no node named {name:?}"));
        let mut ports = vec![false; self.fab.ports.len()];
        for n in &spec.nodes {
            let i = find(n)?;
            let nd = &self.fab.nodes[i];
            for p in nd.port_base..nd.port_base + nd.nports {
                ports[p as usize] = true;
            }
        }
        for [a, b] in &spec.ports {
            let (ia, ib) = (find(a)?, find(b)?);
            let nd = &self.fab.nodes[ia];
            let p = (nd.port_base..nd.port_base + nd.nports)
                .find(|&p| self.fab.ports[p as usize].peer_node == ib as u32)
                .ok_or_else(|| format!("no link from {a:?} to {b:?}"))?;
            ports[p as usize] = true;
        }
        self.rec.trace = Some(Trace { flows: spec.flows.iter().copied().collect(), ports, ..Default::default() });
        Ok(())
    }

    /// The tap on the transmitter of `port` (`tx_try`): frame `pid` starts on the wire.
    pub(crate) fn trace_packet(&mut self, port: u32, pid: PacketId) {
        self.trace_packet_at(port, pid, self.now);
    }

    /// Frame `pid` starts on the wire at `port` at `at` (a folded transfer's frame, `sim/fold.rs`, is
    /// recorded when its transfer starts: the trace is put in time order at the end, `Trace::keep_flows`).
    pub(crate) fn trace_packet_at(&mut self, port: u32, pid: PacketId, at: Time) {
        let pkt = self.pkts.get(pid);
        let tr = self.rec.trace.as_ref().expect("tracing");
        let app = if tr.flows.is_empty() {
            u64::MAX
        } else {
            let t = self.hosts.transfers.get(pkt.tr);
            if t.uid == pkt.tr_uid {
                t.app_id
            } else {
                u64::MAX
            }
        };
        let p = &self.fab.ports[port as usize];
        let hosts = (self.host_index(pkt.src), self.host_index(pkt.dst));
        self.rec.trace.as_mut().expect("tracing").packet(at, port, (p.node, p.peer_node), hosts, pkt, app);
    }

    /// The tap on switch port `port`'s PFC frames (`pfc_emit`), sent to the upstream neighbour.
    pub(crate) fn trace_pfc(&mut self, port: u32, pause: u8, unpause: u8) {
        let p = &self.fab.ports[port as usize];
        self.rec.trace.as_mut().expect("tracing").pfc(self.now, port, p.peer, (p.node, p.peer_node), pause, unpause);
    }
}

/// The trace is a tap on the transmitters: it owns what it captures and the captured columns, and takes
/// each frame with `now` and what the frame is (it reads nothing of the run).
impl Trace {
    /// Frame `pkt` of flow `app` (u64::MAX: unknown or not asked for) starts on the wire at egress `port`,
    /// of the link (`from`, `to`) between nodes, from host `hosts.0` to host `hosts.1`.
    pub(crate) fn packet(&mut self, now: Time, port: u32, (from, to): (u32, u32), (src, dst): (u32, u32), pkt: &Packet, app: u64) {
        let by_port = self.ports[port as usize];
        if !by_port && app == u64::MAX {
            return;
        }
        self.head(now, port, from, to, if by_port { u64::MAX } else { app });
        self.kind.push(match pkt.kind {
            SegKind::Data => KIND_DATA,
            SegKind::Ack => KIND_ACK,
            SegKind::Syn => KIND_SYN,
            SegKind::SynAck => KIND_SYNACK,
        });
        self.src.push(src);
        self.dst.push(dst);
        self.sport.push(pkt.sport);
        self.dport.push(pkt.dport);
        self.seq.push(pkt.seq);
        self.len.push(pkt.len as u32);
        self.flags.push(pkt.flags);
        self.ecn.push(pkt.ecn);
        self.prio.push(pkt.prio);
        self.pause.push(0);
        self.unpause.push(0);
    }

    /// Switch port `port` sends a PFC frame to its peer egress `peer`: captured on the node that sends it,
    /// or on the link whose transmission it controls.
    pub(crate) fn pfc(&mut self, now: Time, port: u32, peer: u32, (from, to): (u32, u32), pause: u8, unpause: u8) {
        if !(self.ports[port as usize] || self.ports[peer as usize]) {
            return;
        }
        self.head(now, port, from, to, u64::MAX);
        self.kind.push(KIND_PFC);
        for v in [&mut self.src, &mut self.dst] {
            v.push(u32::MAX);
        }
        self.sport.push(0);
        self.dport.push(0);
        self.seq.push(0);
        self.len.push(0);
        self.flags.push(0);
        self.ecn.push(0);
        self.prio.push(0);
        self.pause.push(pause);
        self.unpause.push(unpause);
    }

    fn head(&mut self, now: Time, port: u32, from: u32, to: u32, app: u64) {
        self.t_ps.push(now.0);
        self.app.push(app);
        self.port.push(port);
        self.from.push(from);
        self.to.push(to);
    }

    /// At the end of the run, with flow ids known (`rank`: a flow's id by the order it was opened in):
    /// keep the frames captured for their port and those of the flows asked for, in time order, up to the
    /// run's `end` (a folded transfer's frame was recorded when the transfer started, ahead of its time,
    /// perhaps beyond the end); records of the same time by port, then kind (a port starts one frame at a
    /// time), so that their order does not depend on when they were recorded.
    pub(crate) fn keep_flows(&mut self, rank: &[u64], end: Time) {
        let keep: Vec<bool> =
            self.app.iter().map(|&a| self.flows.is_empty() || a == u64::MAX || rank.get(a as usize).is_some_and(|id| self.flows.contains(id))).collect();
        let mut order: Vec<usize> = (0..self.t_ps.len()).filter(|&i| keep[i] && self.t_ps[i] <= end.0).collect();
        order.sort_by_key(|&i| (self.t_ps[i], self.port[i], self.kind[i]));
        fn take<T: Copy>(v: &mut Vec<T>, order: &[usize]) {
            *v = order.iter().map(|&i| v[i]).collect();
        }
        take(&mut self.app, &order);
        take(&mut self.t_ps, &order);
        take(&mut self.port, &order);
        take(&mut self.from, &order);
        take(&mut self.to, &order);
        take(&mut self.kind, &order);
        take(&mut self.src, &order);
        take(&mut self.dst, &order);
        take(&mut self.sport, &order);
        take(&mut self.dport, &order);
        take(&mut self.seq, &order);
        take(&mut self.len, &order);
        take(&mut self.flags, &order);
        take(&mut self.ecn, &order);
        take(&mut self.prio, &order);
        take(&mut self.pause, &order);
        take(&mut self.unpause, &order);
    }
}
