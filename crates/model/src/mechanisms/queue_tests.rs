//! Unit tests of `queue.rs` (a file of their own: the queue and its tests together pass 900 lines).

use super::*;

#[test]
fn strict_priority_sends_the_highest_allowed_priority_in_fifo_order() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = EgressQueue::new(1 << 20, Scheduling::StrictPriority);
    for (pid, prio) in [(1, 3), (2, 1), (3, 3), (4, 1), (5, 6)] {
        q.push(prio, pid, 100, &mut l);
    }
    assert_eq!(q.nonempty, 0b0100_1010);
    // the hint names the packet pop_next takes next, pauses honoured
    assert_eq!((q.next_hint(0xff), q.next_hint(!0b10), q.next_hint(0b1)), (Some(2), Some(1), None));
    // priority 1 paused: 3 goes first
    assert_eq!(q.pop_next(!0b10, &l), Some((3, 1)));
    assert_eq!(q.pop_next(0xff, &l), Some((1, 2)));
    assert_eq!(q.pop_next(0xff, &l), Some((1, 4)));
    assert_eq!(q.nonempty, 0b0100_1000);
    assert_eq!(q.pop_next(0b0100_0000, &l), Some((6, 5)));
    assert_eq!(q.pop_next(0b0100_0000, &l), None, "nothing allowed is queued");
    assert_eq!(q.pop_next(0xff, &l), Some((3, 3)));
    assert_eq!(q.nonempty, 0);
    // bytes stay counted until released
    assert_eq!((q.total, q.pkts), (500, 5));
    for p in [1, 1, 3, 3, 6] {
        q.release(p, 100);
    }
    assert_eq!((q.total, q.pkts, q.drain_bytes(7)), (0, 0, 0));
}

/// The linked FIFO lists against one `VecDeque` per priority: random pushes, pops of the highest
/// allowed priority, and tail evictions, with packet ids reused as a packet store reuses its slots.
#[test]
fn linked_fifos_behave_as_one_deque_per_priority() {
    use std::collections::VecDeque;
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(u64::MAX);
    let mut model: [VecDeque<PacketId>; 8] = Default::default();
    let mut free: Vec<PacketId> = (0..64).rev().collect();
    let mut rng = 0x853c49e6748fea9bu64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..50_000 {
        match next() % 7 {
            0..=2 if !free.is_empty() => {
                let (prio, pid) = ((next() % 4) as u8 * 2, free.pop().unwrap());
                q.push(prio, pid, 100, &mut l);
                model[prio as usize].push_back(pid);
            }
            3 | 4 => {
                let allowed = (next() % 256) as u8;
                let want = (0..8u8).find(|&p| allowed & 1 << p != 0 && !model[p as usize].is_empty()).map(|p| (p, model[p as usize].pop_front().unwrap()));
                let got = q.order.remove_next(&mut q.per.ends, q.nonempty, allowed, &l).map(|(p, pid, ne)| {
                    q.nonempty = ne;
                    (p, pid)
                });
                assert_eq!(got, want);
                if let Some((p, pid)) = got {
                    q.release(p, 100);
                    free.push(pid);
                }
            }
            5 => {
                let prio = (next() % 8) as u8;
                let want = (prio + 1..8).rev().find(|&p| !model[p as usize].is_empty()).map(|p| (p, model[p as usize].pop_back().unwrap()));
                let got = q.pop_lower_tail(prio, &l);
                assert_eq!(got, want);
                if let Some((p, pid)) = got {
                    q.release(p, 100);
                    free.push(pid);
                }
            }
            _ => {
                for p in 0..8u8 {
                    assert_eq!(q.head(p), model[p as usize].front().copied());
                    assert_eq!(q.len_of(p, &l), model[p as usize].len());
                    assert_eq!(q.nonempty & 1 << p != 0, !model[p as usize].is_empty());
                }
            }
        }
    }
}

#[test]
fn time_average_occupancy_integrates_the_bytes_held() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(10_000);
    q.advance(Time(0));
    q.push(0, 1, 1000, &mut l);
    q.advance(Time(300));
    q.push(0, 2, 1000, &mut l);
    // 1000 B for 300 ps, then 2000 B for 100 ps
    assert_eq!(q.mean_total(Time(400)), (1000.0 * 300.0 + 2000.0 * 100.0) / 400.0);
    assert_eq!(q.max_total(), 2000);
}

#[test]
fn egress_per_priority_keeps_a_full_priority_from_blocking_the_others() {
    let mut l: Vec<PacketId> = Vec::new();
    for per_prio in [false, true] {
        let mut q = IngressQueue::new(4500).sharing(if per_prio { 0 } else { 1 });
        for pid in 1..=3 {
            q.push(1, pid, 1500, &mut l); // a paused low priority fills the buffer
        }
        assert!(!q.fits(1, 1500), "the full priority itself never gets more");
        // shared: the high priority is kept out; per priority: it has its own 4500 B
        assert_eq!(q.fits(0, 1500), per_prio);
        if per_prio {
            for pid in 4..=6 {
                q.push(0, pid, 1500, &mut l);
            }
            assert_eq!((q.total, q.prio_bytes(0), q.prio_bytes(1)), (9000, 4500, 4500));
            assert!(!q.fits(0, 1));
        }
    }
}

#[test]
#[should_panic(expected = "buffer bound violated")]
fn egress_per_priority_still_bounds_each_priority() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(3000).sharing(0);
    q.push(2, 1, 1500, &mut l);
    q.push(2, 2, 1500, &mut l);
    q.push(2, 3, 1500, &mut l);
}

#[test]
fn the_room_test_is_the_sharing_rule_with_the_share_precomputed() {
    // fits with the share cap / n computed once (and again when the bound changes) must say what the
    // rule says: the whole within cap (unless parts is 0), the priority's bytes times n within cap
    let rule = |q: &IngressQueue, cap: u64, parts: u8, prio: u8, wire: u64| {
        let (total, mine) = (q.total as u128, q.prio_bytes(prio) as u128 + wire as u128);
        let (cap, wire) = (cap as u128, wire as u128);
        match parts {
            0 => mine <= cap,
            1 => total + wire <= cap,
            n => total + wire <= cap && mine * n as u128 <= cap,
        }
    };
    let mut checked = 0;
    for parts in [0u8, 1, 2, 3, 7, 8] {
        for (cap, limit) in [(12_000u64, None), (12_007, None), (9_001, Some(7_777u64)), (MAX_CAP, None), (u64::MAX, None), (u64::MAX, Some(4_500))] {
            let mut l: Vec<PacketId> = Vec::new();
            let mut q = IngressQueue::new(cap).sharing(parts);
            if let Some(lim) = limit {
                q.set_cap(lim);
            }
            let cap = limit.unwrap_or(cap);
            assert_eq!(q.cap(), cap);
            let mut pid = 0;
            for (prio, size) in [(1u8, 700u64), (1, 1500), (0, 64), (3, 1500), (1, 1500), (0, 1500), (1, 999)].into_iter().cycle().take(60) {
                for wire in [0, 1, 63, 64, 700, 1500, 1501, 4096] {
                    for p in [0u8, 1, 3] {
                        assert_eq!(q.fits(p, wire), rule(&q, cap, parts, p, wire), "parts {parts}, cap {cap}, prio {p}, wire {wire}, total {}", q.total);
                        checked += 1;
                    }
                }
                if q.fits(prio, size) {
                    pid += 1;
                    q.push(prio, pid, size, &mut l);
                }
            }
            assert_eq!(q.max_total(), q.total, "nothing left: the peak is what it holds");
        }
    }
    assert!(checked > 40_000);
}

#[test]
fn a_split_buffer_gives_each_priority_its_part_and_all_of_them_the_whole() {
    let mut l: Vec<PacketId> = Vec::new();
    // 128 KB in eighths: 16,384 B per priority
    let mut q = IngressQueue::new(131_072).sharing(BufferSharing::Eighths.parts(2));
    let mut pid = 0;
    while q.fits(1, 1500) {
        pid += 1;
        q.push(1, pid, 1500, &mut l);
    }
    assert_eq!(q.prio_bytes(1), 15_000, "ten 1500 B frames fit in 16,384 B, an eleventh does not");
    assert!(q.fits(1, 1384) && !q.fits(1, 1385), "the part is floor(cap / 8) exactly");
    assert!(q.fits(0, 1500), "a full low priority leaves the high priority its part");
    // in use: two priorities share 128 KB in halves, and a third priority only within the whole
    let mut q = IngressQueue::new(131_072).sharing(BufferSharing::InUse.parts(2));
    for k in 0..43 {
        q.push(1, k, 1500, &mut l);
    }
    assert_eq!(q.prio_bytes(1), 64_500);
    assert!(!q.fits(1, 1500) && q.fits(1, 1036));
    for k in 0..43 {
        q.push(0, 100 + k, 1500, &mut l);
    }
    assert_eq!(q.total, 129_000);
    assert!(q.fits(2, 2072) && !q.fits(2, 2073), "the bound holds for all priorities together");
    assert_eq!((BufferSharing::Shared.parts(3), BufferSharing::WholePerPriority.parts(3), BufferSharing::InUse.parts(0)), (1, 0, 1));
}

#[test]
#[should_panic(expected = "buffer bound violated")]
fn a_split_buffer_refuses_a_priority_beyond_its_part() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(8000).sharing(4); // 2000 B per priority
    q.push(3, 1, 1500, &mut l);
    q.push(3, 2, 1500, &mut l);
}

#[test]
#[should_panic(expected = "an unbounded queue holds 4 GiB at one priority")]
fn an_unbounded_queue_refuses_to_wrap_its_32_bit_counts() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(u64::MAX);
    q.push(1, 1, 3 << 30, &mut l);
    assert_eq!((q.total, q.prio_bytes(1)), (3 << 30, 3 << 30));
    q.push(1, 2, 3 << 30, &mut l);
}

#[test]
fn an_unbounded_queue_keeps_its_exact_peak_past_4_gib() {
    // the 32-bit peak beside the scalars saturates; the exact one keeps counting
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = IngressQueue::new(u64::MAX).sharing(3);
    q.push(1, 1, 3 << 30, &mut l);
    q.push(2, 2, 3 << 30, &mut l);
    assert!(q.fits(3, 3 << 30), "an unbounded queue fits whatever its priorities hold");
    q.push(3, 3, 3 << 30, &mut l);
    assert_eq!(q.max_total(), 9 << 30);
    q.release(3, 3 << 30);
    q.release(2, 3 << 30);
    q.push(2, 4, 1 << 30, &mut l);
    assert_eq!((q.total, q.max_total()), (4 << 30, 9 << 30), "a lower total leaves the peak");
    q.push(3, 5, 3 << 30, &mut l);
    q.push(0, 6, 3 << 30, &mut l);
    assert_eq!(q.max_total(), 10 << 30);
}

#[test]
fn the_bytes_and_list_ends_of_priorities_0_to_3_share_a_cache_line() {
    // what the layout promises (a packet of priority 0-3 touches the scalars' line and one more)
    let q = EgressQueue::new(1 << 20, Scheduling::StrictPriority);
    let base = &q as *const _ as usize;
    let line = |p: *const u8| (p as usize - base) / 64;
    assert_eq!(line(&q.total as *const u64 as *const u8), 0);
    assert_eq!(line(&q.cap as *const u64 as *const u8), 0);
    assert_eq!(line(&q.share as *const u32 as *const u8), 0);
    assert_eq!(line(&q.peak as *const u32 as *const u8), 0);
    assert_eq!(line(&q.per.bytes[7] as *const u32 as *const u8), 1);
    assert_eq!(line(&q.per.ends[3].tail as *const u32 as *const u8), 1);
    assert_eq!(line(&q.per.ends[4].head as *const u32 as *const u8), 2);
    assert_eq!(base % 64, 0);
}

#[test]
fn priority_eviction_evicts_only_when_the_arrival_then_fits() {
    let mut l: Vec<PacketId> = Vec::new();
    let wire = |_: PacketId| 1500;
    let mut q = IngressQueue::new(10_000);
    for pid in 1..=4 {
        q.push(0, pid, 1500, &mut l); // 6000 B of priority 0
    }
    q.push(3, 10, 1500, &mut l);
    q.push(3, 11, 1500, &mut l); // 3000 B of priority 3
    let mut v = Vec::new();
    // a 1500 B priority-1 arrival needs 500 B: the newest priority-3 packet goes
    assert!(q.evict_lower_for(1, 1500, 0, &l, wire, &mut v));
    assert_eq!(v, vec![(3, 11)]);
    q.release(3, 1500);
    // 8500 B held; a 3000 B arrival needs 1500 B, but the 1500 B of priority 3 are crossing the crossbar
    assert!(!q.evict_lower_for(1, 3000, 1500, &l, wire, &mut v));
    assert!(v.is_empty());
    assert_eq!(q.len_of(3, &l), 1, "nothing evicted when the arrival would not fit anyway");
    // a priority-3 arrival may not evict its own priority; a priority-0 arrival of 3000 B can use it
    assert!(!q.evict_lower_for(3, 3000, 0, &l, wire, &mut v));
    assert!(q.evict_lower_for(0, 3000, 0, &l, wire, &mut v));
    assert_eq!(v, vec![(3, 10)]);
}

#[test]
fn las_sends_the_lowest_rank_first_earliest_on_ties() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = EgressQueue::new(1 << 20, Scheduling::Las);
    assert!(q.ranked());
    // (packet, rank): two flows; packets 2 and 4 tie at rank 0
    for (pid, rank, flow) in [(1, 3000, 7), (2, 0, 9), (3, 1500, 7), (4, 0, 7), (5, 1500, 9)] {
        q.reserve(0, 100);
        q.enlist(0, pid, rank, flow, &mut l);
    }
    let order: Vec<PacketId> = std::iter::from_fn(|| q.pop_next(0xff, &l).map(|x| x.1)).collect();
    assert_eq!(order, vec![2, 4, 3, 5, 1]);
    assert_eq!(q.nonempty, 0);
    q.reserve(0, 100);
    q.enlist(0, 6, 0, 7, &mut l);
    assert_eq!(q.next_hint(0xff), None, "no hint under a rank discipline");
    assert_eq!(q.evict_worse(0), None, "LAS never evicts");
}

#[test]
fn pfabric_sends_the_earliest_packet_of_the_best_flow_and_evicts_the_worst() {
    let mut l: Vec<PacketId> = Vec::new();
    let mut q = EgressQueue::new(1 << 20, Scheduling::Pfabric);
    // flow 7 queued 1 then 3 (remaining 9000 then 4000: its later packet ranks better); flow 9: 2 (6000)
    for (pid, prio, rank, flow) in [(1, 2, 9000, 7), (2, 0, 6000, 9), (3, 2, 4000, 7)] {
        q.reserve(prio, 100);
        q.enlist(prio, pid, rank, flow, &mut l);
    }
    assert_eq!(q.nonempty, 0b101);
    // the best rank is packet 3 (flow 7): flow 7's earliest packet, 1, leaves first
    assert_eq!(q.pop_next(0xff, &l), Some((2, 1)));
    // eviction takes the worst rank only if strictly worse than the arrival's
    assert_eq!(q.evict_worse(6000), None);
    assert_eq!(q.evict_worse(5999), Some((0, 2)));
    assert_eq!(q.pop_next(0xff, &l), Some((2, 3)));
    assert_eq!(q.pop_next(0xff, &l), None);
    assert_eq!(q.nonempty, 0);
}
