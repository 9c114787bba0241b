//! Packet traces for debugging: every frame that starts on a selected egress port (or belongs to a selected
//! flow), and every PFC frame a selected port sends, recorded as columns. The Python side writes them as a
//! pcap with real Ethernet / IPv4 / TCP headers and 802.1Qbb MAC Control frames.

use crate::packet::PacketId;
use crate::sim::Sim;
use crate::transport::tcp::SegKind;
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
        if self.split.part.is_some() {
            return Err("run.threads: a packet trace is not supported in a run split in two parts yet (set run.threads = 1)".into());
        }
        let find = |name: &str| {
            self.fab.topo.nodes.iter().position(|n| n.name == name).ok_or_else(|| format!("no node named {name:?}"))
        };
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
        self.trace = Some(Trace { flows: spec.flows.iter().copied().collect(), ports, ..Default::default() });
        Ok(())
    }

    fn trace_common(&mut self, port: u32) -> (u32, u32) {
        let p = &self.fab.ports[port as usize];
        (p.node, p.peer_node)
    }

    pub(crate) fn trace_packet(&mut self, port: u32, pid: PacketId) {
        let pkt = *self.pkts.get(pid);
        let (by_port, app) = {
            let tr = self.trace.as_ref().unwrap();
            let app = if tr.flows.is_empty() {
                u64::MAX
            } else {
                let t = self.transfers.get(pkt.tr);
                if t.uid == pkt.tr_uid { t.app_id } else { u64::MAX }
            };
            (tr.ports[port as usize], app)
        };
        if !by_port && app == u64::MAX {
            return;
        }
        let (from, to) = self.trace_common(port);
        let (src, dst) = (self.host_index(pkt.src), self.host_index(pkt.dst));
        let now = self.now.0;
        let tr = self.trace.as_mut().unwrap();
        tr.t_ps.push(now);
        tr.app.push(if by_port { u64::MAX } else { app });
        tr.port.push(port);
        tr.from.push(from);
        tr.to.push(to);
        tr.kind.push(match pkt.kind {
            SegKind::Data => KIND_DATA,
            SegKind::Ack => KIND_ACK,
            SegKind::Syn => KIND_SYN,
            SegKind::SynAck => KIND_SYNACK,
        });
        tr.src.push(src);
        tr.dst.push(dst);
        tr.sport.push(pkt.sport);
        tr.dport.push(pkt.dport);
        tr.seq.push(pkt.seq);
        tr.len.push(pkt.len);
        tr.flags.push(pkt.flags);
        tr.ecn.push(pkt.ecn);
        tr.prio.push(pkt.prio);
        tr.pause.push(0);
        tr.unpause.push(0);
    }

    /// A PFC frame sent by switch port `port` (to the upstream neighbour).
    pub(crate) fn trace_pfc(&mut self, port: u32, pause: u8, unpause: u8) {
        let peer = self.fab.ports[port as usize].peer;
        let tr = self.trace.as_ref().unwrap();
        // captured on the node that sends it, or on the link whose transmission it controls
        if !(tr.ports[port as usize] || tr.ports[peer as usize]) {
            return;
        }
        let (from, to) = self.trace_common(port);
        let now = self.now.0;
        let tr = self.trace.as_mut().unwrap();
        tr.t_ps.push(now);
        tr.app.push(u64::MAX);
        tr.port.push(port);
        tr.from.push(from);
        tr.to.push(to);
        tr.kind.push(KIND_PFC);
        for v in [&mut tr.src, &mut tr.dst] {
            v.push(u32::MAX);
        }
        tr.sport.push(0);
        tr.dport.push(0);
        tr.seq.push(0);
        tr.len.push(0);
        tr.flags.push(0);
        tr.ecn.push(0);
        tr.prio.push(0);
        tr.pause.push(pause);
        tr.unpause.push(unpause);
    }
}

impl Trace {
    /// At the end of the run, with flow ids known (`rank`: a flow's id by the order it was opened in):
    /// keep the frames captured for their port and those of the flows asked for.
    pub(crate) fn keep_flows(&mut self, rank: &[u64]) {
        if self.flows.is_empty() {
            return;
        }
        let keep: Vec<bool> = self.app.iter().map(|&a| a == u64::MAX || rank.get(a as usize).is_some_and(|id| self.flows.contains(id))).collect();
        fn retain<T: Copy>(v: &mut Vec<T>, keep: &[bool]) {
            let mut k = keep.iter();
            v.retain(|_| *k.next().unwrap());
        }
        retain(&mut self.app, &keep);
        retain(&mut self.t_ps, &keep);
        retain(&mut self.port, &keep);
        retain(&mut self.from, &keep);
        retain(&mut self.to, &keep);
        retain(&mut self.kind, &keep);
        retain(&mut self.src, &keep);
        retain(&mut self.dst, &keep);
        retain(&mut self.sport, &keep);
        retain(&mut self.dport, &keep);
        retain(&mut self.seq, &keep);
        retain(&mut self.len, &keep);
        retain(&mut self.flags, &keep);
        retain(&mut self.ecn, &keep);
        retain(&mut self.prio, &keep);
        retain(&mut self.pause, &keep);
        retain(&mut self.unpause, &keep);
    }
}
