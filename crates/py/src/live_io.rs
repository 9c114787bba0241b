//! Live mode's I/O loop: one AF_PACKET socket per interface of the fabric namespace, each with a memory-mapped
//! receive ring (TPACKET_V2: a frame is handed over as soon as it lands; TPACKET_V3 hands over whole blocks,
//! which at these rates would hold frames up to its block timeout of at least 1 ms), frames written with
//! `send` bypassing the qdisc, the monotonic clock driving `live::Fabric`. Single-threaded and bounded: it
//! returns at the wall-clock deadline or when the stop file appears, whichever is first.

use detailsim_engine::Time;
use detailsim_model::live::{Fabric, Out, Target};
use std::ffi::CString;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

const FRAME_SIZE: u32 = 2048;
const BLOCK_SIZE: u32 = 1 << 16;
const BLOCKS: u32 = 16;
/// Offset of the frame's `sockaddr_ll` in a TPACKET_V2 slot (TPACKET_ALIGN(sizeof(tpacket2_hdr))).
const SLL_OFFSET: usize = 32;

pub struct Ring {
    fd: i32,
    map: *mut u8,
    slots: u32,
    next: u32,
    pub name: String,
}

fn os_err(what: &str, name: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what} on interface {name}: {e}"))
}

impl Ring {
    pub fn open(name: &str) -> io::Result<Ring> {
        let cname = CString::new(name).map_err(|_| io::Error::other("bad interface name"))?;
        // SAFETY: plain libc calls on a socket this function owns; the ring is mapped with the size the
        // kernel was told, and unmapped in Drop.
        unsafe {
            let ifindex = libc::if_nametoindex(cname.as_ptr());
            if ifindex == 0 {
                return Err(os_err("if_nametoindex", name));
            }
            let proto = (libc::ETH_P_ALL as u16).to_be();
            let fd = libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, proto as i32);
            if fd < 0 {
                return Err(os_err("socket(AF_PACKET)", name));
            }
            let ring = Ring { fd, map: std::ptr::null_mut(), slots: 0, next: 0, name: name.to_string() };
            let v: libc::c_int = libc::tpacket_versions::TPACKET_V2 as libc::c_int;
            ring.setopt(libc::PACKET_VERSION, &v)?;
            let req =
                libc::tpacket_req { tp_block_size: BLOCK_SIZE, tp_block_nr: BLOCKS, tp_frame_size: FRAME_SIZE, tp_frame_nr: BLOCK_SIZE / FRAME_SIZE * BLOCKS };
            ring.setopt(libc::PACKET_RX_RING, &req)?;
            let len = (BLOCK_SIZE * BLOCKS) as usize;
            let map = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0);
            if map == libc::MAP_FAILED {
                return Err(os_err("mmap of the receive ring", name));
            }
            let mut ring = ring;
            ring.map = map as *mut u8;
            ring.slots = req.tp_frame_nr;
            let one: libc::c_int = 1;
            ring.setopt(libc::PACKET_QDISC_BYPASS, &one)?;
            let mut sll: libc::sockaddr_ll = std::mem::zeroed();
            sll.sll_family = libc::AF_PACKET as u16;
            sll.sll_protocol = proto;
            sll.sll_ifindex = ifindex as i32;
            if libc::bind(fd, &sll as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32) != 0 {
                return Err(os_err("bind", name));
            }
            Ok(ring)
        }
    }

    fn setopt<T>(&self, opt: libc::c_int, v: &T) -> io::Result<()> {
        // SAFETY: v points to a live T of the size passed.
        let r = unsafe { libc::setsockopt(self.fd, libc::SOL_PACKET, opt, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32) };
        if r != 0 {
            return Err(os_err("setsockopt(SOL_PACKET)", &self.name));
        }
        Ok(())
    }

    /// Hand every frame that has landed (not the ones this socket sent) to `f`; returns how many.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> u32 {
        let mut n = 0;
        loop {
            // SAFETY: the slot lies inside the mapped ring; its status word is shared with the kernel and
            // read/written volatile with fences around the hand-over.
            unsafe {
                let slot = self.map.add((self.next * FRAME_SIZE) as usize);
                let hdr = slot as *mut libc::tpacket2_hdr;
                let status = std::ptr::read_volatile(&(*hdr).tp_status);
                if status & libc::TP_STATUS_USER == 0 {
                    return n;
                }
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
                let pkttype = *slot.add(SLL_OFFSET + 10);
                if pkttype != libc::PACKET_OUTGOING {
                    let len = (*hdr).tp_snaplen as usize;
                    let data = std::slice::from_raw_parts(slot.add((*hdr).tp_mac as usize), len);
                    f(data);
                    n += 1;
                }
                std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
                std::ptr::write_volatile(&mut (*hdr).tp_status, libc::TP_STATUS_KERNEL);
            }
            self.next = (self.next + 1) % self.slots;
        }
    }

    pub fn send(&self, frame: &[u8]) -> bool {
        // SAFETY: frame is a valid slice; the socket is bound to its interface.
        let r = unsafe { libc::send(self.fd, frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        r == frame.len() as isize
    }

    /// Frames the kernel dropped because the ring was full (since the last call).
    pub fn drops(&self) -> u64 {
        // SAFETY: tpacket_stats is plain data of the size passed.
        unsafe {
            let mut st: libc::tpacket_stats = std::mem::zeroed();
            let mut len = std::mem::size_of::<libc::tpacket_stats>() as u32;
            if libc::getsockopt(self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, &mut st as *mut _ as *mut libc::c_void, &mut len) != 0 {
                return 0;
            }
            st.tp_drops as u64
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping what open mapped, closing what it opened.
        unsafe {
            if !self.map.is_null() {
                libc::munmap(self.map as *mut libc::c_void, (BLOCK_SIZE * BLOCKS) as usize);
            }
            libc::close(self.fd);
        }
    }
}

/// What the loop measured about itself.
#[derive(Debug, Default)]
pub struct LoopStats {
    pub wall_s: f64,
    pub busy_s: f64,
    pub cpu_s: f64,
    pub iterations: u64,
    pub ring_drops: u64,
    pub send_failures: u64,
    pub rx_frames: u64,
}

fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain data filled by the kernel.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        t(ru.ru_utime) + t(ru.ru_stime)
    }
}

/// Forward until `deadline` or until `stop_file` exists. Port `p`'s interface is `p{p}`, host `h`'s is `h{h}`.
/// Once every ring is open, `ready_file` (if any) is created, so the caller can start traffic knowing no frame can arrive before the fabric listens.
pub fn forward(fab: &mut Fabric, deadline: Duration, stop_file: &Path, ready_file: Option<&Path>) -> io::Result<LoopStats> {
    let mut port_rings = Vec::with_capacity(fab.net.ports.len());
    for p in 0..fab.net.ports.len() {
        port_rings.push(Ring::open(&format!("p{p}"))?);
    }
    let mut host_rings = Vec::with_capacity(fab.net.hosts.len());
    for h in 0..fab.net.hosts.len() {
        host_rings.push(Ring::open(&format!("h{h}"))?);
    }
    if let Some(r) = ready_file {
        std::fs::write(r, b"ready\n")?;
    }
    // SAFETY: prctl with an integer argument; a 1 ns timer slack makes short sleeps short.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    let mut fds: Vec<libc::pollfd> = port_rings.iter().chain(host_rings.iter()).map(|r| libc::pollfd { fd: r.fd, events: libc::POLLIN, revents: 0 }).collect();
    let t0 = Instant::now();
    let cpu0 = cpu_seconds();
    let mut st = LoopStats::default();
    let mut outs: Vec<Out> = Vec::new();
    let mut idle = Duration::ZERO;
    let now_of = |t: Instant| Time((t - t0).as_nanos() as u64 * 1000);
    let mut stop_checked = Duration::ZERO;
    loop {
        st.iterations += 1;
        let wall = t0.elapsed();
        if wall >= deadline {
            break;
        }
        // the stop file is looked for every 10 ms of wall time (a stat per loop would cost more than a frame)
        if wall >= stop_checked + Duration::from_millis(10) {
            stop_checked = wall;
            if stop_file.exists() {
                break;
            }
        }
        let now = now_of(Instant::now());
        let mut got = 0;
        for (p, r) in port_rings.iter_mut().enumerate() {
            got += r.drain(|f| fab.on_wire_frame(now, p as u32, f));
        }
        for (h, r) in host_rings.iter_mut().enumerate() {
            got += r.drain(|f| fab.on_host_frame(now, h as u32, f));
        }
        st.rx_frames += got as u64;
        let next = fab.poll(now);
        fab.take_out(&mut outs);
        for o in &outs {
            let ring = match o.to {
                Target::Port(p) => &port_rings[p as usize],
                Target::Host(h) => &host_rings[h as usize],
            };
            if !ring.send(fab.frame(o.pid)) {
                st.send_failures += 1;
            }
            fab.release(o.pid);
        }
        if got > 0 || !outs.is_empty() {
            continue;
        }
        // nothing to do now: spin when the next transmission is close, sleep in ppoll otherwise
        let now = now_of(Instant::now());
        let wait_ps = next.map_or(1_000_000_000, |t| t.0.saturating_sub(now.0)).min(1_000_000_000);
        if wait_ps < 30_000_000 {
            std::hint::spin_loop();
            continue;
        }
        let sleep_ns = (wait_ps - 20_000_000) / 1000;
        let ts = libc::timespec { tv_sec: 0, tv_nsec: sleep_ns as libc::c_long };
        let before = Instant::now();
        // SAFETY: fds is a live array of pollfd of the length passed.
        unsafe {
            libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null());
        }
        idle += before.elapsed();
    }
    st.wall_s = t0.elapsed().as_secs_f64();
    st.busy_s = st.wall_s - idle.as_secs_f64();
    st.cpu_s = cpu_seconds() - cpu0;
    st.ring_drops = port_rings.iter().chain(host_rings.iter()).map(|r| r.drops()).sum();
    Ok(st)
}
