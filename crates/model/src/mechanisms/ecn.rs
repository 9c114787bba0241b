//! ECN marking as components: the marker of an egress queue (step marking per queue or per port, or RED)
//! and DeTail's source marking at a host NIC.
//!
//! ```text
//!   packet admitted (bytes reserved) ──► Marker::on_enqueue(queue occupancy, packet) ──► Pass | Mark | Drop
//!     Step:  congested when the packet's priority queue (per queue) or the port (per port) already held more
//!            than K bytes before the packet (DCTCP's instantaneous marking)
//!     RED:   congested as `red::Red` says, on the port's bytes or packets ahead of the packet
//!   congested + ECN-capable → Mark (CE; a packet already CE passes unchanged)
//!   congested + not ECN-capable → Drop under RED where dropping is allowed (a lossy switch priority),
//!                                  otherwise Pass; step marking never drops
//! ```
//! The marker sees numbers, not the queue or the packet store, so the simulator and a live forwarder call
//! it the same way; the caller applies the verdict (sets CE and counts it, or drops the packet).

use crate::mechanisms::red::{Red, RedParams};
use crate::packet::{ECN_CE, ECN_ECT};
use serde::Deserialize;

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcnMarking {
    None,
    /// Mark CE when the packet's priority queue holds more than the threshold.
    PerQueue,
    /// Mark CE when the whole egress port holds more than the threshold.
    PerPort,
    /// Random Early Detection on the whole egress port (`[scheme.red]`): marks ECN-capable packets, drops
    /// the others.
    Red,
}

/// What the marker says about an arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Leave the packet as it is.
    Pass,
    /// Set CE (the packet was ECT).
    Mark,
    /// Drop the packet (RED, not ECN-capable, where the caller allows dropping).
    Drop,
}

/// The queue an arrival joins, counted after its bytes were reserved (the arrival included).
#[derive(Debug, Clone, Copy)]
pub struct Occupancy {
    /// Bytes of the arrival's priority.
    pub prio_bytes: u64,
    /// Bytes of the whole port.
    pub total: u64,
    /// Packets of the whole port.
    pub pkts: u32,
}

/// RED's parameters and the state it keeps for one queue.
#[derive(Debug, Clone)]
pub struct RedMarker {
    pub params: RedParams,
    pub state: Red,
}

/// The ECN marker of one egress queue (a switch egress port or a host NIC).
#[derive(Debug, Clone)]
pub enum Marker {
    Off,
    /// Step marking at `k` bytes, on the packet's priority queue (`per_queue`) or the whole port.
    Step {
        k: u64,
        per_queue: bool,
    },
    Red(Box<RedMarker>),
}

impl Marker {
    /// The marker a scheme's `ecn_marking` gives a port (`red`: the port's RED parameters).
    pub fn new(kind: EcnMarking, k: u64, red: RedParams) -> Marker {
        match kind {
            EcnMarking::None => Marker::Off,
            EcnMarking::PerQueue => Marker::Step { k, per_queue: true },
            EcnMarking::PerPort => Marker::Step { k, per_queue: false },
            EcnMarking::Red => Marker::Red(Box::new(RedMarker { params: red, state: Red::default() })),
        }
    }

    /// A packet of `wire` bytes with ECN codepoint `ecn` joined a queue that now holds `occ` (the packet
    /// included). `may_drop`: RED may drop a packet that is not ECN-capable (a switch, on a lossy
    /// priority; a host NIC and a lossless priority only mark). `uniform` draws from [0, 1) when RED needs
    /// a random number (it is not called otherwise, so the caller's random stream advances only then).
    pub fn on_enqueue(&mut self, occ: Occupancy, wire: u64, ecn: u8, may_drop: bool, uniform: impl FnOnce() -> f64) -> Verdict {
        match self {
            Marker::Off => Verdict::Pass,
            &mut Marker::Step { k, per_queue } => {
                if ecn != ECN_ECT {
                    return Verdict::Pass;
                }
                let held = if per_queue { occ.prio_bytes } else { occ.total } - wire;
                if held > k {
                    Verdict::Mark
                } else {
                    Verdict::Pass
                }
            }
            Marker::Red(r) => {
                let queue = if r.params.packets { (occ.pkts - 1) as f64 } else { (occ.total - wire) as f64 };
                if !r.state.on_arrival(&r.params, queue, uniform) {
                    Verdict::Pass
                } else if ecn == ECN_ECT {
                    Verdict::Mark
                } else if ecn == ECN_CE || !may_drop {
                    Verdict::Pass
                } else {
                    Verdict::Drop
                }
            }
        }
    }
}

/// DeTail's source marking at a host NIC: an ECN-capable packet is marked CE when the NIC's drain-byte
/// counter for its priority (bytes of that priority or higher already queued, read only for an ECT packet)
/// exceeds `threshold`.
#[inline]
pub fn source_mark(ecn: u8, drain_bytes: impl FnOnce() -> u64, threshold: u64) -> bool {
    ecn == ECN_ECT && drain_bytes() > threshold
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::QLen;

    const NOT_ECT: u8 = 0;

    fn occ(prio_bytes: u64, total: u64, pkts: u32) -> Occupancy {
        Occupancy { prio_bytes, total, pkts }
    }
    fn never() -> f64 {
        panic!("step marking draws no random number")
    }

    #[test]
    fn step_marking_counts_what_was_queued_before_the_packet() {
        let mut per_port = Marker::new(EcnMarking::PerPort, 3000, RedParams::new(QLen::Packets(1), QLen::Packets(2), 0.1, 1.0, false).unwrap());
        // 4500 B held including the 1500 B arrival: 3000 B before it, not above K
        assert_eq!(per_port.on_enqueue(occ(1500, 4500, 3), 1500, ECN_ECT, true, never), Verdict::Pass);
        assert_eq!(per_port.on_enqueue(occ(1500, 4501, 3), 1500, ECN_ECT, true, never), Verdict::Mark);
        // only ECT packets are marked; step marking never drops
        assert_eq!(per_port.on_enqueue(occ(1500, 9000, 6), 1500, NOT_ECT, true, never), Verdict::Pass);
        assert_eq!(per_port.on_enqueue(occ(1500, 9000, 6), 1500, ECN_CE, true, never), Verdict::Pass);
        // per queue: the arrival's priority alone counts
        let mut per_queue = Marker::Step { k: 3000, per_queue: true };
        assert_eq!(per_queue.on_enqueue(occ(1500, 9000, 6), 1500, ECN_ECT, true, never), Verdict::Pass);
        assert_eq!(per_queue.on_enqueue(occ(4600, 9000, 6), 1500, ECN_ECT, true, never), Verdict::Mark);
        assert_eq!(Marker::Off.on_enqueue(occ(1 << 30, 1 << 30, 9), 1500, ECN_ECT, true, never), Verdict::Pass);
    }

    #[test]
    fn red_marks_ect_and_drops_others_only_where_allowed() {
        // instantaneous RED on packets, 2..4: at 4 packets ahead every arrival is congested
        let params = RedParams::new(QLen::Packets(2), QLen::Packets(4), 0.1, 1.0, false).unwrap();
        let mut m = Marker::new(EcnMarking::Red, 0, params);
        let full = occ(0, 7500, 5); // 4 packets ahead of the arrival
        assert_eq!(m.on_enqueue(full, 1500, ECN_ECT, true, || 0.5), Verdict::Mark);
        assert_eq!(m.on_enqueue(full, 1500, ECN_CE, true, || 0.5), Verdict::Pass);
        assert_eq!(m.on_enqueue(full, 1500, NOT_ECT, true, || 0.5), Verdict::Drop);
        assert_eq!(m.on_enqueue(full, 1500, NOT_ECT, false, || 0.5), Verdict::Pass, "a NIC or lossless priority never drops");
        // below min: no draw, no mark
        assert_eq!(m.on_enqueue(occ(0, 1500, 1), 1500, ECN_ECT, true, never), Verdict::Pass);
        // in between: the draw decides (p_b = 0.05 at 3 packets, count 0)
        assert_eq!(m.on_enqueue(occ(0, 6000, 4), 1500, ECN_ECT, true, || 0.06), Verdict::Pass);
        assert_eq!(m.on_enqueue(occ(0, 6000, 4), 1500, ECN_ECT, true, || 0.01), Verdict::Mark);
    }

    #[test]
    fn red_in_bytes_reads_the_bytes_ahead() {
        let params = RedParams::new(QLen::Bytes(3000), QLen::Bytes(6000), 0.1, 1.0, false).unwrap();
        let mut m = Marker::new(EcnMarking::Red, 0, params);
        // 5999 B ahead: probabilistic (p_b just under 0.1), a high draw passes; 6000 B: at max, no draw
        assert_eq!(m.on_enqueue(occ(0, 7499, 1), 1500, ECN_ECT, true, || 0.999), Verdict::Pass);
        assert_eq!(m.on_enqueue(occ(0, 7500, 1), 1500, ECN_ECT, true, never), Verdict::Mark);
        // the packet count is ignored when the thresholds are in bytes
        assert_eq!(m.on_enqueue(occ(0, 1500, 99), 1500, ECN_ECT, true, never), Verdict::Pass);
    }

    #[test]
    fn source_marking_compares_the_drain_bytes_with_the_threshold() {
        assert!(!source_mark(ECN_ECT, || 3000, 3000));
        assert!(source_mark(ECN_ECT, || 3001, 3000));
        assert!(!source_mark(NOT_ECT, || panic!("not read for a packet that is not ECT"), 3000));
        assert!(!source_mark(ECN_CE, || 1 << 20, 3000));
    }
}
