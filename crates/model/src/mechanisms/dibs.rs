//! DIBS (detour-induced buffer sharing): a packet the switch would drop is sent out of a random other
//! switch-facing port with room instead.
//!
//! ```text
//!   buffer cannot take the packet (or, with a threshold, the chosen egress holds more than it)
//!     decide:  DIBS on and the priority allowed?  drawn with `probability`?  detour cap reached?
//!              → No (behave as without DIBS) | Cap (drop: detour limit) | Yes
//!     pick:    uniformly among the other ports that are up, lead to a switch and have room → port or none
//! ```
//! Stateless apart from the detour count the packet carries; the switch's random stream is an input.

use detailsim_engine::Stream;

/// DIBS: detour instead of drop.
#[derive(Debug, Clone, PartialEq)]
pub struct DibsParams {
    pub enabled: bool,
    /// Detour when the chosen egress queue holds more than this (None: when it cannot take the packet).
    pub threshold: Option<u64>,
    /// Drop a packet detoured this many times (None: no cap).
    pub max_detours: Option<u32>,
    /// Detour with this probability when eligible (otherwise behave as without DIBS).
    pub probability: f64,
    /// Priorities allowed to detour (bit p).
    pub priorities: u8,
}

/// Whether a packet may be detoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Not eligible: the switch does what it would without DIBS.
    No,
    /// Detour it (if a port has room).
    Yes,
    /// The packet has been detoured `max_detours` times: drop it.
    Cap,
}

/// May a packet of priority `prio`, detoured `detours` times so far, be detoured now? The probability is
/// drawn (from `rng`) only when it is below 1, before the cap is checked.
pub fn decide(d: &DibsParams, prio: u8, detours: u8, rng: &mut Stream) -> Decision {
    if !d.enabled || d.priorities & (1 << prio) == 0 {
        return Decision::No;
    }
    if d.probability < 1.0 && rng.uniform() >= d.probability {
        return Decision::No;
    }
    match d.max_detours {
        Some(cap) if detours as u32 >= cap => Decision::Cap,
        _ => Decision::Yes,
    }
}

/// With a threshold (the variant for shared-buffer switches): detour when the chosen egress, holding
/// `held` bytes, would hold more than `threshold` with the packet's `wire` bytes.
#[inline]
pub fn over_threshold(held: u64, wire: u64, threshold: u64) -> bool {
    held + wire > threshold
}

/// A uniformly random port among `0..nports` for which `ok` holds (the caller's test: not the chosen port,
/// up, towards a switch, room for the packet); one draw from `rng`, none when no port qualifies.
pub fn pick(nports: u32, ok: impl Fn(u32) -> bool, rng: &mut Stream) -> Option<u32> {
    let n = (0..nports).filter(|&p| ok(p)).count();
    if n == 0 {
        return None;
    }
    let k = rng.below(n as u64) as usize;
    (0..nports).filter(|&p| ok(p)).nth(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use detailsim_engine::RngStreams;

    fn params(probability: f64, max_detours: Option<u32>, priorities: u8) -> DibsParams {
        DibsParams { enabled: true, threshold: None, max_detours, probability, priorities }
    }
    fn rng() -> Stream {
        RngStreams::new(3).stream(0, 0)
    }

    #[test]
    fn eligibility_follows_priority_probability_and_cap() {
        let mut r = rng();
        let d = params(1.0, Some(2), 0b01);
        assert_eq!(decide(&d, 0, 0, &mut r), Decision::Yes);
        assert_eq!(decide(&d, 0, 1, &mut r), Decision::Yes);
        assert_eq!(decide(&d, 0, 2, &mut r), Decision::Cap);
        assert_eq!(decide(&d, 1, 0, &mut r), Decision::No, "priority 1 may not detour");
        assert_eq!(decide(&DibsParams { enabled: false, ..d.clone() }, 0, 0, &mut r), Decision::No);
        assert_eq!(decide(&params(1.0, None, 0xff), 7, 250, &mut r), Decision::Yes, "no cap");
        // probability 0.3: about 30% detour
        let half = params(0.3, None, 0xff);
        let yes = (0..10_000).filter(|_| decide(&half, 0, 0, &mut r) == Decision::Yes).count();
        assert!((2700..3300).contains(&yes), "{yes}");
    }

    #[test]
    fn certain_detours_draw_no_random_number() {
        let (mut a, b) = (rng(), rng());
        decide(&params(1.0, Some(1), 0xff), 0, 0, &mut a);
        assert_eq!(a.next_u64(), b.clone().next_u64());
    }

    #[test]
    fn pick_is_uniform_over_the_qualifying_ports() {
        let mut r = rng();
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            let p = pick(6, |p| p % 2 == 1, &mut r).unwrap();
            seen[p as usize] += 1;
        }
        assert_eq!([seen[0], seen[2], seen[4]], [0, 0, 0]);
        assert!([seen[1], seen[3], seen[5]].iter().all(|&n| (1800..2200).contains(&n)), "{seen:?}");
        assert_eq!(pick(6, |_| false, &mut r), None);
    }

    #[test]
    fn the_threshold_counts_the_arrival() {
        assert!(!over_threshold(1000, 500, 1500));
        assert!(over_threshold(1001, 500, 1500));
    }
}
