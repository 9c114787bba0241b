//! A global allocator that asks Linux for transparent huge pages (2 MiB) under every large allocation:
//! the system allocator, plus `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned interior of each block of
//! 2 MiB or more, before its pages are first touched. A hint only: it changes no result, and only where
//! the kernel's `transparent_hugepage/enabled` is `madvise` or `always` does it change anything at all.
//! `DETAILSIM_HUGE_PAGES=0` in the environment turns it off for the process (read once, at the first
//! large block).
//!
//! Why: a large fabric's hot state (k = 32: 25 MB of ports and the other arrays of 2 MiB or more) is
//! spread over far more 4 KB pages than the TLB maps, and each of its cache misses can also miss the TLB
//! and walk the page table. In 2 MB pages it maps with a dozen or so entries. k = 32 FH and DeTail 1 ms ran
//! faster with it, the same binary with and without, in every pair on the AMD host of family 25 model 1
//! (docs/benchmarks.md, "Large blocks on huge pages", which gives the figures and the hosts where it was
//! level); small fabrics have no block that large and are unchanged. The Python module and the examples opt in with
//! `#[global_allocator] static A: detailsim_engine::HugePages = detailsim_engine::HugePages;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

/// The system allocator, with large blocks advised onto huge pages (see the module).
pub struct HugePages;

/// The size of a huge page, and the least block advised.
pub const HUGE_PAGE: usize = 2 << 20;

/// Whether to advise: 0 not yet read, 1 on, 2 off (`DETAILSIM_HUGE_PAGES=0`).
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether this process advises large blocks (`DETAILSIM_HUGE_PAGES` is not `0`). Read through `getenv`,
/// which allocates nothing, so an allocator may ask.
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let on = env_on();
            STATE.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            on
        }
    }
}

#[cfg(target_os = "linux")]
fn env_on() -> bool {
    // SAFETY: the name is a NUL-terminated literal; the result, if not null, is a NUL-terminated string
    // owned by the environment, read at once (nothing here changes the environment).
    unsafe {
        let v = libc::getenv(c"DETAILSIM_HUGE_PAGES".as_ptr());
        v.is_null() || std::ffi::CStr::from_ptr(v).to_bytes() != b"0"
    }
}

#[cfg(not(target_os = "linux"))]
fn env_on() -> bool {
    false
}

/// Advise the whole huge pages inside `[p, p + size)` (nothing if there is none, or `on` is false).
#[inline]
fn advise(p: *mut u8, size: usize, on: impl FnOnce() -> bool) {
    #[cfg(target_os = "linux")]
    if !p.is_null() && size >= HUGE_PAGE && on() {
        let start = (p as usize).next_multiple_of(HUGE_PAGE);
        let end = (p as usize + size) & !(HUGE_PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside the block just allocated; MADV_HUGEPAGE changes no contents
            // (an error, such as a kernel without huge pages, leaves the block as it was).
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size, on);
}

// SAFETY: every block comes from and goes back to `System` with the same layout; `advise` only hints.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size(), enabled);
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size(), enabled);
        p
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if new_size > layout.size() {
            advise(q, new_size, enabled);
        }
        q
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping that holds address `a` (from /proc/self/smaps).
    fn vm_flags(a: usize) -> String {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            // a mapping's header: "lo-hi perms offset dev inode [path]"; its fields: "Name: value"
            let head = line.split_whitespace().next().unwrap_or("");
            if !head.ends_with(':') {
                if let Some((lo, hi)) = head.split_once('-') {
                    let (lo, hi) = (usize::from_str_radix(lo, 16).expect("range"), usize::from_str_radix(hi, 16).expect("range"));
                    inside = lo <= a && a < hi;
                }
            } else if inside && head == "VmFlags:" {
                return line["VmFlags:".len()..].trim().to_string();
            }
        }
        panic!("no mapping holds {a:#x}")
    }

    fn advised(a: usize) -> bool {
        vm_flags(a).split_whitespace().any(|f| f == "hg")
    }

    /// Whether this kernel lets a process ask for huge pages (`madvise` or `always`).
    fn thp_available() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").is_ok_and(|s| !s.contains("[never]"))
    }

    /// The allocator's own steps on fresh blocks (the test harness's allocator is the system's, so each
    /// block here is advised by these calls alone), with the switch on: large blocks, grown blocks and
    /// zeroed blocks carry the kernel's `hg` flag, small ones do not, and the contents are as usual.
    #[test]
    fn large_blocks_are_advised_onto_huge_pages_and_small_ones_are_not() {
        let a = HugePages;
        STATE.store(1, Ordering::Relaxed);
        // below a huge page nothing is advised: a 1 MiB block has no `hg`
        // (asked first: a later block of this test freed could hand its advised pages on)
        let small = Layout::from_size_align(1 << 20, 64).unwrap();
        let s = unsafe { a.alloc(small) };
        assert!(!advised(s as usize));
        unsafe { a.dealloc(s, small) };
        // a block of 8 MiB holds at least three whole huge pages; its interior's mapping carries `hg`
        let big = Layout::from_size_align(8 << 20, 64).unwrap();
        let p = unsafe { a.alloc(big) };
        assert!(!p.is_null());
        assert_eq!(advised((p as usize).next_multiple_of(HUGE_PAGE)), thp_available(), "{}", vm_flags((p as usize).next_multiple_of(HUGE_PAGE)));
        unsafe { a.dealloc(p, big) };
        // a block grown past the size is advised (from 1 MiB, which was not)
        let r = unsafe { a.alloc(small) };
        let q = unsafe { a.realloc(r, small, 24 << 20) };
        assert!(!q.is_null());
        assert_eq!(advised((q as usize).next_multiple_of(HUGE_PAGE) + (16 << 20)), thp_available());
        // the contents are the allocator's as usual: write and read the whole block back
        unsafe {
            std::ptr::write_bytes(q, 7, 24 << 20);
            assert!(std::slice::from_raw_parts(q, 24 << 20).iter().all(|&b| b == 7));
            a.dealloc(q, Layout::from_size_align(24 << 20, 64).unwrap());
        }
        // a zeroed block is zero
        let z = unsafe { a.alloc_zeroed(big) };
        assert!(unsafe { std::slice::from_raw_parts(z, 8 << 20) }.iter().all(|&b| b == 0));
        assert_eq!(advised((z as usize).next_multiple_of(HUGE_PAGE)), thp_available());
        unsafe { a.dealloc(z, big) };
    }

    /// Switched off, a large block is left as the system gives it; the switch reads `DETAILSIM_HUGE_PAGES`
    /// (`0` off, anything else or nothing on).
    #[test]
    fn the_switch_leaves_large_blocks_alone() {
        // a mapping of its own (not the allocator's, which may hand out pages another test advised)
        let size = 8 << 20;
        // SAFETY: a fresh private anonymous mapping, unmapped below; nothing else refers to it.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        assert_ne!(p, libc::MAP_FAILED);
        let p = p.cast::<u8>();
        advise(p, size, || false);
        assert!(!advised((p as usize).next_multiple_of(HUGE_PAGE)));
        // the same block advised with the switch on takes the flag (where the kernel offers huge pages)
        advise(p, size, || true);
        assert_eq!(advised((p as usize).next_multiple_of(HUGE_PAGE)), thp_available());
        // SAFETY: the mapping made above, of that size.
        assert_eq!(unsafe { libc::munmap(p.cast(), size) }, 0);
        // the variable as read: this process's environment has no `DETAILSIM_HUGE_PAGES=0` unless the test
        // run sets it
        let want = std::env::var("DETAILSIM_HUGE_PAGES").map_or(true, |v| v != "0");
        assert_eq!(env_on(), want);
    }
}
