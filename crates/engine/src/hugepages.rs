//! A global allocator that asks Linux for transparent huge pages (2 MiB) under every large allocation:
//! the system allocator, plus `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned interior of each block of
//! 2 MiB or more, before its pages are first touched. A hint only (it changes no result), and only where
//! the kernel's `transparent_hugepage/enabled` is `madvise` or `always`; elsewhere a no-op.
//!
//! Why: a large fabric's hot state (k = 32: 25 MB of ports, the packets, the wheel) is spread over far
//! more 4 KB pages than the TLB maps, and when the last-level cache is shared with busy neighbours each
//! miss also walks the page table from memory. In 2 MB pages the walk stays cached
//! (docs/benchmarks.md, "Huge pages"). Binaries opt in with
//! `#[global_allocator] static A: detailsim_engine::HugePages = detailsim_engine::HugePages;`
//! (the Python module and the examples do).

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with large blocks advised onto huge pages (see the module).
pub struct HugePages;

/// The size of a huge page, and the least block advised.
pub const HUGE_PAGE: usize = 2 << 20;

/// Advise the whole huge pages inside `[p, p + size)` (nothing if there is none).
#[inline]
fn advise(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if !p.is_null() && size >= HUGE_PAGE {
        let start = (p as usize).next_multiple_of(HUGE_PAGE);
        let end = (p as usize + size) & !(HUGE_PAGE - 1);
        if end > start {
            // SAFETY: the range lies inside the block just allocated; MADV_HUGEPAGE changes no contents
            // (an error, such as a kernel without huge pages, leaves the block as it was).
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

// SAFETY: every block comes from and goes back to `System` with the same layout; `advise` only hints.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
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
            advise(q, new_size);
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

    /// Whether this kernel lets a process ask for huge pages (`madvise` or `always`).
    fn thp_available() -> bool {
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").is_ok_and(|s| !s.contains("[never]"))
    }

    #[test]
    fn large_blocks_are_advised_onto_huge_pages_and_small_ones_are_not() {
        let a = HugePages;
        // below a huge page nothing is advised: a 1 MiB block has no `hg`
        // (asked first: a later block of this test freed could hand its advised pages on)
        let small = Layout::from_size_align(1 << 20, 64).unwrap();
        let s = unsafe { a.alloc(small) };
        assert!(!vm_flags(s as usize).split_whitespace().any(|f| f == "hg"));
        unsafe { a.dealloc(s, small) };
        // a block of 8 MiB holds at least three whole huge pages; its interior's mapping carries `hg`
        let big = Layout::from_size_align(8 << 20, 64).unwrap();
        let p = unsafe { a.alloc(big) };
        assert!(!p.is_null());
        let inner = (p as usize).next_multiple_of(HUGE_PAGE);
        let flags = vm_flags(inner);
        assert_eq!(flags.split_whitespace().any(|f| f == "hg"), thp_available(), "VmFlags {flags}");
        unsafe { a.dealloc(p, big) };
        // a block grown past the size is advised (from 1 MiB, which was not)
        let r = unsafe { a.alloc(small) };
        let q = unsafe { a.realloc(r, small, 24 << 20) };
        assert!(!q.is_null());
        let flags = vm_flags((q as usize).next_multiple_of(HUGE_PAGE) + (16 << 20));
        assert_eq!(flags.split_whitespace().any(|f| f == "hg"), thp_available(), "VmFlags {flags}");
        // the contents are the allocator's as usual: write and read the whole block back
        unsafe {
            std::ptr::write_bytes(q, 7, 24 << 20);
            assert!(std::slice::from_raw_parts(q, 24 << 20).iter().all(|&b| b == 7));
            a.dealloc(q, Layout::from_size_align(24 << 20, 64).unwrap());
        }
        // a zeroed block is zero
        let z = unsafe { a.alloc_zeroed(big) };
        assert!(unsafe { std::slice::from_raw_parts(z, 8 << 20) }.iter().all(|&b| b == 0));
        assert_eq!(vm_flags((z as usize).next_multiple_of(HUGE_PAGE)).split_whitespace().any(|f| f == "hg"), thp_available());
        unsafe { a.dealloc(z, big) };
    }
}
