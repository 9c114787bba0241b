//! Run a scenario given as a JSON file and print the summary: `cargo run --release --example run_json -- s.json`.
/// As the Python module: large blocks on transparent huge pages (`detailsim_engine::hugepages`).
#[global_allocator]
static ALLOC: detailsim_engine::HugePages = detailsim_engine::HugePages;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_json SCENARIO.json");
    let json = std::fs::read_to_string(&path).expect("read scenario");
    let mut sim = detailsim_model::Sim::from_json(&json).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    let mut t = detailsim_engine::Time::ZERO;
    let mut samples = Vec::new();
    while !sim.run_until(t) {
        t += detailsim_engine::Time::from_us(500);
        samples.push(sim.pending_events());
    }
    if !samples.is_empty() {
        let mut all = samples;
        all.sort();
        let n = all.len();
        eprintln!("pending events: median {} max {}", all[n / 2], all[n - 1]);
    }
    let wall = t0.elapsed().as_secs_f64();
    let c = &sim.rec.counters;
    // a fingerprint of the flow table (end times, retransmits, delivered bytes) and the drop counters
    let f = &sim.rec.flows;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in f.end_ps.iter().chain(&f.start_ps).chain(&f.bytes_delivered).chain(std::iter::once(&c.events)) {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    for v in f.retransmits.iter().chain(&f.timeouts) {
        h = (h ^ *v as u64).wrapping_mul(0x100_0000_01b3);
    }
    println!("flow table fnv64 {h:016x}");
    println!(
        "sim {:.4}s wall {:.2}s events {} ({:.2} M/s) traversals {} ({:.2} M/s) flows {}/{} drops {} timeouts {}",
        sim.now.as_secs_f64(),
        wall,
        c.events,
        c.events as f64 / wall / 1e6,
        c.link_traversals,
        c.link_traversals as f64 / wall / 1e6,
        c.flows_completed,
        c.flows_started,
        c.dropped(),
        c.timeouts
    );
}
