//! Block readahead for sequential reads: data blocks ahead of a table iterator's cursor are
//! read and decompressed on a small pool of worker threads while the cursor consumes the
//! blocks before them, so a scan's decompression (most of its work on zlib worlds) spreads
//! over every core.
//!
//! A cursor moving backward (a reverse scan) gets the same: its runs are scheduled toward the
//! table's first block, each still read with one `read_at` and decoded in block order.
//!
//! Units of work are *runs*: consecutive data blocks of one table, read with one `read_at`
//! and decoded together, sized by compressed bytes so that 4 KiB Snappy blocks (microseconds
//! each) and 160 KiB raw-deflate blocks (hundreds of microseconds) both amortise the hand-off.
//!
//! Invariants:
//! - Entries still reach the caller strictly in the cursor's order: the iterator consumes runs
//!   in the order it scheduled them; workers only fill them.
//! - Memory is bounded by decoded bytes, not only by compressed ones. A run is at most
//!   `RUN_BYTES` compressed bytes (plus one block larger than that) *and* at most
//!   `RUN_DECODED` bytes decoded, estimated as its block count times the memory a data block
//!   of this pool took on average so far (a table's blocks are cut at one size whatever they
//!   compress to; their compression ratio varies from table to table). Every run scheduled and
//!   not yet taken is charged to its pool's budget at that estimate (`AHEAD_BYTES` for all
//!   of the pool's cursors): a cursor schedules past `MIN_RUNS_AHEAD` runs only within it,
//!   and never past `MAX_RUNS_AHEAD`. A charge is released when its run is taken, cancelled
//!   or dropped (`Charge`), whichever path that is. Why: a Bedrock world saved by 1.26 has
//!   tables of 197 KB blocks that compress 120 to 1, where 64 KiB of compressed bytes made
//!   runs of 40 blocks (12 MiB decoded) and a scan held up to 44 MiB of decoded blocks (peak
//!   RSS 40 to 68 MiB, against 8 MiB without readahead).
//! - The cursor never waits on a run no worker has started: it takes the run and decodes it
//!   itself (work stealing), so a busy pool costs no latency and a one-core machine still
//!   makes progress.
//! - A run dropped before it is taken (a seek elsewhere, an iterator dropped) is cancelled:
//!   a worker that has not started it skips it.
//! - Across files: once a table's blocks are all scheduled, its readahead opens the next file
//!   of the level (a `Successor`) and schedules that file's first runs into a *handoff* kept by
//!   the pool, within the same run budget; the next table's readahead adopts them when the
//!   level iterator opens it, so the workers never idle at a file boundary. A handoff nobody
//!   adopts is cancelled when the readahead that made it is dropped.
//! - Errors are per block and surface exactly where the block is consumed, with file and
//!   offset, as without readahead.
//!
//! Thread-safety: `ReadaheadPool` is shared by every table of a database; worker threads are
//! started on first use and exit when the pool is dropped. On Linux they run under
//! `SCHED_BATCH` (`batch_policy`): a worker woken for a run never preempts the reader that
//! handed it out, which decodes the run itself when no core is free for the worker.
//!
//! On wasm (no threads) a pool is *external*: runs wait in its queue until the host lends
//! them (`lend`: the run's raw bytes, read here) to decoders outside the engine (JS workers,
//! each with its own wasm instance running `decode_run`) and hands the decoded blocks back
//! (`deliver`) between engine calls. A lent run the cursor reaches before its blocks came back
//! is decoded by the cursor itself (as a queued one is), so a slow, failed or terminated
//! decoder costs time, never a wrong or missing entry; blocks a decoder could not decode are
//! not delivered (the cursor decodes them and reports the damage with file and offset).
//! A reader that reads only some keys (`ReadOptions::lend_filter`: a Bedrock chunk index reads
//! Version and surface records, not the sub-chunks that are most of a world's bytes) has its
//! runs lent with the filter's code, and a decoder hands back each block rebuilt with only
//! the entries the filter keeps (`filter_block`): every version and tombstone of a kept user
//! key stays, so the reader sees exactly what it would have read among those keys. Such runs
//! are never adopted by another reader's readahead (a handoff carries its filter).

use std::collections::VecDeque;
use std::sync::atomic::{
    AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::block::Block;
use super::format::BlockHandle;
use super::table::Table;
use crate::error::{Error, Result};
use crate::util::sync_point::{signal_point, sync_point};

/// Compressed bytes per run: enough to amortise one hand-off over many small blocks.
pub const RUN_BYTES: u64 = 64 * 1024;
/// Runs each iterator keeps scheduled ahead of its cursor, at most.
pub const MAX_RUNS_AHEAD: usize = 6;
/// Runs each iterator keeps scheduled ahead of its cursor whatever the budget, so every
/// cursor has work in flight for the workers.
pub const MIN_RUNS_AHEAD: usize = 2;
/// Estimated decoded bytes of the runs scheduled ahead of all of a pool's cursors, past
/// which a cursor with `MIN_RUNS_AHEAD` runs ahead schedules no more.
pub const AHEAD_BYTES: u64 = 8 << 20;
/// Estimated decoded bytes of one run, at most (a run has at least one block).
pub const RUN_DECODED: u64 = 1 << 20;
/// Memory of a decoded data block assumed before any was taken (a high guess: Bedrock's are
/// ~160 to 200 KB, in pooled buffers of up to twice that; the first run taken corrects it).
const FIRST_BLOCK_BYTES: u64 = 256 << 10;
/// Consecutive data blocks a table iterator reads forward by itself before it goes on with
/// readahead (`ReadOptions::auto_readahead`): a seek and a few steps never start it, a scan
/// does within its first blocks (RocksDB's auto readahead starts at its second sequential
/// read; blocks here are decoded, not only read, so a few more are allowed).
pub const AUTO_READAHEAD_BLOCKS: usize = 4;

/// Worker threads shared by a database's table iterators.
pub struct ReadaheadPool {
    shared: Arc<Shared>,
    threads: usize,
    /// Runs are lent to decoders outside the engine instead of worker threads.
    external: Option<Mutex<External>>,
}

/// Runs lent out by an external pool, by id (weak: a run the cursor took or cancelled goes).
#[derive(Default)]
struct External {
    next_id: u64,
    lent: std::collections::HashMap<u64, std::sync::Weak<Run>>,
}

/// Names a key filter to outside decoders (they run another instance of this code and find
/// the function by `code`); `keeps` takes a user key. See the module comment.
#[derive(Clone, Copy, Debug)]
pub struct LendFilter {
    /// Non-zero; 0 means "every entry" where a code travels.
    pub code: u8,
    pub keeps: fn(&[u8]) -> bool,
}

impl PartialEq for LendFilter {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
    }
}

/// A run lent to an outside decoder: decode `raw` with `decode_run(raw, sizes, verify, max)`
/// (then `filter_block` each block when `filter` is not 0) and hand the result back with
/// `deliver(id, ..)`.
pub struct LentRun {
    pub id: u64,
    /// The reader's `LendFilter::code`, or 0.
    pub filter: u8,
    /// The run's blocks laid end to end, each with its 5-byte trailer.
    pub raw: Vec<u8>,
    /// Each block's length in `raw`, trailer included.
    pub sizes: Vec<u32>,
    pub verify: bool,
    pub max_block_size: u32,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
    stats: Counters,
    /// Runs scheduled for a table before its iterator exists (see the module comment).
    handoffs: Mutex<Vec<Handoff>>,
    /// `handoffs.len()`, stored under its lock whenever it changes: every table iterator
    /// opened asks `has_handoff`, and most find none without taking the lock (db_bench's
    /// seekrandom opens an iterator per seek: that lock was 7% of its thread). A count read
    /// stale by another thread only costs a handoff not adopted, which is then cancelled; the
    /// reader that made one sees it (its own store came first).
    handoff_count: AtomicUsize,
    /// Estimated decoded bytes of every run scheduled and not yet taken (`Charge`).
    ahead_bytes: AtomicU64,
    /// Memory (the blocks' `charge`) and count of the decoded data blocks taken so far:
    /// their mean estimates what a run will decode to.
    taken_bytes: AtomicU64,
    taken_blocks: AtomicU64,
}

impl Shared {
    /// The memory a decoded data block is expected to take.
    fn block_estimate(&self) -> u64 {
        let n = self.taken_blocks.load(Relaxed);
        if n == 0 {
            return FIRST_BLOCK_BYTES;
        }
        (self.taken_bytes.load(Relaxed) / n).max(1)
    }

    /// The most blocks a run may hold by `RUN_DECODED` (at least one).
    fn run_blocks(&self) -> usize {
        usize::try_from(RUN_DECODED / self.block_estimate())
            .unwrap_or(usize::MAX)
            .max(1)
    }
}

/// A scheduled run's share of its pool's `AHEAD_BYTES`, released when dropped (the run taken,
/// cancelled, or its readahead or handoff gone).
struct Charge {
    shared: Arc<Shared>,
    /// The estimate charged.
    bytes: u64,
}

impl Charge {
    fn new(shared: &Arc<Shared>, blocks: usize) -> Charge {
        let bytes = shared.block_estimate().saturating_mul(blocks as u64);
        let ahead = shared
            .ahead_bytes
            .fetch_add(bytes, Relaxed)
            .saturating_add(bytes);
        shared.stats.peak_ahead.fetch_max(ahead, Relaxed);
        shared.stats.largest_run.fetch_max(blocks as u64, Relaxed);
        Charge {
            shared: shared.clone(),
            bytes,
        }
    }

    /// Whether one more run of `blocks` blocks fits the budget beside what is charged.
    fn fits(shared: &Shared, blocks: usize) -> bool {
        shared
            .ahead_bytes
            .load(Relaxed)
            .saturating_add(shared.block_estimate().saturating_mul(blocks as u64))
            <= AHEAD_BYTES
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.shared.ahead_bytes.fetch_sub(self.bytes, Relaxed);
    }
}

/// A run scheduled ahead of a cursor: (first block index, block count, run, its charge).
type Scheduled = (usize, usize, Arc<Run>, Charge);

/// Runs of `table` scheduled by the readahead of the file before it.
struct Handoff {
    table: Arc<Table>,
    /// The scheduling reader's filter: only a reader with the same one adopts the runs.
    filter: Option<LendFilter>,
    runs: VecDeque<Scheduled>,
    /// Index of the next block of `table` to schedule.
    next: usize,
}

/// Opens the file that follows a table in its level, for readahead across the boundary.
pub type Successor = Box<dyn FnOnce() -> Option<Arc<Table>> + Send>;

#[derive(Default)]
struct Counters {
    lent: AtomicU64,
    peak_ahead: AtomicU64,
    largest_run: AtomicU64,
    scheduled: AtomicU64,
    by_workers: AtomicU64,
    by_reader: AtomicU64,
    cancelled: AtomicU64,
    delivered: AtomicU64,
    adopted: AtomicU64,
    /// Worker threads running under `SCHED_BATCH` (`batch_policy`).
    batched: AtomicU64,
}

/// What a pool has done since it was created (for benchmarks and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadaheadStats {
    /// Runs scheduled ahead of a cursor.
    pub runs_scheduled: u64,
    /// Runs decoded by a worker thread.
    pub runs_by_workers: u64,
    /// Runs the reading thread decoded itself because no worker had started them.
    pub runs_by_reader: u64,
    /// Runs dropped before anyone started them (seeks, iterators dropped).
    pub runs_cancelled: u64,
    /// Data blocks handed to iterators from runs.
    pub blocks_delivered: u64,
    /// Handoffs adopted: files whose first runs were scheduled before their iterator existed.
    pub handoffs_adopted: u64,
    /// Runs lent to outside decoders (external pools); `runs_by_workers` counts those whose
    /// blocks came back in time.
    pub runs_lent: u64,
    /// The most estimated decoded bytes scheduled ahead of the pool's cursors at once.
    pub peak_ahead_bytes: u64,
    /// The most data blocks in one run scheduled.
    pub largest_run: u64,
}

#[derive(Default)]
struct Queue {
    runs: VecDeque<Arc<Run>>,
    started: usize,
    shutdown: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A worker that panicked cannot leave the queue or a run half-updated (every update is a
    // single assignment), so a poisoned lock is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ReadaheadPool {
    /// A pool of `threads` workers (started lazily), or `None` when `threads` is 0 or the
    /// target has no threads.
    /// On wasm, `threads` > 0 gives an external pool (see the module comment).
    pub fn new(threads: usize) -> Option<Arc<ReadaheadPool>> {
        if threads == 0 {
            return None;
        }
        if cfg!(target_arch = "wasm32") {
            return Some(Self::external());
        }
        Some(Arc::new(ReadaheadPool {
            shared: Self::shared(),
            threads,
            external: None,
        }))
    }

    /// A pool whose runs are decoded outside the engine (`lend` / `deliver`); no threads.
    pub fn external() -> Arc<ReadaheadPool> {
        Arc::new(ReadaheadPool {
            shared: Self::shared(),
            threads: 0,
            external: Some(Mutex::new(External::default())),
        })
    }

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            stats: Counters::default(),
            handoffs: Mutex::new(Vec::new()),
            handoff_count: AtomicUsize::new(0),
            ahead_bytes: AtomicU64::new(0),
            taken_bytes: AtomicU64::new(0),
            taken_blocks: AtomicU64::new(0),
        })
    }

    /// Whether the readahead of the file before `table` scheduled runs of it that a reader
    /// with `filter` would adopt.
    pub fn has_handoff(&self, table: &Arc<Table>, filter: Option<LendFilter>) -> bool {
        if self.shared.handoff_count.load(Acquire) == 0 {
            return false;
        }
        lock(&self.shared.handoffs)
            .iter()
            .any(|h| Arc::ptr_eq(&h.table, table) && h.filter == filter)
    }

    /// Whether runs are lent to outside decoders.
    pub fn is_external(&self) -> bool {
        self.external.is_some()
    }

    /// External pools: up to `max` queued runs, farthest ahead first, each with its raw bytes
    /// read now. A run whose bytes cannot be read is not lent (its cursor reads it and reports the
    /// error).
    pub fn lend(&self, max: usize) -> Vec<LentRun> {
        let Some(ext) = &self.external else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while out.len() < max {
            // The farthest run ahead first: the cursor decodes the nearest queued runs itself
            // while the decoders work on the ones it reaches later, so neither waits.
            let Some(run) = lock(&self.shared.queue).runs.pop_back() else {
                break;
            };
            let mut state = lock(&run.state);
            let RunState::Queued(job) = std::mem::replace(&mut *state, RunState::Gone) else {
                continue; // taken by its cursor or cancelled
            };
            // A run `read_run_raw` refuses (a block past `max_block_size`, or a read error)
            // stays with its cursor, which reads it and reports what went wrong.
            match job.table.read_run_raw(job.first, job.count) {
                Ok((raw, sizes)) => {
                    let verify = job.verify;
                    let filter = job.filter.map_or(0, |f| f.code);
                    let max_block_size = job.table.max_block_size() as u32;
                    *state = RunState::Lent(job);
                    drop(state);
                    let mut e = lock(ext);
                    let id = e.next_id;
                    e.next_id += 1;
                    e.lent.insert(id, Arc::downgrade(&run));
                    self.shared.stats.lent.fetch_add(1, Relaxed);
                    out.push(LentRun {
                        id,
                        filter,
                        raw,
                        sizes,
                        verify,
                        max_block_size,
                    });
                }
                Err(_) => *state = RunState::Queued(job),
            }
        }
        out
    }

    /// External pools: the decoded blocks of lent run `id`, in order (each the block's
    /// contents). Ignored when the run was taken meanwhile (its cursor decoded it) or the
    /// count does not match. A block that is not a valid block leaves the run to its cursor.
    pub fn deliver(&self, id: u64, blocks: Vec<Vec<u8>>) {
        let Some(ext) = &self.external else {
            return;
        };
        let Some(run) = lock(ext).lent.remove(&id).and_then(|w| w.upgrade()) else {
            return;
        };
        let mut state = lock(&run.state);
        let RunState::Lent(job) = &*state else {
            return;
        };
        if blocks.len() != job.count {
            return;
        }
        let decoded: Result<Vec<_>> = blocks
            .into_iter()
            .map(|b| Block::new(b).map(Arc::new))
            .collect();
        if let Ok(decoded) = decoded {
            self.shared.stats.by_workers.fetch_add(1, Relaxed);
            *state = RunState::Done(decoded.into_iter().map(Ok).collect());
        }
    }

    /// External pools: forgets lent run `id` (its decoder failed); its cursor decodes it.
    pub fn abandon(&self, id: u64) {
        if let Some(ext) = &self.external {
            lock(ext).lent.remove(&id);
        }
    }

    /// The number of worker threads (not counting the consuming thread).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Worker threads started so far, and how many of them run under `SCHED_BATCH`.
    #[cfg(test)]
    pub(crate) fn workers_batched(&self) -> (usize, u64) {
        let started = lock(&self.shared.queue).started;
        (started, self.shared.stats.batched.load(Relaxed))
    }

    pub fn stats(&self) -> ReadaheadStats {
        let c = &self.shared.stats;
        ReadaheadStats {
            runs_lent: c.lent.load(Relaxed),
            peak_ahead_bytes: c.peak_ahead.load(Relaxed),
            largest_run: c.largest_run.load(Relaxed),
            runs_scheduled: c.scheduled.load(Relaxed),
            runs_by_workers: c.by_workers.load(Relaxed),
            runs_by_reader: c.by_reader.load(Relaxed),
            runs_cancelled: c.cancelled.load(Relaxed),
            blocks_delivered: c.delivered.load(Relaxed),
            handoffs_adopted: c.adopted.load(Relaxed),
        }
    }

    fn submit(&self, run: Arc<Run>) {
        self.shared.stats.scheduled.fetch_add(1, Relaxed);
        let mut q = lock(&self.shared.queue);
        if let Some(ext) = &self.external {
            // Nobody may be lending (a scan without decoders): runs its cursor already took
            // or cancelled leave the front of the queue here, so it stays bounded.
            while q
                .runs
                .front()
                .is_some_and(|r| !matches!(*lock(&r.state), RunState::Queued(_)))
            {
                q.runs.pop_front();
            }
            q.runs.push_back(run);
            lock(ext).lent.retain(|_, w| w.strong_count() > 0);
            return;
        }
        q.runs.push_back(run);
        if q.started < self.threads {
            q.started += 1;
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("strata-readahead".into())
                .spawn(move || worker(shared));
            if spawned.is_err() {
                // No thread to be had: the consumer decodes every run itself.
                q.started -= 1;
            }
        }
        drop(q);
        self.shared.work.notify_one();
    }
}

impl Drop for ReadaheadPool {
    fn drop(&mut self) {
        lock(&self.shared.queue).shutdown = true;
        self.shared.work.notify_all();
    }
}

fn worker(shared: Arc<Shared>) {
    if batch_policy() {
        shared.stats.batched.fetch_add(1, Relaxed);
    }
    loop {
        let run = {
            let mut q = lock(&shared.queue);
            loop {
                if let Some(run) = q.runs.pop_front() {
                    break run;
                }
                if q.shutdown {
                    return;
                }
                q = shared.work.wait(q).unwrap_or_else(|p| p.into_inner());
            }
        };
        run.execute_if_queued(&shared.stats);
    }
}

/// Puts the calling worker thread under Linux's `SCHED_BATCH` policy: the same share of the CPU
/// as any thread, but its wake-ups never preempt the thread running on the core it lands
/// on. Without it, every run a reader handed out woke a worker onto the reader's own core
/// whenever the other cores were busy (a compaction after a random fill): the trace of 1A's
/// readseq had the reader switched out 412 times in 0.24 s right after the wake-up's futex
/// call, the worker then decoding a run the reader could have decoded itself (work stealing)
/// without the switches. With it: no such switch, readseq medians 0.348 -> 0.320 us an entry
/// in interleaved rounds. Elsewhere (and if the call fails: a sandbox may refuse it) workers
/// keep the default policy. True when the thread now runs under `SCHED_BATCH`, as the kernel
/// reports it back.
fn batch_policy() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: both calls act on the calling thread (pid 0); sched_setscheduler only reads
        // `param`.
        #[allow(unsafe_code)]
        unsafe {
            libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
            libc::sched_getscheduler(0) == libc::SCHED_BATCH
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// What a run has to do: blocks `first..first + count` of `table`'s data blocks.
struct RunJob {
    table: Arc<Table>,
    first: usize,
    count: usize,
    verify: bool,
    filter: Option<LendFilter>,
}

enum RunState {
    Queued(RunJob),
    /// Lent to an outside decoder (external pools); the cursor may still decode it itself.
    Lent(RunJob),
    Running,
    Done(Vec<Result<Arc<Block>>>),
    /// Taken by the consumer, or cancelled before anyone started it.
    Gone,
}

/// A run of consecutive data blocks, filled by a worker or by the consumer.
struct Run {
    state: Mutex<RunState>,
    done: Condvar,
}

impl Run {
    fn new(job: RunJob) -> Arc<Run> {
        Arc::new(Run {
            state: Mutex::new(RunState::Queued(job)),
            done: Condvar::new(),
        })
    }

    /// Worker side: decode the run unless someone else took or cancelled it.
    fn execute_if_queued(&self, stats: &Counters) {
        let job = {
            let mut s = lock(&self.state);
            match std::mem::replace(&mut *s, RunState::Running) {
                RunState::Queued(job) => job,
                other => {
                    *s = other;
                    return;
                }
            }
        };
        // A panic while decoding (a bug: decoding returns errors for bad input) must not leave
        // the run `Running` forever, which would hang its consumer: it becomes an error at
        // the run's blocks, and the worker lives on.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            sync_point("Readahead::worker:decode");
            job.table.read_run(job.first, job.count, job.verify)
        }));
        let blocks = decoded.unwrap_or_else(|_| {
            (0..job.count.max(1))
                .map(|_| {
                    Err(Error::internal(format!(
                        "a readahead worker panicked decoding data blocks {}..{}",
                        job.first,
                        job.first + job.count
                    )))
                })
                .collect()
        });
        // Counted before it is published, so a reader that has the run sees it counted.
        stats.by_workers.fetch_add(1, Relaxed);
        *lock(&self.state) = RunState::Done(blocks);
        self.done.notify_all();
    }

    /// Consumer side: the run's blocks, decoding them here if no worker has started.
    fn take(&self, stats: &Counters) -> Vec<Result<Arc<Block>>> {
        let mut s = lock(&self.state);
        loop {
            match std::mem::replace(&mut *s, RunState::Gone) {
                RunState::Queued(job) | RunState::Lent(job) => {
                    drop(s);
                    stats.by_reader.fetch_add(1, Relaxed);
                    return job.table.read_run(job.first, job.count, job.verify);
                }
                RunState::Done(blocks) => return blocks,
                RunState::Running => {
                    *s = RunState::Running;
                    signal_point("Readahead::consumer:wait");
                    s = self.done.wait(s).unwrap_or_else(|p| p.into_inner());
                }
                RunState::Gone => return Vec::new(),
            }
        }
    }

    /// Drops the run's work if no worker has started it. True if it did.
    fn cancel(&self) -> bool {
        let mut s = lock(&self.state);
        if matches!(*s, RunState::Queued(_) | RunState::Lent(_)) {
            *s = RunState::Gone;
            return true;
        }
        false
    }
}

/// A decoded block waiting in the current run (`None` once handed out).
type Slot = Option<Result<Arc<Block>>>;

/// One table iterator's readahead: the runs scheduled ahead of its cursor.
pub struct Readahead {
    pool: Arc<ReadaheadPool>,
    table: Arc<Table>,
    verify: bool,
    filter: Option<LendFilter>,
    /// Scheduled runs, in the order the cursor reaches them.
    ahead: VecDeque<Scheduled>,
    /// The run being consumed: its first block index and its blocks (taken one by one).
    current: Option<(usize, Vec<Slot>)>,
    /// Forward: index of the next block to schedule. Backward: the blocks before it are yet to
    /// be scheduled (the next run ends there).
    next: usize,
    /// The cursor moves toward the table's first block (`Readahead::backward`).
    backward: bool,
    /// Index of the block most recently returned.
    last: Option<usize>,
    /// The next file of the level, not yet opened.
    successor: Option<Successor>,
    /// The next file, once this readahead schedules runs for it into a handoff.
    handing_to: Option<Arc<Table>>,
}

impl Readahead {
    /// Readahead over `table`'s data blocks, adopting runs the previous file's readahead
    /// scheduled for it; `successor` opens the file after it (none outside a level).
    pub fn new(
        pool: Arc<ReadaheadPool>,
        table: Arc<Table>,
        verify: bool,
        filter: Option<LendFilter>,
        successor: Option<Successor>,
    ) -> Readahead {
        let adopted = {
            let mut handoffs = lock(&pool.shared.handoffs);
            let adopted = handoffs
                .iter()
                .position(|h| Arc::ptr_eq(&h.table, &table) && h.filter == filter)
                .map(|i| handoffs.swap_remove(i));
            pool.shared.handoff_count.store(handoffs.len(), Release);
            adopted
        };
        if adopted.is_some() {
            pool.shared.stats.adopted.fetch_add(1, Relaxed);
        }
        let (ahead, next) = adopted.map_or((VecDeque::new(), 0), |h| (h.runs, h.next));
        Readahead {
            pool,
            table,
            verify,
            filter,
            ahead,
            current: None,
            next,
            backward: false,
            last: None,
            successor,
            handing_to: None,
        }
    }

    /// Readahead over `table`'s data blocks for a cursor moving backward (reverse scans): runs
    /// are scheduled toward the table's first block. No handoff crosses into the file before
    /// it (that file's iterator starts its own readahead after its first blocks).
    pub fn backward(
        pool: Arc<ReadaheadPool>,
        table: Arc<Table>,
        verify: bool,
        filter: Option<LendFilter>,
    ) -> Readahead {
        Readahead {
            pool,
            table,
            verify,
            filter,
            ahead: VecDeque::new(),
            current: None,
            next: 0,
            backward: true,
            last: None,
            successor: None,
            handing_to: None,
        }
    }

    /// Whether the cursor this readahead serves moves backward.
    pub fn is_backward(&self) -> bool {
        self.backward
    }

    /// The data block at `handle`, from the runs ahead when the cursor moves block by block in
    /// this readahead's direction. `None` means the caller should read it the ordinary way
    /// (not a data block this readahead knows, or a block it already handed out).
    pub fn block(&mut self, handle: BlockHandle) -> Option<Result<Arc<Block>>> {
        let table = self.table.clone();
        let handles = match table.data_handles() {
            Ok(h) => h,
            Err(e) => return Some(Err(e)),
        };
        let pos = handles
            .binary_search_by_key(&handle.offset, |h| h.offset)
            .ok()?;
        if handles[pos] != handle {
            return None;
        }
        let sequential = self.last.is_none_or(|l| {
            if self.backward {
                pos + 1 == l
            } else {
                pos == l + 1
            }
        });
        self.last = Some(pos);

        let found = self.take_scheduled(pos);
        let block = match found {
            Some(b) => b,
            None if sequential => {
                // A fresh start (first block, or the cursor moved): schedule from here.
                self.cancel_all();
                self.next = if self.backward { pos + 1 } else { pos };
                self.top_up(handles.len());
                self.take_scheduled(pos)?
            }
            None => {
                // Random access: no speculation.
                self.cancel_all();
                return None;
            }
        };
        self.top_up(handles.len());
        self.prefetch_following(pos);
        self.pool.shared.stats.delivered.fetch_add(1, Relaxed);
        Some(block)
    }

    /// Asks the CPU for the bytes of the block the cursor reads after block `pos`, when its
    /// run is here decoded: a worker decoded it on another core, so each of its cache lines
    /// would otherwise be a miss at the step that first reads it, one after another; asked
    /// now, they arrive while the cursor reads block `pos`.
    fn prefetch_following(&self, pos: usize) {
        let following = if self.backward {
            pos.checked_sub(1)
        } else {
            Some(pos + 1)
        };
        if let (Some(f), Some((first, blocks))) = (following, &self.current) {
            if let Some(Some(Ok(block))) = f.checked_sub(*first).and_then(|i| blocks.get(i)) {
                block.prefetch();
            }
        }
    }

    /// Block `pos` from the current run or the next scheduled one, if it is there.
    fn take_scheduled(&mut self, pos: usize) -> Option<Result<Arc<Block>>> {
        loop {
            if let Some((first, blocks)) = &mut self.current {
                if pos >= *first && pos < *first + blocks.len() {
                    return blocks[pos - *first].take();
                }
            }
            match self.ahead.front() {
                Some(&(first, count, ..)) if pos >= first && pos < first + count => {
                    // Unreachable panic: `front()` just matched `Some`.
                    let (first, count, run, charge) = self.ahead.pop_front().expect("front exists");
                    let shared = &self.pool.shared;
                    let blocks = run.take(&shared.stats);
                    let (n, bytes) = blocks.iter().flatten().fold((0u64, 0u64), |(n, b), block| {
                        (n + 1, b + block.charge() as u64)
                    });
                    if n > 0 {
                        shared.taken_bytes.fetch_add(bytes, Relaxed);
                        shared.taken_blocks.fetch_add(n, Relaxed);
                    }
                    drop(charge);
                    let mut blocks: Vec<Slot> = blocks.into_iter().map(Some).collect();
                    // A run cancelled under us (cannot happen for the front run, but stay
                    // total): pad so indexing is safe; missing blocks are read normally.
                    blocks.resize_with(count, || None);
                    self.current = Some((first, blocks));
                }
                _ => return None,
            }
        }
    }

    /// Whether a cursor with `held` runs ahead schedules one more of `blocks` blocks.
    fn may_schedule(&self, held: usize, blocks: usize) -> bool {
        held < MIN_RUNS_AHEAD || (held < MAX_RUNS_AHEAD && Charge::fits(&self.pool.shared, blocks))
    }

    /// The block count of `table`'s run from block `first`, within `RUN_BYTES` and
    /// `RUN_DECODED`.
    fn run_length(&self, table: &Table, first: usize) -> usize {
        table
            .run_length(first, RUN_BYTES)
            .min(self.pool.shared.run_blocks())
    }

    fn top_up(&mut self, total: usize) {
        if self.backward {
            while self.next > 0 && self.ahead.len() < MAX_RUNS_AHEAD {
                let count = self
                    .table
                    .run_length_back(self.next, RUN_BYTES)
                    .clamp(1, self.pool.shared.run_blocks());
                if !self.may_schedule(self.ahead.len(), count) {
                    return;
                }
                let first = self.next - count;
                let scheduled = self.schedule_run(&self.table, first, count);
                self.ahead.push_back(scheduled);
                self.next = first;
            }
            return;
        }
        // (The cheap bound first: this runs at every block the cursor takes.)
        while self.next < total && self.ahead.len() < MAX_RUNS_AHEAD {
            let count = self.run_length(&self.table, self.next);
            if !self.may_schedule(self.ahead.len(), count) {
                return;
            }
            let scheduled = self.schedule_run(&self.table, self.next, count);
            self.ahead.push_back(scheduled);
            self.next += count;
        }
        if self.ahead.len() < MAX_RUNS_AHEAD {
            self.top_up_successor();
        }
    }

    /// Schedules blocks `first..first + count` of `table` as one run.
    fn schedule_run(&self, table: &Arc<Table>, first: usize, count: usize) -> Scheduled {
        let charge = Charge::new(&self.pool.shared, count);
        let run = Run::new(RunJob {
            table: table.clone(),
            first,
            count,
            verify: self.verify,
            filter: self.filter,
        });
        self.pool.submit(run.clone());
        (first, count, run, charge)
    }

    /// This table is fully scheduled: schedule the next file's first runs into its handoff.
    fn top_up_successor(&mut self) {
        if self.handing_to.is_none() {
            let Some(next) = self.successor.take().and_then(|open| open()) else {
                return;
            };
            let mut handoffs = lock(&self.pool.shared.handoffs);
            if handoffs.iter().any(|h| Arc::ptr_eq(&h.table, &next)) {
                return; // another iterator over the same level got there first
            }
            handoffs.push(Handoff {
                table: next.clone(),
                filter: self.filter,
                runs: VecDeque::new(),
                next: 0,
            });
            self.pool
                .shared
                .handoff_count
                .store(handoffs.len(), Release);
            drop(handoffs);
            self.handing_to = Some(next);
        }
        let Some(next) = self.handing_to.clone() else {
            return;
        };
        let Ok(total) = next.data_handles().map(|h| h.len()) else {
            return; // its iterator will report the damage when it gets there
        };
        let mut handoffs = lock(&self.pool.shared.handoffs);
        let filter = self.filter;
        let Some(h) = handoffs
            .iter_mut()
            .find(|h| Arc::ptr_eq(&h.table, &next) && h.filter == filter)
        else {
            self.handing_to = None; // already adopted
            return;
        };
        while h.next < total && self.ahead.len() + h.runs.len() < MAX_RUNS_AHEAD {
            let count = self.run_length(&next, h.next);
            if !self.may_schedule(self.ahead.len() + h.runs.len(), count) {
                break;
            }
            let scheduled = self.schedule_run(&next, h.next, count);
            h.runs.push_back(scheduled);
            h.next += count;
        }
    }

    fn cancel_all(&mut self) {
        let stats = &self.pool.shared.stats;
        for (_, _, run, _charge) in self.ahead.drain(..) {
            if run.cancel() {
                stats.cancelled.fetch_add(1, Relaxed);
            }
        }
        self.current = None;
    }
}

impl Drop for Readahead {
    fn drop(&mut self) {
        self.cancel_all();
        // A handoff the next file's iterator never adopted (the scan stopped or sought away).
        if let Some(next) = self.handing_to.take() {
            let mut handoffs = lock(&self.pool.shared.handoffs);
            let filter = self.filter;
            if let Some(i) = handoffs
                .iter()
                .position(|h| Arc::ptr_eq(&h.table, &next) && h.filter == filter)
            {
                let removed = handoffs.swap_remove(i);
                self.pool
                    .shared
                    .handoff_count
                    .store(handoffs.len(), Release);
                for (_, _, run, _charge) in removed.runs {
                    if run.cancel() {
                        self.pool.shared.stats.cancelled.fetch_add(1, Relaxed);
                    }
                }
            }
        }
    }
}

/// A decoded data block with only the entries whose user key `keeps` takes, in order (the
/// block itself when it keeps them all). An entry whose key is too short to hold a user key
/// is kept, so the reader meets it and reports it. A block that does not parse is an error.
pub fn filter_block(contents: Vec<u8>, keeps: fn(&[u8]) -> bool) -> Result<Vec<u8>> {
    use crate::iterator::InternalIterator;
    let block = Arc::new(Block::new(contents)?);
    let mut kept = super::block_builder::BlockBuilder::new(16);
    let mut all = true;
    let mut it = block.iter();
    it.seek_to_first();
    while it.valid() {
        let k = it.key();
        if k.len() < 8 || keeps(&k[..k.len() - 8]) {
            kept.add(k, it.value());
        } else {
            all = false;
        }
        it.next();
    }
    it.status()?;
    drop(it);
    if all {
        if let Ok(block) = Arc::try_unwrap(block) {
            return Ok(block.into_vec());
        }
    }
    Ok(kept.finish().to_vec())
}

/// Decodes a lent run's raw bytes (`sizes`: each block's length with its trailer): each
/// block's contents, or the first block's error. What an outside decoder runs (its own wasm
/// instance); the checks are those of `Table::read_run`.
pub fn decode_run(
    raw: &[u8],
    sizes: &[u32],
    verify: bool,
    max_block_size: usize,
) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0usize;
    for &size in sizes {
        let end = at
            .checked_add(size as usize)
            .filter(|&e| e <= raw.len())
            .ok_or_else(|| Error::corruption("a lent run is shorter than its block sizes"))?;
        // Strictly within the limit: the blocks go back to the engine through copies that
        // cannot fail softly, so a block past it (a value of more than `max_block_size`) is
        // left to the cursor, whose reads of such blocks reserve their memory fallibly.
        let block = &raw[at..end];
        let n = super::format::check_trailer(block, verify)?;
        out.push(crate::compress::decompress_strict(
            block[n],
            &block[..n],
            max_block_size,
        )?);
        at = end;
    }
    if at != raw.len() {
        return Err(Error::corruption(
            "a lent run is longer than its block sizes",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_pool_without_threads() {
        assert!(ReadaheadPool::new(0).is_none());
        let pool = ReadaheadPool::new(3).unwrap();
        assert_eq!(pool.threads(), 3);
    }
}
