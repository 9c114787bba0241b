//! A part of a split run that panics ends the run, on any thread, at once: the other parts stop waiting
//! at the barrier (they would otherwise wait there forever) and the failing part's panic is the run's.
//! (Its own test binary: it sets an environment variable the parts read when they are built.)

use detailsim_model::sim::parts::{run_in_parts, Drive};
use std::time::{Duration, Instant};

const SCENARIO: &str = r#"{"run": {"duration": "5ms", "seed": 3, "event_order": "node"},
    "topology": {"kind": "fattree", "k": 4},
    "scheme": {"preset": "detail"},
    "workload": [{"kind": "retrieval", "rate": 2000, "sizes": ["2KB", "8KB"]}]}"#;

#[test]
fn a_panic_in_either_part_ends_the_run_with_that_panic() {
    for (parts, part) in [(2, "0"), (2, "1"), (4, "0"), (4, "2"), (4, "3")] {
        std::env::set_var("DETAILSIM_TEST_PANIC_PART", part);
        for threads in [Drive::Threads, Drive::Turns, Drive::Paced] {
            let t0 = Instant::now();
            let got = std::panic::catch_unwind(|| run_in_parts(SCENARIO, parts, threads).map(|_| ()));
            let e = got.expect_err("the run fails");
            let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
            assert_eq!(msg, format!("DETAILSIM_TEST_PANIC_PART={part} is set"), "part {part} of {parts}, {threads:?}: the failing part's panic");
            assert!(t0.elapsed() < Duration::from_secs(1), "part {part}, {threads:?}: ended in {:?}", t0.elapsed());
        }
    }
    std::env::remove_var("DETAILSIM_TEST_PANIC_PART");
    run_in_parts(SCENARIO, 4, Drive::Threads).expect("without the variable the run completes");
}
