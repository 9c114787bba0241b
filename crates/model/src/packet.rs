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
/// destination, hash, settled hops, size, priority, ECN, detours, kind) comes first, in 26 bytes, so that a
/// traversal touches one cache line of the packet for three packets in four (80-byte records start 0, 16,
/// 32 or 48 bytes into a line, and any first 32 bytes straddle two lines only from 48); the transport's
/// fields follow.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Packet {
    /// The next packet in the queue list this one waits in (`queue::NIL`: none); kept by the queue.
    pub qnext: PacketId,
    /// Output port (global index) chosen at the current switch.
    pub out_port: u32,
    /// Source and destination node indices (always hosts).
    pub dst: u32,
    /// 5-tuple hash for flow hashing.
    pub hash: u32,
    /// The output ports the forwarding engine will choose at the packet's next switches where that choice
    /// is settled by the packet alone (`Fabric::settled_hops`): 6 bits per switch, the next switch's
    /// lowest, each its port's local index plus one, or 0 where the engine must be asked. Shifted on at
    /// every switch, cleared by a detour.
    pub hops: u32,
    /// Bytes on the wire (IP packet plus framing; at most the 9,000-byte MSS plus headers and framing).
    pub wire: u16,
    /// 0 is the highest of 8 strict priorities.
    pub prio: u8,
    pub ecn: u8,
    /// Times DIBS detoured this packet.
    pub detours: u8,
    pub kind: SegKind,
    /// TCP payload bytes (at most the MSS, 9,000).
    pub len: u16,
    /// Transfer slot and its incarnation (a packet for a closed transfer is discarded on arrival).
    pub tr: u32,
    pub tr_uid: u32,
    pub src: u32,
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

// the switch's fields share the first 26 bytes, and the record stays 80 bytes
const _: () = assert!(std::mem::offset_of!(Packet, kind) < 26 && std::mem::size_of::<Packet>() == 80);

/// Bits per switch in `Packet::hops`, and the switches it holds.
pub const HOP_BITS: u32 = 6;
pub const HOPS_HELD: u32 = 5;

/// A frame's bytes on the wire as a packet holds them: a segment carries at most the 9,000-byte MSS
/// (`scheme.tcp.mss`) and 40 bytes of headers, and framing adds at most 1,000 (`topology.frame_overhead`)
/// or pads to at most 1,500 (`topology.min_frame`), so every frame fits 16 bits.
#[inline(always)]
pub fn wire16(wire: u32) -> u16 {
    u16::try_from(wire).expect("a frame is at most the 9,000-byte MSS plus headers and framing")
}

/// The output port (local index) `hops` settles at the packet's current switch, if any.
#[inline(always)]
pub fn settled_hop(hops: u32) -> Option<u32> {
    let h = hops & ((1 << HOP_BITS) - 1);
    (h != 0).then(|| h - 1)
}

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
