//! A small per-thread pool of byte buffers for decoded blocks, so that reading a block does not
//! pay for a fresh allocation and a zero fill that the decoder overwrites at once (LevelDB
//! decodes into `new char[n]`, uninitialized; safe Rust cannot).
//!
//! Invariants: every pooled buffer is initialized over its whole length (old bytes of an
//! earlier block), so reuse needs no unsafe code. [`take`] hands out exactly `n` bytes whose
//! contents are unspecified: the caller must overwrite all of them, or shorten the buffer to
//! what it wrote, before anyone reads it. A thread keeps at most [`POOL_BUFFERS`] buffers, each
//! of at most [`MAX_POOLED`] bytes of capacity; others are freed as usual. Buffers freed on one
//! thread serve that thread only (a block decoded by a readahead worker and dropped by the
//! reader feeds the reader's pool).
//!
//! Beside the pool each thread keeps one *scratch* buffer ([`take_scratch`], [`give_scratch`])
//! for bytes read only to be decoded: a readahead run's compressed blocks (~64 KiB read with
//! one `read_at`), which would otherwise be a fresh zeroed allocation per run (9% of 1A's
//! sequential read after a random fill). It has a slot of its own: the blocks a run decodes
//! into, given back one by one, would push a run-sized buffer out of the pool before the next
//! run. A scratch buffer of more than [`MAX_SCRATCH`] bytes is freed, not kept.

use std::cell::RefCell;

/// Buffers a thread keeps.
pub const POOL_BUFFERS: usize = 16;
/// Largest capacity worth keeping (a Bedrock data block is ~160 KiB decoded).
pub const MAX_POOLED: usize = 1 << 20;
/// A request for fewer bytes may still take a buffer of up to twice this capacity.
const MIN_FIT: usize = 4096;

/// Largest scratch buffer a thread keeps (a run of 64 KiB plus one large block).
pub const MAX_SCRATCH: usize = 1 << 20;

thread_local! {
    static POOL: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// This thread's scratch buffer (empty when none is kept or it is out): its length and
/// contents are unspecified, its capacity what an earlier use left. Taken, not borrowed, so
/// a nested use gets an empty one instead of a conflict.
pub fn take_scratch() -> Vec<u8> {
    SCRATCH.try_with(|s| s.take()).unwrap_or_default()
}

/// Keeps `buf` as this thread's scratch buffer (freed when over `MAX_SCRATCH` bytes of
/// capacity, or when a larger one is kept already).
pub fn give_scratch(buf: Vec<u8>) {
    if buf.capacity() > MAX_SCRATCH {
        return;
    }
    let _ = SCRATCH.try_with(|s| {
        let kept = s.take();
        s.set(if kept.capacity() >= buf.capacity() {
            kept
        } else {
            buf
        });
    });
}

/// A pooled buffer that holds `n` bytes without growing, at most twice as large as needed. Buffers are never grown in place:
/// a reallocation (which also doubles the capacity) scatters large holes over the heap, and a
/// full scan of Bedrock's ~160 KiB blocks then held ~190 MiB instead of ~14 MiB.
fn pop_fitting(n: usize) -> Option<Vec<u8>> {
    POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        // Large enough, and not so large that a small block pins a big buffer (the block
        // cache charges capacity).
        let most = 2 * n.max(MIN_FIT);
        let i = p
            .iter()
            .rposition(|b| b.capacity() >= n && b.capacity() <= most)?;
        Some(p.swap_remove(i))
    })
    .ok()
    .flatten()
}

/// A buffer of exactly `n` bytes with unspecified contents (zeros when nothing was pooled).
pub fn take(n: usize) -> Vec<u8> {
    match pop_fitting(n) {
        Some(mut buf) => {
            if buf.len() >= n {
                buf.truncate(n);
            } else {
                buf.resize(n, 0); // within capacity: zero-fills only the tail
            }
            buf
        }
        None => vec![0; n],
    }
}

/// A copy of `src`, in a pooled buffer when one is large enough.
pub fn copy_of(src: &[u8]) -> Vec<u8> {
    match pop_fitting(src.len()) {
        Some(mut buf) => {
            buf.clear();
            buf.extend_from_slice(src);
            buf
        }
        None => src.to_vec(),
    }
}

/// Returns a buffer to this thread's pool, the oldest pooled one freed when the pool is full
/// (or frees it when it is too large, or the thread is exiting).
pub fn give(buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > MAX_POOLED {
        return;
    }
    let _ = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        // Full: the oldest buffer makes room. Keeping the old ones instead let the pool silt
        // up with buffers too small for any later block (every take then missed and zeroed
        // a fresh one: 9% of readrandom's time).
        if p.len() >= POOL_BUFFERS {
            p.remove(0);
        }
        p.push(buf);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_with_exact_lengths_and_bounded() {
        // Earlier tests on this thread (--test-threads=1) may have pooled blocks.
        POOL.with(|p| p.borrow_mut().clear());
        let a = vec![7u8; 4096];
        let ptr = a.as_ptr();
        give(a);
        // Reused: same allocation, exact length, old bytes (the caller overwrites them).
        let b = take(1000);
        assert_eq!((b.as_ptr(), b.len()), (ptr, 1000));
        assert!(b.iter().all(|&x| x == 7));
        give(b);
        // Longer than the last use but within capacity: only the new tail is zero-filled.
        let c = take(3000);
        assert_eq!((c.as_ptr(), c.len()), (ptr, 3000));
        assert!(c[..1000].iter().all(|&x| x == 7) && c[1000..].iter().all(|&x| x == 0));
        give(c);
        // Past every pooled capacity: a fresh buffer, the pooled one stays (never grown).
        let big = take(8192);
        assert_ne!(big.as_ptr(), ptr);
        assert_eq!(big, vec![0; 8192]);
        let d = copy_of(b"block");
        assert_eq!((d.as_ptr(), &d[..]), (ptr, &b"block"[..]));
        // Nothing pooled now: fresh buffers.
        assert_eq!(take(3), vec![0, 0, 0]);
        give(d);
        give(big);
        // A buffer more than twice too large stays in the pool.
        give(vec![5; 64 * 1024]);
        assert_eq!(take(5000), vec![0; 5000]);
        POOL.with(|p| p.borrow_mut().clear());
        // At most POOL_BUFFERS kept; oversized ones never.
        for _ in 0..POOL_BUFFERS + 5 {
            give(vec![1; 64]);
        }
        // A full pool of buffers too small for what is asked takes the newest in place of
        // the oldest: it never silts up.
        let fresh = vec![2u8; 4096];
        let fresh_ptr = fresh.as_ptr();
        give(fresh);
        assert_eq!(POOL.with(|p| p.borrow().len()), POOL_BUFFERS);
        let e = take(4000);
        assert_eq!((e.as_ptr(), e.len()), (fresh_ptr, 4000));
        assert!(e.iter().all(|&x| x == 2)); // the pooled bytes, not a fresh zeroed buffer
        give(e);
        give(vec![0; MAX_POOLED + 1]);
        let kept = POOL.with(|p| p.borrow().len());
        assert_eq!(kept, POOL_BUFFERS);
        assert!(POOL.with(|p| p.borrow().iter().all(|b| b.capacity() <= MAX_POOLED)));
    }

    #[test]
    fn the_scratch_buffer_is_reused_apart_from_the_pool_and_bounded() {
        SCRATCH.with(|s| s.take());
        assert_eq!(take_scratch().capacity(), 0);
        let run = vec![9u8; 64 * 1024];
        let ptr = run.as_ptr();
        give_scratch(run);
        // Blocks given back to the pool (a run's worth and more) leave the scratch slot alone.
        for _ in 0..POOL_BUFFERS + 4 {
            give(vec![1; 4096]);
        }
        let again = take_scratch();
        assert_eq!((again.as_ptr(), again.len()), (ptr, 64 * 1024));
        // Taken, not borrowed: a nested use meanwhile gets an empty buffer.
        assert_eq!(take_scratch().capacity(), 0);
        // The larger of two is kept; one over MAX_SCRATCH never.
        give_scratch(vec![0; 100]);
        give_scratch(again);
        let kept = take_scratch();
        assert_eq!(kept.as_ptr(), ptr);
        give_scratch(vec![0; MAX_SCRATCH + 1]);
        assert_eq!(take_scratch().capacity(), 0);
    }
}
