//! A scenario run as it is and split in parts (`run_in_parts`), taking turns on one thread and on a
//! thread per part: a hash of the whole flow table (every column, in order) and wall times.
//!   cargo run --release --example split_run -- scenario.json [which] [parts]
//! `which`: `all` (default), or `serial`, `parts1` (taking turns) or `parts2` (a thread per part) alone
//! (for timing one); `parts`: how many (2 by default). Exit status 1 when the digests differ.
use std::time::Instant;

/// As the Python module: large blocks on transparent huge pages (`detailsim_engine::hugepages`).
#[global_allocator]
static ALLOC: detailsim_engine::HugePages = detailsim_engine::HugePages;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: split_run SCENARIO.json [all|serial|parts1|parts2]");
    let which = args.next().unwrap_or_else(|| "all".into());
    let parts: u8 = args.next().map_or(2, |n| n.parse().expect("parts: a number"));
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read scenario")).expect("JSON");
    json["run"]["event_order"] = "node".into();
    let text = json.to_string();
    let fail = |e: detailsim_model::config::ConfigError| -> ! {
        eprintln!("error: {e}");
        std::process::exit(2)
    };
    let mut digests = Vec::new();
    for kind in ["serial", "parts1", "parts2"] {
        if which != "all" && which != kind {
            continue;
        }
        let t = Instant::now();
        let sim = match kind {
            "serial" => {
                let mut s = detailsim_model::Sim::from_json(&text).unwrap_or_else(|e| fail(e));
                s.run();
                s
            }
            k => detailsim_model::sim::parts::run_in_parts(
                &text,
                parts,
                if k == "parts2" { detailsim_model::sim::parts::Drive::Threads } else { detailsim_model::sim::parts::Drive::Turns },
            )
            .unwrap_or_else(|e| fail(e)),
        };
        let d = table_hash(&sim);
        println!(
            "{kind:7} {:016x} {:.3} s  events {} flows {} delivered {} end {:.6} s",
            d,
            t.elapsed().as_secs_f64(),
            sim.rec.counters.events,
            sim.rec.flows.len(),
            sim.rec.counters.pkts_delivered,
            sim.now.as_secs_f64()
        );
        digests.push(d);
    }
    if digests.windows(2).any(|w| w[0] != w[1]) {
        println!("different");
        std::process::exit(1);
    }
}

/// FNV-1a over every column of the flow table, row by row, and the drop and packet counters.
fn table_hash(sim: &detailsim_model::Sim) -> u64 {
    let f = &sim.rec.flows;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    for i in 0..f.len() {
        for v in [f.id[i], f.class[i] as u64, f.src[i] as u64, f.dst[i] as u64, f.size[i], f.priority[i] as u64, f.start_ps[i], f.end_ps[i]] {
            eat(v);
        }
        for v in [f.timeouts[i] as u64, f.retransmits[i] as u64, f.ideal_ps[i], f.bytes_delivered[i], f.window_bytes[i]] {
            eat(v);
        }
    }
    let c = &sim.rec.counters;
    for v in [c.dropped(), c.pkts_delivered, c.pkts_created, c.timeouts, c.retransmits, c.link_traversals, c.pfc_pause_frames] {
        eat(v);
    }
    h
}
