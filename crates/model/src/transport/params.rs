//! The transport's parameters after preset and overrides: what `TcpSender` and `TcpReceiver` read, and
//! each congestion controller's own parameter block. `config` maps a scenario into these.

use crate::transport::cc::dcqcn::DcqcnParams;
use crate::transport::cc::dctcp::DctcpParams;
use crate::transport::cc::hpcc::HpccParams;
use crate::transport::cc::timely::TimelyParams;
use crate::transport::cc::CongestionControl;
use detailsim_engine::Time;
use serde::Deserialize;

/// How the retransmission timeout is computed from the RTT estimate (SRTT, RTTVAR).
#[derive(Deserialize, serde::Serialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum RtoFormula {
    /// RFC 6298 (and ns-3): RTO = max(rto_min, SRTT + 4 RTTVAR).
    #[default]
    Rfc6298,
    /// Linux (`tcp_set_rto`): RTO = SRTT + max(rto_min, 4 RTTVAR), the floor on the variance term.
    Linux,
}

/// Transport parameters after preset and overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpParams {
    pub mss: u32,
    pub initial_window: u32,
    /// The receiver's advertised window: bytes in flight never exceed min(cwnd, rwnd).
    pub rwnd: u64,
    pub handshake: bool,
    pub fast_retransmit: bool,
    pub dupack_threshold: u32,
    pub rto_min: Time,
    pub rto_initial: Time,
    pub rto_max: Time,
    pub rto_formula: RtoFormula,
    pub delayed_ack: bool,
    pub delayed_ack_timeout: Time,
    pub ecn: bool,
    /// Off: no retransmission timer and no fast retransmit (the paper's Section 3.3 study with
    /// infinite buffers, where nothing is lost).
    pub retransmissions: bool,
    pub cc: CongestionControl,
    /// DCTCP's (and L2DCT's) estimator gain.
    pub dctcp: DctcpParams,
    /// PIAS MLFQ demotion thresholds (bytes sent); empty: no tagging.
    pub mlfq: Vec<u64>,
    /// Start every flow at line rate: the initial window is the bandwidth-delay product of its path
    /// (sender's link rate x base RTT), overriding `initial_window`.
    pub line_rate_start: bool,
    /// When positive: the minimum and initial RTO are this many base RTTs of the flow's path, overriding
    /// `rto_min` and `rto_initial`.
    pub rto_rtts: f64,
    /// Detect spurious timeouts with the echoed timestamps and undo their window cut (RFC 3522 / 4015,
    /// what Linux does by default).
    pub spurious_rto_undo: bool,
    /// DCQCN's parameters (`cc = "dcqcn"`).
    pub dcqcn: DcqcnParams,
    /// HPCC's parameters (`cc = "hpcc"`).
    pub hpcc: HpccParams,
    /// TIMELY's parameters (`cc = "timely"`).
    pub timely: TimelyParams,
    /// Bytes a segment occupies on the wire beyond its payload (headers and framing; the simulator sets it
    /// from the topology's framing): what a rate-limited sender paces.
    pub wire_overhead: u32,
}

impl Default for TcpParams {
    /// The base every preset starts from.
    fn default() -> Self {
        TcpParams {
            mss: 1460,
            initial_window: 10,
            rwnd: 128 * 1024,
            handshake: false,
            fast_retransmit: true,
            dupack_threshold: 3,
            rto_min: Time::from_ms(10),
            rto_initial: Time::from_ms(10),
            rto_max: Time::from_secs_f64(60.0),
            rto_formula: RtoFormula::Rfc6298,
            delayed_ack: false,
            delayed_ack_timeout: Time::from_us(40),
            ecn: false,
            retransmissions: true,
            cc: CongestionControl::NewReno,
            dctcp: DctcpParams::default(),
            mlfq: Vec::new(),
            line_rate_start: false,
            rto_rtts: 0.0,
            spurious_rto_undo: false,
            dcqcn: DcqcnParams::default(),
            hpcc: HpccParams::default(),
            timely: TimelyParams::default(),
            wire_overhead: crate::packet::HEADERS + 30,
        }
    }
}
