//! Packets: plain records in an arena, moved by index.

use crate::transport::tcp::SegKind;

pub type PacketId = u32;

/// ECN codepoint bits (RFC 3168): ECT(0) capable, CE marked.
pub const ECN_ECT: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;
/// TCP flags we model.
pub const FLAG_ECE: u8 = 1;
pub const FLAG_CWR: u8 = 2;
/// RoCE (DCQCN): the ACK is a NACK, the receiver asks for everything from its ACK number again.
pub const FLAG_NACK: u8 = 4;

/// Field order is the memory layout (`repr(C)`): what a switch reads of a packet (queue link, output port,
/// size, destination, hash, priority, ECN, detours, kind) comes first, in 24 bytes, so that a traversal
/// touches one cache line of the packet for three packets in four (80-byte records start 0, 16, 32 or 48
/// bytes into a line); the transport's fields follow.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Packet {
    /// The next packet in the queue list this one waits in (`queue::NIL`: none); kept by the queue.
    pub qnext: PacketId,
    /// Output port (global index) chosen at the current switch.
    pub out_port: u32,
    /// Bytes on the wire (IP packet plus framing).
    pub wire: u32,
    /// Source and destination node indices (always hosts).
    pub dst: u32,
    /// 5-tuple hash for flow hashing.
    pub hash: u32,
    /// 0 is the highest of 8 strict priorities.
    pub prio: u8,
    pub ecn: u8,
    /// Times DIBS detoured this packet.
    pub detours: u8,
    pub kind: SegKind,
    /// Transfer slot and its incarnation (a packet for a closed transfer is discarded on arrival).
    pub tr: u32,
    pub tr_uid: u32,
    pub src: u32,
    /// TCP payload bytes.
    pub len: u32,
    /// TCP ports (for traces).
    pub sport: u16,
    pub dport: u16,
    pub flags: u8,
    /// Whether this is a retransmission (for traces).
    pub retx: bool,
    /// A shared-buffer switch: the local index of the port the packet came in on (its MMU charged that
    /// ingress; released when the packet leaves the egress).
    pub in_lp: u16,
    /// Data: first byte's sequence number. ACK: cumulative acknowledgement.
    pub seq: u64,
    /// Send timestamp (TSval) and echoed timestamp (TSecr), in picoseconds.
    pub ts: u64,
    pub ts_echo: u64,
    /// Scheduling rank (least attained service: bytes the flow sent before this packet).
    pub rank: u64,
}

// the switch's fields share the first 24 bytes, and the record stays 80 bytes
const _: () = assert!(std::mem::offset_of!(Packet, kind) < 24 && std::mem::size_of::<Packet>() == 80);

impl Packet {
    /// Rank and flow for LAS / pFabric queues (the flow: transfer incarnation and direction).
    #[inline]
    pub fn rank_key(&self) -> (u64, u64) {
        (self.rank, (self.tr_uid as u64) << 32 | self.src as u64)
    }
}

/// The simulator's packet store links queue lists through the packets themselves.
impl crate::mechanisms::queue::Links for detailsim_engine::Arena<Packet> {
    #[inline(always)]
    fn next(&self, id: PacketId) -> PacketId {
        self.get(id).qnext
    }
    #[inline(always)]
    fn set_next(&mut self, id: PacketId, next: PacketId) {
        self.get_mut(id).qnext = next;
    }
}

impl crate::mechanisms::queue::PacketStore for detailsim_engine::Arena<Packet> {
    #[inline(always)]
    fn packet(&self, id: PacketId) -> &Packet {
        self.get(id)
    }
}

/// IPv4 and TCP headers of a segment (bytes), on top of its payload.
pub const HEADERS: u32 = 40;
