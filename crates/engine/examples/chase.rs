//! What a dependent load costs on this machine by working set, in 4 KB pages and in huge pages: a
//! pointer chase through one cache line per step, in a random cycle over the whole set.
//!   cargo run --release -p detailsim-engine --example chase [MiB ...]
//! (default 0.25 1 4 16 32 64). A large fabric's events pay this for every line not in cache: where the
//! huge-page column is well below the other, the run's page walks miss too (docs/benchmarks.md, "Huge pages").
use detailsim_engine::{HugePages, RngStreams};
use std::alloc::{GlobalAlloc, Layout, System};
use std::time::Instant;

/// Nanoseconds per load of a chase through `bytes` allocated by `a`.
fn chase(a: &dyn GlobalAlloc, bytes: usize, steps: u64) -> f64 {
    let n = bytes / 64;
    let layout = Layout::from_size_align(n * 64, 64).expect("layout");
    // SAFETY: the block is n cache lines, each written (its first word) before the chase reads it
    let base = unsafe { a.alloc(layout) } as *mut usize;
    assert!(!base.is_null(), "out of memory");
    // a random cycle through the lines (Sattolo's shuffle)
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = RngStreams::new(1).stream(0, 0);
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64) as usize);
    }
    for i in 0..n {
        unsafe { *base.add(order[i] * 8) = order[(i + 1) % n] * 8 };
    }
    let mut p = 0usize;
    for _ in 0..n.min(1 << 20) {
        p = unsafe { *base.add(p) };
    }
    let t = Instant::now();
    for _ in 0..steps {
        p = unsafe { *base.add(p) };
    }
    let ns = t.elapsed().as_nanos() as f64 / steps as f64;
    std::hint::black_box(p);
    unsafe { a.dealloc(base as *mut u8, layout) };
    ns
}

fn main() {
    let sizes: Vec<f64> = std::env::args().skip(1).map(|s| s.parse().expect("a size in MiB")).collect();
    let sizes = if sizes.is_empty() { vec![0.25, 1.0, 4.0, 16.0, 32.0, 64.0] } else { sizes };
    println!("{:>9} {:>12} {:>12}", "MiB", "4 KB pages", "huge pages");
    for mib in sizes {
        let bytes = ((mib * (1 << 20) as f64) as usize).max(4096);
        let steps = 20_000_000;
        println!("{mib:>9} {:>9.1} ns {:>9.1} ns", chase(&System, bytes, steps), chase(&HugePages, bytes, steps));
    }
}
