//! What the parts of a split run share to run on threads: a barrier that spins briefly and then sleeps,
//! and fails when a part panics (`Barrier`, `FailOnUnwind`); and the pace that decides whether two threads
//! or one run the rounds (`Pace`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// How long a part waits at a barrier spinning before it sleeps: a window holds tens of microseconds of
/// work, so the other part usually arrives within this; when it does not (its core is taken by another
/// process), sleeping leaves the core to it instead of competing for it.
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// The panic payload of a part that stops because the other part failed (the other's panic is the run's).
#[derive(Debug)]
pub struct OtherPartFailed;

/// A barrier for the parts' threads: spin briefly, then sleep until the last one arrives or a part fails
/// (a part that panics marks the barrier failed while it unwinds: `FailOnUnwind`), so that a part never
/// waits for one that will not come.
pub(crate) struct Barrier {
    parties: u64,
    arrived: AtomicU64,
    failed: AtomicBool,
    sleeping: AtomicU64,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Barrier {
    pub(crate) fn new(parties: u64) -> Barrier {
        Barrier { parties, arrived: AtomicU64::new(0), failed: AtomicBool::new(false), sleeping: AtomicU64::new(0), lock: Mutex::new(()), wake: Condvar::new() }
    }

    /// Wait for every part's arrival number `round` (each counts its arrivals from 1); panics with
    /// `OtherPartFailed` if a part failed instead.
    pub(crate) fn wait(&self, round: u64) {
        let goal = self.parties * round;
        if self.arrived.fetch_add(1, Ordering::SeqCst) + 1 >= goal {
            // the last to arrive wakes those asleep (a sleeper counts itself before it checks `arrived`)
            if self.sleeping.load(Ordering::SeqCst) > 0 {
                let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                self.wake.notify_all();
            }
            return;
        }
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        while self.arrived.load(Ordering::Acquire) < goal {
            if self.failed.load(Ordering::Relaxed) {
                std::panic::panic_any(OtherPartFailed);
            }
            spins += 1;
            if !spins.is_multiple_of(64) || start.elapsed() < SPIN {
                std::hint::spin_loop();
                continue;
            }
            let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.sleeping.fetch_add(1, Ordering::SeqCst);
            while self.arrived.load(Ordering::SeqCst) < goal && !self.failed.load(Ordering::SeqCst) {
                // (the timeout only bounds a wake-up that never comes: there is none)
                g = self.wake.wait_timeout(g, std::time::Duration::from_millis(100)).unwrap_or_else(|e| e.into_inner()).0;
            }
            self.sleeping.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.wake.notify_all();
    }
}

/// Marks the barrier failed if the part holding it unwinds (a panic), so that the others stop waiting.
pub(crate) struct FailOnUnwind<'a>(pub(crate) &'a Barrier);

impl Drop for FailOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail();
        }
    }
}

/// Two threads or one, whichever is faster now, judged by throughput (both parts' events per wall-clock
/// nanosecond: what a round does varies, an event's cost much less). The rounds run on two threads in
/// blocks of about `BLOCK_NS` of wall-clock time (counted over calls of `run_until`); a block whose
/// throughput is below the parts' taking turns on this thread by more than `LOSS` (a busy machine: a
/// part waits for its core) hands the next `SERIAL_FIRST_NS` of wall-clock time to one thread, twice as
/// long after each further loss, up to `SERIAL_MAX_NS` (a win resets it). The one-thread figure comes
/// from `PROBE_NS` of taking turns before the first judgement and after every `PROBE_EVERY` blocks on two
/// threads, and from every stretch handed to one thread. Which thread runs a round never changes its
/// results.
#[derive(Debug, Clone)]
pub(crate) struct Pace {
    /// Wall-clock nanoseconds left to take turns on one thread, and how long the next loss gives.
    serial_left: u64,
    serial_next: u64,
    /// Events per wall-clock nanosecond on one thread (the latest measure), and blocks on two threads since.
    serial_rate: Option<f64>,
    blocks_since: u32,
    /// Wall-clock nanoseconds per round on two threads (to size a block in rounds).
    round_ns: f64,
    /// Events and wall-clock nanoseconds so far in the stretch being measured.
    events: u64,
    ns: u64,
}

/// What runs next: the parts taking turns on one thread for this long, or this many rounds on two threads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stretch {
    One(std::time::Duration),
    Two(u64),
}

const BLOCK_NS: u64 = 10_000_000;
const PROBE_NS: u64 = 2_000_000;
const PROBE_EVERY: u32 = 20;
const LOSS: f64 = 1.1;
const SERIAL_FIRST_NS: u64 = 40_000_000;
const SERIAL_MAX_NS: u64 = 2_560_000_000;

impl Pace {
    pub(crate) fn new() -> Pace {
        Pace { serial_left: 0, serial_next: SERIAL_FIRST_NS, serial_rate: None, blocks_since: 0, round_ns: 1e6, events: 0, ns: 0 }
    }

    /// Whether the next rounds run on one thread.
    fn one(&self) -> bool {
        self.serial_left > 0 || self.serial_rate.is_none() || self.blocks_since >= PROBE_EVERY
    }

    /// What runs next: one thread for the stretch handed to it (or a probe to measure it by), or two
    /// threads for about the rest of a block's wall-clock time, in rounds.
    pub(crate) fn next(&self) -> Stretch {
        if self.one() {
            let ns = if self.serial_left > 0 { self.serial_left } else { PROBE_NS.saturating_sub(self.ns) };
            Stretch::One(std::time::Duration::from_nanos(ns))
        } else {
            Stretch::Two((BLOCK_NS.saturating_sub(self.ns) as f64 / self.round_ns).clamp(1.0, 65_536.0) as u64)
        }
    }

    /// Count a stretch of `rounds` rounds (`one`: on one thread) that ran `events` events in `ns`.
    pub(crate) fn count(&mut self, one: bool, rounds: u64, events: u64, ns: u64) {
        (self.events, self.ns) = (self.events + events, self.ns + ns);
        if one {
            self.serial_left = self.serial_left.saturating_sub(ns);
            if self.serial_left == 0 && self.ns >= PROBE_NS {
                (self.serial_rate, self.blocks_since) = (Some(self.events as f64 / self.ns as f64), 0);
                (self.events, self.ns) = (0, 0);
            }
            return;
        }
        if rounds > 0 {
            self.round_ns = ns as f64 / rounds as f64;
        }
        if self.ns >= BLOCK_NS {
            let rate = self.events as f64 / self.ns as f64;
            if rate * LOSS < self.serial_rate.expect("measured first") {
                self.serial_left = self.serial_next;
                self.serial_next = (self.serial_next * 2).min(SERIAL_MAX_NS);
            } else {
                self.serial_next = SERIAL_FIRST_NS;
                self.blocks_since += 1;
            }
            (self.events, self.ns) = (0, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pace_hands_rounds_to_one_thread_while_two_lose_and_takes_them_back() {
        let mut p = Pace::new();
        assert!(p.one(), "one thread is measured first");
        assert_eq!(p.next(), Stretch::One(std::time::Duration::from_nanos(PROBE_NS)));
        p.count(true, 10, 1_000_000, PROBE_NS / 2);
        assert!(p.one() && p.serial_rate.is_none(), "the probe lasts PROBE_NS");
        p.count(true, 10, 1_000_000, PROBE_NS / 2);
        assert_eq!(p.serial_rate, Some(1.0));
        assert!(!p.one());
        // a block of two threads sized by the last measure of a round (1 ms until one is taken)
        assert_eq!(p.next(), Stretch::Two(BLOCK_NS / 1_000_000));
        // two threads at 0.95 events/ns: within LOSS of one thread's 1.0, they keep the rounds
        p.count(false, 100, 95 * BLOCK_NS / 100, BLOCK_NS);
        assert!(!p.one() && p.blocks_since == 1);
        assert_eq!(p.round_ns, (BLOCK_NS / 100) as f64);
        // at 0.5 events/ns they lose: one thread for SERIAL_FIRST_NS, then twice as long after a second loss
        p.count(false, 100, BLOCK_NS / 2, BLOCK_NS);
        assert!(p.one() && p.serial_left == SERIAL_FIRST_NS);
        assert_eq!(p.next(), Stretch::One(std::time::Duration::from_nanos(SERIAL_FIRST_NS)));
        p.count(true, 1000, SERIAL_FIRST_NS, SERIAL_FIRST_NS);
        assert!(!p.one(), "the stretch is over");
        p.count(false, 100, BLOCK_NS / 2, BLOCK_NS);
        assert_eq!(p.serial_left, 2 * SERIAL_FIRST_NS);
        p.count(true, 1000, 2 * SERIAL_FIRST_NS, 2 * SERIAL_FIRST_NS);
        // a win resets the stretch; after PROBE_EVERY wins one thread is measured again
        for _ in 0..PROBE_EVERY {
            assert!(!p.one());
            p.count(false, 100, 2 * BLOCK_NS, BLOCK_NS);
        }
        assert_eq!(p.serial_next, SERIAL_FIRST_NS);
        assert!(p.one() && p.serial_left == 0, "a probe");
    }
}
