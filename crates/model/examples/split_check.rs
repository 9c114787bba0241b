//! Whether a scenario's nodes interact only through events at least a window apart, so that a run split
//! between two threads would give the same results: runs it with `run.event_order = "node"` as it is and
//! on the split schedule (`Sim::emulate_split`), and compares their outcomes (`Sim::outcome_digest`).
//!   cargo run --release --example split_check -- scenario.json
//! Exit status 0: same outcome; 1: different; a panic names an interaction faster than the window.
fn main() {
    let path = std::env::args().nth(1).expect("usage: split_check SCENARIO.json");
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read scenario")).expect("JSON");
    json["run"]["event_order"] = "node".into();
    let text = json.to_string();
    let run = |split: bool| {
        let mut sim = detailsim_model::Sim::from_json(&text).unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2)
        });
        if split {
            let w = sim.emulate_split().unwrap_or_else(|e| panic!("{e}"));
            println!("window {:.3} us", w as f64 / 1e6);
        }
        sim.run_until(detailsim_engine::Time::MAX);
        (sim.outcome_digest(), sim.counters.events)
    };
    let (a, b) = (run(false), run(true));
    println!("as is: outcome {:016x}, {} events", a.0, a.1);
    println!("split: outcome {:016x}, {} events", b.0, b.1);
    // (event counts may differ: lapsed timers are dropped from the queue in batches whose timing depends on
    // the whole queue)
    if a.0 != b.0 {
        println!("different");
        std::process::exit(1);
    }
    println!("same");
}
