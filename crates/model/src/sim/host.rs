//! Hosts: the NIC (8 strict-priority queues at line rate) and the glue between packets and the TCP
//! state machines; transfer and application-flow life cycles.

use crate::mechanisms::ecn::source_mark;
use crate::packet::{Packet, ECN_CE, ECN_ECT, FLAG_CWR, FLAG_ECE, FLAG_NACK};
use crate::sim::{App, Ev, Role, Sim, NO};
use crate::stats::DropCause;
use crate::transport::tcp::{AckOut, SegKind, SegOut};
use detailsim_engine::Time;

use crate::packet::HEADERS;

/// The two per-transfer timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    Rtx,
    DelAck,
}

impl Sim {
    /// Queue a packet at host `node`'s NIC and kick the transmitter. With source ECN (DeTail), the
    /// packet is marked CE when the NIC's drain-byte counter for its priority exceeds the threshold.
    /// The NIC is a port like a switch egress: the scheme's switch ECN marking applies here too (at
    /// enqueue, against the NIC queue), and its buffer is bounded: senders send no more data than it takes
    /// (`prep_sender`), and a control segment that does not fit is a `host_buffer` drop.
    pub(crate) fn host_send(&mut self, node: u32, mut pkt: Packet) {
        let port = self.fab.nodes[node as usize].port_base;
        self.rec.counters.pkts_created += 1;
        let e = &mut self.fab.ports[port as usize];
        let wire = pkt.wire as u64;
        if self.scheme.source_ecn && source_mark(pkt.ecn, || e.eg.drain_bytes(pkt.prio), self.scheme.source_ecn_threshold) {
            pkt.ecn = ECN_CE;
            self.fab.port_ctr[port as usize].ecn_marks += 1;
            self.rec.counters.ecn_marks += 1;
        }
        let (room, up) = (e.eg.has_room(wire), e.up);
        let pid = self.pkts.alloc(pkt);
        if self.int_on {
            // HPCC: a data packet starts with no records, an ACK echoes its data packet's
            let int = if pkt.kind == SegKind::Ack { self.int_echo } else { Default::default() };
            *self.int_at(pid) = int;
        }
        if !up {
            self.drop_packet(pid, DropCause::LinkDown, Some(port));
            return;
        }
        if !room {
            self.drop_packet(pid, DropCause::HostBuffer, Some(port));
            return;
        }
        let now = self.now;
        let e = &mut self.fab.ports[port as usize].eg;
        e.advance(now);
        e.reserve(pkt.prio, wire);
        self.mark_ecn(port, pid, wire); // a NIC marks, never drops
        self.fab.ports[port as usize].eg.enlist_packet(pid, &mut self.pkts);
        self.tx_try(port);
    }

    /// HPCC: packet `pid`'s telemetry slot.
    #[inline]
    pub(crate) fn int_at(&mut self, pid: crate::packet::PacketId) -> &mut crate::transport::cc::hpcc::IntStack {
        let i = pid as usize;
        if self.int_stacks.len() <= i {
            self.int_stacks.resize((i + 1).next_power_of_two(), Default::default());
        }
        &mut self.int_stacks[i]
    }

    /// Before an input to transfer `tr`'s sender: tell it how many full-size segments its host's NIC can
    /// take now.
    #[inline]
    fn prep_sender(&mut self, tr: u32) {
        let src = self.hosts.transfers.get(tr).src;
        self.hosts.prep_sender(tr, self.fab.nic_queue(src));
    }

    /// Give transfer `tr`'s sender one input (`input`: the simulator, the transport's parameters, the
    /// segments it asks to send) and carry out what it asks: the NIC's room told before, the segments sent
    /// after, the sender queued for room if the NIC stopped it, its retransmission timer re-armed.
    #[inline]
    fn drive_sender<R>(&mut self, tr: u32, input: impl FnOnce(&mut Self, &crate::config::TcpParams, &mut Vec<SegOut>) -> R) -> R {
        let params = self.hosts.tcp.clone();
        let mut out = std::mem::take(&mut self.hosts.segs);
        out.clear();
        self.prep_sender(tr);
        let r = input(self, &params, &mut out);
        self.send_segments(tr, &out);
        self.after_sender(tr);
        self.hosts.segs = out;
        self.sync_rtx_timer(tr);
        r
    }

    /// After an input to transfer `tr`'s sender: if it stopped for lack of NIC room, it waits for room.
    #[inline]
    fn after_sender(&mut self, tr: u32) {
        if let Some(b) = self.hosts.stopped_sender(tr) {
            let port = self.fab.nodes[b.src as usize].port_base;
            if self.hosts.nic_waiting[b.src as usize].block(b.prio, tr, b.uid) {
                self.rec.counters.nic_blocked += 1;
            }
            self.fab.ports[port as usize].nic_blocked = true;
        }
    }

    /// The NIC of host port `port` sent a frame and transfers wait for room: resume them, highest priority
    /// first, while a full data frame fits.
    pub(crate) fn nic_wake(&mut self, port: u32) {
        let node = self.fab.ports[port as usize].node;
        while let Some(tr) = self.hosts.next_waiting(node, &self.fab.ports[port as usize].eg) {
            let now = self.now;
            self.drive_sender(tr, |sim, p, out| sim.hosts.transfers.get_mut(tr).snd.resume(now, p, out));
        }
        self.fab.ports[port as usize].nic_blocked = !self.hosts.nic_waiting[node as usize].is_empty();
    }

    /// Create a transfer of `size` bytes from `src` to `dst` for application flow `app`, and start it.
    /// `conn`: the source and destination ports of a connection that is already open (a retrieval's
    /// response travels back on its request's connection): the transfer uses them and sends no SYN;
    /// `None` opens a connection (a new source port, and SYN / SYN-ACK when `tcp.handshake` is on).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_transfer(&mut self, app: u32, role: Role, src: u32, dst: u32, size: u64, prio: u8, conn: Option<(u16, u16)>) -> u32 {
        let uid = self.transfer_uid(src);
        let slot_in_app = if role == Role::Response { 1 } else { 0 };
        // source ports count per host (`run.event_order = "node"`: a host's ports then do not depend on when
        // other hosts start flows)
        let ports = match conn {
            Some((s, d)) => (s as u32, d as u32),
            None => {
                let np = &mut self.order.next_port[src as usize];
                let sport = *np;
                *np = if *np >= 65535 { 1024 } else { *np + 1 };
                (sport, 80)
            }
        };
        let p = &self.scheme.tcp;
        let t = self.hosts.new_transfer(app, role, (src, dst, size, prio), uid, ports, p, p.handshake && conn.is_none());
        let fit = p.line_rate_start || p.rto_rtts > 0.0;
        let (rate_based, needs_rtt) = (p.cc.roce(), p.cc.needs_base_rtt());
        let tr = self.alloc_transfer(t);
        if rate_based {
            // a rate-based controller starts at the sender's NIC rate (HPCC: its window the path's BDP at
            // that rate, T its base RTT)
            let nic = self.fab.port_rate(self.fab.wiring.port_base[src as usize]).0 as f64;
            let rtt = if needs_rtt { self.path_bdp(src, dst).map(|(rtt, _)| rtt) } else { None };
            let p = self.hosts.tcp.clone();
            self.hosts.transfers.get_mut(tr).snd.start_rate(&p, rtt, nic);
        }
        if fit {
            if let Some((rtt, bdp)) = self.path_bdp(src, dst) {
                let p = self.hosts.tcp.clone();
                self.hosts.transfers.get_mut(tr).snd.fit_path(&p, rtt, bdp);
            }
        }
        {
            let a = self.hosts.apps.get_mut(app);
            a.transfers[slot_in_app] = tr;
            a.transfer_uids[slot_in_app] = uid;
        }
        if !self.owns(dst) {
            // a split run: the receiver's part gets its copy (and of the flow, unless it is the requester's)
            let t = Box::new(self.hosts.transfers.get(tr).clone());
            self.send_to_node(dst, crate::sim::parts::Msg::Transfer { tr, t });
            if role != Role::Response {
                let a = Box::new(self.hosts.apps.get(app).clone());
                self.send_to_node(dst, crate::sim::parts::Msg::App { app, a });
            }
        }
        let now = self.now;
        self.drive_sender(tr, |sim, p, out| sim.hosts.transfers.get_mut(tr).snd.start(now, p, out));
        tr
    }

    /// Transfer `tr`'s settled hops (`Packet::hops`) for its data (`fwd`) or its acknowledgements, found
    /// both ways for its first packet either way and kept; 0 (ask at every switch) where the run's routes may change.
    #[inline]
    fn flow_hops(&mut self, tr: u32, fwd: bool) -> u32 {
        if !self.hops_on {
            return 0;
        }
        let t = self.hosts.transfers.get(tr);
        let kept = if fwd { t.hops_fwd } else { t.hops_rev };
        if kept != crate::sim::hosts::HOPS_UNSET {
            return kept;
        }
        // both ways at once (the walks' loads overlap), the other kept for its first packet
        let (f, r) = self.fab.settled_hops_pair((t.src, t.dst, t.hash_fwd), (t.dst, t.src, t.hash_rev), self.scheme.load_balancing);
        let t = self.hosts.transfers.get_mut(tr);
        (t.hops_fwd, t.hops_rev) = (f, r);
        if fwd {
            f
        } else {
            r
        }
    }

    fn send_segments(&mut self, tr: u32, segs: &[SegOut]) {
        if segs.is_empty() {
            return;
        }
        let hops = self.flow_hops(tr, true);
        let t = self.hosts.transfers.get(tr);
        let ecn = if self.scheme.tcp.ecn { ECN_ECT } else { 0 };
        let base = Packet {
            tr,
            tr_uid: t.uid,
            kind: SegKind::Data,
            prio: t.prio,
            ecn,
            flags: 0,
            src: t.src,
            dst: t.dst,
            seq: 0,
            len: 0,
            wire: 0,
            ts: self.now.0,
            ts_echo: 0,
            hash: t.hash_fwd,
            hops,
            sport: t.sport,
            dport: t.dport,
            out_port: NO,
            retx: false,
            in_lp: 0,
            detours: 0,
            rank: 0,
            qnext: crate::mechanisms::queue::NIL,
        };
        let src = t.src;
        // pFabric's rank: the flow's remaining (unacknowledged) bytes when the packet is sent
        let remaining = (self.scheme.scheduling == crate::config::Scheduling::Pfabric).then(|| t.snd.size() - t.snd.una.min(t.snd.size()));
        for s in segs {
            let mut p = base;
            p.kind = s.kind;
            p.seq = s.seq;
            p.len = u16::try_from(s.len).expect("a segment carries at most the 9,000-byte MSS");
            p.wire = crate::packet::wire16(self.fab.framing.wire(s.len + HEADERS));
            p.retx = s.retx;
            p.prio = (p.prio + s.level).min(7);
            self.rec.counters.mlfq_demoted += (s.level > 0) as u64;
            // LAS's: the flow's attained service (bytes sent before the segment; a retransmission ranks by
            // what the flow has sent, not by its own sequence number)
            p.rank = if s.kind == SegKind::Data { remaining.unwrap_or(s.sent) } else { 0 };
            if s.cwr {
                p.flags |= FLAG_CWR;
            }
            if s.kind != SegKind::Data && !self.scheme.tcp.cc.dctcp_echo() {
                // control segments are not ECN-capable (RFC 3168), except under DCTCP, which marks every
                // packet ECT as Linux's DCTCP does (an AQM must not drop its SYNs and ACKs)
                p.ecn = 0;
            }
            // the sender sent no more than `prep_sender` said the NIC takes
            debug_assert!(s.kind != SegKind::Data || s.len == 0 || self.hosts.nic_admits(self.fab.nic_queue(src), p.wire as u64), "NIC room overrun");
            self.rec.counters.retransmits += s.retx as u64;
            self.host_send(src, p);
        }
    }

    fn send_ack(&mut self, tr: u32, a: AckOut) {
        if self.hosts.tcp.cc.roce() {
            self.rec.counters.cnps += a.ece as u64;
            self.rec.counters.nacks += a.nack as u64;
        }
        let hops = self.flow_hops(tr, false);
        let t = self.hosts.transfers.get(tr);
        let ect = self.scheme.tcp.ecn && self.scheme.tcp.cc.dctcp_echo();
        let p = Packet {
            tr,
            tr_uid: t.uid,
            kind: a.kind,
            prio: t.prio,
            ecn: if ect { ECN_ECT } else { 0 },
            flags: if a.ece { FLAG_ECE } else { 0 } | if a.nack { FLAG_NACK } else { 0 },
            src: t.dst,
            dst: t.src,
            seq: a.ack,
            len: 0,
            wire: crate::packet::wire16(self.fab.framing.wire(HEADERS)),
            ts: self.now.0,
            ts_echo: a.ts_echo.0,
            hash: t.hash_rev,
            hops,
            sport: t.dport,
            dport: t.sport,
            out_port: NO,
            retx: false,
            in_lp: 0,
            detours: 0,
            rank: 0,
            qnext: crate::mechanisms::queue::NIL,
        };
        let from = t.dst;
        self.host_send(from, p);
    }

    /// Make sure a timer event of kind `k` will fire no later than the transfer's deadline for it (the
    /// sender's retransmission deadline, or the receiver's delayed-ACK deadline). Events are lazily
    /// cancelled: one that finds a later deadline reschedules itself, a stale token is ignored.
    fn sync_timer(&mut self, tr: u32, k: Timer) {
        // (one lookup of the transfer: `next_token`'s step taken on the field beside it)
        let hosts = &mut self.hosts;
        let t = hosts.transfers.get_mut(tr);
        let (deadline, pending) = match k {
            // the retransmission deadline, or (DCQCN) the end of a wait for the rate
            Timer::Rtx => (t.snd.wake_at(), t.rtx_event_at),
            Timer::DelAck => (t.rcv.deadline, t.del_event_at),
        };
        let Some(d) = deadline else { return };
        if pending.is_some_and(|e| e <= d) {
            return;
        }
        hosts.token = hosts.token.wrapping_add(1);
        let token = hosts.token;
        let ev = match k {
            Timer::Rtx => {
                (t.rtx_token, t.rtx_event_at) = (token, Some(d));
                Ev::RtxTimer { tr, token }
            }
            Timer::DelAck => {
                (t.del_token, t.del_event_at) = (token, Some(d));
                Ev::DelAckTimer { tr, token }
            }
        };
        self.schedule_timer(d, ev);
        if self.q.timers_len() > self.clock.timer_compact.at {
            self.compact_timers();
        }
    }

    /// Drop the cancelled timer events: those of finished transfers (a retrieval's timers outlive it by up to
    /// an RTO, 200 ms under DeTail) and those a rescheduling superseded. Popping them would do nothing (see
    /// `timer_due`), so the simulation is unchanged; the timer lane stays about the size of the live
    /// transfers instead of the flows started in the last RTO. Runs when the lane has doubled since the last
    /// compaction, so its cost is O(1) per timer pushed.
    #[cold]
    pub(crate) fn compact_timers(&mut self) {
        let transfers = &self.hosts.transfers;
        self.q.retain_timers(|ev| match *ev {
            Ev::RtxTimer { tr, token } => {
                let t = transfers.get(tr);
                t.alive && t.rtx_token == token
            }
            Ev::DelAckTimer { tr, token } => {
                let t = transfers.get(tr);
                t.alive && t.del_token == token
            }
            _ => true,
        });
        self.clock.timer_compact.at = (2 * self.q.timers_len()).max(self.clock.timer_compact.min);
    }

    fn sync_rtx_timer(&mut self, tr: u32) {
        self.sync_timer(tr, Timer::Rtx);
    }

    fn sync_delack_timer(&mut self, tr: u32) {
        self.sync_timer(tr, Timer::DelAck);
    }

    /// A timer event of kind `k` fired: true when its deadline has come (the caller acts); otherwise it was
    /// stale, or the deadline moved and the timer is rescheduled.
    fn timer_due(&mut self, tr: u32, token: u32, k: Timer) -> bool {
        let now = self.now;
        let t = self.hosts.transfers.get_mut(tr);
        let (current, pending, deadline) = match k {
            Timer::Rtx => (t.rtx_token, &mut t.rtx_event_at, t.snd.wake_at()),
            Timer::DelAck => (t.del_token, &mut t.del_event_at, t.rcv.deadline),
        };
        let open = match k {
            Timer::Rtx => !t.snd_done,
            Timer::DelAck => t.rcv_open,
        };
        if !open || current != token {
            // a timer that does nothing (cancelled, or its end of the transfer closed) is not counted as an
            // event: `compact_timers` drops some of them unpopped, and a split run's copies of a transfer
            // die at barriers, so counting them would make the count depend on when either happened
            self.rec.counters.events -= 1;
            return false;
        }
        *pending = None;
        match deadline {
            None => false,
            Some(d) if d > now => {
                self.sync_timer(tr, k);
                false
            }
            Some(_) => true,
        }
    }

    pub(crate) fn on_rtx_timer(&mut self, tr: u32, token: u32) {
        if !self.timer_due(tr, token, Timer::Rtx) {
            return;
        }
        let now = self.now;
        self.drive_sender(tr, |sim, p, out| {
            if sim.hosts.transfers.get_mut(tr).snd.on_timer(now, p, out) {
                sim.rec.counters.timeouts += 1;
            }
            sim.rec.counters.rate_cuts += sim.hosts.transfers.get_mut(tr).snd.cc.fresh_rate_cuts();
        });
    }

    pub(crate) fn on_delack_timer(&mut self, tr: u32, token: u32) {
        if !self.timer_due(tr, token, Timer::DelAck) {
            return;
        }
        if let Some(a) = self.hosts.transfers.get_mut(tr).rcv.on_delack_timeout() {
            self.send_ack(tr, a);
        }
    }

    /// A packet reached its destination host.
    pub(crate) fn host_receive(&mut self, pid: u32) {
        let pkt = *self.pkts.get(pid);
        if self.int_on && pkt.kind == SegKind::Data {
            // HPCC: a data packet's records go back in its ACK
            self.int_echo = *self.int_at(pid);
        }
        self.pkts.release(pid);
        self.rec.counters.pkts_delivered += 1;
        if self.scheme.dibs.enabled {
            let h = &mut self.rec.counters.detour_histogram;
            let d = pkt.detours as usize;
            if h.len() <= d {
                h.resize(d + 1, 0);
            }
            h[d] += 1;
        }
        let tr = pkt.tr;
        {
            let t = self.hosts.transfers.get(tr);
            // each end by its own state: the receiver until the sender's close reaches it, the sender until
            // its last byte is acknowledged
            let closed = t.uid != pkt.tr_uid || if matches!(pkt.kind, SegKind::Ack | SegKind::SynAck) { t.snd_done } else { !t.rcv_open };
            if closed {
                self.rec.counters.pkts_stale += 1;
                return;
            }
        }
        let now = self.now;
        let params = self.hosts.tcp.clone();
        match pkt.kind {
            SegKind::Syn => {
                let a = self.hosts.transfers.get_mut(tr).rcv.on_syn(Time(pkt.ts));
                self.send_ack(tr, a);
            }
            SegKind::Data => {
                let t = self.hosts.transfers.get_mut(tr);
                let ack = t.rcv.on_data(now, &params, pkt.seq, pkt.len as u32, pkt.ecn == ECN_CE, pkt.flags & FLAG_CWR != 0, Time(pkt.ts));
                let newly_complete = t.rcv.complete() && !t.rcv_done;
                if newly_complete {
                    t.rcv_done = true;
                }
                if let Some(a) = ack.0 {
                    self.send_ack(tr, a);
                }
                if let Some(a) = ack.1 {
                    self.send_ack(tr, a);
                }
                self.sync_delack_timer(tr);
                if newly_complete {
                    self.transfer_received(tr);
                }
            }
            SegKind::Ack | SegKind::SynAck => {
                let done = self.drive_sender(tr, |sim, p, out| {
                    let spurious = sim.hosts.transfers.get(tr).snd.spurious_timeouts;
                    if sim.int_on && pkt.kind == SegKind::Ack {
                        // HPCC: the ACK's records (its slot is the released packet's until the next allocation)
                        let int = sim.int_stacks[pid as usize];
                        let snd = &mut sim.hosts.transfers.get_mut(tr).snd;
                        let before = snd.cc.window_cuts();
                        snd.on_int(p, pkt.seq, int.hops());
                        sim.rec.counters.window_cuts += snd.cc.window_cuts() - before;
                    }
                    let t = sim.hosts.transfers.get_mut(tr);
                    if pkt.flags & FLAG_NACK != 0 {
                        t.snd.on_nack(now, p, pkt.seq, pkt.flags & FLAG_ECE != 0, Time(pkt.ts_echo), out);
                    } else {
                        t.snd.on_ack(now, p, pkt.kind, pkt.seq, pkt.flags & FLAG_ECE != 0, Time(pkt.ts_echo), out);
                    }
                    sim.rec.counters.spurious_timeouts += (t.snd.spurious_timeouts - spurious) as u64;
                    sim.rec.counters.rate_cuts += t.snd.cc.fresh_rate_cuts();
                    let done = t.snd.done() && !t.snd_done;
                    if done {
                        t.snd_done = true;
                    }
                    done
                });
                if done {
                    self.sender_close(tr);
                }
            }
        }
    }

    /// All bytes of transfer `tr` have reached its receiver.
    fn transfer_received(&mut self, tr: u32) {
        let (role, app, app_uid, ports) = {
            let t = self.hosts.transfers.get(tr);
            (t.role, t.app, t.app_uid, (t.dport, t.sport))
        };
        if app != NO && self.hosts.apps.get(app).alive && self.hosts.apps.get(app).uid == app_uid {
            match role {
                Role::Request => {
                    let a = self.hosts.apps.get(app);
                    let (src, dst, size, prio) = (a.src, a.dst, a.size, a.prio);
                    let wait = self.hosts.server_time[a.workload as usize];
                    if wait > Time::ZERO {
                        // the server works on the request first (`server_time`); the response then goes
                        // back on the request's connection
                        self.hosts.apps.get_mut(app).conn = (ports.0 as u32) << 16 | ports.1 as u32;
                        self.schedule(self.now + wait, Ev::Respond { app, uid: app_uid });
                        return;
                    }
                    // the response travels back on the request's connection: no second handshake
                    self.start_transfer(app, Role::Response, src, dst, size, prio, Some(ports));
                }
                Role::Response | Role::OneWay => self.app_complete(app),
            }
        }
    }

    /// Retrieval `app` (incarnation `uid`): its server's time is over, and its response starts on the
    /// request's connection (a flow that ended meanwhile, which no workload does, is left alone).
    pub(crate) fn respond(&mut self, app: u32, uid: u32) {
        let a = self.hosts.apps.get(app);
        if !a.alive || a.uid != uid {
            return;
        }
        let (src, dst, size, prio, conn) = (a.src, a.dst, a.size, a.prio, a.conn);
        self.start_transfer(app, Role::Response, src, dst, size, prio, Some(((conn >> 16) as u16, conn as u16)));
    }

    /// `run.event_order = "node"`: transfer `tr`'s sender has its last byte acknowledged and closes. Its
    /// timeouts and retransmissions go to its flow (the flow's record, or its row if the flow has
    /// completed); a closed-loop background source starts its next flow; the close reaches the receiver
    /// after a header-only frame's latency over an idle path (`Ev::Fin`). Every effect on the other end
    /// travels as an event, so the two ends share no state in between.
    fn sender_close(&mut self, tr: u32) {
        let t = self.hosts.transfers.get(tr);
        let (app, app_uid, row, to, rtx, uid) = (t.app, t.app_uid, t.row, t.snd.timeouts, t.snd.retransmits, t.uid);
        let (src, dst, w) = (t.src, t.dst, t.workload);
        let receiver = t.flow_receiver();
        if row != NO && !self.owns(receiver) {
            // the row is in another part of a split run: its flow completed there
            self.send_to_node(receiver, crate::sim::parts::Msg::Credit { row, to, rtx });
        } else if row != NO {
            self.rec.flows.timeouts[row as usize] += to;
            self.rec.flows.retransmits[row as usize] += rtx;
        } else {
            self.hosts.credit_app(tr, app, app_uid, to, rtx);
        }
        self.hosts.transfers.get_mut(tr).app = NO;
        if matches!(self.hosts.workloads[w as usize], crate::sim::workload::Workload::Background { .. }) && self.now < self.clock.arrivals_stop {
            self.start_background(w, src);
        }
        let after = self.one_way(src, dst, 0).map_or(0, |x| x.0);
        self.schedule(self.now + Time(after), Ev::Fin { tr, uid });
    }

    /// The sender's close reached transfer `tr`'s receiver (`sender_close`): the transfer ends.
    pub(crate) fn receiver_close(&mut self, tr: u32, uid: u32) {
        if self.hosts.close_receiver(tr, uid) {
            self.release_transfer(tr);
        }
    }

    /// Timeouts and retransmissions of an application flow so far (`Hosts::app_counts`).
    pub(crate) fn app_counts(&self, a: &App) -> (u32, u32) {
        self.hosts.app_counts(a, self.clock.finalized)
    }

    /// Base RTT between two hosts and the path's BDP (`Fabric::path_bdp`, a full segment there).
    pub(crate) fn path_bdp(&self, src: u32, dst: u32) -> Option<(Time, u64)> {
        self.fab.path_bdp(src, dst, self.scheme.tcp.mss as u64)
    }

    fn one_way(&self, src: u32, dst: u32, bytes: u64) -> Option<(u64, detailsim_engine::Rate)> {
        self.fab.one_way(src, dst, bytes)
    }

    /// The flow's completion time alone in the healthy, idle fabric, in picoseconds, for a sender that sends
    /// every frame at once (no handshake, no slow start, no pacing below line rate): `Fabric::ideal_transfer`
    /// (exact for a single path of FIFO hops; a bound for per-packet multipath), and, for a retrieval, its
    /// request's one-way time and its server's time (`server_time`) first. A line-rate sender alone takes
    /// exactly this; a window that grows takes longer; 0 when there is no path.
    pub(crate) fn ideal_fct(&self, a: &App) -> u64 {
        let mss = self.scheme.tcp.mss as u64;
        let multipath = matches!(self.scheme.load_balancing, crate::config::LoadBalancing::PacketScatter | crate::config::LoadBalancing::Adaptive);
        let Some(mut t) = self.fab.ideal_transfer(a.src, a.dst, mss, a.size, multipath) else { return 0 };
        if a.request > 0 {
            t += self.fab.ideal_transfer(a.dst, a.src, mss, a.request, multipath).unwrap_or(0);
            t += self.hosts.server_time[a.workload as usize].0;
        }
        t
    }

    /// The flow-table row of application flow `a` (`end` = u64::MAX while unfinished).
    pub(crate) fn app_record(&self, a: &App, end: u64) -> crate::stats::FlowRecord {
        let (to, rtx) = self.app_counts(a);
        let delivered = if end == u64::MAX { self.hosts.app_delivered(a) } else { a.size };
        // bytes delivered inside the window: up to its end (or now, if it has not ended), from its start
        let upto = a.win_end.unwrap_or(delivered);
        crate::stats::FlowRecord {
            id: a.id,
            class: a.class,
            src: self.host_index(a.src),
            dst: self.host_index(a.dst),
            size: a.size,
            prio: a.prio,
            start: a.start.0,
            end,
            timeouts: to,
            retransmits: rtx,
            ideal: self.ideal_fct(a),
            input_id: a.tag,
            delivered,
            window: match self.clock.window {
                None => 0,
                // finished before the window opened, or started after it closed
                Some((from, to)) if (end != u64::MAX && end < from.0) || a.start >= to || self.now < from => 0,
                Some(_) => upto.saturating_sub(a.win_base),
            },
        }
    }

    /// Open an application flow; returns its slot.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open_app(&mut self, workload: u32, class: u16, src: u32, dst: u32, size: u64, prio: u8) -> u32 {
        let uid = self.next_uid();
        let id = self.next_app_id();
        let measured = self.measuring();
        let a = App {
            uid,
            alive: true,
            id,
            class,
            workload,
            src,
            dst,
            size,
            prio,
            start: self.now,
            measured,
            transfers: [NO, NO],
            transfer_uids: [0, 0],
            timeouts: 0,
            retransmits: 0,
            workflow: NO,
            workflow_uid: 0,
            request: 0,
            win_base: 0,
            win_end: None,
            tag: 0,
            conn: 0,
        };
        if measured {
            // a part of a split run counts the flows that complete in it (the other end's part counts
            // this one when its copy arrives)
            if self.owns(dst) {
                self.rec.active_measured += 1;
            }
            self.rec.counters.flows_started += 1;
        }
        self.alloc_app(a)
    }

    fn app_complete(&mut self, app: u32) {
        let a = self.hosts.apps.get(app).clone();
        let (to, rtx) = self.app_counts(&a);
        if a.measured {
            let r = self.app_record(&a, self.now.0);
            self.push_row(&r);
            self.rec.counters.flows_completed += 1;
            self.rec.active_measured -= 1;
        }
        // detach live transfers so their later counts go nowhere (with the node order: to the flow's row,
        // when their senders close)
        let row = if a.measured { self.rec.flows.id.len() as u32 - 1 } else { NO };
        for i in 0..2 {
            let tr = a.transfers[i];
            if tr != NO {
                let t = self.hosts.transfers.get_mut(tr);
                if t.alive && t.uid == a.transfer_uids[i] {
                    t.app = NO;
                    t.row = row;
                    let uid = t.uid;
                    if self.foreign_slot(tr) {
                        // the sender's copy is in another part of a split run
                        self.send_to_owner(tr, crate::sim::parts::Msg::Row { tr, uid, row });
                    }
                }
            }
        }
        let am = self.hosts.apps.get_mut(app);
        am.alive = false;
        self.release_app(app);
        self.flow_finished(&a, to, rtx);
        self.check_finished();
    }
}

#[cfg(test)]
mod tests {
    use crate::packet::ECN_ECT;
    use crate::sim::trace::{TraceSpec, KIND_DATA};
    use crate::sim::Sim;

    /// ECN codepoints of the control segments (SYN, SYN-ACK, ACKs) and data segments of one flow.
    fn codepoints(scheme: &str) -> (Vec<u8>, Vec<u8>) {
        let mut sim = Sim::from_json(&format!(
            r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "single_switch", "hosts": 2}},
                "scheme": {scheme}, "workload": [{{"kind": "flows", "rows": [{{"src": 1, "dst": 0, "size_bytes": 30000, "start_s": 0.0}}]}}]}}"#
        ))
        .unwrap();
        sim.set_trace(&TraceSpec { flows: vec![0], nodes: vec![], ports: vec![] }).unwrap();
        sim.run();
        let t = sim.rec.trace.as_ref().unwrap();
        let (mut ctl, mut data) = (Vec::new(), Vec::new());
        for (k, e) in t.kind.iter().zip(&t.ecn) {
            if *k == KIND_DATA {
                data.push(*e)
            } else {
                ctl.push(*e)
            }
        }
        (ctl, data)
    }

    #[test]
    fn dctcp_marks_its_control_segments_ect_classic_ecn_does_not() {
        let (ctl, data) = codepoints(r#"{"preset": "dctcp", "tcp": {"handshake": true}}"#);
        assert!(!ctl.is_empty() && !data.is_empty());
        assert!(ctl.iter().chain(&data).all(|&e| e == ECN_ECT), "DCTCP: every packet ECT, as Linux's DCTCP");
        let (ctl, data) = codepoints(r#"{"preset": "tcp", "tcp": {"handshake": true, "ecn": true}}"#);
        assert!(ctl.iter().all(|&e| e == 0), "RFC 3168: SYNs and pure ACKs are not ECN-capable");
        assert!(data.iter().all(|&e| e == ECN_ECT));
    }
}
