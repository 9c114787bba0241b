//! A shared-buffer switch's memory management unit (a Broadcom-style MMU, as the HPCC simulator's
//! `SwitchMmu` models it): one pool per switch that every port's queues draw from, accounted twice for
//! each packet, at the ingress port and priority it came in on (for PFC) and at the egress port and
//! priority it waits in (for the lossy drop decision).
//!
//! ```text
//!   pool = size ─┬─ reserve  per (ingress port, priority): a port's first bytes of a priority
//!                ├─ headroom per (ingress port, lossless priority): what arrives after its PAUSE is sent
//!                └─ shared: the rest, used by every port beyond its reserve
//!
//!   free = shared - shared bytes in use
//!   lossless, ingress (port p, priority q):  PAUSE when its headroom holds bytes or its shared use
//!       reaches pfc_alpha x free; an arrival beyond that threshold goes to its headroom; UNPAUSE when
//!       the headroom is empty and its shared use is 0 or at most threshold - resume_offset
//!   lossy, egress (port e, priority q): admitted while e's bytes of q stay within alpha x free
//!       (Choudhury and Hahne's dynamic threshold) and the shared part fits
//! ```
//!
//! Ports are the switch's local port indices. The component takes an arrival or a departure and says
//! what to do (admit or not; the PFC frame to send); it knows nothing of the event loop.

use super::pfc::PfcFrame;

/// The MMU's settings for one switch.
#[derive(Debug, Clone, PartialEq)]
pub struct MmuParams {
    /// The pool, bytes.
    pub size: u64,
    /// Egress dynamic threshold for lossy traffic: a queue may hold up to `alpha` x the free shared bytes.
    pub alpha: f64,
    /// PFC's dynamic threshold: an ingress priority's shared use that sends PAUSE, as a share of the free
    /// shared bytes.
    pub pfc_alpha: f64,
    /// Bytes reserved per (ingress port, priority), for the eight priorities.
    pub reserve: u64,
    /// How far below the PFC threshold an ingress priority's shared use must fall to resume, bytes.
    pub resume_offset: u64,
}

/// Why the MMU refuses an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Lossy: the egress queue is at its dynamic threshold, or the shared pool cannot take the bytes.
    Egress,
    /// Lossless: past the PFC threshold and the ingress priority's headroom is full (PFC's headroom was
    /// too small for what arrived after the PAUSE).
    Headroom,
}

/// One switch's pool and its per-port, per-priority accounting.
#[derive(Debug, Clone, PartialEq)]
pub struct Mmu {
    pub p: MmuParams,
    /// Headroom per ingress port (each lossless priority of the port has this much).
    pub headroom: Vec<u64>,
    /// The lossless priorities (bit q).
    pub lossless: u8,
    /// The shared part of the pool: size less every reserve and headroom.
    pub shared: u64,
    /// Shared bytes in use.
    pub shared_used: u64,
    /// Per ingress port and priority: bytes charged outside the headroom (reserve and shared), in the
    /// headroom.
    pub ingress: Vec<[u64; 8]>,
    pub hdrm: Vec<[u64; 8]>,
    /// Per egress port and priority: bytes queued.
    pub egress: Vec<[u64; 8]>,
    /// The most of the pool ever in use (reserve, shared and headroom bytes together), for the buffer-bound
    /// invariant.
    pub peak: u64,
    pub in_use: u64,
}

/// What the pool needs beyond its size: `Err` names the shortfall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeError {
    pub needed: u64,
}

impl Mmu {
    /// A switch of `headroom.len()` ports, each lossless priority (`lossless`) of port i with `headroom[i]`
    /// bytes of headroom. Err when the reserves and headroom leave no shared pool.
    pub fn new(p: MmuParams, headroom: Vec<u64>, lossless: u8) -> Result<Mmu, SizeError> {
        let n = headroom.len();
        let set = if lossless == 0 { 0 } else { lossless.count_ones() as u64 };
        let fixed = p.reserve * 8 * n as u64 + set * headroom.iter().sum::<u64>();
        if fixed >= p.size {
            return Err(SizeError { needed: fixed + 1 });
        }
        let shared = p.size - fixed;
        Ok(Mmu { p, headroom, lossless, shared, shared_used: 0, ingress: vec![[0; 8]; n], hdrm: vec![[0; 8]; n], egress: vec![[0; 8]; n], peak: 0, in_use: 0 })
    }

    /// Free shared bytes.
    #[inline]
    pub fn free(&self) -> u64 {
        self.shared - self.shared_used
    }

    /// The PFC threshold: the shared use of an ingress priority that pauses it.
    #[inline]
    pub fn pfc_threshold(&self) -> u64 {
        (self.p.pfc_alpha * self.free() as f64) as u64
    }

    /// Shared bytes ingress port `p`'s priority `q` uses (beyond its reserve).
    #[inline]
    pub fn shared_use(&self, p: usize, q: usize) -> u64 {
        self.ingress[p][q].saturating_sub(self.p.reserve)
    }

    /// The egress dynamic threshold (lossy traffic).
    #[inline]
    pub fn egress_threshold(&self) -> u64 {
        (self.p.alpha * self.free() as f64) as u64
    }

    /// Whether an arrival of `size` bytes at ingress `p`, priority `q`, for egress `e` may enter.
    pub fn admits(&self, p: usize, e: usize, q: usize, size: u64) -> Result<(), Refusal> {
        let new = self.ingress[p][q] + size;
        if new <= self.p.reserve {
            return Ok(());
        }
        // the part beyond the reserve comes out of the shared pool
        let from_shared = size.min(new - self.p.reserve);
        if self.lossless & (1 << q) != 0 {
            if new - self.p.reserve <= self.pfc_threshold() && from_shared <= self.free() {
                return Ok(());
            }
            return if self.hdrm[p][q] + size <= self.headroom[p] { Ok(()) } else { Err(Refusal::Headroom) };
        }
        if from_shared > self.free() || self.egress[e][q] + size > self.egress_threshold() {
            return Err(Refusal::Egress);
        }
        Ok(())
    }

    /// Charge an admitted arrival (`admits` said yes): to the reserve, the shared pool or the headroom.
    #[inline]
    pub fn charge(&mut self, p: usize, e: usize, q: usize, size: u64) {
        let new = self.ingress[p][q] + size;
        if new <= self.p.reserve {
            self.ingress[p][q] = new;
        } else if self.lossless & (1 << q) != 0 && (new - self.p.reserve > self.pfc_threshold() || size.min(new - self.p.reserve) > self.free()) {
            self.hdrm[p][q] += size;
        } else {
            self.ingress[p][q] = new;
            self.shared_used += size.min(new - self.p.reserve);
        }
        self.egress[e][q] += size;
        self.in_use += size;
        self.peak = self.peak.max(self.in_use);
        assert!(self.in_use <= self.p.size && self.hdrm[p][q] <= self.headroom[p], "shared buffer bound: {} B in use of {} B", self.in_use, self.p.size);
    }

    /// A packet of `size` bytes that came in on `p` left egress `e` (sent or dropped there): the headroom
    /// empties first, then the shared part, then the reserve.
    pub fn release(&mut self, p: usize, e: usize, q: usize, size: u64) {
        let from_hdrm = self.hdrm[p][q].min(size);
        let rest = size - from_hdrm;
        let from_shared = rest.min(self.shared_use(p, q));
        self.hdrm[p][q] -= from_hdrm;
        self.ingress[p][q] -= rest;
        self.shared_used -= from_shared;
        self.egress[e][q] -= size;
        self.in_use -= size;
    }

    /// The PFC frame ingress port `p` should send now, given the lossless priorities it has paused
    /// (`sent`): PAUSE a priority whose headroom holds bytes or whose shared use (when it has any) reached
    /// the threshold; UNPAUSE one whose headroom is empty and whose shared use is 0 or at most threshold -
    /// `resume_offset`. None: nothing to send.
    pub fn pfc_frame(&self, p: usize, sent: u8) -> Option<PfcFrame> {
        let (mut pause, mut unpause) = (0u8, 0u8);
        let t = self.pfc_threshold();
        let mut m = self.lossless;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let (h, s) = (self.hdrm[p][q], self.shared_use(p, q));
            if sent & (1 << q) == 0 {
                if h > 0 || (s > 0 && s >= t) {
                    pause |= 1 << q;
                }
            } else if h == 0 && (s == 0 || s + self.p.resume_offset <= t) {
                unpause |= 1 << q;
            }
        }
        (pause | unpause != 0).then_some(PfcFrame { pause, unpause })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(size: u64) -> MmuParams {
        MmuParams { size, alpha: 1.0, pfc_alpha: 0.125, reserve: 0, resume_offset: 3000 }
    }

    #[test]
    fn the_pool_is_size_less_reserves_and_headroom_and_must_leave_a_shared_part() {
        // 4 ports, reserve 1000 B per port and priority (8 x 4 x 1000 = 32,000), 10,000 B headroom per port
        // for each of 2 lossless priorities (80,000)
        let m = Mmu::new(MmuParams { reserve: 1000, ..params(1_000_000) }, vec![10_000; 4], 0b1000_1000).unwrap();
        assert_eq!(m.shared, 1_000_000 - 32_000 - 80_000);
        assert_eq!(Mmu::new(params(40_000), vec![10_000; 4], 0b1).unwrap_err(), SizeError { needed: 40_001 });
        // without lossless priorities the headroom takes nothing
        assert_eq!(Mmu::new(params(40_000), vec![10_000; 4], 0).unwrap().shared, 40_000);
    }

    #[test]
    fn lossy_arrivals_stop_at_alpha_times_the_free_shared_bytes() {
        // one pool of 100,000 B, alpha 1: egress 1 takes arrivals while its queue + the arrival <= free
        let mut m = Mmu::new(params(100_000), vec![0; 4], 0).unwrap();
        let mut n = 0;
        while m.admits(0, 1, 0, 1000).is_ok() {
            m.charge(0, 1, 0, 1000);
            n += 1;
        }
        // queue k (after n packets: n x 1000) admits while n x 1000 + 1000 <= 100,000 - n x 1000: n = 49.5 -> 50
        assert_eq!(n, 50);
        assert_eq!((m.egress[1][0], m.shared_used, m.free()), (50_000, 50_000, 50_000));
        assert_eq!(m.admits(0, 1, 0, 1000), Err(Refusal::Egress));
        // another egress still gets its share of what is free: up to 25,000 more
        let mut k = 0;
        while m.admits(2, 3, 0, 1000).is_ok() {
            m.charge(2, 3, 0, 1000);
            k += 1;
        }
        // k x 1000 + 1000 <= 50,000 - k x 1000: k = 24.5 -> 25 (the 25th: 25,000 <= 26,000)
        assert_eq!(k, 25);
        // alpha 2 lets one queue take two thirds of the pool
        let mut m2 = Mmu::new(MmuParams { alpha: 2.0, ..params(90_000) }, vec![0; 2], 0).unwrap();
        let mut j = 0;
        while m2.admits(0, 1, 0, 1000).is_ok() {
            m2.charge(0, 1, 0, 1000);
            j += 1;
        }
        // j x 1000 + 1000 <= 2 x (90,000 - j x 1000): j <= 59.67 -> 60 admitted (the 60th at j = 59)
        assert_eq!(j, 60);
    }

    #[test]
    fn a_lossless_priority_pauses_at_its_threshold_fills_its_headroom_and_resumes_below_the_offset() {
        // pool 200,000 B, 2 ports, 20,000 B headroom each for priority 3: shared 160,000
        let mut m = Mmu::new(params(200_000), vec![20_000; 2], 1 << 3).unwrap();
        assert_eq!(m.shared, 160_000);
        let mut sent = 0u8;
        let mut paused_at = None;
        for i in 1..=37 {
            assert!(m.admits(0, 1, 3, 1000).is_ok(), "arrival {i}");
            m.charge(0, 1, 3, 1000);
            if let Some(f) = m.pfc_frame(0, sent) {
                assert_eq!(f.unpause, 0);
                sent |= f.pause;
                paused_at.get_or_insert(i);
            }
        }
        // an arrival takes shared bytes while its shared use s + 1,000 <= (160,000 - s) / 8, s <= 16,888:
        // arrivals 1-17; the 18th goes to the headroom, which sends PAUSE
        assert_eq!(paused_at, Some(18));
        // the headroom takes 20 (18-37), the 38th is refused
        assert_eq!((m.shared_use(0, 3), m.hdrm[0][3]), (17_000, 20_000));
        assert_eq!(m.admits(0, 1, 3, 1000), Err(Refusal::Headroom));
        // another port's lossless priority still has its own headroom and shares the threshold
        assert!(m.admits(1, 0, 3, 1000).is_ok());
        // drain: no UNPAUSE while the headroom holds bytes, then until s + 3,000 <= (160,000 - s) / 8
        let mut resumed_at = None;
        for i in 1..=37 {
            m.release(0, 1, 3, 1000);
            if let Some(f) = m.pfc_frame(0, sent) {
                assert_eq!(f.pause, 0);
                sent &= !f.unpause;
                resumed_at.get_or_insert(i);
                break;
            }
        }
        // 20 releases empty the headroom (s stays 17,000); then s + 3,000 <= (160,000 - s) / 8 at
        // s <= 15,111: s = 15,000 after two more, the 22nd release
        assert_eq!(resumed_at, Some(22));
        assert_eq!(sent, 0);
    }

    #[test]
    fn every_byte_charged_is_released_and_the_reserve_is_used_first() {
        // priority 1 lossless (5,000 B headroom per port), the others lossy: shared = 100,000 - 3 x 8 x 3,000
        // - 3 x 5,000 = 13,000
        let mut m = Mmu::new(MmuParams { reserve: 3000, ..params(100_000) }, vec![5000; 3], 0b10).unwrap();
        assert_eq!(m.shared, 13_000);
        for (p, e, q) in [(0, 1, 0), (0, 1, 0), (0, 1, 0), (0, 1, 0), (1, 2, 5), (2, 0, 0)] {
            assert!(m.admits(p, e, q, 1500).is_ok());
            m.charge(p, e, q, 1500);
        }
        // port 0 priority 0: 6,000 B, 3,000 of them reserved, 3,000 shared
        assert_eq!((m.ingress[0][0], m.shared_use(0, 0), m.shared_used), (6000, 3000, 3000));
        assert_eq!(m.in_use, 9000);
        for (p, e, q) in [(2, 0, 0), (0, 1, 0), (1, 2, 5), (0, 1, 0), (0, 1, 0), (0, 1, 0)] {
            m.release(p, e, q, 1500);
        }
        assert_eq!((m.shared_used, m.in_use, m.peak), (0, 0, 9000));
        assert!(m.ingress.iter().chain(&m.hdrm).chain(&m.egress).all(|r| r.iter().all(|&b| b == 0)));
    }
}
