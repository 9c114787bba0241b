//! Quantities with units written in strings: rates ("1Gbps"), durations ("25us"), sizes ("128KB").
//!
//! Sizes use binary multiples: 1 KB = 1024 B (so "128KB" = 131072 B, as in the DeTail paper's PFC
//! derivation); "KiB"/"MiB" are accepted as synonyms.

use detailsim_engine::{Rate, Time};
use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

fn split_num(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s.char_indices().find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+')).map(|(i, _)| i).unwrap_or(s.len());
    let (n, u) = s.split_at(end);
    let v: f64 = n.parse().ok()?;
    Some((v, u.trim()))
}

pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let help = "a positive rate such as \"1Gbps\" (units bps, Kbps, Mbps, Gbps, Tbps)";
    let (v, u) = split_num(s).ok_or_else(|| format!("expected {help}, got {s:?}"))?;
    // the prefix's case does not matter; the b of bps must be a small one: "GBps" is bytes per second,
    // which a rate in bits must not silently take for 1/8 of itself
    let (prefix, per_s) = u.split_at(u.len().saturating_sub(3));
    if per_s.len() == 3 && per_s.starts_with('B') && per_s[1..].eq_ignore_ascii_case("ps") {
        return Err(format!("expected {help}, got {s:?}: rates are in bits per second (a capital B is bytes; 1GBps is 8Gbps)"));
    }
    if per_s != "bps" {
        return Err(format!("expected {help}, got {s:?}"));
    }
    let mult = match prefix.to_ascii_lowercase().as_str() {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return Err(format!("expected {help}, got {s:?}")),
    };
    let bps = v * mult;
    if !bps.is_finite() || bps < 1.0 {
        return Err(format!("expected {help}, got {s:?}"));
    }
    if bps > 100e12 {
        return Err(format!("expected {help} of at most 100Tbps, got {s:?}"));
    }
    Ok(Rate(bps.round() as u64))
}

pub fn parse_duration(s: &str) -> Result<Time, String> {
    let help = "a non-negative duration such as \"25us\" (units ps, ns, us, ms, s)";
    let (v, u) = split_num(s).ok_or_else(|| format!("expected {help}, got {s:?}"))?;
    let mult = match u {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return Err(format!("expected {help}, got {s:?}")),
    };
    let ps = v * mult;
    if !ps.is_finite() || ps < 0.0 {
        return Err(format!("expected {help}, got {s:?}"));
    }
    // 10^6 s (11.6 days) keeps sums of several durations inside the 64-bit picosecond clock
    if ps > 1e18 {
        return Err(format!("expected {help} of at most 1000000s, got {s:?}"));
    }
    Ok(Time(ps.round() as u64))
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let help = "a non-negative size such as \"128KB\" (units B, KB, MB, GB; 1 KB = 1024 B) or \"inf\"";
    if s.trim() == "inf" {
        return Ok(u64::MAX);
    }
    let (v, u) = split_num(s).ok_or_else(|| format!("expected {help}, got {s:?}"))?;
    let mult = match u {
        "" | "B" => 1.0,
        "KB" | "KiB" => 1024.0,
        "MB" | "MiB" => 1024.0 * 1024.0,
        "GB" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("expected {help}, got {s:?}")),
    };
    let b = v * mult;
    if !b.is_finite() || b < 0.0 || b.fract() != 0.0 {
        return Err(format!("expected {help} that is a whole number of bytes, got {s:?}"));
    }
    if b > (1u64 << 62) as f64 {
        return Err(format!("expected {help} of at most 4194304TB (use \"inf\" for an unbounded buffer), got {s:?}"));
    }
    Ok(b as u64)
}

/// Format a byte count with the largest unit that divides it exactly ("2KB", "1MB", "1500B").
pub fn fmt_bytes(b: u64) -> String {
    const G: u64 = 1 << 30;
    const M: u64 = 1 << 20;
    const K: u64 = 1 << 10;
    if b >= G && b.is_multiple_of(G) {
        format!("{}GB", b / G)
    } else if b >= M && b.is_multiple_of(M) {
        format!("{}MB", b / M)
    } else if b >= K && b.is_multiple_of(K) {
        format!("{}KB", b / K)
    } else {
        format!("{b}B")
    }
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $expect:expr, $int:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        if $int {
                            $parse(&v.to_string()).map($name).map_err(E::custom)
                        } else {
                            Err(E::custom(format!("expected {}, got the bare number {v}: write the unit", $expect)))
                        }
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        if v >= 0 {
                            self.visit_u64(v as u64)
                        } else {
                            Err(E::custom(format!("expected {}, got {v}", $expect)))
                        }
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got the bare number {v}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// A queue length: bytes, or packets (RED thresholds may be given in either).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QLen {
    Bytes(u64),
    Packets(u64),
}

pub fn parse_qlen(s: &str) -> Result<QLen, String> {
    let t = s.trim();
    for suffix in ["packets", "packet", "pkts", "pkt"] {
        if let Some(n) = t.strip_suffix(suffix) {
            return n
                .trim()
                .parse::<u64>()
                .map(QLen::Packets)
                .map_err(|_| format!("expected a whole number of packets such as \"20 packets\" or a size such as \"30KB\", got {s:?}"));
        }
    }
    parse_bytes(s).map(QLen::Bytes).map_err(|e| format!("{e}, or a number of packets such as \"20 packets\""))
}

unit_type!(RateV, Rate, parse_rate, "a rate string such as \"1Gbps\"", false);
unit_type!(QueueLen, QLen, parse_qlen, "a queue length such as \"20 packets\" or \"30KB\"", true);
unit_type!(Dur, Time, parse_duration, "a duration string such as \"25us\"", false);
unit_type!(Bytes, u64, parse_bytes, "a size such as \"128KB\" or a number of bytes", true);

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn rates() {
        assert_eq!(parse_rate("1Gbps").unwrap(), Rate::gbps(1));
        assert_eq!(parse_rate("250Mbps").unwrap(), Rate::mbps(250));
        assert_eq!(parse_rate("2.5Gbps").unwrap(), Rate(2_500_000_000));
        assert!(parse_rate("-1Gbps").is_err());
        assert!(parse_rate("1Gb").is_err());
        // the prefix in either case, but bytes per second refused, naming the mistake
        assert_eq!(parse_rate("1gbps").unwrap(), Rate::gbps(1));
        assert_eq!(parse_rate("10kbps").unwrap(), Rate(10_000));
        for bytes in ["1GBps", "1GBPS", "1Bps", "100MBps"] {
            let e = parse_rate(bytes).unwrap_err();
            assert!(e.contains("bits per second") && e.contains("1GBps is 8Gbps"), "{bytes}: {e}");
        }
        assert!(parse_rate("1GbPS").is_err());
        assert!(parse_rate("fast").is_err());
    }
    #[test]
    fn durations() {
        assert_eq!(parse_duration("4.224us").unwrap(), Time(4_224_000));
        assert_eq!(parse_duration("0.5s").unwrap(), Time::from_ms(500));
        assert_eq!(parse_duration("10ms").unwrap(), Time::from_ms(10));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10").is_err());
    }
    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("128KB").unwrap(), 131072);
        assert_eq!(parse_bytes("1MB").unwrap(), 1 << 20);
        assert_eq!(parse_bytes("10B").unwrap(), 10);
        assert_eq!(parse_bytes("1530").unwrap(), 1530);
        assert!(parse_bytes("1.5B").is_err());
        assert_eq!(fmt_bytes(2048), "2KB");
        assert_eq!(fmt_bytes(1 << 20), "1MB");
        assert_eq!(fmt_bytes(1500), "1500B");
    }
}
