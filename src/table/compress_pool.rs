//! Parallel block compression for table writers: a flush or a compaction hands each finished
//! data block to a small pool of worker threads and writes the compressed blocks in order, so
//! compression (most of a flush's work with Snappy, nearly all of it with raw deflate on
//! Bedrock worlds) spreads over every core instead of holding the one background thread.
//!
//! Invariants:
//! - The table's bytes do not depend on thread timing: which block is written when is fixed
//!   by the writer (`TableBuilder` writes block `i` when block `i + depth` is cut), and a
//!   block compresses to the same bytes on any thread.
//! - The writer never waits on a block no worker has started: it takes the job and compresses
//!   it itself (work stealing), so a busy pool costs no latency and a worker that cannot be
//!   started (or a one-core machine) still makes progress.
//! - A worker that panics marks its job failed (a guard's drop), so the writer gets an error
//!   instead of waiting forever.
//! - Memory is bounded by the writer: at most `depth` blocks of one table in flight.
//! - Workers take blocks only while someone waits on the background work (`demand`: a writer
//!   stalled on level 0 or on a flush, a manual compaction or flush). Otherwise the writer
//!   compresses its own blocks, so background work never takes a core from the foreground
//!   writers it runs beside (on two cores, parallel compression during `fillrandom` cost the
//!   writers 40%). A run queued while someone waited is left to its writer when the wait
//!   ended before a worker took it, so this holds per run, not only per queueing. Whether a
//!   block went to a worker never changes the table's bytes.
//!
//! Thread-safety: `CompressionPool` is shared by a database's flushes and compactions; workers
//! start on first use and exit when the pool is dropped. Wasm has no threads: no pool, and
//! the writer compresses inline (depth 0), as LevelDB does.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::compress::{compress, CompressionType};
use crate::error::{Error, Result};

/// A block as written: its bytes (compressed, or raw when compression did not pay) and its
/// block-type id for the trailer.
pub struct CompressedBlock {
    pub data: Vec<u8>,
    pub type_id: u8,
    /// The other buffer (the raw block, or the unused compression buffer), for reuse.
    pub spare: Vec<u8>,
}

/// Compresses `raw` by LevelDB's rule: stored compressed only if that saves at least 1/8 of
/// its size. `scratch` is a spare buffer to compress into. The result keeps at most the raw
/// buffer as its spare (when the compressed bytes win), so a compressed block holds at most
/// about twice its raw size until it is written. The stored block is never larger than `raw`
/// (`TableBuilder::reached` relies on it).
pub fn compress_block(kind: CompressionType, raw: Vec<u8>, scratch: Vec<u8>) -> CompressedBlock {
    if kind == CompressionType::None {
        return CompressedBlock {
            data: raw,
            type_id: 0,
            spare: scratch,
        };
    }
    let mut out = scratch;
    if compress(kind, &raw, &mut out) && out.len() < raw.len() - raw.len() / 8 {
        CompressedBlock {
            data: out,
            type_id: kind.id(),
            spare: raw,
        }
    } else {
        // The compression buffer (up to ~1.17x raw for Snappy) is not kept.
        drop(out);
        CompressedBlock {
            data: raw,
            type_id: 0,
            spare: Vec::new(),
        }
    }
}

enum JobState {
    /// Blocks cut, nobody compressing them yet: (raw block, spare buffer) each.
    Queued(Vec<(Vec<u8>, Vec<u8>)>),
    Running,
    /// Compressed blocks not yet taken, oldest first.
    Done(VecDeque<CompressedBlock>),
    Failed,
    /// Every result was taken, or the job was cancelled.
    Taken,
}

/// A run of consecutive blocks of one table, compressed together so one hand-off to a worker
/// pays for many small (4 KiB Snappy) blocks; shared by the writer and (maybe) a worker.
pub struct Job {
    kind: CompressionType,
    state: Mutex<JobState>,
    done: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update of a job or the queue is a single assignment: a poisoned lock is consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Job {
    /// An empty run (`push` adds blocks until the job is submitted or waited on).
    pub fn new(kind: CompressionType) -> Arc<Job> {
        Arc::new(Job {
            kind,
            state: Mutex::new(JobState::Queued(Vec::new())),
            done: Condvar::new(),
        })
    }

    /// A run of one block already in its stored form (a block a compaction copies).
    pub fn ready(kind: CompressionType, block: CompressedBlock) -> Arc<Job> {
        Arc::new(Job {
            kind,
            state: Mutex::new(JobState::Done(VecDeque::from([block]))),
            done: Condvar::new(),
        })
    }

    /// Adds a block to a run nobody has started; once it is started, hands the buffers back.
    pub fn push(
        &self,
        raw: Vec<u8>,
        scratch: Vec<u8>,
    ) -> std::result::Result<(), (Vec<u8>, Vec<u8>)> {
        match &mut *lock(&self.state) {
            JobState::Queued(blocks) => {
                blocks.push((raw, scratch));
                Ok(())
            }
            _ => Err((raw, scratch)),
        }
    }

    /// Runs the job on this thread if nobody has; false if it was already started.
    /// `done` counts the run (before its waiter can see it finished) when it runs here.
    fn run_here(&self, done: Option<&AtomicU64>) -> bool {
        let blocks = {
            let mut s = lock(&self.state);
            match std::mem::replace(&mut *s, JobState::Running) {
                JobState::Queued(blocks) => blocks,
                other => {
                    *s = other;
                    return false;
                }
            }
        };
        // Marks the job failed if compression panics, so its waiter wakes with an error.
        struct Guard<'a>(&'a Job, bool);
        impl Drop for Guard<'_> {
            fn drop(&mut self) {
                if !self.1 {
                    *lock(&self.0.state) = JobState::Failed;
                    self.0.done.notify_all();
                }
            }
        }
        let mut guard = Guard(self, false);
        let out: VecDeque<CompressedBlock> = blocks
            .into_iter()
            .map(|(raw, scratch)| compress_block(self.kind, raw, scratch))
            .collect();
        if let Some(counter) = done {
            counter.fetch_add(1, Relaxed);
        }
        *lock(&self.state) = JobState::Done(out);
        guard.1 = true;
        self.done.notify_all();
        true
    }

    /// Drops the job if nobody started it, and any results not taken (its writer gave up on
    /// the table): a run waiting in the queue then holds no buffers.
    pub fn cancel(&self) {
        let mut s = lock(&self.state);
        if matches!(*s, JobState::Queued(..) | JobState::Done(..)) {
            *s = JobState::Taken;
        }
    }

    /// The job's next block, in the order pushed: the run is compressed here if nobody
    /// started it, else waited for. `by_writer` is set when this thread did the work.
    pub fn next_block(&self, by_writer: &mut bool) -> Result<CompressedBlock> {
        *by_writer = self.run_here(None);
        let mut s = lock(&self.state);
        loop {
            match &mut *s {
                JobState::Done(blocks) => {
                    return match blocks.pop_front() {
                        Some(block) => Ok(block),
                        None => Err(Error::internal("a compression job has no block left")),
                    };
                }
                JobState::Running => {
                    s = self.done.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                JobState::Failed => {
                    return Err(Error::internal("a block compression worker panicked"));
                }
                JobState::Taken | JobState::Queued(..) => {
                    return Err(Error::internal("a compression job was cancelled"));
                }
            }
        }
    }
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Arc<Job>>,
    started: usize,
    shutdown: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    by_workers: AtomicU64,
    /// Parties waiting on background work (see `CompressionPool::demand`); 0: blocks are
    /// not queued, and a worker leaves a queued run to its writer.
    demand: AtomicUsize,
}

/// Worker threads compressing data blocks for a database's table writers.
pub struct CompressionPool {
    shared: Arc<Shared>,
    threads: usize,
    by_writers: AtomicU64,
}

/// Holds a pool's workers open to blocks while someone waits on background work.
pub struct Demand<'a>(&'a CompressionPool);

impl Drop for Demand<'_> {
    fn drop(&mut self) {
        self.0.shared.demand.fetch_sub(1, Relaxed);
    }
}

impl std::fmt::Debug for CompressionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompressionPool")
            .field("threads", &self.threads)
            .finish()
    }
}

/// What a pool has done since it was created (for benchmarks and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompressionStats {
    /// Runs (jobs) compressed by a worker thread.
    pub runs_by_workers: u64,
    /// Runs the writing thread compressed itself because no worker had started them.
    pub runs_by_writers: u64,
}

impl CompressionPool {
    /// A pool of `threads` workers (started lazily), or `None` when `threads` is 0 or the
    /// target has no threads.
    pub fn new(threads: usize) -> Option<Arc<CompressionPool>> {
        if threads == 0 || cfg!(target_arch = "wasm32") {
            return None;
        }
        Some(Arc::new(CompressionPool {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::default()),
                work: Condvar::new(),
                by_workers: AtomicU64::new(0),
                demand: AtomicUsize::new(0),
            }),
            threads,
            by_writers: AtomicU64::new(0),
        }))
    }

    /// Opens the workers to blocks until the guard drops: the caller waits on background
    /// work (a stalled writer, a manual compaction), so its core is free for compression.
    pub fn demand(&self) -> Demand<'_> {
        self.shared.demand.fetch_add(1, Relaxed);
        Demand(self)
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    pub fn stats(&self) -> CompressionStats {
        CompressionStats {
            runs_by_workers: self.shared.by_workers.load(Relaxed),
            runs_by_writers: self.by_writers.load(Relaxed),
        }
    }

    /// Queues `job` for a worker (starting one if fewer than `threads` run), when someone
    /// waits on background work; otherwise the writer compresses it in `wait`.
    pub fn submit(&self, job: Arc<Job>) {
        if self.shared.demand.load(Relaxed) == 0 {
            return;
        }
        let mut q = lock(&self.shared.queue);
        // Jobs a writer already took leave the front of the queue here, so it stays bounded
        // even when every worker is busy.
        while q
            .jobs
            .front()
            .is_some_and(|j| !matches!(*lock(&j.state), JobState::Queued(..)))
        {
            q.jobs.pop_front();
        }
        q.jobs.push_back(job);
        if q.started < self.threads {
            q.started += 1;
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("strata-compress".into())
                .spawn(move || worker(shared));
            if spawned.is_err() {
                // No thread to be had: writers compress every block themselves.
                q.started -= 1;
            }
        }
        drop(q);
        self.shared.work.notify_one();
    }

    /// The next block of `job` (compressing the run here if no worker started it).
    pub fn next_block(&self, job: &Job) -> Result<CompressedBlock> {
        let mut by_writer = false;
        let r = job.next_block(&mut by_writer);
        if by_writer {
            self.by_writers.fetch_add(1, Relaxed);
        }
        r
    }
}

impl Drop for CompressionPool {
    fn drop(&mut self) {
        lock(&self.shared.queue).shutdown = true;
        self.shared.work.notify_all();
    }
}

fn worker(shared: Arc<Shared>) {
    // A worker that panics (its run is already failed by `run_here`'s guard) leaves its place
    // to a new one: the next `submit` starts it.
    struct Seat<'a>(&'a Shared);
    impl Drop for Seat<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                lock(&self.0.queue).started -= 1;
            }
        }
    }
    let _seat = Seat(&shared);
    loop {
        let job = {
            let mut q = lock(&shared.queue);
            loop {
                if let Some(job) = q.jobs.pop_front() {
                    break job;
                }
                if q.shutdown {
                    return;
                }
                crate::util::sync_point::signal_point("CompressionPool::worker:idle");
                q = shared.work.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        crate::util::sync_point::sync_point("CompressionPool::worker:took");
        if shared.demand.load(Relaxed) == 0 {
            // Nobody waits any more: the writer compresses the run itself when it gets to it
            // (it is still queued), on its own core, rather than this thread taking one.
            continue;
        }
        job.run_here(Some(&shared.by_workers));
    }
}

/// Runs a multi-threaded test body under a watchdog: a panic fails the test at once, a body
/// still running after a minute (a lost wake-up) fails it instead of hanging the run.
#[cfg(test)]
pub(crate) fn within_a_minute<T: Send + 'static>(
    what: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(Ok(v)) => {
            let _ = handle.join();
            v
        }
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("{what}: watchdog fired after 60 s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(raw: &[u8], blocks: usize) -> Arc<Job> {
        let job = Job::new(CompressionType::Snappy);
        for _ in 0..blocks {
            assert!(job.push(raw.to_vec(), Vec::new()).is_ok());
        }
        job
    }

    #[test]
    fn blocks_compress_alike_on_any_thread() {
        within_a_minute("blocks_compress_alike_on_any_thread", compress_alike);
    }

    fn compress_alike() {
        let raw: Vec<u8> = (0..20_000u32).map(|i| (i % 7) as u8).collect();
        let inline = compress_block(CompressionType::Snappy, raw.clone(), Vec::new());
        assert_eq!(inline.type_id, CompressionType::Snappy.id());
        assert!(inline.data.len() < raw.len() / 8);
        let pool = CompressionPool::new(2).expect("native targets have threads");
        let demand = pool.demand();
        let jobs: Vec<_> = (0..64)
            .map(|_| {
                let job = run_of(&raw, 3);
                pool.submit(job.clone());
                job
            })
            .collect();
        for job in &jobs {
            for _ in 0..3 {
                let block = pool.next_block(job).unwrap();
                assert_eq!(block.type_id, inline.type_id);
                assert_eq!(block.data, inline.data);
            }
            // A run gives back exactly the blocks pushed: the next is an error, not a hang.
            assert!(pool.next_block(job).is_err());
            // A started run takes no more blocks.
            assert!(job.push(raw.clone(), Vec::new()).is_err());
        }
        let s = pool.stats();
        assert_eq!(s.runs_by_workers + s.runs_by_writers, 64);
        drop(demand);
        // Without demand nothing is queued: the writer compresses every run itself.
        let job = run_of(&raw, 2);
        pool.submit(job.clone());
        assert_eq!(pool.next_block(&job).unwrap().data, inline.data);
        assert_eq!(pool.next_block(&job).unwrap().data, inline.data);
        let after = pool.stats();
        assert_eq!(after.runs_by_writers, s.runs_by_writers + 1);
        assert_eq!(after.runs_by_workers, s.runs_by_workers);
        // A cancelled run is never compressed, and waiting on it is an error.
        let job = run_of(&raw, 1);
        job.cancel();
        assert!(pool.next_block(&job).is_err());
        assert_eq!(pool.stats(), after);
    }

    #[test]
    fn incompressible_blocks_stay_raw() {
        let mut raw = vec![0u8; 4096];
        crate::util::random::Random::new(301).fill(&mut raw);
        let b = compress_block(CompressionType::Snappy, raw.clone(), Vec::new());
        assert_eq!(b.type_id, 0);
        assert_eq!(b.data, raw);
        assert!(CompressionPool::new(0).is_none());
    }
}
