//! Real frames as the live forwarder sees them: Ethernet II carrying IPv4, and IEEE 802.1Qbb PFC frames.
//!
//! Addresses: host `i` (in host order) is `10.77.0.0/16` + `i + 1` with MAC `02:64:73:00:hi:lo` (i = hi·256 +
//! lo); fabric ports use `02:64:70:..` (the forwarder never needs them, they only make captures readable).
//! Priorities: the simulator's priority `p` (0 highest) travels as DSCP `8·p` (class selector CS`p`) in the
//! IPv4 header. That inverts the IP convention (CS7 is usually the most important) on purpose: one number
//! means one thing in the scenario, the simulator and the capture.

use crate::mechanisms::pfc::PfcFrame;

pub const ETH_HDR: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// Opcode of a priority-based (class-based) flow-control frame (802.1Qbb).
pub const PFC_OPCODE: u16 = 0x0101;
/// The reserved multicast address MAC control frames go to.
pub const PFC_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// Pause time in 512-bit quanta a PAUSE carries: the maximum. The switch always unpauses explicitly (time
/// 0), as the simulator's on/off PFC does, so the value only bounds a pause whose UNPAUSE got lost.
pub const PAUSE_QUANTA: u16 = 0xffff;
/// Smallest Ethernet frame without its frame check sequence.
pub const MIN_FRAME: usize = 60;
/// Base of the host addresses (10.77.0.0).
pub const HOST_NET: u32 = 0x0a4d_0000;

/// IPv4 address of host `i`.
pub fn host_ip(i: u32) -> u32 {
    HOST_NET + i + 1
}

/// Host index of an IPv4 address, if it is one of ours.
pub fn host_of_ip(ip: u32) -> Option<u32> {
    (ip > HOST_NET && ip < HOST_NET + 0x1_0000 - 1).then(|| ip - HOST_NET - 1)
}

/// MAC address of host `i`.
pub fn host_mac(i: u32) -> [u8; 6] {
    [0x02, 0x64, 0x73, 0x00, (i >> 8) as u8, i as u8]
}

/// MAC address of fabric port `p` (source of the PFC frames it sends).
pub fn port_mac(p: u32) -> [u8; 6] {
    [0x02, 0x64, 0x70, (p >> 16) as u8, (p >> 8) as u8, p as u8]
}

/// What the forwarder needs of a data frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Info {
    pub src: u32,
    pub dst: u32,
    /// Simulator priority (DSCP / 8, at most 7).
    pub prio: u8,
    /// The two ECN bits.
    pub ecn: u8,
    /// Bytes of the IPv4 packet (its total length field).
    pub ip_len: u32,
    /// Hash of the 5-tuple (flow hashing keeps a TCP connection on one path).
    pub hash: u32,
}

/// A frame as it arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ipv4(Ipv4Info),
    Pfc(PfcFrame),
    /// Anything else (ARP, IPv6, LLDP, classic PAUSE...): not forwarded, counted.
    Other,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Classify a frame (Ethernet II, no VLAN tag).
pub fn parse(f: &[u8]) -> Kind {
    if f.len() < ETH_HDR {
        return Kind::Other;
    }
    match be16(f, 12) {
        ETHERTYPE_IPV4 => parse_ipv4(f).map(Kind::Ipv4).unwrap_or(Kind::Other),
        ETHERTYPE_MAC_CONTROL => parse_pfc(f).map(Kind::Pfc).unwrap_or(Kind::Other),
        _ => Kind::Other,
    }
}

fn parse_ipv4(f: &[u8]) -> Option<Ipv4Info> {
    let ip = &f[ETH_HDR..];
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return None;
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    if ihl < 20 || ip.len() < ihl {
        return None;
    }
    let (src, dst, proto) = (be32(ip, 12), be32(ip, 16), ip[9]);
    let ports = if (proto == 6 || proto == 17) && ip.len() >= ihl + 4 { be32(ip, ihl) } else { 0 };
    let mut h = crate::mechanisms::forwarding::mix(((src as u64) << 32 | dst as u64) ^ ((ports as u64) << 8 | proto as u64).rotate_left(17));
    h ^= h >> 32;
    Some(Ipv4Info { src, dst, prio: (ip[1] >> 5).min(7), ecn: ip[1] & 3, ip_len: be16(ip, 2) as u32, hash: h as u32 })
}

fn parse_pfc(f: &[u8]) -> Option<PfcFrame> {
    if f.len() < ETH_HDR + 4 + 16 || be16(f, ETH_HDR) != PFC_OPCODE {
        return None;
    }
    let enable = f[ETH_HDR + 3];
    let (mut pause, mut unpause) = (0u8, 0u8);
    for q in 0..8 {
        if enable & (1 << q) == 0 {
            continue;
        }
        if be16(f, ETH_HDR + 4 + 2 * q) > 0 {
            pause |= 1 << q;
        } else {
            unpause |= 1 << q;
        }
    }
    Some(PfcFrame { pause, unpause })
}

/// An 802.1Qbb frame from fabric port `port`: priorities in `f.pause` get the maximum pause time, those in
/// `f.unpause` time 0 (resume); both are in the class-enable vector. 60 bytes (the NIC adds the FCS).
pub fn pfc_frame(port: u32, f: PfcFrame) -> Vec<u8> {
    let mut b = vec![0u8; MIN_FRAME];
    b[0..6].copy_from_slice(&PFC_DST);
    b[6..12].copy_from_slice(&port_mac(port));
    b[12..14].copy_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    b[14..16].copy_from_slice(&PFC_OPCODE.to_be_bytes());
    b[16..18].copy_from_slice(&((f.pause | f.unpause) as u16).to_be_bytes());
    for q in 0..8 {
        if f.pause & (1 << q) != 0 {
            b[18 + 2 * q..20 + 2 * q].copy_from_slice(&PAUSE_QUANTA.to_be_bytes());
        }
    }
    b
}

/// Set CE in an IPv4 frame and fix the header checksum (RFC 1624 incremental update).
pub fn set_ce(f: &mut [u8]) {
    let ip = &mut f[ETH_HDR..];
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= 3;
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    let sum = u16::from_be_bytes([ip[10], ip[11]]);
    // HC' = ~(~HC + ~m + m')
    let mut s = (!sum) as u32 + (!old) as u32 + new as u32;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    ip[10..12].copy_from_slice(&(!(s as u16)).to_be_bytes());
}

/// Internet checksum of an IPv4 header (0 when the header's own checksum field is right).
pub fn ipv4_header_sum(f: &[u8]) -> u16 {
    let ip = &f[ETH_HDR..];
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let mut s = 0u32;
    for i in (0..ihl).step_by(2) {
        s += u16::from_be_bytes([ip[i], ip[i + 1]]) as u32;
    }
    while s >> 16 != 0 {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A TCP/IPv4 frame from host `src` to host `dst` with `payload` bytes, priority `prio`, ECN bits `ecn`.
    pub fn tcp_frame(src: u32, dst: u32, sport: u16, payload: usize, prio: u8, ecn: u8) -> Vec<u8> {
        let ip_len = 20 + 20 + payload;
        let mut b = vec![0u8; (ETH_HDR + ip_len).max(MIN_FRAME)];
        b[0..6].copy_from_slice(&host_mac(dst));
        b[6..12].copy_from_slice(&host_mac(src));
        b[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut b[ETH_HDR..];
        ip[0] = 0x45;
        ip[1] = (prio << 5) | ecn;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&host_ip(src).to_be_bytes());
        ip[16..20].copy_from_slice(&host_ip(dst).to_be_bytes());
        ip[20..22].copy_from_slice(&sport.to_be_bytes());
        ip[22..24].copy_from_slice(&5001u16.to_be_bytes());
        let sum = ipv4_header_sum(&b);
        b[ETH_HDR + 10..ETH_HDR + 12].copy_from_slice(&sum.to_be_bytes());
        b
    }

    #[test]
    fn ipv4_fields_and_priority_from_dscp() {
        let f = tcp_frame(3, 9, 40000, 1000, 5, 0b10);
        let Kind::Ipv4(i) = parse(&f) else { panic!("not ipv4") };
        assert_eq!((i.src, i.dst, i.prio, i.ecn, i.ip_len), (host_ip(3), host_ip(9), 5, 0b10, 1040));
        assert_eq!(host_of_ip(i.dst), Some(9));
        assert_eq!(host_of_ip(0x0a00_0001), None);
        // another source port is (almost surely) another hash; the same tuple the same hash
        let Kind::Ipv4(j) = parse(&tcp_frame(3, 9, 40001, 10, 5, 0)) else { panic!() };
        let Kind::Ipv4(k) = parse(&tcp_frame(3, 9, 40000, 10, 1, 0)) else { panic!() };
        assert_ne!(i.hash, j.hash);
        assert_eq!(i.hash, k.hash);
    }

    #[test]
    fn set_ce_keeps_the_header_checksum_valid() {
        for prio in 0..8 {
            let mut f = tcp_frame(1, 2, 1234, 100, prio, 0b10);
            assert_eq!(ipv4_header_sum(&f), 0);
            set_ce(&mut f);
            assert_eq!(f[ETH_HDR + 1] & 3, 3);
            assert_eq!(f[ETH_HDR + 1] >> 5, prio);
            assert_eq!(ipv4_header_sum(&f), 0, "checksum after CE, priority {prio}");
        }
    }

    #[test]
    fn pfc_frames_round_trip_with_the_802_1qbb_layout() {
        let f = PfcFrame { pause: 0b0000_0101, unpause: 0b1000_0000 };
        let b = pfc_frame(7, f);
        assert_eq!(b.len(), MIN_FRAME);
        assert_eq!(&b[0..6], &PFC_DST);
        assert_eq!(&b[12..16], &[0x88, 0x08, 0x01, 0x01]);
        assert_eq!(&b[16..18], &[0x00, 0b1000_0101]);
        assert_eq!(&b[18..20], &[0xff, 0xff]); // priority 0: maximum pause
        assert_eq!(&b[20..22], &[0, 0]);
        assert_eq!(&b[32..34], &[0, 0]); // priority 7: resume
        assert_eq!(parse(&b), Kind::Pfc(f));
        // a classic PAUSE (opcode 1) is not ours
        let mut classic = b.clone();
        classic[15] = 0x01;
        classic[14] = 0x00;
        assert_eq!(parse(&classic), Kind::Other);
    }
}
