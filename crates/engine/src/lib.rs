//! # detailsim-engine
//!
//! The discrete-event core of detailsim. It knows nothing about networks:
//!
//! ```text
//!   Time (u64 picoseconds) ──► EventQueue<E> ──► pop() in (time, insertion) order
//!   RngStreams(master seed) ──► stream(component, purpose) ──► independent Xoshiro256++
//!   Arena<T> ──► dense slots with a free list, addressed by u32 index
//! ```
//!
//! Three promises:
//! 1. time is an integer number of picoseconds, so serialization delays are exact at any link speed;
//! 2. events at equal times come out in the order they were scheduled (a sequence number breaks ties);
//! 3. every random draw comes from a stream seeded by (master seed, component, purpose), so adding a
//!    component never perturbs another component's draws.
//!
//! ```
//! use detailsim_engine::{EventQueue, Time};
//! let mut q = EventQueue::new();
//! q.push(Time::from_us(2), "late");
//! q.push(Time::from_us(1), "early");
//! q.push(Time::from_us(1), "early, second");
//! assert_eq!(q.pop(), Some((Time::from_us(1), "early")));
//! assert_eq!(q.pop(), Some((Time::from_us(1), "early, second")));
//! assert_eq!(q.pop(), Some((Time::from_us(2), "late")));
//! ```

pub mod arena;
pub mod hugepages;
pub mod probe;
pub mod queue;
pub mod rng;
pub mod time;
mod wheel;

pub use arena::{Arena, StripedArena};
pub use hugepages::HugePages;
pub use queue::EventQueue;
pub use rng::{RngStreams, Stream};
pub use time::{Rate, Time};
