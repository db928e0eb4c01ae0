//! Small per-thread pools of byte buffers for decoded blocks, backed by a process-wide one, so
//! that reading a block does not pay for a fresh allocation and a zero fill that the decoder
//! overwrites at once (LevelDB decodes into `new char[n]`, uninitialized; safe Rust cannot).
//!
//! Invariants: every pooled buffer is initialized over its whole length (old bytes of an
//! earlier block), so reuse needs no unsafe code. [`take`] hands out exactly `n` bytes whose
//! contents are unspecified: the caller must overwrite all of them, or shorten the buffer to
//! what it wrote, before anyone reads it. A thread keeps at most [`POOL_BUFFERS`] buffers, each
//! of at most [`MAX_POOLED`] bytes of capacity. A buffer pushed out of a full pool goes to a
//! small process-wide pool ([`SHARED_BYTES`] of capacity in all, behind a mutex), which a
//! thread whose own pool has none that fits takes from before it allocates: blocks flow one
//! way in a scan, decoded into buffers by readahead workers and dropped by the reader, so the
//! reader's pool overflowed (a free per block, of memory from another thread's arena) while
//! the workers' pools ran dry (an allocation and a 4 KiB zero fill per block). Only what
//! neither pool keeps is freed.
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

/// Capacity the process-wide pool keeps in all: a readahead run's blocks (16 of 4 KiB) many
/// times over, a few of Bedrock's ~160 KiB ones.
pub const SHARED_BYTES: usize = 1 << 20;

/// A pool shared by threads: buffers and the sum of their capacities (at most
/// `SHARED_BYTES`). One per process (`SHARED`); tests make their own.
struct SharedPool(std::sync::Mutex<(Vec<Vec<u8>>, usize)>);

impl SharedPool {
    const fn new() -> Self {
        SharedPool(std::sync::Mutex::new((Vec::new(), 0)))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Vec<u8>>, usize)> {
        // Nothing a panicking holder leaves half done: a push or a pop and its sum.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest buffer that `fits`, if any.
    fn pop(&self, fits: impl Fn(&Vec<u8>) -> bool) -> Option<Vec<u8>> {
        let mut shared = self.lock();
        let i = shared.0.iter().rposition(fits)?;
        let buf = shared.0.swap_remove(i);
        shared.1 -= buf.capacity();
        Some(buf)
    }

    /// Keeps `buf` if there is room, else frees it.
    fn give(&self, buf: Vec<u8>) {
        let mut shared = self.lock();
        if shared.1 + buf.capacity() <= SHARED_BYTES {
            shared.1 += buf.capacity();
            shared.0.push(buf);
        }
    }
}

static SHARED: SharedPool = SharedPool::new();

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
fn pop_fitting_from(shared: &SharedPool, n: usize) -> Option<Vec<u8>> {
    // Large enough, and not so large that a small block pins a big buffer (the block cache
    // charges capacity).
    let most = 2 * n.max(MIN_FIT);
    let fits = |b: &Vec<u8>| b.capacity() >= n && b.capacity() <= most;
    let own = POOL
        .try_with(|p| {
            let mut p = p.borrow_mut();
            let i = p.iter().rposition(fits)?;
            Some(p.swap_remove(i))
        })
        .ok()
        .flatten();
    own.or_else(|| shared.pop(fits))
}

/// A buffer of exactly `n` bytes with unspecified contents (zeros when nothing was pooled).
pub fn take(n: usize) -> Vec<u8> {
    take_from(&SHARED, n)
}

fn take_from(shared: &SharedPool, n: usize) -> Vec<u8> {
    match pop_fitting_from(shared, n) {
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
    copy_from(&SHARED, src)
}

fn copy_from(shared: &SharedPool, src: &[u8]) -> Vec<u8> {
    match pop_fitting_from(shared, src.len()) {
        Some(mut buf) => {
            buf.clear();
            buf.extend_from_slice(src);
            buf
        }
        None => src.to_vec(),
    }
}

/// Returns a buffer to this thread's pool; when the pool is full its oldest buffer moves to
/// the process-wide pool (freed if that is full too). Frees a buffer too large to pool; on a
/// thread that is exiting, the buffer goes to the process-wide pool.
pub fn give(buf: Vec<u8>) {
    give_to(&SHARED, buf)
}

fn give_to(shared: &SharedPool, buf: Vec<u8>) {
    if buf.capacity() == 0 || buf.capacity() > MAX_POOLED {
        return;
    }
    let mut buf = Some(buf);
    let pushed_out = POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        // Full: the oldest buffer makes room. Keeping the old ones instead let the pool silt
        // up with buffers too small for any later block (every take then missed and zeroed
        // a fresh one: 9% of readrandom's time).
        let oldest = (p.len() >= POOL_BUFFERS).then(|| p.remove(0));
        p.extend(buf.take());
        oldest
    });
    // Either the pool pushed its oldest out, or it was gone and `buf` is still here.
    if let Some(b) = pushed_out.ok().flatten().or(buf) {
        shared.give(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_reused_with_exact_lengths_and_bounded() {
        // A shared pool of this test's own (other tests' threads feed the process's), and
        // none of what earlier tests on this thread (--test-threads=1) pooled.
        let shared = SharedPool::new();
        let give = |b| give_to(&shared, b);
        let take = |n| take_from(&shared, n);
        let copy_of = |b| copy_from(&shared, b);
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
        // At most POOL_BUFFERS kept; oversized ones never. The ones pushed out go to the
        // shared pool, within its bound.
        for _ in 0..POOL_BUFFERS + 5 {
            give(vec![1; 64]);
        }
        assert_eq!(shared.lock().0.len(), 5);
        assert_eq!(shared.lock().1, 5 * 64);
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
        POOL.with(|p| p.borrow_mut().clear());
    }

    /// A scan's flow: buffers given back on one thread (the reader) past its pool's bound
    /// serve another thread (a readahead worker) whose pool has none; the shared pool keeps
    /// at most `SHARED_BYTES`.
    #[test]
    fn buffers_a_full_pool_pushes_out_serve_other_threads() {
        let shared = SharedPool::new();
        POOL.with(|p| p.borrow_mut().clear());
        let (first, first_ptr) = {
            let b = vec![3u8; 4096];
            let ptr = b.as_ptr() as usize;
            (b, ptr)
        };
        std::thread::scope(|s| {
            s.spawn(|| {
                give_to(&shared, first);
                for _ in 0..POOL_BUFFERS {
                    give_to(&shared, vec![4u8; 4096]);
                }
            })
            .join()
            .expect("the giving thread");
        });
        // The first buffer given, pushed out of that thread's full pool, is here the only one
        // that fits: taken whole, its old bytes kept.
        assert_eq!(shared.lock().0.len(), 1);
        let got = take_from(&shared, 4000);
        assert_eq!((got.as_ptr() as usize, got.len()), (first_ptr, 4000));
        assert!(got.iter().all(|&x| x == 3));
        assert_eq!(*shared.lock(), (Vec::<Vec<u8>>::new(), 0));
        // Bounded: a full shared pool frees what is pushed out.
        for _ in 0..SHARED_BYTES / 65536 + 3 {
            shared.give(vec![0; 65536]);
        }
        assert_eq!(shared.lock().1, SHARED_BYTES);
        assert_eq!(shared.lock().0.len(), SHARED_BYTES / 65536);
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
