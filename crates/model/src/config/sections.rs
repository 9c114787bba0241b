//! Scenario sections that are not `[scheme]` knob tables (no preset gives them a value) declared the way the
//! knobs are: each key once, with its type, unit, default, check and meaning. The struct serde reads, its
//! checks (the error names the dotted key) and the scenario reference's table (`section_table`, rendered
//! into docs/scenarios.md by `detailsim reference --update-docs`) all come from the one declaration.
//!
//! A key is one line of a `section!` block: `name: Type, "unit", || the default as the reference shows it,
//! |v| check of a set value (Ok or Err(message)), "meaning";`.

use super::knobs::size;
use super::ConfigError;
use crate::topology::{SHARED_ALPHA, SHARED_PFC_ALPHA, SHARED_RESUME_OFFSET};
use crate::units::Bytes;
use serde::Deserialize;

/// One key of a declared section, as the scenario reference shows it.
pub struct Field {
    /// The dotted key, e.g. `topology.shared_buffer.alpha`.
    pub key: &'static str,
    pub unit: &'static str,
    /// The default, as the reference shows it (from the constant the model uses).
    pub default: fn() -> String,
    pub meaning: &'static str,
}

macro_rules! section {
    (
        $(#[$sm:meta])*
        pub struct $name:ident ($prefix:literal, $table:ident) {
            $( $field:ident : $ty:ty, $unit:literal, || $default:expr, |$v:ident| $check:expr, $meaning:literal; )*
        }
    ) => {
        $(#[$sm])*
        #[derive(Deserialize, Debug, Clone, Default)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $( pub $field: Option<$ty>, )*
        }

        impl $name {
            /// Check every key the scenario sets (the error names its dotted key).
            pub fn check_keys(&self) -> Result<(), ConfigError> {
                $(
                    if let Some($v) = self.$field.clone() {
                        let r: Result<(), String> = $check;
                        r.map_err(|msg| ConfigError { field: concat!($prefix, stringify!($field)).into(), msg })?;
                    }
                )*
                Ok(())
            }
        }

        /// The reference rows of this section, in order.
        pub const $table: &[Field] = &[
            $( Field { key: concat!($prefix, stringify!($field)), unit: $unit, default: || $default, meaning: $meaning }, )*
        ];
    };
}

fn check(ok: bool, msg: impl Into<String>) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg.into())
    }
}

const TB: u64 = 1 << 40;

section! {
    /// `[topology.shared_buffer]` (see `mechanisms::mmu`): every switch's ports draw on one pool (a
    /// shared-buffer switch) instead of DeTail's per-port ingress and egress buffers and crossbar.
    pub struct SharedBufferConfig ("topology.shared_buffer.", SHARED_BUFFER_FIELDS) {
        size: Bytes, "size", || "required".into(),
            |v| check(v.0 > 0 && v.0 < TB, format!("must be between 1B and 1TB, got {}B", v.0)),
            "the pool of each switch. It must leave a shared part after every reserve and headroom; the error says how much they take";
        alpha: f64, "number > 0", || format!("`{SHARED_ALPHA:?}`"),
            |v| check(v > 0.0 && v.is_finite(), format!("must be a number > 0, got {v}")),
            "Choudhury and Hahne's dynamic threshold for lossy traffic (every priority without PFC, and every priority when `flow_control` is not `pfc`): an arrival enters while its egress queue of that priority plus the arrival stays within `alpha` × the free shared bytes (and the shared part has room); otherwise it is dropped (cause `ingress_buffer`: the switch's buffer refused it) or, under DIBS, detoured to a random other switch port the MMU admits it to. With one busy queue it settles at alpha / (1 + alpha) of the shared part: half with 1";
        pfc_alpha: f64, "number in (0, 1]", || format!("`{SHARED_PFC_ALPHA:?}`"),
            |v| check(v > 0.0 && v <= 1.0, format!("must be a number in (0, 1], got {v}")),
            "PFC's dynamic threshold (the HPCC simulator's `use_dynamic_pfc_threshold`, its `pfc_a_shift` of 3): an ingress port's lossless priority sends PAUSE when its shared use (its bytes beyond the reserve) reaches `pfc_alpha` × the free shared bytes, or when anything is in its headroom; arrivals past the threshold go to the headroom";
        resume_offset: Bytes, "size", || format!("{} ({SHARED_RESUME_OFFSET} B, the HPCC simulator's)", size(SHARED_RESUME_OFFSET)),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "UNPAUSE once the priority's headroom is empty and its shared use is 0 or at least this far below the threshold";
        reserve: Bytes, "size", || size(0),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "bytes reserved for each (ingress port, priority), eight priorities per port, used before the shared part";
        headroom: Bytes, "size", || "derived".into(),
            |v| check(v.0 < TB, format!("must be below 1TB, got {}B", v.0)),
            "bytes for each (ingress port, lossless priority) under PFC: what may still arrive after its PAUSE is sent. Derived from each port's link as `[scheme.pfc]` bounds it for DeTail's switch: the bytes of the reaction window (two full frames, a PFC frame, two link delays and 0.448 µs of processing, or `reaction_time`), of the forwarding delay, and a full frame: 24,192 B at 10 Gbps with the default 5.476 µs links. Without PFC nothing is set aside";
    }
}

impl SharedBufferConfig {
    /// The pool's settings (the keys' defaults where unset), and the headroom when set; call after
    /// `check_keys` and the `size` requirement.
    pub fn resolve(&self) -> (crate::mechanisms::mmu::MmuParams, Option<u64>) {
        let p = crate::mechanisms::mmu::MmuParams {
            size: self.size.map(|b| b.0).unwrap_or(0),
            alpha: self.alpha.unwrap_or(SHARED_ALPHA),
            pfc_alpha: self.pfc_alpha.unwrap_or(SHARED_PFC_ALPHA),
            reserve: self.reserve.map(|b| b.0).unwrap_or(0),
            resume_offset: self.resume_offset.map(|b| b.0).unwrap_or(SHARED_RESUME_OFFSET),
        };
        (p, self.headroom.map(|b| b.0))
    }
}

/// Every declared section's table, in the reference's order.
pub const SECTIONS: &[&[Field]] = &[SHARED_BUFFER_FIELDS];

/// Every key of the declared sections: (key, unit, default as shown, meaning).
pub fn section_table() -> Vec<(&'static str, &'static str, String, &'static str)> {
    SECTIONS.iter().flat_map(|t| t.iter()).map(|f| (f.key, f.unit, (f.default)(), f.meaning)).collect()
}
