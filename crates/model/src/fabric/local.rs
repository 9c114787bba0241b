//! A part of a split run numbers the ports it holds locally: its port tables (`Fabric::ports`, PFC state,
//! markers, counters) hold only its own ports, in global order, so that every lookup on the packet path is a
//! plain slice index, as in a run of the whole fabric. What a part sees of a port another part holds is only
//! its global index, tagged `REMOTE` (the peer of a port on a cut, where its frames and PAUSEs go); what a
//! part reports or hands over names ports by global index (`gid`), and what comes in is numbered locally
//! (`lid`). The whole fabric's ids are global, and both maps are empty.

use super::Fabric;

/// A port of another part, by its global index (`id & !REMOTE`).
pub const REMOTE: u32 = 1 << 31;
const NONE: u32 = u32::MAX;

/// A part's port numbering (empty: the whole fabric's, global).
#[derive(Debug, Clone, Default)]
pub struct PortIds {
    /// Local -> global, and global -> local (`NONE`: another part's).
    pub gid: Vec<u32>,
    pub lid: Vec<u32>,
}

impl Fabric {
    /// The ports are numbered locally (a part of a split run).
    #[inline]
    pub fn is_local(&self) -> bool {
        !self.ids.gid.is_empty()
    }

    /// The global index of port `id` (a local one, or another part's tagged `REMOTE`).
    #[inline]
    pub fn gid(&self, id: u32) -> u32 {
        if id & REMOTE != 0 {
            id & !REMOTE
        } else if self.ids.gid.is_empty() {
            id
        } else {
            self.ids.gid[id as usize]
        }
    }

    /// The local index of the port with global index `g`, if this fabric holds it.
    #[inline]
    pub fn lid(&self, g: u32) -> Option<u32> {
        if self.ids.lid.is_empty() {
            return Some(g);
        }
        match self.ids.lid[g as usize] {
            NONE => None,
            l => Some(l),
        }
    }

    /// How port `g` (global) is named here: its local index, or `REMOTE | g`.
    #[inline]
    pub fn local_name(&self, g: u32) -> u32 {
        self.lid(g).unwrap_or(REMOTE | g)
    }

    /// The node of port `id` (a local one, or another part's tagged `REMOTE`).
    #[inline]
    pub fn node_of_port(&self, id: u32) -> u32 {
        if id & REMOTE != 0 {
            self.wiring.port_node[(id & !REMOTE) as usize]
        } else {
            self.ports[id as usize].node
        }
    }

    /// Keep only the ports `held` picks (by global index; their nodes' ports all), numbered locally: the
    /// port tables of a whole fabric filtered (a fabric built with only those ports' tables is numbered as
    /// it is), peers on a cut tagged `REMOTE`, the nodes' first ports local (another part's node: none),
    /// another part's switches without their MMU.
    pub fn localize(&mut self, held: &[bool]) {
        assert!(!self.is_local(), "numbered locally once");
        let n = held.len();
        if self.ports.len() == n {
            fn keep<T>(v: &mut Vec<T>, held: &[bool]) {
                if v.len() == held.len() {
                    let all = std::mem::take(v);
                    // (a new table of the held ones' size: collecting in place would keep the whole one's)
                    let mut kept = Vec::with_capacity(held.iter().filter(|&&h| h).count());
                    kept.extend(all.into_iter().zip(held).filter(|(_, &h)| h).map(|(x, _)| x));
                    *v = kept;
                }
            }
            keep(&mut self.ports, held);
            keep(&mut self.pfc, held);
            keep(&mut self.markers, held);
            keep(&mut self.port_ctr, held);
            keep(&mut self.tx_count, held);
        }
        let mut lid = vec![NONE; n];
        let mut gid = Vec::with_capacity(self.ports.len());
        for (g, _) in held.iter().enumerate().filter(|(_, &h)| h) {
            lid[g] = gid.len() as u32;
            gid.push(g as u32);
        }
        debug_assert_eq!(gid.len(), self.ports.len());
        for p in &mut self.ports {
            p.peer = match lid[p.peer as usize] {
                NONE => REMOTE | p.peer,
                l => l,
            };
        }
        for (i, nd) in self.nodes.iter_mut().enumerate() {
            let base = self.wiring.port_base[i];
            nd.port_base = if nd.nports > 0 && lid[base as usize] != NONE { lid[base as usize] } else { NONE };
            if nd.port_base == NONE {
                if let Some(m) = self.mmu.get_mut(i) {
                    *m = None;
                }
            }
        }
        self.ids = PortIds { gid, lid };
        self.index_waiting();
    }

    /// The whole fabric's port tables from the parts' (`parts[k]`: part k's fabric; `of`: per node, its
    /// part): each port's state from the part that holds it, its peer by global index (`set_whole`).
    pub fn joined_ports(parts: &[&Fabric], of: &[u8]) -> JoinedPorts {
        let w = &parts[0].wiring;
        let n = w.port_node.len();
        let mut j = JoinedPorts {
            ports: Vec::with_capacity(n),
            pfc: Vec::new(),
            markers: Vec::new(),
            port_ctr: Vec::with_capacity(n),
            tx_count: Vec::with_capacity(n),
        };
        for g in 0..n as u32 {
            let f = parts[of[w.port_node[g as usize] as usize] as usize];
            let l = f.lid(g).expect("a port is held by its node's part") as usize;
            let mut p = f.ports[l].clone();
            p.peer = f.gid(p.peer);
            j.ports.push(p);
            if let Some(x) = f.pfc.get(l) {
                j.pfc.push(x.clone());
            }
            if let Some(x) = f.markers.get(l) {
                j.markers.push(x.clone());
            }
            j.port_ctr.push(f.port_ctr[l]);
            j.tx_count.push(f.tx_count[l]);
        }
        j
    }

    /// Number the ports globally again, with the whole fabric's tables (`joined_ports`).
    pub fn set_whole(&mut self, j: JoinedPorts) {
        (self.ports, self.pfc, self.markers, self.port_ctr, self.tx_count) = (j.ports, j.pfc, j.markers, j.port_ctr, j.tx_count);
        for (i, nd) in self.nodes.iter_mut().enumerate() {
            nd.port_base = self.wiring.port_base[i];
        }
        self.ids = PortIds::default();
        self.index_waiting();
    }
}

/// The whole fabric's port tables joined from a split run's parts (`Fabric::joined_ports`).
pub struct JoinedPorts {
    ports: Vec<super::Port>,
    pfc: Vec<crate::mechanisms::pfc::PfcPort>,
    markers: Vec<crate::mechanisms::ecn::Marker>,
    port_ctr: Vec<crate::stats::PortCounters>,
    tx_count: Vec<super::TxCount>,
}
