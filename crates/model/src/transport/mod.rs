//! Transports. Each is a sans-IO state machine: given `now` and an input (an ACK, a segment, a timer),
//! it updates its state and appends the segments to send to an output vector; its retransmission and
//! delayed-ACK deadlines are fields the simulator reads to schedule (lazily cancelled) timer events.
//! `tcp`: the window machinery and the receiver; `cc`: the congestion controllers, one per file;
//! `params`: what both read.

pub mod cc;
pub mod params;
pub mod tcp;
