//! pFabric's minimal rate control (Alizadeh et al., SIGCOMM 2013): the switches, not the senders, decide
//! the order, so the window changes only on a timeout (to one segment, then slow start); fast retransmit
//! resends the lost segment without a cut; no ECN reaction; the window never exceeds the path's BDP; after
//! `PROBE_AFTER` timeouts in a row the flow sends one header-only probe per timeout until an ACK returns.

use super::Controller;

/// Consecutive timeouts after which a flow only sends header-only probes until an ACK arrives.
pub const PROBE_AFTER: u32 = 5;

/// pFabric keeps no state of its own.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pfabric;

impl Controller for Pfabric {
    #[inline]
    fn loss_cuts(&self) -> bool {
        false
    }
    #[inline]
    fn undo_spurious(&self) -> bool {
        false
    }
    #[inline]
    fn probe_after(&self) -> Option<u32> {
        Some(PROBE_AFTER)
    }
    #[inline]
    fn capped_at_bdp(&self) -> bool {
        true
    }
}
