//! The host side: the transfers (one direction of a TCP connection each), the application flows they
//! serve, the workflows and workloads that start them, and NIC admission. `Hosts` owns that state and the
//! steps that touch nothing else (a sender's NIC room before an input and its queueing for room after, the
//! next sender a NIC resumes, a new transfer's record, a flow's counts and bytes delivered); the glue that
//! schedules events and moves packets is `sim/host.rs`'s.

use crate::mechanisms::queue::EgressQueue;
use crate::transport::tcp::{SegOut, TcpReceiver, TcpSender};
use detailsim_engine::{Arena, StripedArena, Time};

use super::NO;

/// The host side: the transport's parameters, the transfers (one direction of a connection each) and the
/// application flows they serve, the workflows and workloads that start them, NIC admission and the
/// transfers waiting for it, and the counters that name transfers, timers and flows.
pub struct Hosts {
    /// `scheme.tcp`, shared: the TCP glue hands it to the state machines on every packet without copying.
    pub(crate) tcp: std::sync::Arc<crate::config::TcpParams>,
    /// Per node (hosts): transfers waiting for room in the NIC queue, as (priority, transfer, uid), served
    /// highest priority first, in order of blocking within a priority. Kept out of `Node`, which stays one
    /// cache line.
    pub nic_waiting: Vec<crate::mechanisms::nic::Backlog>,
    /// Host NIC admission: bytes kept free of data for control segments, and the full frame size.
    pub nic: crate::mechanisms::nic::Admission,
    /// Transfers and flows (a part of a split run: its own and copies of others', `StripedArena`).
    pub transfers: StripedArena<Transfer>,
    pub apps: StripedArena<App>,
    pub workflows: Arena<crate::sim::workload::Workflow>,
    pub(crate) workloads: Vec<crate::sim::Workload>,
    /// Per workload: the responder's time between a request's arrival and its response (`server_time`).
    pub(crate) server_time: Vec<Time>,
    /// Incarnations of transfer slots, timer tokens, flow ids.
    pub(crate) uid: u32,
    pub(crate) token: u32,
    pub(crate) next_app_id: u64,
    /// Segments a TCP state machine asks to send (reused from event to event).
    pub(crate) segs: Vec<SegOut>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Request,
    Response,
    OneWay,
}

/// `Transfer::hops_fwd` / `hops_rev` not yet found (a bit no settled hops use).
pub const HOPS_UNSET: u32 = 1 << 31;

/// One direction of a TCP connection carrying `size` bytes from `src` to `dst`.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub uid: u32,
    pub alive: bool,
    pub app: u32,
    pub app_uid: u32,
    pub role: Role,
    pub src: u32,
    pub dst: u32,
    pub prio: u8,
    pub hash_fwd: u32,
    pub hash_rev: u32,
    /// The settled hops of its data and of its acknowledgements (`Packet::hops`), found when the first
    /// of each is sent (`HOPS_UNSET` until then).
    pub hops_fwd: u32,
    pub hops_rev: u32,
    pub sport: u16,
    pub dport: u16,
    /// Id of the application flow (as in the flow table), for traces.
    pub app_id: u64,
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    pub rtx_token: u32,
    pub rtx_event_at: Option<Time>,
    pub del_token: u32,
    pub del_event_at: Option<Time>,
    pub snd_done: bool,
    pub rcv_done: bool,
    /// The workload the transfer's flow belongs to.
    pub workload: u32,
    /// `run.event_order = "node"`: the receiving end takes packets until the sender's close reaches it
    /// (`Ev::Fin`); the flow-table row its flow completed into (NO: none yet), which the sender adds its
    /// timeouts and retransmissions to when it closes.
    pub rcv_open: bool,
    pub row: u32,
}

impl Transfer {
    /// The host that receives its flow's data, where the flow completes (a request's sender).
    pub fn flow_receiver(&self) -> u32 {
        if self.role == Role::Request {
            self.src
        } else {
            self.dst
        }
    }
}

/// An application flow: a retrieval (request then response), or a one-way flow.
#[derive(Debug, Clone)]
pub struct App {
    pub uid: u32,
    pub alive: bool,
    pub id: u64,
    pub class: u16,
    pub workload: u32,
    /// Data sender and data receiver (for a retrieval: responder and requester).
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub prio: u8,
    pub start: Time,
    pub measured: bool,
    pub transfers: [u32; 2],
    pub transfer_uids: [u32; 2],
    pub timeouts: u32,
    pub retransmits: u32,
    /// The workflow this retrieval belongs to (slot and uid), or NO.
    pub workflow: u32,
    pub workflow_uid: u32,
    /// Request size of a retrieval (0 for a one-way flow).
    pub request: u64,
    /// Bytes delivered when the measurement window opened (0 if it started later), and when it closed
    /// (None until then).
    pub win_base: u64,
    pub win_end: Option<u64>,
    /// A flow-list row's input id (`FlowRow::id`); 0 for generated flows.
    pub tag: u64,
    /// A retrieval whose response waits for its server's time (`server_time`): the request's connection
    /// (source and destination ports, packed), which the response travels back on.
    pub conn: u32,
}

/// A sender the NIC stopped for lack of room: its host, priority and incarnation (`Hosts::after_sender`).
pub(crate) struct Blocked {
    pub src: u32,
    pub prio: u8,
    pub uid: u32,
}

impl Hosts {
    /// Before an input to transfer `tr`'s sender: tell it how many full-size segments its host's NIC
    /// (`nic`, its queue) can take now (back-pressure without handing segments back).
    #[inline]
    pub(crate) fn prep_sender(&mut self, tr: u32, nic: &EgressQueue) {
        let room = self.nic.room(nic);
        let snd = &mut self.transfers.get_mut(tr).snd;
        snd.nic_room = room.min(u32::MAX as u64) as u32;
        snd.nic_limited = false;
    }

    /// After an input to transfer `tr`'s sender: whether it stopped for lack of NIC room, and who it is.
    #[inline]
    pub(crate) fn stopped_sender(&self, tr: u32) -> Option<Blocked> {
        let t = self.transfers.get(tr);
        t.snd.nic_limited.then_some(Blocked { src: t.src, prio: t.prio, uid: t.uid })
    }

    /// Whether host `node`'s NIC (its queue `nic`) takes `wire` bytes of data now (it keeps headroom for
    /// control).
    #[inline]
    pub(crate) fn nic_admits(&self, nic: &EgressQueue, wire: u64) -> bool {
        self.nic.admits(nic, wire)
    }

    /// The next transfer host `node`'s NIC (its queue `nic`) resumes: the highest-priority waiting sender
    /// still alive, while a full data frame fits; None when none waits or none fits.
    pub(crate) fn next_waiting(&mut self, node: u32, nic: &EgressQueue) -> Option<u32> {
        while !self.nic_waiting[node as usize].is_empty() && self.nic_admits(nic, self.nic.frame) {
            let (tr, uid) = self.nic_waiting[node as usize].take_next().expect("non-empty");
            let t = self.transfers.get(tr);
            if t.alive && t.uid == uid {
                return Some(tr);
            }
        }
        None
    }

    /// A transfer of `size` bytes from `src` to `dst` for application flow `app` (incarnation `uid`, TCP
    /// ports `sport` to `dport`), its sender built with the scheme's `tcp` and sending a SYN first if
    /// `handshake`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_transfer(
        &self,
        app: u32,
        role: Role,
        (src, dst, size, prio): (u32, u32, u64, u8),
        uid: u32,
        (sport, dport): (u32, u32),
        tcp: &crate::config::TcpParams,
        handshake: bool,
    ) -> Transfer {
        let a = self.apps.get(app);
        Transfer {
            uid,
            alive: true,
            app,
            app_uid: a.uid,
            role,
            src,
            dst,
            prio,
            hash_fwd: hash4(src, dst, sport, dport),
            hash_rev: hash4(dst, src, dport, sport),
            hops_fwd: HOPS_UNSET,
            hops_rev: HOPS_UNSET,
            sport: sport as u16,
            dport: dport as u16,
            app_id: a.id,
            snd: TcpSender::new(size, tcp, handshake),
            rcv: TcpReceiver::new(size),
            rtx_token: 0,
            rtx_event_at: None,
            del_token: 0,
            del_event_at: None,
            snd_done: false,
            rcv_done: false,
            workload: a.workload,
            rcv_open: true,
            row: NO,
        }
    }

    /// The sender's close reached transfer `tr`'s receiver (incarnation `uid`): the transfer ends; false if
    /// it had already.
    pub(crate) fn close_receiver(&mut self, tr: u32, uid: u32) -> bool {
        let t = self.transfers.get_mut(tr);
        if t.uid != uid || !t.alive {
            return false;
        }
        t.rcv_open = false;
        t.alive = false;
        t.app = NO;
        true
    }

    /// Transfer `tr`, whose sender is done, adds its timeouts and retransmissions to its application flow
    /// (`app`, incarnation `app_uid`) if that is still running, and leaves it.
    pub(crate) fn credit_app(&mut self, tr: u32, app: u32, app_uid: u32, to: u32, rtx: u32) {
        if app == NO {
            return;
        }
        let a = self.apps.get_mut(app);
        if a.alive && a.uid == app_uid {
            a.timeouts += to;
            a.retransmits += rtx;
            for i in 0..2 {
                if a.transfers[i] == tr {
                    a.transfers[i] = NO;
                }
            }
        }
    }

    /// Timeouts and retransmissions of an application flow so far. During the run (`finalized` false) only
    /// what closed senders reported (`Sim::sender_close`): a sender still open is another node's state; it
    /// adds its counts to the flow's row when it closes.
    pub(crate) fn app_counts(&self, a: &App, finalized: bool) -> (u32, u32) {
        let (mut to, mut rtx) = (a.timeouts, a.retransmits);
        if !finalized {
            return (to, rtx);
        }
        for i in 0..2 {
            let tr = a.transfers[i];
            if tr != NO {
                let t = self.transfers.get(tr);
                if t.alive && t.uid == a.transfer_uids[i] {
                    to += t.snd.timeouts;
                    rtx += t.snd.retransmits;
                }
            }
        }
        (to, rtx)
    }

    /// Bytes of application flow `a` delivered in order to its receiving application so far.
    pub(crate) fn app_delivered(&self, a: &App) -> u64 {
        if !a.alive {
            return a.size;
        }
        // a retrieval's data is its response (slot 1); before the response starts nothing was delivered
        let i = if a.transfers[1] != NO {
            1
        } else if a.request > 0 {
            return 0;
        } else {
            0
        };
        let tr = a.transfers[i];
        if tr == NO {
            return 0;
        }
        let t = self.transfers.get(tr);
        if t.alive && t.uid == a.transfer_uids[i] {
            t.rcv.rcv_nxt.min(a.size)
        } else {
            0
        }
    }
}

/// A connection's hash (ECMP's flow hash) from its 4-tuple.
fn hash4(a: u32, b: u32, c: u32, d: u32) -> u32 {
    let mut z = ((a as u64) << 32 | b as u64) ^ ((c as u64) << 16 | d as u64).rotate_left(17);
    z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    (z ^ (z >> 33)) as u32
}
