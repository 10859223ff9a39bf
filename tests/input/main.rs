//! Untrusted input: every read of a user's file is bounded before it allocates, and
//! seeded mutation fuzzing of every input format.
//!
//! This binary's allocator refuses any single allocation over [`ALLOCATION_LIMIT`] (the
//! standard library then aborts with "memory allocation of N bytes failed"): a reader that
//! trusts a declared size aborts the binary (a failed test) instead of taking gigabytes
//! from the machine. Every file these tests read is under 1 MB.

use std::alloc::{GlobalAlloc, Layout, System};

mod fuzz;
mod limits;

/// The largest single allocation this test binary allows (bytes).
const ALLOCATION_LIMIT: usize = 64 << 20;

/// The system allocator, refusing any single block over [`ALLOCATION_LIMIT`].
struct BoundedAllocator;

// SAFETY: every call is forwarded to the system allocator unchanged, or answered with a
// null pointer, which `GlobalAlloc` allows for any request.
unsafe impl GlobalAlloc for BoundedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOCATION_LIMIT {
            return std::ptr::null_mut();
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: BoundedAllocator = BoundedAllocator;
