//! The global allocator of the memory tests, which measures two things: the peak of live
//! heap bytes over every thread ([`peak_during`]), and the number of allocations made by
//! the current thread while counting is on ([`allocations_during`]).
//!
//! The peak counts every thread, so a test that measures it must run alone: every test of
//! this binary holds [`alone`] while it runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

struct PeakAllocator;

fn grown(bytes: usize) {
    count();
    let live = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(live, Ordering::SeqCst);
}

/// One more allocation of this thread, if it is counting.
fn count() {
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the counters are
// atomics and const-initialized thread locals that never allocate.
unsafe impl GlobalAlloc for PeakAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grown(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grown(layout.size());
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // Counted as the new block before the old one is released, as a copy would be.
            grown(new_size);
            LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static GLOBAL: PeakAllocator = PeakAllocator;

/// Peak live heap bytes above the starting point while `f` runs, with its output.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.load(Ordering::SeqCst);
    PEAK.store(start, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst).saturating_sub(start))
}

/// Holds the other tests of this binary off while the caller measures; a test that
/// failed while holding it does not stop the others.
pub fn alone() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Allocations of this thread while `f` runs.
pub fn allocations_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let was_on = COUNTING.with(|on| on.replace(true));
    let out = f();
    COUNTING.with(|on| on.set(was_on));
    (out, ALLOCATIONS.with(Cell::get) - before)
}

/// Runs `f` without counting its allocations in an enclosing [`allocations_during`];
/// returns them apart.
pub fn not_counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let was_on = COUNTING.with(|on| on.replace(false));
    let (out, n) = allocations_during(f);
    ALLOCATIONS.with(|c| c.set(c.get() - n));
    COUNTING.with(|on| on.set(was_on));
    (out, n)
}
