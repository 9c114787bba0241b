//! # detailsim-model
//!
//! The network model of detailsim: scenario schema (`config`), topologies (`topology`), all-shortest-path
//! routing (`routing`), the mechanisms as components that know nothing of the event loop (`mechanisms`:
//! queues, PFC, forwarding, DIBS, ECN; `transport`: TCP), and the simulator that drives them (`sim`: the
//! event loop, the CIOQ switch, hosts, faults, workloads), with results in `stats`.
//!
//! Three stages: **build** (`Sim::from_json` validates the scenario and wires nodes, ports, routes),
//! **run** (`Sim::run` or `Sim::run_until` in steps), **read** (`Sim::flows`, `Sim::summary_json`).
//!
//! ```
//! let mut sim = detailsim_model::Sim::from_json(r#"{
//!     "run": {"duration": "5ms"},
//!     "topology": {"kind": "single_switch", "hosts": 4},
//!     "workload": [{"kind": "retrieval", "rate": 1000, "sizes": ["8KB"]}]
//! }"#).unwrap();
//! sim.run();
//! assert!(sim.rec.flows.len() > 0);
//! assert!(sim.check_conservation().is_ok());
//! ```

pub mod config;
pub mod fabric;
pub mod live;
pub mod mechanisms;
pub mod packet;
pub mod routing;
pub mod sim;
pub mod stats;
pub mod topology;
pub mod transport;
pub mod units;

/// RNG purposes (the second half of a stream's seed, the first being the component: a node, a workload).
pub mod purpose {
    pub const SALT: u64 = 1;
    pub const SCATTER: u64 = 2;
    pub const ARRIVALS: u64 = 3;
    pub const BACKGROUND: u64 = 4;
}

pub use config::{parse_scenario, ConfigError, Scenario, PRESETS};
pub use sim::Sim;
