//! The mechanisms as components: each owns its state, takes `now` and an input, and returns (or pushes to
//! an output buffer) what to do. None knows the event loop; `sim/` drives them, and a live forwarder can
//! drive the same code.
pub mod crossbar;
pub mod dibs;
pub mod ecn;
pub mod forwarding;
pub mod mmu;
pub mod nic;
pub mod pfc;
pub mod pias;
pub mod queue;
pub mod red;
