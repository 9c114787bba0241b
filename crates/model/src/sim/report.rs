//! What a run reports: the measurement window's snapshots and the time-series samples as the run goes,
//! then at its end the unfinished flows' rows, packet conservation, per-port statistics, the summary and
//! an order-free digest of the outcome.

use crate::sim::*;
use crate::stats::PortStats;

impl Sim {
    /// The measurement window opens or closes: record each live measured flow's delivered bytes.
    #[inline(never)]
    pub(crate) fn window_edge(&mut self, close: bool) {
        // (a part of a split run: the flows whose data it receives)
        let live: Vec<u32> = self.hosts.apps.held().filter(|&(_, a)| a.alive && a.measured && self.owns(a.dst)).map(|(i, _)| i).collect();
        for i in live {
            let d = self.hosts.app_delivered(self.hosts.apps.get(i));
            let a = self.hosts.apps.get_mut(i);
            if close {
                a.win_end = Some(d);
            } else {
                a.win_base = d;
            }
        }
    }

    /// A time-series sample: every port's ingress and egress bytes, every live measured flow's delivered
    /// bytes; then the next one.
    #[inline(never)]
    pub(crate) fn take_sample(&mut self) {
        let t = self.now.0;
        self.settle_all_in(true);
        // (a part of a split run: its own ports, by global index, and below the flows whose data it receives)
        for i in 0..self.fab.ports.len() {
            let g = self.fab.gid(i as u32);
            let egress = self.sampled_egress(i);
            let (p, s) = (&self.fab.ports[i], &mut self.rec.samples);
            s.port_t.push(t);
            s.port.push(g);
            s.ingress.push(p.ing.total);
            s.egress.push(egress);
        }
        // (a part of a split run: the flows it samples, `samples_flow`)
        let rows: Vec<(u64, u64)> = self
            .hosts
            .apps
            .held()
            .filter(|&(i, a)| a.alive && a.measured && self.samples_flow(i as usize, a))
            .map(|(_, a)| (a.id, self.hosts.app_delivered(a)))
            .collect();
        let s = &mut self.rec.samples;
        for (id, d) in rows {
            s.flow_t.push(t);
            s.flow.push(id);
            s.delivered.push(d);
        }
        if !self.clock.finished {
            let dt = self.rec.sample_every.expect("sampling");
            self.schedule_timer(self.now + dt, Ev::Sample);
        }
    }

    /// Record unfinished measured flows and check packet conservation.
    pub(crate) fn finalize(&mut self) {
        if self.clock.finalized {
            return;
        }
        self.clock.finalized = true;
        self.fold_finish();
        // completed flows whose senders have not closed: their counts so far
        for t in self.hosts.transfers.slots() {
            if t.alive && t.row != NO && !t.snd_done {
                self.rec.flows.timeouts[t.row as usize] += t.snd.timeouts;
                self.rec.flows.retransmits[t.row as usize] += t.snd.retransmits;
            }
        }
        let first_unfinished = self.rec.flows.len();
        let mut rows: Vec<App> = self.hosts.apps.slots().iter().filter(|a| a.alive && a.measured).cloned().collect();
        rows.sort_by_key(|a| a.id);
        let apps = rows.len();
        for a in rows {
            let r = self.app_record(&a, u64::MAX);
            self.rec.flows.push(&r);
        }
        for f in self.open_workflows() {
            let fe = self.host_index(f.frontend);
            self.rec.flows.push(&f.record(fe, u64::MAX));
        }
        let mut order: Vec<u32> = (0..self.order.open_keys.len() as u32).collect();
        order.sort_by_key(|&i| self.order.open_keys[i as usize]);
        let mut rank = vec![0u64; order.len()];
        for (k, &i) in order.iter().enumerate() {
            rank[i as usize] = k as u64;
        }
        self.canonical_flows(&rank, first_unfinished, apps);
        self.check_conservation().expect("packet conservation");
        self.check_shared().expect("shared buffer bounds");
    }

    /// Packets still in the network (in both parts of a split run).
    pub fn packets_in_flight(&self) -> u64 {
        self.pkts.live() as u64 + self.in_flight_elsewhere()
    }

    /// Packets created = delivered + dropped + still in the network.
    pub fn check_conservation(&self) -> Result<(), String> {
        let c = &self.rec.counters;
        let in_flight = self.packets_in_flight();
        if c.pkts_created != c.pkts_delivered + c.dropped() + in_flight {
            return Err(format!(
                "packet conservation violated at {}: created {} != delivered {} + dropped {} + in flight {}",
                self.now,
                c.pkts_created,
                c.pkts_delivered,
                c.dropped(),
                in_flight
            ));
        }
        Ok(())
    }

    /// Shared-buffer switches: each MMU within its pool (the most ever in use at most its size, the shared
    /// part and every headroom within theirs) and its egress accounting that of the queues (bytes per port).
    pub fn check_shared(&self) -> Result<(), String> {
        for (n, m) in self.fab.mmu.iter().enumerate() {
            let Some(m) = m else { continue };
            let name = self.node_name(n as u32);
            if m.peak > m.p.size || m.shared_used > m.shared {
                return Err(format!(
                    "shared buffer of {name}: {} B in use at most, {} B shared in use, pool {} B, shared part {} B",
                    m.peak, m.shared_used, m.p.size, m.shared
                ));
            }
            let base = self.fab.nodes[n].port_base;
            for (lp, (eg, hd)) in m.egress.iter().zip(&m.hdrm).enumerate() {
                let queued = self.fab.ports[base as usize + lp].eg.total;
                if eg.iter().sum::<u64>() != queued || hd.iter().any(|&h| h > m.headroom[lp]) {
                    return Err(format!(
                        "shared buffer of {name}, port {lp}: the MMU counts {} B, the egress queue holds {queued} B (headroom {:?} of {} B)",
                        eg.iter().sum::<u64>(),
                        hd,
                        m.headroom[lp]
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn node_name(&self, n: u32) -> &str {
        &self.fab.topo.nodes[n as usize].name
    }

    /// Host index (position in `hosts`) of a host node, for output.
    pub fn host_index(&self, node: u32) -> u32 {
        self.fab.hosts.binary_search(&node).map(|i| i as u32).unwrap_or(u32::MAX)
    }

    pub fn port_stats(&self) -> Vec<PortStats> {
        let t = self.now.as_secs_f64().max(1e-12);
        self.fab
            .ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let n = &self.fab.nodes[p.node as usize];
                PortStats {
                    node: self.node_name(p.node).to_string(),
                    port: i as u32 - n.port_base,
                    peer: self.node_name(p.peer_node).to_string(),
                    tier: self.fab.topo.links[p.link as usize].tier,
                    rate_bps: p.rate.0,
                    tx_bytes: self.fab.tx_count[i].bytes,
                    tx_packets: self.fab.tx_count[i].packets,
                    // the time the link was sending within [0, now]: a frame still on the wire counts up to now
                    utilisation: (p.tx_busy_ps - p.tx_busy_until.0.saturating_sub(self.now.0).min(p.tx_busy_ps)) as f64 / 1e12 / t,
                    max_ingress_bytes: p.ing.max_total(),
                    max_egress_bytes: p.eg.max_total(),
                    mean_egress_bytes: p.eg.mean_total(self.now),
                    drops: self.fab.port_ctr[i].drops,
                    lossless_drops: self.fab.port_ctr[i].lossless_drops,
                    ecn_marks: self.fab.port_ctr[i].ecn_marks,
                    up: p.up,
                    pfc_frames_sent: self.fab.pfc.get(i).map_or(0, |f| f.ingress.frames_sent),
                    pfc_frames_received: self.fab.pfc.get(i).map_or(0, |f| f.egress.frames_received),
                    pfc_paused_s: self.fab.pfc.get(i).map_or(0.0, |f| f.egress.paused_total(self.now).0 as f64 / 1e12),
                    pfc_paused_s_by_priority: self
                        .fab
                        .pfc
                        .get(i)
                        .map_or(vec![0.0; 8], |f| f.egress.paused_by_prio(self.now).iter().map(|t| t.0 as f64 / 1e12).collect()),
                    pfc_pauses_sent_by_priority: self.fab.pfc.get(i).map_or(vec![0; 8], |f| f.ingress.pauses_sent.to_vec()),
                }
            })
            .collect()
    }

    /// Stop the run after `n` events in all (as `run.max_events` would); a run split in two parts refuses
    /// it, as it refuses `run.max_events`.
    pub fn set_max_events(&mut self, n: u64) -> Result<(), String> {
        if self.drives_parts() {
            return Err("run.max_events: a run guard is not supported in a run split in parts yet".into());
        }
        self.guard.max_events = n;
        self.guard.next_guard = self.guard.next_guard.min(n);
        Ok(())
    }

    /// Whether a guard (run.max_events, run.max_wall) ends the run now; the wall clock is read every 16,384
    /// events (its start is the first look, at the run's first event).
    #[cold]
    pub(crate) fn guard_hit(&mut self) -> bool {
        if self.rec.counters.events >= self.guard.max_events {
            return true;
        }
        if let Some(m) = self.guard.max_wall {
            if self.guard.wall_start.get_or_insert_with(std::time::Instant::now).elapsed() >= m {
                return true;
            }
            self.guard.next_guard = self.guard.max_events.min(self.rec.counters.events + 0x4000);
        }
        false
    }

    /// A guard (run.max_events / run.max_wall) ends the run here: flows still running stay unfinished.
    pub(crate) fn stop_incomplete(&mut self) {
        let why = if self.rec.counters.events >= self.guard.max_events {
            format!("run.max_events ({}) reached", self.guard.max_events)
        } else {
            format!("run.max_wall ({:?}) reached", self.guard.max_wall.unwrap_or_default())
        };
        self.guard.incomplete = Some(format!("{why} at {:.6} s of simulated time", self.now.as_secs_f64()));
        self.clock.finished = true;
    }

    /// A digest (FNV-1a) of the run's outcome that does not depend on how its flows were numbered: every
    /// flow-table row without its id, in a canonical order, then the drop, flow, delivered-packet, timeout
    /// and retransmission counts. (Not the event count, which `check-split` compares in the summary.) Flow ids count
    /// flows in the order they start fabric-wide, which a run split between threads cannot know; two runs
    /// with the same digest differ at most in those ids and the rows' order.
    pub fn outcome_digest(&self) -> u64 {
        let f = &self.rec.flows;
        let mut rows: Vec<[u64; 11]> = (0..f.id.len())
            .map(|i| {
                [
                    f.start_ps[i],
                    f.src[i] as u64,
                    f.dst[i] as u64,
                    f.class[i] as u64,
                    f.size[i],
                    f.priority[i] as u64,
                    f.end_ps[i],
                    f.timeouts[i] as u64,
                    f.retransmits[i] as u64,
                    f.bytes_delivered[i],
                    f.window_bytes[i],
                ]
            })
            .collect();
        rows.sort_unstable();
        let c = &self.rec.counters;
        let tail = [c.dropped(), c.flows_started, c.flows_completed, c.pkts_delivered, c.timeouts, c.retransmits];
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in rows.iter().flatten().chain(&tail) {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }

    /// What each mechanism of the scheme did, one entry per mechanism the scheme turns on (the summary's
    /// `mechanisms`): PFC's lossless priorities and PAUSEs, ECN marks, DIBS's detours, priority eviction's
    /// and pFabric's drops, LAS's and pFabric's overtakes, MLFQ's thresholds and demotions, the RoCE
    /// schemes' CNPs and rate cuts, ALB's thresholds.
    fn mechanisms_json(&self) -> serde_json::Value {
        use crate::config::{CongestionControl, FlowControl, LoadBalancing, Scheduling};
        let c = &self.rec.counters;
        let s = &self.scheme;
        let mut m = serde_json::Map::new();
        if s.flow_control == FlowControl::Pfc {
            let prios: Vec<u8> = (0..8).filter(|p| s.pfc.priorities & (1 << p) != 0).collect();
            m.insert("pfc".into(), serde_json::json!({"lossless_priorities": prios, "pause_frames": c.pfc_pause_frames}));
        }
        if s.ecn_marking != crate::config::EcnMarking::None || s.source_ecn {
            m.insert("ecn".into(), serde_json::json!({"marks": c.ecn_marks, "source_ecn": s.source_ecn}));
        }
        if s.load_balancing == LoadBalancing::Adaptive {
            m.insert("alb".into(), serde_json::json!({"t1_bytes": s.alb.t1, "t2_bytes": s.alb.t2}));
        }
        if s.dibs.enabled {
            m.insert("dibs".into(), serde_json::json!({"detours": c.detours}));
        }
        if s.priority_eviction {
            m.insert("priority_eviction".into(), serde_json::json!({"evictions": c.drops[crate::stats::DropCause::Priority as usize]}));
        }
        if s.scheduling != Scheduling::StrictPriority {
            let overtakes: u64 = self.fab.ports.iter().map(|p| p.eg.discipline().overtakes()).sum();
            let name = if s.scheduling == Scheduling::Las { "las" } else { "pfabric" };
            let mut e = serde_json::json!({"overtakes": overtakes});
            if s.scheduling == Scheduling::Pfabric {
                e["drops"] = c.drops[crate::stats::DropCause::Priority as usize].into();
            }
            m.insert(name.into(), e);
        }
        if !s.tcp.mlfq.is_empty() {
            let mut e = serde_json::json!({"thresholds_bytes": s.tcp.mlfq, "demoted_packets": c.mlfq_demoted});
            if let Some(src) = &s.mlfq_source {
                // where the thresholds came from: the method, queues, the load solved for (and the load the
                // workloads offer, where it was estimated), the size distribution's source
                e["method"] = src.method.clone().into();
                e["queues"] = src.queues.into();
                e["load"] = src.load.into();
                e["offered_load"] = src.offered_load.into();
                e["from"] = src.from.clone().into();
            }
            m.insert("mlfq".into(), e);
        }
        match s.tcp.cc {
            CongestionControl::Dcqcn => {
                m.insert("dcqcn".into(), serde_json::json!({"cnps": c.cnps, "rate_cuts": c.rate_cuts, "nacks": c.nacks}));
            }
            CongestionControl::Hpcc => {
                m.insert("hpcc".into(), serde_json::json!({"window_cuts": c.window_cuts, "nacks": c.nacks}));
            }
            CongestionControl::Timely => {
                m.insert("timely".into(), serde_json::json!({"rate_cuts": c.rate_cuts, "nacks": c.nacks}));
            }
            CongestionControl::Dctcp | CongestionControl::L2dct => {
                m.insert(if s.tcp.cc == CongestionControl::Dctcp { "dctcp" } else { "l2dct" }.into(), serde_json::json!({"ecn_marks": c.ecn_marks}));
            }
            _ => {}
        }
        serde_json::Value::Object(m)
    }

    /// Counters and run facts as JSON (the flow table is read from `flows`).
    pub fn summary_json(&self) -> String {
        let c = &self.rec.counters;
        let drops: serde_json::Map<String, serde_json::Value> = DropCause::ALL.iter().map(|d| (d.name().to_string(), c.drops[*d as usize].into())).collect();
        let congestion_drops: u64 = DropCause::ALL.iter().filter(|d| d.is_congestion()).map(|d| c.drops[*d as usize]).sum();
        let (bdp, rtt) = self.fab.bdp;
        let mut v = serde_json::json!({
            "scheme": self.scheme.name,
            "mlfq_thresholds_bytes": self.scheme.tcp.mlfq,
            "sim_time_s": self.now.as_secs_f64(),
            "incomplete": self.guard.incomplete,
            "flow_rows_not_started": self.rec.rows_not_started.iter().map(|&(w, n)| serde_json::json!({"workload": w, "rows": n})).collect::<Vec<_>>(),
            "events": c.events,
            "link_traversals": c.link_traversals,
            "flows": {"started": c.flows_started, "completed": c.flows_completed},
            "drops": drops,
            "congestion_drops": congestion_drops,
            "timeouts": c.timeouts,
            "spurious_timeouts": c.spurious_timeouts,
            "retransmits": c.retransmits,
            "pfc": {
                "pause_frames": c.pfc_pause_frames,
                "pauses": c.pfc_pauses,
                "paused_time_s": self.fab.pfc.iter().map(|f| f.egress.paused_total(self.now).0).sum::<u64>() as f64 / 1e12,
                "watchdog": self.rec.pfc_events.iter().filter(|e| e.kind != "deadlock").collect::<Vec<_>>(),
                "deadlocks": self.rec.pfc_events.iter().filter(|e| e.kind == "deadlock").collect::<Vec<_>>(),
            },
            "ecn_marks": c.ecn_marks,
            "fabric": {"bdp_bytes": bdp, "base_rtt_s": rtt.0 as f64 / 1e12, "queue_limit_bytes": self.fab.queue_limit},
            "dibs": {"detours": c.detours, "detours_per_packet": c.detour_histogram},
            "nic_backpressure": c.nic_blocked,
            "packets": {
                "created": c.pkts_created,
                "delivered": c.pkts_delivered,
                "stale": c.pkts_stale,
                "dropped": c.dropped(),
                "in_flight": self.packets_in_flight(),
                "max_in_flight": c.max_packets_in_flight,
            },
            "invariants": {
                "conservation": self.check_conservation().is_ok(),
                "lossless": self.lossless_ok(),
                "lossless_drops": c.lossless_drops,
                "lossless_exempt_drops": c.lossless_exempt_drops,
                "lossless_violations": self.lossless_violations().into_iter().map(|(l, n)| serde_json::json!({"link": l, "drops": n})).collect::<Vec<_>>(),
            },
            "classes": self.rec.classes.names,
            "hosts": self.fab.hosts.iter().map(|&h| self.node_name(h)).collect::<Vec<_>>(),
            "ports": self.port_stats(),
        });
        v["mechanisms"] = self.mechanisms_json();
        if self.hosts.tcp.cc.roce() {
            // only with the RoCE schemes: CNPs and NACKs the receivers sent, DCQCN's rate cuts (as ACKs and
            // timers reached the senders)
            v["roce"] = serde_json::json!({"cnps": c.cnps, "nacks": c.nacks, "rate_cuts": c.rate_cuts});
        }
        if self.fab.shared() {
            // only with shared-buffer switches (the summaries of other runs stay as they were)
            v["invariants"]["shared_buffer"] = serde_json::json!(self.check_shared().is_ok());
            let peak = self.fab.mmu.iter().flatten().map(|m| m.peak).max().unwrap_or(0);
            let pauses: u64 = self.fab.pfc.iter().map(|p| p.ingress.pauses_sent.iter().sum::<u64>()).sum();
            v["shared_buffer"] =
                serde_json::json!({"peak_bytes": peak, "pool_bytes": self.fab.topo.shared_buffer.as_ref().map(|(p, _)| p.size), "pfc_pauses_sent": pauses});
        }
        v.to_string()
    }
}
