//! Queues of 8 priorities with byte accounting, and the disciplines that order them.
//!
//! ```text
//!   PrioQueue<O>        bytes per priority, total, packets, buffer bound (shared or per priority),
//!     │                 time-average occupancy, non-empty mask
//!     └─ order: O       Fifo: one linked list per priority, head / tail / length (switch ingress; egress
//!                       and NIC under strict priority); the next pointers live in a `Links` store
//!                       Discipline: Fifo, or Rank (LAS, pFabric) for egress queues and host NICs
//! ```
//!
//! A packet's bytes are *reserved* (counted against the buffer) and its id *enlisted* (put in the order)
//! separately, because a packet crossing the crossbar is held by the egress before it can be sent. Taking
//! a packet out of the order leaves its bytes counted until `release`. The queue never sees packets, only
//! their ids, priority, size and (for rank disciplines) rank and flow, and keeps its FIFO links in a store
//! the caller gives it (`Links`: the simulator links through its packets, so leaving a queue reads only
//! the packet the caller reads anyway; a live forwarder or a test uses a `Vec`).

use crate::packet::{Packet, PacketId};
use detailsim_engine::Time;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// 8 strict priorities, FIFO within each.
    StrictPriority,
    /// Least attained service: every queue (switch egress and host NIC) sends the packet whose flow had
    /// sent the fewest bytes before it (ties: the earliest queued).
    Las,
    /// pFabric: every queue sends the earliest queued packet of the flow whose packet has the lowest rank
    /// (the flow's unacknowledged bytes when it was sent); a switch egress queue that is full evicts its
    /// highest-rank packet for a lower-rank arrival, or drops the arrival.
    Pfabric,
}

/// How a switch port's buffer (its ingress or its egress) is shared among the eight priorities.
#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum BufferSharing {
    /// One space: any priority may take all of it (complete sharing).
    #[default]
    Shared,
    /// Each priority has the port's whole buffer to itself (eight times the port's bytes in all).
    WholePerPriority,
    /// The port's buffer in eight equal parts, one per priority (as the DeTail paper divides its 128 KB
    /// ingress among eight priorities when it sets the PFC thresholds).
    Eighths,
    /// The port's buffer in equal parts among the priorities the scenario's packets carry
    /// (`config::used_priorities`); a priority outside them gets a part too, inside the same bound.
    InUse,
}

impl BufferSharing {
    /// The queue's `parts` for this sharing, with `in_use` priorities carried by the scenario's packets.
    pub fn parts(self, in_use: usize) -> u8 {
        match self {
            BufferSharing::Shared => 1,
            BufferSharing::WholePerPriority => 0,
            BufferSharing::Eighths => 8,
            BufferSharing::InUse => in_use.clamp(1, 8) as u8,
        }
    }
}

/// Where FIFO lists keep their links: for each queued packet, the next one in its list. A packet is in at
/// most one list at a time, so one link per packet serves every queue; the simulator keeps it in the
/// packet itself (the packet is read when it leaves a queue anyway, so following the list costs no extra
/// cache miss), a live forwarder or a test keeps a `Vec<PacketId>`.
pub trait Links {
    fn next(&self, id: PacketId) -> PacketId;
    fn set_next(&mut self, id: PacketId, next: PacketId);
}

impl Links for Vec<PacketId> {
    #[inline]
    fn next(&self, id: PacketId) -> PacketId {
        self[id as usize]
    }
    #[inline]
    fn set_next(&mut self, id: PacketId, next: PacketId) {
        if id as usize >= self.len() {
            self.resize(id as usize + 1, NIL);
        }
        self[id as usize] = next;
    }
}

/// No packet (the end of a list).
pub const NIL: PacketId = PacketId::MAX;

/// How a queue orders the packets it holds. The queue keeps the non-empty mask and, for FIFO orders, the
/// lists' ends (beside the byte counts, so that a packet of priority 0-3 touches two of the queue's cache
/// lines); an order keeps the rest.
pub trait Order {
    /// Queue `pid` at priority `prio`; `key` gives its rank and flow (called by rank disciplines only).
    fn insert(&mut self, ends: &mut [Ends; 8], prio: u8, pid: PacketId, key: impl FnOnce() -> (u64, u64), links: &mut impl Links);
    /// Remove the next packet to send given the non-empty priorities `nonempty` and those allowed to send
    /// (`allowed`, a subset); returns its priority, the packet, and the new non-empty mask.
    fn remove_next(&mut self, ends: &mut [Ends; 8], nonempty: u8, allowed: u8, links: &impl Links) -> Option<(u8, PacketId, u8)>;
}

/// Packets by id: what a queue reads of a packet (priority, size, rank) when it is given only the id.
pub trait PacketStore {
    fn packet(&self, id: PacketId) -> &Packet;
}

/// One FIFO list, linked through `Links`: its first and last packet. Empty when the head is `NIL`; one
/// packet when head and tail are the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ends {
    head: PacketId,
    tail: PacketId,
}

impl Default for Ends {
    fn default() -> Self {
        Ends { head: NIL, tail: NIL }
    }
}

impl Ends {
    #[inline]
    fn push(&mut self, pid: PacketId, links: &mut impl Links) {
        if self.head == NIL {
            self.head = pid;
        } else {
            links.set_next(self.tail, pid);
        }
        self.tail = pid;
    }
    /// One packet fewer: true (and the list reset) when it was the last.
    #[inline]
    fn shrink(&mut self) -> bool {
        assert!(self.head != NIL, "pop from an empty priority");
        let emptied = self.head == self.tail;
        if emptied {
            *self = Ends::default();
        }
        emptied
    }
    /// Remove the first packet; true when the list is now empty.
    #[inline]
    fn pop_front(&mut self, links: &impl Links) -> (PacketId, bool) {
        let pid = self.head;
        if self.shrink() {
            (pid, true)
        } else {
            self.head = links.next(pid);
            (pid, false)
        }
    }
    /// Remove the last packet (walks the list: eviction only); true when the list is now empty.
    fn pop_back(&mut self, links: &impl Links) -> (PacketId, bool) {
        let last = self.tail;
        if self.shrink() {
            return (last, true);
        }
        let mut before = self.head;
        while links.next(before) != last {
            before = links.next(before);
        }
        self.tail = before;
        (last, false)
    }
}

/// Strict priority between FIFO lists, one per priority (0 first). The lists' ends live in the queue
/// (`PrioQueue`), beside the byte counts; the order itself holds nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fifo;

impl Order for Fifo {
    #[inline]
    fn insert(&mut self, ends: &mut [Ends; 8], prio: u8, pid: PacketId, _key: impl FnOnce() -> (u64, u64), links: &mut impl Links) {
        ends[prio as usize].push(pid, links);
    }
    #[inline]
    fn remove_next(&mut self, ends: &mut [Ends; 8], nonempty: u8, allowed: u8, links: &impl Links) -> Option<(u8, PacketId, u8)> {
        let m = nonempty & allowed;
        if m == 0 {
            return None;
        }
        let prio = m.trailing_zeros() as u8;
        let (pid, emptied) = ends[prio as usize].pop_front(links);
        Some((prio, pid, if emptied { nonempty & !(1 << prio) } else { nonempty }))
    }
}

/// The order of a queue under LAS or pFabric: packets by (rank, arrival), and for pFabric also by flow.
#[derive(Debug, Clone, Default)]
pub struct RankIndex {
    pfabric: bool,
    seq: u64,
    /// (rank, arrival sequence, packet, priority, flow)
    by_rank: BTreeSet<(u64, u64, PacketId, u8, u64)>,
    /// pFabric: flow -> (arrival sequence, rank, packet, priority)
    by_flow: BTreeMap<u64, BTreeSet<(u64, u64, PacketId, u8)>>,
    /// Packets held per priority (for the non-empty mask).
    count: [u32; 8],
    /// Arrivals that ranked strictly better than a packet already queued, so went ahead of an earlier
    /// arrival (what the discipline did that FIFO would not).
    pub overtakes: u64,
}

impl RankIndex {
    pub fn new(pfabric: bool) -> Self {
        RankIndex { pfabric, ..Default::default() }
    }
    fn nonempty(&self) -> u8 {
        (0..8).filter(|&p| self.count[p] > 0).fold(0, |m, p| m | 1 << p)
    }
    fn remove(&mut self, e: (u64, u64, PacketId, u8, u64)) {
        let (rank, seq, pid, prio, flow) = e;
        self.by_rank.remove(&e);
        if self.pfabric {
            let set = self.by_flow.get_mut(&flow).expect("flow entry");
            set.remove(&(seq, rank, pid, prio));
            if set.is_empty() {
                self.by_flow.remove(&flow);
            }
        }
        self.count[prio as usize] -= 1;
    }
    /// LAS: the lowest rank, earliest queued on ties; pFabric: the earliest queued packet of the flow of the
    /// lowest-rank packet.
    fn pop_next(&mut self) -> Option<(u8, PacketId)> {
        let mut e = *self.by_rank.first()?;
        if self.pfabric {
            let &(seq, rank, pid, prio) = self.by_flow[&e.4].first().expect("flow entry");
            e = (rank, seq, pid, prio, e.4);
        }
        self.remove(e);
        Some((e.3, e.2))
    }
    /// The highest-rank packet (the latest queued on ties), if it ranks strictly worse than `rank`.
    fn pop_worst_above(&mut self, rank: u64) -> Option<(u8, PacketId)> {
        let e = *self.by_rank.last()?;
        if e.0 <= rank {
            return None;
        }
        self.remove(e);
        Some((e.3, e.2))
    }
}

impl Order for RankIndex {
    fn insert(&mut self, _ends: &mut [Ends; 8], prio: u8, pid: PacketId, key: impl FnOnce() -> (u64, u64), _links: &mut impl Links) {
        let (rank, flow) = key();
        let seq = self.seq;
        self.seq += 1;
        self.overtakes += self.by_rank.last().is_some_and(|w| w.0 > rank) as u64;
        self.by_rank.insert((rank, seq, pid, prio, flow));
        if self.pfabric {
            self.by_flow.entry(flow).or_default().insert((seq, rank, pid, prio));
        }
        self.count[prio as usize] += 1;
    }
    /// Rank disciplines order packets across priorities: the next packet is the best-ranked whatever its
    /// priority. Nothing can be paused here: scenarios refuse LAS and pFabric with PFC (pauses are per
    /// priority, ranks are not), which the debug build checks.
    fn remove_next(&mut self, _ends: &mut [Ends; 8], _nonempty: u8, allowed: u8, _links: &impl Links) -> Option<(u8, PacketId, u8)> {
        debug_assert_eq!(allowed, 0xff, "a rank discipline with paused priorities");
        let (prio, pid) = self.pop_next()?;
        Some((prio, pid, self.nonempty()))
    }
}

/// The order of an egress queue or host NIC: the scheme's discipline.
#[derive(Debug, Clone)]
pub enum Discipline {
    Fifo(Fifo),
    Rank(Box<RankIndex>),
}

impl Discipline {
    pub fn new(scheduling: Scheduling) -> Self {
        match scheduling {
            Scheduling::StrictPriority => Discipline::Fifo(Fifo),
            Scheduling::Las => Discipline::Rank(Box::new(RankIndex::new(false))),
            Scheduling::Pfabric => Discipline::Rank(Box::new(RankIndex::new(true))),
        }
    }
}

impl Discipline {
    /// Arrivals a rank discipline sent ahead of an earlier, worse-ranked packet (0 for FIFO).
    pub fn overtakes(&self) -> u64 {
        match self {
            Discipline::Fifo(_) => 0,
            Discipline::Rank(r) => r.overtakes,
        }
    }
}

impl Default for Discipline {
    fn default() -> Self {
        Discipline::Fifo(Fifo)
    }
}

impl Order for Discipline {
    #[inline]
    fn insert(&mut self, ends: &mut [Ends; 8], prio: u8, pid: PacketId, key: impl FnOnce() -> (u64, u64), links: &mut impl Links) {
        match self {
            Discipline::Fifo(f) => f.insert(ends, prio, pid, key, links),
            Discipline::Rank(r) => r.insert(ends, prio, pid, key, links),
        }
    }
    #[inline]
    fn remove_next(&mut self, ends: &mut [Ends; 8], nonempty: u8, allowed: u8, links: &impl Links) -> Option<(u8, PacketId, u8)> {
        match self {
            Discipline::Fifo(f) => f.remove_next(ends, nonempty, allowed, links),
            Discipline::Rank(r) => r.remove_next(ends, nonempty, allowed, links),
        }
    }
}

/// A queue of 8 priorities (0 highest) with per-priority byte counts and a buffer bound, ordered by `O`.
/// Three cache lines (`repr(C)`, 64-byte aligned): the scalars every change touches, then the byte counts
/// with the list ends of priorities 0-3, then the list ends of 4-7. A packet of priority 0-3 touches two.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct PrioQueue<O = Discipline> {
    /// Integral of `total` over time (byte-picoseconds) up to `last_ps`, for the time-average occupancy.
    pub area: u128,
    pub last_ps: u64,
    /// Bytes held, including packets in transit through the crossbar.
    pub total: u64,
    /// The buffer bound: at most `MAX_CAP`, or `u64::MAX` (unbounded); `set_cap` changes it.
    cap: u64,
    /// The most one priority may hold (`fits`): `cap / parts` for `parts` >= 2, else `cap` (an unbounded
    /// queue's is not read).
    share: u32,
    /// `max_total` up to `u32::MAX`: a reservation reads the peak on this line, and writes the exact one
    /// (on the priorities' last line) only when it rises.
    peak: u32,
    /// Packets held (with `total`: queued and crossing the crossbar).
    pub pkts: u32,
    /// Bit p set when priority p has a queued packet.
    pub nonempty: u8,
    /// How the priorities share `cap` (`BufferSharing::parts`): 1, all of them share it; 0, each priority
    /// has `cap` bytes of its own; n >= 2, each priority at most `cap / n` bytes and all together `cap`.
    parts: u8,
    /// Transfers across the crossbar into this egress under way (reserved here, not yet queued): counted
    /// by `Fabric::xbar_start` and `Switch::xbar_done` (and a folded transfer's start, `sim/fold.rs`).
    pub crossing: u16,
    order: O,
    per: PerPrio,
}

/// Bytes held and FIFO list ends per priority: bytes first (32 bytes, so that prefix sums read one line),
/// then the ends, those of priorities 0-3 on the bytes' line.
#[derive(Debug, Clone, Default)]
#[repr(C, align(64))]
struct PerPrio {
    bytes: [u32; 8],
    ends: [Ends; 8],
    /// The most the queue held (`PrioQueue::max_total`).
    max_total: u64,
}

/// The largest buffer a queue can bound (its per-priority byte counts are 32-bit); `u64::MAX` is unbounded.
pub const MAX_CAP: u64 = u32::MAX as u64;

const _: () = assert!(std::mem::offset_of!(PrioQueue<Discipline>, per) == 64 && std::mem::size_of::<PrioQueue<Discipline>>() == 192);
const _: () = assert!(std::mem::size_of::<PrioQueue<Fifo>>() == 192);

/// A switch ingress: FIFO per priority.
pub type IngressQueue = PrioQueue<Fifo>;
/// A switch egress or host NIC: the scheme's discipline.
pub type EgressQueue = PrioQueue<Discipline>;

impl PrioQueue<Discipline> {
    /// The discipline's order.
    pub fn discipline(&self) -> &Discipline {
        &self.order
    }
}

impl<O: Order> PrioQueue<O> {
    /// A queue bounded by `cap` bytes: at most `MAX_CAP`, or `u64::MAX` for an unbounded one (scenario
    /// validation refuses the bounds between).
    pub fn with_order(cap: u64, order: O) -> Self {
        let mut q =
            PrioQueue { per: PerPrio::default(), total: 0, pkts: 0, cap, share: 0, peak: 0, nonempty: 0, parts: 1, crossing: 0, area: 0, last_ps: 0, order };
        q.set_cap(cap);
        q
    }
    /// How the priorities share the bound: `parts` as `BufferSharing::parts` gives it.
    pub fn sharing(mut self, parts: u8) -> Self {
        self.parts = parts;
        self.set_cap(self.cap);
        self
    }
    /// Bound the queue by `cap` bytes (as `with_order`), the priorities sharing it as they did.
    pub fn set_cap(&mut self, cap: u64) {
        assert!(cap <= MAX_CAP || cap == u64::MAX, "queue bound {cap} B above the largest supported ({MAX_CAP} B)");
        self.cap = cap;
        let share = if self.parts >= 2 { cap / self.parts as u64 } else { cap };
        self.share = share.min(u32::MAX as u64) as u32;
    }
    /// The buffer bound (`with_order`).
    #[inline]
    pub fn cap(&self) -> u64 {
        self.cap
    }
    /// How the priorities share the bound (`sharing`).
    #[inline]
    pub fn parts(&self) -> u8 {
        self.parts
    }
    /// The most bytes the queue held at once.
    #[inline]
    pub fn max_total(&self) -> u64 {
        self.per.max_total
    }
    /// Bytes held per priority.
    #[inline]
    pub fn bytes(&self) -> &[u32; 8] {
        &self.per.bytes
    }
    /// Bytes held at priority `prio`.
    #[inline]
    pub fn prio_bytes(&self, prio: u8) -> u64 {
        self.per.bytes[prio as usize] as u64
    }
    /// Account the occupancy up to `now` (call before changing `total`).
    #[inline]
    pub fn advance(&mut self, now: Time) {
        self.area += self.total as u128 * (now.0 - self.last_ps) as u128;
        self.last_ps = now.0;
    }
    /// Time-average occupancy in bytes over [0, now].
    pub fn mean_total(&self, now: Time) -> f64 {
        if now.0 == 0 {
            return 0.0;
        }
        let area = self.area + self.total as u128 * (now.0.saturating_sub(self.last_ps)) as u128;
        area as f64 / now.0 as f64
    }
    /// Count `wire` bytes of priority `prio` as held (a packet on its way in, e.g. across the crossbar).
    #[inline]
    pub fn reserve(&mut self, prio: u8, wire: u64) {
        // a bounded queue's counts fit 32 bits (total <= cap <= MAX_CAP); only an unbounded one can overflow
        let b = &mut self.per.bytes[prio as usize];
        *b = b.checked_add(wire as u32).expect("an unbounded queue holds 4 GiB at one priority: beyond what it can count");
        self.total += wire;
        self.pkts += 1;
        if !self.fits(prio, 0) {
            self.bound_violated(prio);
        }
        if self.total > self.peak as u64 {
            self.per.max_total = self.per.max_total.max(self.total);
            self.peak = self.total.min(u32::MAX as u64) as u32;
        }
    }
    #[cold]
    #[inline(never)]
    fn bound_violated(&self, prio: u8) -> ! {
        panic!(
            "buffer bound violated: priority {} holds {} B, the queue {} B, of {} B in {} parts",
            prio,
            self.prio_bytes(prio),
            self.total,
            self.cap,
            self.parts
        )
    }
    /// Queue a packet whose bytes were reserved (rank and flow for rank disciplines).
    #[inline]
    pub fn enlist(&mut self, prio: u8, pid: PacketId, rank: u64, flow: u64, links: &mut impl Links) {
        self.order.insert(&mut self.per.ends, prio, pid, || (rank, flow), links);
        self.nonempty |= 1 << prio;
    }
    /// Queue packet `pid`, whose bytes were reserved, at its priority (with its rank and flow, read only by
    /// a rank discipline).
    #[inline]
    pub fn enlist_packet(&mut self, pid: PacketId, pkts: &mut (impl Links + PacketStore)) {
        let (prio, key) = {
            let p = pkts.packet(pid);
            (p.prio, p.rank_key())
        };
        self.order.insert(&mut self.per.ends, prio, pid, || key, pkts);
        self.nonempty |= 1 << prio;
    }
    #[inline]
    pub fn push(&mut self, prio: u8, pid: PacketId, wire: u64, links: &mut impl Links) {
        self.reserve(prio, wire);
        self.order.insert(&mut self.per.ends, prio, pid, || (0, 0), links);
        self.nonempty |= 1 << prio;
    }
    /// Remove the next packet to send among the priorities in `allowed`; bytes stay counted until `release`.
    #[inline]
    pub fn pop_next(&mut self, allowed: u8, links: &impl Links) -> Option<(u8, PacketId)> {
        let (prio, pid, ne) = self.order.remove_next(&mut self.per.ends, self.nonempty, allowed, links)?;
        self.nonempty = ne;
        Some((prio, pid))
    }
    #[inline]
    pub fn has_room(&self, wire: u64) -> bool {
        self.total + wire <= self.cap
    }
    /// Room for `wire` more bytes of priority `prio`: in the shared space, in the priority's own, or in
    /// its share of the bound and in the bound.
    #[inline]
    pub fn fits(&self, prio: u8, wire: u64) -> bool {
        // the bound on the whole (none with `parts` 0), then the priority's share: (bytes + wire) * n <= cap
        // <=> bytes + wire <= floor(cap / n) in integers (with one part the whole's test implies it; an
        // unbounded queue bounds neither)
        (self.total + wire <= self.cap || self.parts == 0) && (self.prio_bytes(prio) + wire <= self.share as u64 || self.unbounded())
    }
    /// The rare way past `fits`'s second test (an unbounded queue's share is not a bound; out of line, which
    /// keeps the test two compares where it is inlined).
    #[cold]
    #[inline(never)]
    fn unbounded(&self) -> bool {
        self.cap == u64::MAX
    }
    /// `wire` bytes of `prio`, counted (reserved), leave at `at`, and nothing else changes the queue from
    /// `now` until then (a folded transfer's frame, `sim/fold.rs`): the time-averaged occupancy counts them
    /// to `at`, the counts drop now.
    #[inline]
    pub fn release_at(&mut self, now: Time, at: Time, prio: u8, wire: u64) {
        self.advance(now);
        self.area += wire as u128 * (at.0 - now.0) as u128;
        self.release(prio, wire);
    }
    #[inline]
    pub fn release(&mut self, prio: u8, wire: u64) {
        self.per.bytes[prio as usize] -= wire as u32;
        self.total -= wire;
        self.pkts -= 1;
    }
    /// Ask for the two lines a packet of priority 0-3 touches (a prefetch hint: changes nothing).
    #[inline(always)]
    pub fn prefetch_lines(&self) {
        detailsim_engine::queue::prefetch(self);
        detailsim_engine::queue::prefetch(&self.per);
    }
    /// Drain-byte counter: bytes of priority `prio` or higher held in this queue.
    #[inline]
    pub fn drain_bytes(&self, prio: u8) -> u64 {
        self.per.bytes[..=prio as usize].iter().map(|&b| b as u64).sum()
    }
}

impl PrioQueue<Fifo> {
    pub fn new(cap: u64) -> Self {
        Self::with_order(cap, Fifo)
    }
    /// The packet at the head of priority `prio`.
    #[inline]
    pub fn head(&self, prio: u8) -> Option<PacketId> {
        let h = self.per.ends[prio as usize].head;
        (h != NIL).then_some(h)
    }
    /// Remove the head of priority `prio`; bytes stay counted until `release`.
    #[inline]
    pub fn pop(&mut self, prio: u8, links: &impl Links) -> PacketId {
        let (pid, emptied) = self.per.ends[prio as usize].pop_front(links);
        if emptied {
            self.nonempty &= !(1 << prio);
        }
        pid
    }
    /// Packets queued at priority `prio` (walks the list).
    pub fn len_of(&self, prio: u8, links: &impl Links) -> usize {
        let Ends { head, tail } = self.per.ends[prio as usize];
        let (mut n, mut at) = (0, head);
        while at != NIL {
            n += 1;
            if at == tail {
                break;
            }
            at = links.next(at);
        }
        n
    }
    /// Remove the most recently queued packet of the lowest priority below `prio` (a larger number), if
    /// any; bytes stay counted until `release`.
    pub fn pop_lower_tail(&mut self, prio: u8, links: &impl Links) -> Option<(u8, PacketId)> {
        let lower = self.nonempty & !((2u16 << prio) - 1) as u8;
        if lower == 0 {
            return None;
        }
        let p = 7 - lower.leading_zeros() as u8;
        let (pid, emptied) = self.per.ends[p as usize].pop_back(links);
        if emptied {
            self.nonempty &= !(1 << p);
        }
        Some((p, pid))
    }
    /// Priority eviction: to admit `wire` bytes of priority `prio`, remove the most recently queued packets
    /// of the lowest priorities below it into `victims` (bytes stay counted until `release`) — only when that
    /// makes enough room. `in_transit` lower-priority bytes are held but no longer queued (crossing the
    /// crossbar) and cannot be evicted. Returns whether the arrival fits afterwards; nothing is removed when
    /// it cannot be made to fit.
    pub fn evict_lower_for(
        &mut self,
        prio: u8,
        wire: u64,
        in_transit: u64,
        links: &impl Links,
        wire_of: impl Fn(PacketId) -> u64,
        victims: &mut Vec<(u8, PacketId)>,
    ) -> bool {
        victims.clear();
        let need = (self.total + wire).saturating_sub(self.cap);
        if need == 0 {
            return true;
        }
        let lower: u64 = self.per.bytes[prio as usize + 1..].iter().map(|&b| b as u64).sum::<u64>() - in_transit;
        if lower < need {
            return false;
        }
        let mut freed = 0;
        while freed < need {
            let (p, pid) = self.pop_lower_tail(prio, links).expect("lower-priority bytes are queued");
            freed += wire_of(pid);
            victims.push((p, pid));
        }
        true
    }
}

impl PrioQueue<Discipline> {
    pub fn new(cap: u64, scheduling: Scheduling) -> Self {
        Self::with_order(cap, Discipline::new(scheduling))
    }
    /// The packet `pop_next(allowed)` would take now, under a FIFO discipline (None under a rank one): a
    /// hint for prefetching, read when a frame starts waiting for the transmitter.
    #[inline]
    pub fn next_hint(&self, allowed: u8) -> Option<PacketId> {
        let Discipline::Fifo(_) = &self.order else { return None };
        let m = self.nonempty & allowed;
        (m != 0).then(|| self.per.ends[m.trailing_zeros() as usize].head)
    }
    /// Whether the queue orders by rank (LAS, pFabric).
    pub fn ranked(&self) -> bool {
        matches!(self.order, Discipline::Rank(_))
    }
    /// pFabric eviction: remove the highest-rank packet (the latest queued on ties) if it ranks strictly
    /// worse than `rank`. None also under a FIFO discipline, which never evicts.
    pub fn evict_worse(&mut self, rank: u64) -> Option<(u8, PacketId)> {
        let Discipline::Rank(r) = &mut self.order else { return None };
        let out = r.pop_worst_above(rank)?;
        self.nonempty = r.nonempty();
        Some(out)
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
