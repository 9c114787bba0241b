//! Live mode's forwarding core: the simulator's components (queues, PFC, forwarding, ECN markers) driven by
//! real Ethernet frames instead of simulated packets. Pure: no sockets, no clock. The I/O loop (AF_PACKET
//! rings, pacing clock) lives in the Python extension crate and the namespaces in `detailsim.live`.
pub mod fabric;
pub mod frame;

pub use fabric::{Fabric, Out, Target};
