//! Live mode's traffic agent: one per host namespace, one thread, one epoll loop over non-blocking kernel TCP
//! sockets. It replays the host's share of the simulator's flows (retrievals: a 10-byte request and an
//! N-byte response over warm persistent connections; one-way flows: a 17-byte header, N bytes, a 1-byte
//! acknowledgement), serves the other hosts' requests, and writes one JSON line per event it times.
//!
//! The protocol, the records and the phases are those `detailsim.live` documents (and the Python agent
//! it replaces had): write `OUT.ready` once listening; wait for the orchestrator's go file (the clock: `t0_ns`,
//! `end_ns` on CLOCK_MONOTONIC); open two warm connections per (peer, priority) from `t0 - warm_ns`; start
//! each flow at `t0 + start` (a timerfd, so to the nanosecond, not epoll's millisecond); write `OUT.done`
//! when every own flow has ended; keep serving until `end_ns` or the stop file. Every loop is bounded by
//! those times. Arrival times come from the kernel (`SO_TIMESTAMPNS` of the read that completed a
//! message), so a record says how long this process took to notice, which is the host delay the
//! orchestrator takes out of FCTs.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

const SERVER_PORT: u16 = 5001;
/// How long to wait for the go file: twice the orchestrator's own readiness timeout (60 s).
const GO_TIMEOUT_NS: u64 = 120_000_000_000;
/// The kernel caps SO_RCVLOWAT at half the receive buffer; above this it would never wake us.
const RCVLOWAT_MAX: u64 = 256 * 1024;
/// How often the stop and go files are looked for.
const FILE_CHECK_NS: u64 = 5_000_000;
/// Retry interval of a warm connection refused because the peer is not listening yet.
const WARM_RETRY_NS: u64 = 20_000_000;
static ZEROS: [u8; 65536] = [0; 65536];

const TOK_LISTEN: u64 = 0;
const TOK_TIMER: u64 = 1;
const TOK_CONN: u64 = 2;

fn mono_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

fn clock(id: libc::clockid_t) -> u64 {
    // SAFETY: clock_gettime fills the timespec passed.
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(id, &mut ts);
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}

fn last_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

fn setopt<T>(fd: i32, level: i32, opt: i32, v: &T) -> io::Result<()> {
    // SAFETY: v points to a live T of the size passed.
    let r = unsafe { libc::setsockopt(fd, level, opt, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32) };
    if r != 0 {
        return Err(last_err("setsockopt"));
    }
    Ok(())
}

/// One flow of this host's: it is the requester of a retrieval or the sender of a one-way flow.
#[derive(Debug, Clone)]
struct Flow {
    id: u64,
    peer: u32,
    size: u64,
    prio: u8,
    retrieval: bool,
    start_s: f64,
}

/// What a connection is doing.
#[derive(Debug)]
enum St {
    /// Client side: connecting; a flow waits for it (`Some`) or it is a warm connection (`None`).
    Connecting(Option<usize>),
    /// Client side: open and unused, in its (peer, priority) pool.
    Idle,
    /// Client side: sending the request or header (`hdr[off..len]`) and then `zeros` bytes of payload.
    Send {
        flow: usize,
        hdr: [u8; 18],
        len: usize,
        off: usize,
        zeros: u64,
    },
    /// Client side: waiting for `left` bytes (the response, or a one-way flow's 1-byte acknowledgement).
    Await {
        flow: usize,
        left: u64,
        ts: u64,
        low: u64,
    },
    /// Server side: reading a request or header into `buf[..have]`.
    Header {
        buf: [u8; 18],
        have: usize,
    },
    /// Server side: answering with `left` bytes.
    Respond {
        left: u64,
    },
    /// Server side: taking a one-way flow's `left` bytes, then acknowledging.
    Sink {
        id: u64,
        left: u64,
        ts: u64,
    },
    Ack,
}

struct Conn {
    fd: i32,
    /// (peer, priority) of a client connection.
    key: (u32, u8),
    tos_prio: i32,
    st: St,
}

impl Conn {
    fn set_priority(&mut self, prio: u8) {
        if self.tos_prio != prio as i32 {
            let tos: libc::c_int = ((8 * prio as i32) << 2) as libc::c_int; // DSCP CS<prio>, ECN bits to the kernel
            let _ = setopt(self.fd, libc::IPPROTO_IP, libc::IP_TOS, &tos);
            self.tos_prio = prio as i32;
        }
    }
}

/// The state of one flow's timing (start, and the records' fields).
#[derive(Debug, Clone, Copy, Default)]
struct Timing {
    at_ns: u64,
    start_ns: u64,
    rt0: u32,
}

struct Agent {
    ips: HashMap<u32, libc::in_addr>,
    cc: Vec<u8>,
    ep: i32,
    timer: i32,
    listen: i32,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    idle: HashMap<(u32, u8), Vec<usize>>,
    flows: Vec<Flow>,
    timing: Vec<Timing>,
    /// Index of the next flow to start (flows sorted by start time).
    next: usize,
    ended: usize,
    out: BufWriter<File>,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, for the kernel's receive timestamps.
    real_minus_mono: i128,
    /// Warm connections to open again (the peer was not listening yet): when, to whom, the last error.
    warm_retry: Vec<(u64, (u32, u8), String)>,
}

fn recv_ts(fd: i32, buf: &mut [u8], real_minus_mono: i128) -> io::Result<(usize, Option<u64>)> {
    // SAFETY: the iovec and control buffers are live for the call; the cmsg walk uses libc's macros on the
    // msghdr the kernel filled.
    unsafe {
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
        let mut ctl = [0u64; 8];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&ctl);
        let n = libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut ts = None;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                let t = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                let real = t.tv_sec as i128 * 1_000_000_000 + t.tv_nsec as i128;
                ts = Some((real - real_minus_mono).max(0) as u64);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n as usize, ts))
    }
}

fn send_some(fd: i32, data: &[u8]) -> io::Result<usize> {
    // SAFETY: data is a live slice.
    let n = unsafe { libc::send(fd, data.as_ptr() as *const libc::c_void, data.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

fn total_retrans(fd: i32) -> u32 {
    // SAFETY: tcp_info is plain data of the size passed.
    unsafe {
        let mut info: libc::tcp_info = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::tcp_info>() as u32;
        if libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut libc::c_void, &mut len) != 0 {
            return 0;
        }
        info.tcpi_total_retrans
    }
}

fn would_block(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock
}

impl Agent {
    fn record(&mut self, v: Value) {
        let _ = writeln!(self.out, "{v}");
    }

    fn socket_options(&self, fd: i32) -> io::Result<()> {
        let one: libc::c_int = 1;
        setopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &one)?;
        setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one)?;
        // SAFETY: the name buffer is live for the call.
        let r = unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, self.cc.as_ptr() as *const libc::c_void, self.cc.len() as u32) };
        if r != 0 {
            return Err(last_err("TCP_CONGESTION"));
        }
        Ok(())
    }

    fn add(&mut self, c: Conn) -> usize {
        let fd = c.fd;
        let i = match self.free.pop() {
            Some(i) => {
                self.conns[i] = Some(c);
                i
            }
            None => {
                self.conns.push(Some(c));
                self.conns.len() - 1
            }
        };
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET | libc::EPOLLRDHUP) as u32, u64: TOK_CONN + i as u64 };
        // SAFETY: registering a socket this agent owns.
        unsafe { libc::epoll_ctl(self.ep, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        i
    }

    fn close(&mut self, i: usize) {
        if let Some(c) = self.conns[i].take() {
            // SAFETY: closing a socket this agent owns (which also takes it out of the epoll set).
            unsafe { libc::close(c.fd) };
            self.free.push(i);
        }
    }

    /// Open a client connection to `key` (non-blocking); `flow` waits for it, or it is a warm one.
    fn connect(&mut self, key: (u32, u8), flow: Option<usize>) -> io::Result<usize> {
        let addr = *self.ips.get(&key.0).ok_or_else(|| io::Error::other(format!("no address for host {}", key.0)))?;
        // SAFETY: a socket this function owns; the address is a live sockaddr_in.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
            if fd < 0 {
                return Err(last_err("socket"));
            }
            let mut c = Conn { fd, key, tos_prio: -1, st: St::Connecting(flow) };
            if let Err(e) = self.socket_options(fd) {
                libc::close(fd);
                return Err(e);
            }
            c.set_priority(key.1);
            let sa = libc::sockaddr_in { sin_family: libc::AF_INET as u16, sin_port: SERVER_PORT.to_be(), sin_addr: addr, sin_zero: [0; 8] };
            let r = libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32);
            if r != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
                let e = last_err("connect");
                libc::close(fd);
                return Err(e);
            }
            Ok(self.add(c))
        }
    }

    fn arm_timer(&self, at_ns: u64) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec { tv_sec: (at_ns / 1_000_000_000) as libc::time_t, tv_nsec: (at_ns % 1_000_000_000) as libc::c_long },
        };
        // SAFETY: arming a timerfd this agent owns.
        unsafe { libc::timerfd_settime(self.timer, libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// Begin flow `f` on connection `i` (open, idle): send its request or header.
    fn begin(&mut self, f: usize, i: usize) {
        let fl = self.flows[f].clone();
        let c = self.conns[i].as_mut().expect("live connection");
        let fd = c.fd;
        let start = mono_ns();
        let mut hdr = [0u8; 18];
        let (len, zeros) = if fl.retrieval {
            // wake the reader once the whole response is queued, not once per segment
            let low: libc::c_int = fl.size.min(RCVLOWAT_MAX) as libc::c_int;
            let _ = setopt(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT, &low);
            hdr[0] = b'R';
            hdr[1..5].copy_from_slice(&(fl.size as u32).to_be_bytes());
            hdr[5..9].copy_from_slice(&(fl.id as u32).to_be_bytes());
            hdr[9] = fl.prio;
            (10, 0)
        } else {
            hdr[0] = b'W';
            hdr[1..9].copy_from_slice(&fl.id.to_be_bytes());
            hdr[9..17].copy_from_slice(&fl.size.to_be_bytes());
            hdr[17] = fl.prio;
            (18, fl.size)
        };
        c.st = St::Send { flow: f, hdr, len, off: 0, zeros };
        let t = &mut self.timing[f];
        t.start_ns = start;
        t.rt0 = total_retrans(fd);
        self.drive(i);
    }

    /// Start every flow due by `now`, each on an idle connection of its (peer, priority) or a new one.
    fn start_due(&mut self, now: u64) {
        while self.next < self.flows.len() && self.timing[self.next].at_ns <= now {
            let f = self.next;
            self.next += 1;
            let key = (self.flows[f].peer, self.flows[f].prio);
            match self.idle.get_mut(&key).and_then(|v| v.pop()) {
                Some(i) => self.begin(f, i),
                None => {
                    if let Err(e) = self.connect(key, Some(f)) {
                        self.flow_error(f, mono_ns(), &format!("connect: {e}"));
                    }
                }
            }
        }
        if self.next < self.flows.len() {
            self.arm_timer(self.timing[self.next].at_ns);
        }
    }

    fn flow_error(&mut self, f: usize, start: u64, err: &str) {
        let late = start.saturating_sub(self.timing[f].at_ns);
        self.ended += 1;
        let id = self.flows[f].id;
        self.record(json!({"id": id, "start_ns": start, "late_ns": late, "error": err}));
    }

    /// Make as much progress on connection `i` as its socket allows (edge-triggered: until it would block).
    fn drive(&mut self, i: usize) {
        let mut buf = [0u8; 65536];
        loop {
            let Some(c) = self.conns[i].as_mut() else { return };
            let fd = c.fd;
            match &mut c.st {
                St::Connecting(flow) => {
                    let flow = *flow;
                    let mut err: libc::c_int = 0;
                    let mut len = std::mem::size_of::<libc::c_int>() as u32;
                    // SAFETY: reading an int socket option into a live int.
                    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err as *mut _ as *mut libc::c_void, &mut len) };
                    if err == libc::EINPROGRESS || err == libc::EALREADY {
                        return;
                    }
                    // connected once the socket is writable without error; not yet if it is neither
                    let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                    // SAFETY: polling one live fd without waiting.
                    unsafe { libc::poll(&mut pfd, 1, 0) };
                    if err == 0 && pfd.revents & libc::POLLOUT == 0 {
                        return;
                    }
                    let key = c.key;
                    if err != 0 {
                        let e = io::Error::from_raw_os_error(err);
                        self.close(i);
                        match flow {
                            Some(f) => self.flow_error(f, mono_ns(), &format!("connect: {e}")),
                            None => self.warm_failed(key, &e),
                        }
                        return;
                    }
                    c.st = St::Idle;
                    match flow {
                        Some(f) => self.begin(f, i),
                        None => self.idle.entry(key).or_default().push(i),
                    }
                    return;
                }
                St::Idle => {
                    // an idle client connection: the peer may only close it
                    if let Ok((0, _)) = recv_ts(fd, &mut buf, self.real_minus_mono) {
                        let key = c.key;
                        if let Some(v) = self.idle.get_mut(&key) {
                            v.retain(|&x| x != i);
                        }
                        self.close(i);
                    }
                    return;
                }
                St::Send { flow, hdr, len, off, zeros } => {
                    let r = if *off < *len { send_some(fd, &hdr[*off..*len]) } else { send_some(fd, &ZEROS[..(*zeros).min(ZEROS.len() as u64) as usize]) };
                    match r {
                        Ok(n) => {
                            if *off < *len {
                                *off += n;
                            } else {
                                *zeros -= n as u64;
                            }
                            if *off == *len && *zeros == 0 {
                                let f = *flow;
                                let left = if self.flows[f].retrieval { self.flows[f].size } else { 1 };
                                c.st = St::Await { flow: f, left, ts: 0, low: left.min(RCVLOWAT_MAX) };
                            }
                        }
                        Err(e) if would_block(&e) => return,
                        Err(e) => {
                            let f = *flow;
                            self.client_failed(i, f, &e);
                            return;
                        }
                    }
                }
                St::Await { flow, left, ts, low } => {
                    let want = (*left).min(buf.len() as u64) as usize;
                    match recv_ts(fd, &mut buf[..want], self.real_minus_mono) {
                        Ok((0, _)) => {
                            let f = *flow;
                            self.client_failed(i, f, &io::Error::other("closed by the peer"));
                            return;
                        }
                        Ok((n, t)) => {
                            *left -= n as u64;
                            if let Some(t) = t {
                                *ts = t;
                            }
                            if *left > 0 && *left < *low {
                                // epoll wakes a reader only once SO_RCVLOWAT bytes wait: never lower than what is left
                                *low = *left;
                                let l: libc::c_int = *left as libc::c_int;
                                let _ = setopt(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT, &l);
                            }
                            if *left == 0 {
                                let (f, kts) = (*flow, *ts);
                                let end = mono_ns();
                                let retr = total_retrans(fd).saturating_sub(self.timing[f].rt0);
                                c.st = St::Idle;
                                let key = c.key;
                                let t = &self.timing[f];
                                let (start, late) = (t.start_ns, t.start_ns.saturating_sub(t.at_ns));
                                self.ended += 1;
                                let id = self.flows[f].id;
                                self.record(json!({"id": id, "start_ns": start, "late_ns": late, "end_ns": end,
                                                   "end_kernel_ns": if kts > 0 { kts } else { end }, "retransmits": retr}));
                                self.idle.entry(key).or_default().push(i);
                                return;
                            }
                        }
                        Err(e) if would_block(&e) => return,
                        Err(e) => {
                            let f = *flow;
                            self.client_failed(i, f, &e);
                            return;
                        }
                    }
                }
                St::Header { buf: hb, have } => {
                    // "R" + size u32 + id u32 + priority: 10 bytes; "W" + id u64 + size u64 + priority: 18
                    let need = if *have == 0 {
                        1
                    } else if hb[0] == b'R' {
                        10
                    } else {
                        18
                    };
                    match recv_ts(fd, &mut hb[*have..need], self.real_minus_mono) {
                        Ok((0, _)) => {
                            self.close(i);
                            return;
                        }
                        Ok((n, t)) => {
                            *have += n;
                            if *have == 1 && hb[0] != b'R' && hb[0] != b'W' {
                                self.close(i);
                                return;
                            }
                            if *have == 1 || *have < need {
                                continue;
                            }
                            let h = *hb;
                            let arrived = t.unwrap_or_else(mono_ns);
                            if h[0] == b'R' {
                                let size = u32::from_be_bytes(h[1..5].try_into().expect("4 bytes")) as u64;
                                let id = u32::from_be_bytes(h[5..9].try_into().expect("4 bytes")) as u64;
                                c.set_priority(h[9]);
                                c.st = St::Respond { left: size };
                                // how long this host took to answer after the request reached its kernel
                                let d = mono_ns().saturating_sub(arrived);
                                self.record(json!({"id": id, "respond_delay_ns": d}));
                            } else {
                                let id = u64::from_be_bytes(h[1..9].try_into().expect("8 bytes"));
                                let size = u64::from_be_bytes(h[9..17].try_into().expect("8 bytes"));
                                c.set_priority(h[17]);
                                c.st = if size == 0 { St::Ack } else { St::Sink { id, left: size, ts: arrived } };
                            }
                        }
                        Err(e) if would_block(&e) => return,
                        Err(_) => {
                            self.close(i);
                            return;
                        }
                    }
                }
                St::Respond { left } => {
                    if *left == 0 {
                        c.st = St::Header { buf: [0; 18], have: 0 };
                        continue;
                    }
                    match send_some(fd, &ZEROS[..(*left).min(ZEROS.len() as u64) as usize]) {
                        Ok(n) => *left -= n as u64,
                        Err(e) if would_block(&e) => return,
                        Err(_) => {
                            self.close(i);
                            return;
                        }
                    }
                }
                St::Sink { id, left, ts } => {
                    let want = (*left).min(buf.len() as u64) as usize;
                    match recv_ts(fd, &mut buf[..want], self.real_minus_mono) {
                        Ok((0, _)) => {
                            self.close(i);
                            return;
                        }
                        Ok((n, t)) => {
                            *left -= n as u64;
                            if let Some(t) = t {
                                *ts = t;
                            }
                            if *left == 0 {
                                let (id, kts) = (*id, *ts);
                                let now = mono_ns();
                                c.st = St::Ack;
                                self.record(json!({"id": id, "rx_end_ns": now, "rx_end_kernel_ns": kts}));
                            }
                        }
                        Err(e) if would_block(&e) => return,
                        Err(_) => {
                            self.close(i);
                            return;
                        }
                    }
                }
                St::Ack => match send_some(fd, b"A") {
                    Ok(1) => c.st = St::Header { buf: [0; 18], have: 0 },
                    Ok(_) => return,
                    Err(e) if would_block(&e) => return,
                    Err(_) => {
                        self.close(i);
                        return;
                    }
                },
            }
        }
    }

    fn client_failed(&mut self, i: usize, f: usize, e: &io::Error) {
        let start = self.timing[f].start_ns;
        self.close(i);
        self.flow_error(f, start, &e.to_string());
    }

    fn warm_failed(&mut self, key: (u32, u8), e: &io::Error) {
        self.warm_retry.push((mono_ns() + WARM_RETRY_NS, key, e.to_string()));
    }
}

/// What the orchestrator's plan gives an agent.
struct Plan {
    ips: HashMap<u32, libc::in_addr>,
    /// This host's flows, by start time.
    flows: Vec<Flow>,
    warm_ns: u64,
    go_file: PathBuf,
    stop_file: PathBuf,
    cc: String,
}

fn parse_plan(plan: &Value, me: u32) -> Result<Plan, String> {
    let bad = |w: &str| format!("plan: {w}");
    let mut ips = HashMap::new();
    for h in plan["hosts"].as_array().ok_or_else(|| bad("hosts"))? {
        let i = h["index"].as_u64().ok_or_else(|| bad("hosts[].index"))? as u32;
        let ip: std::net::Ipv4Addr = h["ip"].as_str().and_then(|s| s.parse().ok()).ok_or_else(|| bad("hosts[].ip"))?;
        ips.insert(i, libc::in_addr { s_addr: u32::from_ne_bytes(ip.octets()) });
    }
    let mut flows = Vec::new();
    for f in plan["flows"].as_array().ok_or_else(|| bad("flows"))? {
        let get = |k: &str| f[k].as_u64().ok_or_else(|| bad(&format!("flows[].{k}")));
        let retrieval = f["retrieval"].as_bool().ok_or_else(|| bad("flows[].retrieval"))?;
        let (src, dst) = (get("src")? as u32, get("dst")? as u32);
        // this host's flows: it requests a retrieval (the data flows src -> dst) or sends a one-way flow
        let (mine, peer) = if retrieval { (dst == me, src) } else { (src == me, dst) };
        if !mine {
            continue;
        }
        flows.push(Flow {
            id: get("id")?,
            peer,
            size: get("size")?,
            prio: get("priority")? as u8,
            retrieval,
            start_s: f["start"].as_f64().ok_or_else(|| bad("flows[].start"))?,
        });
    }
    flows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s).then(a.id.cmp(&b.id)));
    Ok(Plan {
        ips,
        flows,
        warm_ns: plan["warm_ns"].as_u64().ok_or_else(|| bad("warm_ns"))?,
        go_file: PathBuf::from(plan["go_file"].as_str().ok_or_else(|| bad("go_file"))?),
        stop_file: PathBuf::from(plan["stop_file"].as_str().ok_or_else(|| bad("stop_file"))?),
        cc: plan["cc"].as_str().ok_or_else(|| bad("cc"))?.to_string(),
    })
}

/// Run host `me`'s agent with the plan at `plan_path`, writing records to `out` (JSON lines), `out.ready` once
/// it listens and `out.done` once its own flows have ended. Returns when the run's end time passes, the stop
/// file appears, or the go file does not come in time.
pub fn run(plan_path: &Path, me: u32, out: &Path) -> io::Result<()> {
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(plan_path)?).map_err(|e| io::Error::other(format!("plan: {e}")))?;
    let Plan { ips, flows, warm_ns, go_file, stop_file, cc } = parse_plan(&plan, me).map_err(io::Error::other)?;
    let my_ip = *ips.get(&me).ok_or_else(|| io::Error::other(format!("plan: no host {me}")))?;
    let n = flows.len();
    let real_minus_mono = clock(libc::CLOCK_REALTIME) as i128 - mono_ns() as i128;
    // SAFETY: epoll, timerfd and the listening socket are created and owned here; closed at the end.
    let (ep, timer, listen) = unsafe {
        let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        let timer = libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC);
        let listen = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0);
        if ep < 0 || timer < 0 || listen < 0 {
            return Err(last_err("epoll, timerfd or socket"));
        }
        (ep, timer, listen)
    };
    let mut a = Agent {
        ips,
        cc: cc.into_bytes(),
        ep,
        timer,
        listen,
        conns: Vec::new(),
        free: Vec::new(),
        idle: HashMap::new(),
        flows,
        timing: vec![Timing::default(); n],
        next: 0,
        ended: 0,
        out: BufWriter::new(File::create(out)?),
        real_minus_mono,
        warm_retry: Vec::new(),
    };
    let res = a.main(my_ip, warm_ns, &go_file, &stop_file, out);
    let _ = a.out.flush();
    for i in 0..a.conns.len() {
        a.close(i);
    }
    // SAFETY: closing what this function created.
    unsafe {
        libc::close(listen);
        libc::close(timer);
        libc::close(ep);
    }
    res
}

impl Agent {
    fn main(&mut self, my_ip: libc::in_addr, warm_ns: u64, go_file: &Path, stop_file: &Path, out: &Path) -> io::Result<()> {
        let one: libc::c_int = 1;
        setopt(self.listen, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one)?;
        // accepted connections inherit the listener's congestion control
        // SAFETY: the name buffer is live for the call; the address is a live sockaddr_in.
        unsafe {
            if libc::setsockopt(self.listen, libc::IPPROTO_TCP, libc::TCP_CONGESTION, self.cc.as_ptr() as *const libc::c_void, self.cc.len() as u32) != 0 {
                return Err(last_err("TCP_CONGESTION on the listener"));
            }
            let sa = libc::sockaddr_in { sin_family: libc::AF_INET as u16, sin_port: SERVER_PORT.to_be(), sin_addr: my_ip, sin_zero: [0; 8] };
            if libc::bind(self.listen, &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) != 0 {
                return Err(last_err("bind"));
            }
            if libc::listen(self.listen, 1024) != 0 {
                return Err(last_err("listen"));
            }
            for (fd, tok) in [(self.listen, TOK_LISTEN), (self.timer, TOK_TIMER)] {
                let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tok };
                libc::epoll_ctl(self.ep, libc::EPOLL_CTL_ADD, fd, &mut ev);
            }
        }
        let path_with = |ext: &str| PathBuf::from(format!("{}.{ext}", out.display()));
        // tell the orchestrator this host listens, then serve while waiting for the clock
        std::fs::write(path_with("ready"), b"ready\n")?;
        let give_up = mono_ns() + GO_TIMEOUT_NS;
        let mut clock: Option<(u64, u64)> = None;
        let mut warmed = false;
        let mut done_written = false;
        let mut files_checked = 0u64;
        let mut events: Vec<libc::epoll_event> = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
        loop {
            let now = mono_ns();
            if now >= files_checked + FILE_CHECK_NS {
                files_checked = now;
                if stop_file.exists() {
                    return Ok(());
                }
                if clock.is_none() {
                    if let Ok(text) = std::fs::read_to_string(go_file) {
                        let v: Value = serde_json::from_str(&text).map_err(|e| io::Error::other(format!("go file: {e}")))?;
                        let (t0, end) = (v["t0_ns"].as_u64().unwrap_or(0), v["end_ns"].as_u64().unwrap_or(0));
                        for (t, f) in self.timing.iter_mut().zip(&self.flows) {
                            t.at_ns = t0 + (f.start_s * 1e9).round() as u64;
                        }
                        clock = Some((t0, end));
                    } else if now > give_up {
                        return Ok(());
                    }
                }
            }
            let Some((t0, end_ns)) = clock else {
                self.wait(&mut events, FILE_CHECK_NS)?;
                continue;
            };
            if now >= end_ns {
                return Ok(());
            }
            // warm connections: two per peer and priority, opened before the clock starts (the simulator's
            // connections exist before their first flow); a refused one is tried again until t0
            if !warmed && now + warm_ns >= t0 {
                warmed = true;
                let mut keys: Vec<(u32, u8)> = self.flows.iter().map(|f| (f.peer, f.prio)).collect();
                keys.sort_unstable();
                keys.dedup();
                for key in keys {
                    for _ in 0..2 {
                        if let Err(e) = self.connect(key, None) {
                            self.warm_failed(key, &e);
                        }
                    }
                }
            }
            if !self.warm_retry.is_empty() {
                let due: Vec<_> = self.warm_retry.iter().filter(|r| r.0 <= now).cloned().collect();
                self.warm_retry.retain(|r| r.0 > now);
                for (_, key, err) in due {
                    if now > t0 {
                        self.record(json!({"warm_error": err, "peer": key.0}));
                    } else if let Err(e) = self.connect(key, None) {
                        self.warm_failed(key, &e);
                    }
                }
            }
            if now >= t0 {
                self.start_due(now);
            } else if self.next < self.flows.len() {
                self.arm_timer(self.timing[self.next].at_ns.max(t0));
            }
            if !done_written && self.ended == self.flows.len() && now >= t0 {
                done_written = true;
                self.out.flush()?;
                std::fs::write(path_with("done"), b"done\n")?;
            }
            let mut wait = FILE_CHECK_NS;
            if let Some(r) = self.warm_retry.iter().map(|r| r.0).min() {
                wait = wait.min(r.saturating_sub(now));
            }
            self.wait(&mut events, wait)?;
        }
    }

    /// Wait up to `ns` (millisecond resolution; flow starts come through the timerfd to the nanosecond) and
    /// handle what is ready.
    fn wait(&mut self, events: &mut [libc::epoll_event], ns: u64) -> io::Result<()> {
        let ms = ns.div_ceil(1_000_000).min(1_000) as i32;
        // SAFETY: events is a live buffer of the length passed.
        let k = unsafe { libc::epoll_wait(self.ep, events.as_mut_ptr(), events.len() as i32, ms) };
        if k < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted { Ok(()) } else { Err(e) };
        }
        for ev in events.iter().take(k as usize).copied() {
            match ev.u64 {
                TOK_LISTEN => self.accept_all(),
                TOK_TIMER => {
                    let mut x = [0u8; 8];
                    // SAFETY: reading the timerfd's 8-byte expiry count into a live buffer.
                    unsafe { libc::read(self.timer, x.as_mut_ptr() as *mut libc::c_void, 8) };
                    self.start_due(mono_ns());
                }
                t => self.drive((t - TOK_CONN) as usize),
            }
        }
        Ok(())
    }

    fn accept_all(&mut self) {
        loop {
            // SAFETY: accepting on the listener this agent owns.
            let fd = unsafe { libc::accept4(self.listen, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
            if fd < 0 {
                return;
            }
            let one: libc::c_int = 1;
            let _ = setopt(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, &one);
            let _ = setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &one);
            let i = self.add(Conn { fd, key: (u32::MAX, 0), tos_prio: -1, st: St::Header { buf: [0; 18], have: 0 } });
            self.drive(i);
        }
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
