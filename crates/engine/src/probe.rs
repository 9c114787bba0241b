//! What one dependent load costs on this machine, by working set: a pointer chase through one cache line
//! per step, in a random cycle over the whole set, so that neither the prefetchers nor the order of the
//! lines help. A large fabric's events pay this for every line not in cache (docs/benchmarks.md, "The
//! machine's memory on the day"); `benches/bench.py` stores it with each run of the suite, and
//! `detailsim._core.load_latency_ns` gives it from Python.

use crate::rng::RngStreams;
use std::time::Instant;

/// Words per 64-byte cache line.
const LINE: usize = 64 / std::mem::size_of::<usize>();

/// A random permutation of `0..n` that is one cycle (Sattolo's algorithm): following `next` from any
/// slot visits every slot once before it comes back.
pub fn single_cycle(n: usize, seed: u64) -> Vec<u32> {
    assert!(n >= 1 && n <= u32::MAX as usize, "single_cycle: n = {n} is not in 1..=2^32-1");
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut rng = RngStreams::new(seed).stream(0, 0);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64) as usize);
    }
    // `order` lists the cycle; each slot points at the one after it
    let mut next = vec![0u32; n];
    for i in 0..n {
        next[order[i] as usize] = order[(i + 1) % n];
    }
    next
}

/// Nanoseconds per dependent load through `bytes` of memory (at least one line), averaged over `steps`
/// loads after one pass (at most 2^20 loads) to warm the caches and the TLB.
pub fn load_latency_ns(bytes: usize, steps: u64) -> f64 {
    let n = (bytes / 64).max(1);
    let next = single_cycle(n, 1);
    // line i's first word holds the index (in words) of the next line's first word
    let mut mem = vec![0usize; n * LINE];
    for (i, &j) in next.iter().enumerate() {
        mem[i * LINE] = j as usize * LINE;
    }
    drop(next);
    chase(&mem, n, steps)
}

/// Words per 4 KiB page.
const PAGE: usize = 4096 / std::mem::size_of::<usize>();

/// As `load_latency_ns`, but one line per 4 KiB page of the `bytes` (at least one page), the pages in a
/// random cycle and the line's place in its page spread over the page's 64 (so that the lines do not all
/// share a cache set): the same pages as `load_latency_ns` touches through a 64th of the data. Where this
/// stays cheap while `load_latency_ns` of the same size does not, what a load pays is the data's distance,
/// not the translation of its page.
pub fn page_latency_ns(bytes: usize, steps: u64) -> f64 {
    let n = (bytes / 4096).max(1);
    chase(&page_cycle(n), n, steps)
}

/// `n` pages of words in which one line per page links to the next page's in a random cycle that starts at
/// word 0 (`page_latency_ns`); page k's line is its (37 k mod 64)-th.
fn page_cycle(n: usize) -> Vec<usize> {
    let next = single_cycle(n, 1);
    let at = |k: usize| k * PAGE + (k * 37 % 64) * LINE;
    let mut mem = vec![0usize; n * PAGE];
    for (i, &j) in next.iter().enumerate() {
        mem[at(i)] = at(j as usize);
    }
    mem
}

/// Nanoseconds per step of the pointer chase through `mem` (whose `n` links form one cycle from word 0's
/// line), after one pass (at most 2^20 steps) to warm the caches and the TLB.
fn chase(mem: &[usize], n: usize, steps: u64) -> f64 {
    let mut p = 0usize;
    for _ in 0..n.min(1 << 20) {
        p = mem[p];
    }
    let t = Instant::now();
    for _ in 0..steps {
        p = mem[p];
    }
    let ns = t.elapsed().as_nanos() as f64 / steps.max(1) as f64;
    std::hint::black_box(p);
    ns
}

/// The size in bytes of one core's level-2 cache as the kernel gives it
/// (`/sys/devices/system/cpu/cpu0/cache/index*/`), read once; None where it does not say (not Linux, no
/// such level). The loop's prefetch stages start where a fabric's ports outgrow it (`Sim::prefetch_next`).
pub fn l2_bytes() -> Option<u64> {
    static L2: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *L2.get_or_init(|| l2_bytes_in(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache")))
}

/// `l2_bytes` read from the cache directory `dir` (one `index*` folder per cache, with `level`, `type`
/// and `size`: "2048K", "1M" or bytes).
pub fn l2_bytes_in(dir: &std::path::Path) -> Option<u64> {
    let mut found = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let d = e.path();
        let read = |f: &str| std::fs::read_to_string(d.join(f)).ok().map(|s| s.trim().to_string());
        if read("level").as_deref() != Some("2") || read("type").as_deref() == Some("Instruction") {
            continue;
        }
        found = read("size").and_then(|s| parse_size(&s)).or(found);
    }
    found
}

/// "2048K" -> 2 MiB, "1M" -> 1 MiB, "524288" -> 512 KiB; None for anything else.
fn parse_size(s: &str) -> Option<u64> {
    let (num, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: u64 = num.parse().ok()?;
    let k = match unit {
        "" => 1,
        "K" | "k" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(k).filter(|&b| b > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_every_slot_once() {
        for n in [1usize, 2, 3, 64, 1000] {
            let next = single_cycle(n, 7);
            let mut seen = vec![false; n];
            let mut p = 0usize;
            for _ in 0..n {
                assert!(!seen[p], "n = {n}: slot {p} visited twice");
                seen[p] = true;
                p = next[p] as usize;
            }
            assert_eq!(p, 0, "n = {n}: back at the start after n steps");
            assert!(seen.iter().all(|&s| s));
        }
        // a random order, not the identity's successor
        let next = single_cycle(1000, 7);
        assert!(next.iter().enumerate().filter(|&(i, &j)| j as usize == (i + 1) % 1000).count() < 10);
    }

    #[test]
    fn both_chases_time_a_load() {
        // one line per page and one line per step: both warm, both positive (their sizes' order is the
        // machine's, not a test's)
        for f in [load_latency_ns, page_latency_ns] {
            let ns = f(1 << 20, 10_000);
            assert!(ns > 0.0 && ns.is_finite(), "{ns}");
        }
        assert!(page_latency_ns(100, 10) > 0.0, "less than a page is one page");
    }

    #[test]
    fn the_page_chase_reads_one_line_of_every_page() {
        // from word 0 the chase visits each of the n pages once, at one line start per page, and comes back
        let n = 300;
        let mem = page_cycle(n);
        let (mut seen, mut lines, mut p) = (vec![false; n], std::collections::BTreeSet::new(), 0usize);
        for _ in 0..n {
            assert_eq!(p % LINE, 0, "a line's first word");
            assert!(!std::mem::replace(&mut seen[p / PAGE], true), "page {} visited twice", p / PAGE);
            lines.insert(p % PAGE / LINE);
            p = mem[p];
        }
        assert_eq!(p, 0);
        assert!(seen.iter().all(|&s| s));
        assert_eq!(lines.len(), 64, "the lines spread over every place in a page");
    }

    #[test]
    fn the_l2_is_read_from_the_kernels_cache_folders() {
        let dir = std::env::temp_dir().join(format!("detailsim-l2-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (i, (level, kind, size)) in
            [("1", "Data", "48K"), ("1", "Instruction", "32K"), ("2", "Unified", "2048K"), ("3", "Unified", "266240K")].iter().enumerate()
        {
            let d = dir.join(format!("index{i}"));
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [("level", level), ("type", kind), ("size", size)] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        assert_eq!(l2_bytes_in(&dir), Some(2 << 20));
        std::fs::write(dir.join("index2").join("size"), "512K\n").unwrap();
        assert_eq!(l2_bytes_in(&dir), Some(512 << 10));
        // no level 2 (or no folder at all): the kernel does not say
        std::fs::write(dir.join("index2").join("level"), "4\n").unwrap();
        assert_eq!(l2_bytes_in(&dir), None);
        assert_eq!(l2_bytes_in(&dir.join("none")), None);
        std::fs::remove_dir_all(&dir).unwrap();
        for (s, b) in [("2048K", Some(2u64 << 20)), ("1M", Some(1 << 20)), ("524288", Some(524_288)), ("0K", None), ("12Q", None), ("", None), ("K", None)] {
            assert_eq!(parse_size(s), b, "{s:?}");
        }
    }

    #[test]
    fn a_chase_takes_time_per_load() {
        let ns = load_latency_ns(64 << 10, 100_000);
        assert!(ns.is_finite() && ns > 0.0, "{ns}");
    }
}
