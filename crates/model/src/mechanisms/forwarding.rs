//! The forwarding engine's choice among the acceptable output ports: flow hashing (ECMP), packet scatter,
//! and DeTail's adaptive load balancing (ALB).
//!
//! ```text
//!   acceptable ports A (a bit row: local port indices on a shortest path to the destination)
//!     FlowHash       A[mix(flow hash ^ switch salt) mod |A|]      one path per flow
//!     PacketScatter  A[uniform draw]                               per packet, blind to load
//!     Adaptive       tier 0: drain bytes(prio) < T1, tier 1: < T2, tier 2: all of A;
//!                    the best non-empty tier, then one of it at random (or round robin)
//! ```
//! The component keeps a switch's forwarding state (its hash salt and round-robin pointer); the policy,
//! the egress drain-byte counters and the random stream are inputs, so a live switch can call it the same
//! way. It returns a local port index.

use crate::routing;
use detailsim_engine::Stream;
use serde::Deserialize;

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// Per-flow hash of the 5-tuple with a per-switch salt (ECMP).
    FlowHash,
    /// A uniformly random acceptable port per packet.
    PacketScatter,
    /// DeTail's adaptive load balancing: per packet, an acceptable port whose egress drain-byte counter
    /// for the packet's priority is below T1, else below T2, else any acceptable port.
    Adaptive,
}

#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlbChoice {
    /// Uniformly random among the selected ports.
    Random,
    /// Round robin (a per-switch pointer) among the selected ports.
    RoundRobin,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlbParams {
    pub t1: u64,
    pub t2: u64,
    pub choice: AlbChoice,
}

/// SplitMix64's finaliser: spreads a flow hash over the acceptable ports.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One switch's forwarding state.
#[derive(Debug, Clone, Copy, Default)]
pub struct Forwarder {
    /// Per-switch hash salt (switches hash the same flow differently, as ECMP seeds do).
    pub salt: u64,
    /// Round-robin pointer of adaptive load balancing (local port index).
    pub rr: u32,
}

impl Forwarder {
    pub fn new(salt: u64) -> Self {
        Forwarder { salt, rr: 0 }
    }

    /// The output port (local index) among the acceptable ones in `row` for a packet of flow hash `hash`;
    /// None when no port is acceptable. `drain(p)` is egress port p's drain-byte counter for the packet's
    /// priority (ALB only); `rng` is the switch's random stream (scatter and ALB's random choice draw from
    /// it); `scratch` is working space the caller keeps (ALB's candidates), so no call allocates.
    // the forwarding inputs are the packet's, the node's and the scheme's: bundling them would only add a copy
    #[allow(clippy::too_many_arguments)]
    pub fn choose(
        &mut self,
        lb: LoadBalancing,
        alb: &AlbParams,
        row: &[u64],
        hash: u32,
        drain: impl Fn(u32) -> u64,
        rng: &mut Stream,
        scratch: &mut Vec<u32>,
    ) -> Option<u32> {
        // the list from the row (an allocation: the simulator's switches keep theirs, `Routes::ports`)
        let list: Vec<u32> = (0..routing::count(row)).map(|k| routing::nth(row, k)).collect();
        self.choose_in(lb, alb, &list, row, hash, drain, rng, scratch)
    }

    /// `choose` given the acceptable ports also as a list (`list`: the row's ports in ascending order,
    /// `Routes::ports`), which flow hashing and scatter index directly; ALB reads `row` alone (its list may be
    /// empty, and the row may be empty for the others), so a switch's route under ALB skips the list's
    /// lookup (two dependent loads and their checks on every hop of a DeTail packet).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn choose_in(
        &mut self,
        lb: LoadBalancing,
        alb: &AlbParams,
        list: &[u32],
        row: &[u64],
        hash: u32,
        drain: impl Fn(u32) -> u64,
        rng: &mut Stream,
        scratch: &mut Vec<u32>,
    ) -> Option<u32> {
        if lb == LoadBalancing::Adaptive {
            return self.alb(alb, row, drain, rng, scratch);
        }
        let n = list.len() as u32;
        if n <= 1 {
            return list.first().copied();
        }
        Some(match lb {
            LoadBalancing::FlowHash => self.flow_hash_pick(list, hash),
            LoadBalancing::PacketScatter => list[rng.below(n as u64) as usize],
            LoadBalancing::Adaptive => unreachable!("ALB chose above"),
        })
    }

    /// Flow hashing's choice among `list` (not empty) for flow hash `hash`.
    #[inline(always)]
    fn flow_hash_pick(&self, list: &[u32], hash: u32) -> u32 {
        list[(mix(hash as u64 ^ self.salt) % list.len() as u64) as usize]
    }

    /// The choice `choose_in` will make where it depends on nothing but its inputs (one acceptable port,
    /// or flow hashing), without making it: None where it draws or reads queues (scatter and ALB among
    /// several ports) or no port is acceptable. For a prefetch.
    #[inline(always)]
    pub fn settled_choice(&self, lb: LoadBalancing, list: &[u32], hash: u32) -> Option<u32> {
        match list.len() {
            0 => None,
            1 => Some(list[0]),
            _ if lb == LoadBalancing::FlowHash => Some(self.flow_hash_pick(list, hash)),
            _ => None,
        }
    }

    /// DeTail's adaptive load balancing: among the acceptable ports (the set bits of `row`), those whose
    /// drain-byte counter for the packet's priority is below T1; if none, below T2; if none, all of them.
    /// Then one of them at random (or the next after the round-robin pointer). No port: None; one port: it,
    /// with nothing drawn.
    #[inline]
    fn alb(&mut self, p: &AlbParams, row: &[u64], drain: impl Fn(u32) -> u64, rng: &mut Stream, sel: &mut Vec<u32>) -> Option<u32> {
        if let [word] = *row {
            return match word.count_ones() {
                0 => None,
                1 => Some(word.trailing_zeros()),
                _ => Some(self.alb_word(p, word, drain, rng)),
            };
        }
        match routing::count(row) {
            0 => None,
            1 => Some(routing::nth(row, 0)),
            _ => Some(self.alb_rows(p, row, drain, rng, sel)),
        }
    }

    /// ALB for a switch of at most 64 ports (one word of acceptable ports): the tiers as bit masks, no
    /// list. Picks exactly what `alb_rows` picks (same tier, same order of candidates, same draw).
    #[inline]
    fn alb_word(&mut self, p: &AlbParams, word: u64, drain: impl Fn(u32) -> u64, rng: &mut Stream) -> u32 {
        let (mut t0, mut t1) = (0u64, 0u64);
        let mut bits = word;
        while bits != 0 {
            let lp = bits.trailing_zeros();
            bits &= bits - 1;
            let d = drain(lp);
            if d < p.t1 {
                t0 |= 1 << lp;
            } else if d < p.t2 {
                t1 |= 1 << lp;
            }
        }
        let sel = if t0 != 0 {
            t0
        } else if t1 != 0 {
            t1
        } else {
            word
        };
        match p.choice {
            AlbChoice::Random => routing::nth(&[sel], rng.below(sel.count_ones() as u64) as u32),
            AlbChoice::RoundRobin => {
                let above = if self.rr >= 63 { 0 } else { sel & (!0u64 << (self.rr + 1)) };
                let pick = if above != 0 { above } else { sel }.trailing_zeros();
                self.rr = pick;
                pick
            }
        }
    }

    fn alb_rows(&mut self, p: &AlbParams, row: &[u64], drain: impl Fn(u32) -> u64, rng: &mut Stream, sel: &mut Vec<u32>) -> u32 {
        sel.clear();
        let mut best = 3u8;
        for (w, &word) in row.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let lp = w as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                let d = drain(lp);
                let t = if d < p.t1 {
                    0u8
                } else if d < p.t2 {
                    1
                } else {
                    2
                };
                if t < best {
                    best = t;
                    sel.clear();
                }
                if t == best {
                    sel.push(lp);
                }
            }
        }
        match p.choice {
            AlbChoice::Random => sel[rng.below(sel.len() as u64) as usize],
            AlbChoice::RoundRobin => {
                let pick = sel.iter().copied().find(|&x| x > self.rr).unwrap_or(sel[0]);
                self.rr = pick;
                pick
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use detailsim_engine::RngStreams;

    fn alb(t1: u64, t2: u64, choice: AlbChoice) -> AlbParams {
        AlbParams { t1, t2, choice }
    }
    fn rng() -> Stream {
        RngStreams::new(1).stream(0, 0)
    }

    #[test]
    fn flow_hashing_keeps_a_flow_on_one_port_and_spreads_flows() {
        let mut f = Forwarder::new(42);
        let row = [0b1111_0000u64];
        let p = &alb(0, 0, AlbChoice::Random);
        let mut r = rng();
        let mut used = [0u32; 8];
        for hash in 0..4000u32 {
            let a = f.choose(LoadBalancing::FlowHash, p, &row, hash, |_| 0, &mut r, &mut Vec::new()).unwrap();
            assert_eq!(Some(a), f.choose(LoadBalancing::FlowHash, p, &row, hash, |_| 1 << 30, &mut r, &mut Vec::new()), "load does not move a flow");
            used[a as usize] += 1;
        }
        assert_eq!(used[..4], [0; 4], "only acceptable ports");
        assert!(used[4..].iter().all(|&u| (800..1200).contains(&u)), "{used:?}");
        // another switch (salt) hashes the same flows differently
        let mut g = Forwarder::new(43);
        let same = (0..4000u32)
            .filter(|&h| {
                f.choose(LoadBalancing::FlowHash, p, &row, h, |_| 0, &mut r, &mut Vec::new())
                    == g.choose(LoadBalancing::FlowHash, p, &row, h, |_| 0, &mut r, &mut Vec::new())
            })
            .count();
        assert!(same < 1300, "{same} of 4000 agree");
    }

    #[test]
    fn alb_prefers_ports_below_t1_then_t2_then_any() {
        let p = alb(1000, 5000, AlbChoice::Random);
        let mut f = Forwarder::default();
        let mut r = rng();
        // two words: ports 3, 10 in the first, 64 + 2 = 66 in the second
        let row = [1 << 3 | 1 << 10, 1 << 2];
        let pick = |f: &mut Forwarder, r: &mut Stream, d: [u64; 3]| {
            f.choose(
                LoadBalancing::Adaptive,
                &p,
                &row,
                0,
                |lp| match lp {
                    3 => d[0],
                    10 => d[1],
                    66 => d[2],
                    _ => panic!("not acceptable: {lp}"),
                },
                r,
                &mut Vec::new(),
            )
            .unwrap()
        };
        for _ in 0..50 {
            assert_eq!(pick(&mut f, &mut r, [6000, 999, 4000]), 10, "the only port below T1");
            assert_eq!(pick(&mut f, &mut r, [6000, 5000, 4999]), 66, "none below T1: the only one below T2");
        }
        let mut seen = [false; 3];
        for _ in 0..200 {
            match pick(&mut f, &mut r, [9000, 9000, 9000]) {
                3 => seen[0] = true,
                10 => seen[1] = true,
                66 => seen[2] = true,
                x => panic!("{x}"),
            }
        }
        assert_eq!(seen, [true; 3], "all congested: any acceptable port");
    }

    #[test]
    fn alb_round_robin_cycles_through_the_best_tier() {
        let p = alb(1000, 5000, AlbChoice::RoundRobin);
        let mut f = Forwarder::default();
        let mut r = rng();
        let row = [0b1_0110u64]; // ports 1, 2, 4
        let picks: Vec<u32> = (0..5).map(|_| f.choose(LoadBalancing::Adaptive, &p, &row, 0, |_| 0, &mut r, &mut Vec::new()).unwrap()).collect();
        assert_eq!(picks, vec![1, 2, 4, 1, 2]);
        // port 2 congested: skipped
        let picks: Vec<u32> =
            (0..3).map(|_| f.choose(LoadBalancing::Adaptive, &p, &row, 0, |lp| if lp == 2 { 9000 } else { 0 }, &mut r, &mut Vec::new()).unwrap()).collect();
        assert_eq!(picks, vec![4, 1, 4]);
    }

    /// A xorshift generator of the tests' random rows and loads.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Random thresholds, the choice alternating by case.
    fn random_alb(case: u64, next: &mut impl FnMut() -> u64) -> AlbParams {
        let choice = if case.is_multiple_of(2) { AlbChoice::Random } else { AlbChoice::RoundRobin };
        alb(1000 + next() % 4000, 5000 + next() % 20000, choice)
    }

    /// The one-word path (tier masks) picks what the general path (a list of candidates) picks, draw for
    /// draw, under random rows, loads, thresholds and both choices.
    #[test]
    fn alb_on_one_word_agrees_with_the_general_path() {
        let mut next = xorshift(0x853c49e6748fea9b);
        for case in 0..4000 {
            let p = random_alb(case, &mut next);
            let word = next() & next() | 1 << (next() % 64);
            let loads: Vec<u64> = (0..64).map(|_| [0, 999, 4000, 30000][(next() % 4) as usize] + next() % 2000).collect();
            let rr = (next() % 64) as u32;
            let (mut a, mut b) = (Forwarder { salt: 0, rr }, Forwarder { salt: 0, rr });
            let (mut ra, mut rb) = (RngStreams::new(case).stream(0, 0), RngStreams::new(case).stream(0, 0));
            for _ in 0..3 {
                let pa = a.alb_word(&p, word, |lp| loads[lp as usize], &mut ra);
                let pb = b.alb_rows(&p, &[word], |lp| loads[lp as usize], &mut rb, &mut Vec::new());
                assert_eq!(pa, pb, "case {case}");
                assert_eq!(a.rr, b.rr);
            }
            assert_eq!(ra.below(1 << 40), rb.below(1 << 40), "the same draws were taken");
        }
    }

    /// ALB from the row alone (`choose_in` with an empty list, what a switch's route passes) picks what the
    /// list says where it settles the choice (no port, or its one port, with nothing drawn) and the general
    /// path's pick otherwise, draw for draw: rows of no, one and many ports, in one word and in several.
    #[test]
    fn alb_from_the_row_agrees_with_the_list() {
        let mut next = xorshift(0x9e3779b97f4a7c15);
        for case in 0..4000 {
            let p = random_alb(case, &mut next);
            let words = 1 + (case % 3) as usize;
            let row: Vec<u64> = (0..words)
                .map(|_| match next() % 4 {
                    0 => 0,
                    1 => 1 << (next() % 64),
                    _ => next() & next(),
                })
                .collect();
            let list: Vec<u32> = (0..routing::count(&row)).map(|k| routing::nth(&row, k)).collect();
            let loads: Vec<u64> = (0..64 * words).map(|_| [0, 999, 4000, 30000][(next() % 4) as usize] + next() % 2000).collect();
            let rr = (next() % 64) as u32;
            let (mut a, mut b) = (Forwarder { salt: 0, rr }, Forwarder { salt: 0, rr });
            let (mut ra, mut rb) = (RngStreams::new(case).stream(0, 0), RngStreams::new(case).stream(0, 0));
            for _ in 0..3 {
                let pa = a.choose_in(LoadBalancing::Adaptive, &p, &[], &row, 7, |lp| loads[lp as usize], &mut ra, &mut Vec::new());
                let pb = if list.len() <= 1 { list.first().copied() } else { Some(b.alb_rows(&p, &row, |lp| loads[lp as usize], &mut rb, &mut Vec::new())) };
                assert_eq!(pa, pb, "case {case}");
                assert_eq!(a.rr, b.rr);
            }
            assert_eq!(ra.below(1 << 40), rb.below(1 << 40), "the same draws were taken");
        }
    }

    #[test]
    fn a_single_acceptable_port_needs_no_choice() {
        let mut f = Forwarder::default();
        let mut r = rng();
        let before = r.clone();
        for lb in [LoadBalancing::FlowHash, LoadBalancing::PacketScatter, LoadBalancing::Adaptive] {
            assert_eq!(f.choose(lb, &alb(1, 2, AlbChoice::Random), &[0, 1 << 5], 7, |_| 0, &mut r, &mut Vec::new()), Some(69));
            assert_eq!(f.choose(lb, &alb(1, 2, AlbChoice::Random), &[0, 0], 7, |_| 0, &mut r, &mut Vec::new()), None);
        }
        assert_eq!(r.next_u64(), before.clone().next_u64(), "no random number drawn");
    }
}
