//! A hint to the CPU to bring a cache line in ahead of a read: where a walk knows the next
//! address a step before it needs it (a memtable iterator's following node), the miss then
//! overlaps the work of the steps between (a merged scan reads dozens of table entries
//! between two memtable entries) instead of stalling the step that reads it.
//!
//! Invariants: a hint never faults, reads nothing and changes nothing observable, whatever the
//! address; callers still pass addresses inside their own buffers. On targets without a
//! stable prefetch instruction (wasm, aarch64 today) it does nothing.

/// Asks for the cache line holding `bytes[at]` (nothing if `at` is out of range).
#[inline(always)]
pub fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = bytes.get(at) {
        // SAFETY: PREFETCHT0 is a hint: it cannot fault or change memory, and `b` is a live
        // reference anyway. SSE is part of the x86_64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (b as *const u8).cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
}

/// Asks for every cache line of `bytes[start..end]` (clamped to `bytes`): one hint per 64
/// bytes, so the misses of a region read next overlap instead of coming one after another.
#[inline]
pub fn prefetch_range(bytes: &[u8], start: usize, end: usize) {
    for at in (start..end.min(bytes.len())).step_by(64) {
        prefetch(bytes, at);
    }
}
