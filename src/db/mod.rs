//! The database: open/recover, the write path, point reads, iterators, snapshots, the full
//! scan, compaction control and inspection.
//!
//! Opening replays the MANIFEST named by `CURRENT` into a Version and the write-ahead logs it
//! does not yet cover. A read-only open changes nothing in the folder: no `LOCK` is created (an
//! existing one is locked shared), the logs are replayed into memory only, no MANIFEST is
//! written. A writable open holds `LOCK` exclusively, converts the old logs into level-0
//! tables, starts a new log and a new MANIFEST, and deletes files no longer needed.
//!
//! Thread-safety: `Db` is `Send + Sync`. One mutex guards the mutable state (memtables,
//! VersionSet, background status); reads take a consistent snapshot of (memtables, Version,
//! last sequence) under it and proceed without it. Writers queue up and one leader commits a
//! whole group (`write.rs`); flushes and compactions run on a background thread or inline
//! (`background.rs`).

mod approximate;
mod background;
pub mod db_iter;
pub mod destroy;
pub mod dialect;
pub mod inspect;
pub mod range;
pub(crate) mod recovery;
pub mod repair;
mod write;
pub mod write_batch;

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

pub use db_iter::DbIter;
pub use dialect::Dialect;
pub use inspect::{TableStats, VerifyReport};
pub use range::{Bound, KeyRange, RangeIter};
pub use write_batch::WriteBatch;

use crate::cache::Cache;
use crate::compaction::CompactionLimits;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{Lookup, LookupKey, SequenceNumber};
use crate::log;
use crate::memtable::MemTable;
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::storage::{FileLock, Storage};
use crate::table::compress_pool::CompressionPool;
use crate::table::merger::MergingIterator;
use crate::table::table_builder::TableBuilderOptions;
use crate::version::version_set::VersionSet;
use crate::version::{TableCache, Version};

/// The figures of the headline workload: every live entry in key order, with CRC-32C over
/// `key0 ‖ value0 ‖ key1 ‖ value1 ‖ …`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    pub entries: u64,
    pub key_bytes: u64,
    pub value_bytes: u64,
    pub crc32c: u32,
}

impl ScanStats {
    /// Adds one entry.
    #[inline]
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.entries += 1;
        self.key_bytes += key.len() as u64;
        self.value_bytes += value.len() as u64;
        self.crc32c = crate::util::crc::extend(crate::util::crc::extend(self.crc32c, key), value);
    }

    /// The one-line JSON form the CLI prints.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"entries\":{},\"key_bytes\":{},\"value_bytes\":{},\"crc32c\":{}}}",
            self.entries, self.key_bytes, self.value_bytes, self.crc32c
        )
    }
}

/// One write-ahead log replayed at open.
#[derive(Clone, Debug)]
pub struct ReplayedLog {
    pub name: String,
    /// WriteBatches replayed.
    pub records: u64,
    pub bytes: u64,
}

/// A break in the history between two logs: `log` starts at sequence `found`, but the log
/// before it ends before `expected` (its unsynced tail was lost in a crash).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogGap {
    pub log: String,
    pub expected: u64,
    pub found: u64,
}

/// Bytes at the end of a log or MANIFEST that recovery did not use: a record cut by the end of
/// the file (a torn write), or damage that reads like one. LevelDB drops these silently; Strata
/// reports them. A log's trailing zeros up to a block boundary are not counted (nor reported
/// when they are the whole tail): they are the space a synced log is extended with ahead of its
/// records (`storage::fs`), and hold nothing that was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DroppedTail {
    pub file: String,
    /// Where the unused bytes start (just past the last complete record).
    pub offset: u64,
    pub bytes: u64,
}

/// A table file in the folder that the recovered MANIFEST does not name and that this open did
/// not write: left in place, never deleted by an ordinary open or compaction, until
/// `repair` folds it back in or the user removes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreferencedTable {
    pub file: String,
    pub bytes: u64,
    /// Entries in it, when it reads whole.
    pub entries: Option<u64>,
}

/// What recovery found, for `info`.
#[derive(Clone, Debug)]
pub struct RecoveryInfo {
    /// Unused tails of the MANIFEST and of the replayed logs.
    pub dropped_tails: Vec<DroppedTail>,
    /// Tables on disk that the MANIFEST does not name (kept; see `UnreferencedTable`).
    pub unreferenced_tables: Vec<UnreferencedTable>,
    /// Where replay stopped to keep recovery a prefix of the history, if it did.
    pub gap: Option<LogGap>,
    /// Logs not replayed because of the gap (moved into `lost/` by a writable open).
    pub lost_logs: Vec<ReplayedLog>,
    pub manifest: String,
    pub log_number: u64,
    pub next_file_number: u64,
    /// Logs replayed, oldest first.
    pub logs: Vec<ReplayedLog>,
}

impl RecoveryInfo {
    /// Whether recovery used everything it found.
    pub fn is_clean(&self) -> bool {
        self.dropped_tails.is_empty()
            && self.unreferenced_tables.is_empty()
            && self.gap.is_none()
            && self.lost_logs.is_empty()
    }

    /// One line per finding, for people (the CLI prints them on stderr).
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.dropped_tails {
            out.push(format!(
                "{}: {} bytes from offset {} were not used (a record cut by the end of the \
                 file, or a damaged tail)",
                t.file, t.bytes, t.offset
            ));
        }
        if let Some(g) = &self.gap {
            out.push(format!(
                "{}: starts at sequence {} but the log before it ends before {} (its unsynced \
                 tail was lost): it and later logs were not replayed",
                g.log, g.found, g.expected
            ));
        }
        for l in &self.lost_logs {
            out.push(format!(
                "{}: {} bytes not replayed, kept in lost/ (or in place, read-only)",
                l.name, l.bytes
            ));
        }
        for t in &self.unreferenced_tables {
            let entries = t
                .entries
                .map_or("unreadable".to_string(), |n| format!("{n} entries"));
            out.push(format!(
                "{}: {} bytes, {entries}, not named by the MANIFEST: kept in place; \
                 `strata repair` folds it back in",
                t.file, t.bytes
            ));
        }
        out
    }
}

/// A range compaction in progress (`Db::compact_range_steps`). Dropped before it finished, it
/// withdraws its request, so the next manual compaction does not wait for it forever.
#[derive(Debug)]
pub struct CompactSteps {
    db: std::sync::Weak<DbInner>,
    begin: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    level: usize,
    /// Set by the first step (after the memtable flush).
    max_level: Option<usize>,
    /// This range compaction's request is the one in `State::manual`.
    active: bool,
    estimate: u64,
    done_bytes: u64,
}

impl Drop for CompactSteps {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        if let Some(inner) = self.db.upgrade() {
            // This request is the one registered (only one is at a time); a compaction job
            // it started finishes on its own.
            inner.lock_state().manual = None;
            inner.bg_cv.notify_all();
        }
    }
}

impl CompactSteps {
    /// Bytes of input tables compacted so far, and an estimate of the whole (the bytes above
    /// the last level, each counted once per level it moves down); 0 before the first step.
    /// The estimate can be passed when compaction drops data; it is a progress figure only.
    pub fn progress(&self) -> (u64, u64) {
        (self.done_bytes, self.estimate)
    }
}

struct ManualCompaction {
    level: usize,
    begin: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
    done: bool,
}

/// What a read sees: the memtables and the Version, taken together under the state lock.
struct ReadView {
    mem: Arc<MemTable>,
    imm: Option<Arc<MemTable>>,
    version: Arc<Version>,
}

/// Mutable state, under `DbInner::state`.
struct State {
    mem: Arc<MemTable>,
    imm: Option<Arc<MemTable>>,
    versions: VersionSet,
    /// The last `ReadView` handed out, handed out again while it is current: a read then
    /// takes one reference under the lock, not three (and records no Version). Checked
    /// against `mem`, `imm` and the current Version at every read, so a change nobody cleared
    /// it for is still seen; cleared at switches, flushes and installs all the same, so an old
    /// memtable or Version (and its files) is not kept alive until the next read.
    view: Option<Arc<ReadView>>,
    /// The open write-ahead log (None when read-only, or while the leader writes to it).
    log: Option<log::Writer>,
    log_file_number: u64,
    /// Whether the current log's folder entry is known durable (synced before a synced write).
    log_dir_synced: bool,
    /// Logs switched away from whose tails are not synced yet, oldest first: synced before the
    /// first synced write to a newer log (`commit_group`), dropped once their memtable is
    /// flushed (its table is synced then). Recovery keeps a prefix without them being synced
    /// at the switch: each new log starts with a marker naming the sequence that must follow
    /// the old log's last record, and a replay that finds a gap stops there (`recovery.rs`).
    unsynced_logs: Vec<(u64, log::Writer)>,
    /// A log created ahead, for the next memtable switch to take: each flush creates the one
    /// after it while its memtable is still immutable, so no switch can come between (the
    /// number is above the current log's, and the next switch finds it ready). The switch then
    /// makes no system call: creating a file took 30-150 µs on the writer's path, the slowest
    /// 0.1% of puts while flushes run (RucksDB's writes_during_flush p99.9). Empty; removed
    /// when the database closes, and replayed as an empty log after a crash.
    next_log: Option<(u64, log::Writer)>,
    /// The sequence of the last record handed to the current log (writes without the WAL are
    /// not in it): the new log's marker at a switch is this + 1.
    last_logged_sequence: SequenceNumber,
    bg_scheduled: bool,
    /// An edit is being written to the MANIFEST with this lock released
    /// (`DbInner::log_and_apply`): no other edit begins, and no file is deleted, until it is
    /// installed.
    manifest_writing: bool,
    bg_error: Option<Error>,
    shutting_down: bool,
    /// Numbers of files being written that are not in a Version yet.
    pending_outputs: HashSet<u64>,
    /// Tables this database may delete once no Version needs them: those the recovered
    /// MANIFEST named and those written since the open. A table in the folder that is in
    /// neither set is someone else's (an edit lost with a torn MANIFEST record, a copy) and is
    /// never deleted (`RecoveryInfo::unreferenced_tables`).
    known_tables: HashSet<u64>,
    /// Live snapshots: sequence → count.
    snapshots: BTreeMap<SequenceNumber, usize>,
    manual: Option<ManualCompaction>,
    /// The running compaction's outputs-to-be (level and key span), from its start to its
    /// install: a flush in between must not place its table there.
    compacting: Option<crate::version::BusyRange>,
    /// A caller is writing the immutable memtable as a table. Without a background thread
    /// several callers run background steps; only one may flush a given memtable.
    flushing: bool,
    /// Compactions and flushes done, for properties.
    compactions: u64,
    flushes: u64,
    /// Data blocks compactions copied as stored instead of recompressing.
    blocks_copied: u64,
    /// Write groups committed since the open (one log record each when the log is on): the
    /// leader's batch with the writers it took along, so writes / groups is the commit fan-in.
    write_groups: u64,
}

pub(crate) struct DbInner {
    dialect: Dialect,
    storage: Arc<dyn Storage>,
    dir: String,
    options: Options,
    table_cache: Arc<TableCache>,
    /// Workers compressing data blocks for flushes and compactions (`compression_threads`).
    compression_pool: Option<Arc<CompressionPool>>,
    state: Mutex<State>,
    /// Signals the background thread (work scheduled) and waiters (work finished).
    bg_cv: Condvar,
    has_imm: AtomicBool,
    /// `State::bg_scheduled`, readable without the lock (`Db::background_busy`).
    bg_busy: AtomicBool,
    writers: Mutex<write::WriteQueue>,
    recovery: RecoveryInfo,
    _lock: Option<Box<dyn FileLock>>,
}

/// An open database.
pub struct Db {
    inner: Arc<DbInner>,
    #[cfg(not(target_arch = "wasm32"))]
    bg_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// A consistent read view; reads with `ReadOptions::snapshot = Some(s.sequence())` see the
/// database as it was when the snapshot was taken. Released on drop.
pub struct Snapshot {
    sequence: SequenceNumber,
    db: Weak<DbInner>,
}

impl Snapshot {
    pub fn sequence(&self) -> SequenceNumber {
        self.sequence
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        if let Some(db) = self.db.upgrade() {
            let mut st = db.lock_state();
            if let Some(n) = st.snapshots.get_mut(&self.sequence) {
                *n -= 1;
                if *n == 0 {
                    st.snapshots.remove(&self.sequence);
                }
            }
        }
    }
}

/// Per-level summary for `properties`.
#[derive(Clone, Debug, Default)]
pub struct Properties {
    pub files_per_level: Vec<usize>,
    pub bytes_per_level: Vec<u64>,
    pub last_sequence: SequenceNumber,
    pub memtable_bytes: usize,
    pub compactions: u64,
    pub flushes: u64,
    /// Data blocks compactions wrote as they were stored (a value of at least `block_size`
    /// alone in its block, in the table's codec) instead of decompressing and compressing them.
    pub blocks_copied: u64,
    /// Write groups committed since the open (LevelDB's group commit: one log record for the
    /// writers that waited together; the wasm worker groups the puts of one message).
    pub write_groups: u64,
}

impl Db {
    /// Opens (or creates, per the options) the database in folder `dir` of `storage`.
    pub fn open(storage: Arc<dyn Storage>, dir: &str, options: Options) -> Result<Db> {
        let inner = Arc::new(recovery::open(storage, dir, options)?);
        let db = Db {
            inner,
            #[cfg(not(target_arch = "wasm32"))]
            bg_thread: Mutex::new(None),
        };
        if db.inner.options.paranoid_checks {
            // Every block of every live table, before anything is written.
            db.verify()?;
        }
        #[cfg(not(target_arch = "wasm32"))]
        if db.inner.options.background_thread && !db.inner.options.read_only {
            let inner = db.inner.clone();
            let handle = std::thread::Builder::new()
                .name("strata-compaction".into())
                .spawn(move || inner.background_loop())
                .map_err(|e| Error::io(format!("cannot start the compaction thread: {e}")))?;
            *db.bg_thread.lock().unwrap() = Some(handle);
        }
        if !db.inner.options.read_only {
            let st = db.inner.lock_state();
            let st = db.inner.maybe_schedule_compaction(st);
            drop(st);
            db.inner.run_inline_work();
        }
        Ok(db)
    }

    /// Opens a database folder on the native file system.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open_path(dir: &str, options: Options) -> Result<Db> {
        Self::open(Arc::new(crate::storage::FsStorage::new()), dir, options)
    }

    pub fn options(&self) -> &Options {
        &self.inner.options
    }

    pub fn dir(&self) -> &str {
        &self.inner.dir
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.inner.storage
    }

    pub fn recovery_info(&self) -> &RecoveryInfo {
        &self.inner.recovery
    }

    /// The database's dialect as detected at open, and why (`db::dialect`).
    pub fn dialect(&self) -> &Dialect {
        &self.inner.dialect
    }

    /// The current Version (live tables per level).
    pub fn version(&self) -> Arc<Version> {
        self.inner.lock_state().versions.current()
    }

    pub fn table_cache(&self) -> &Arc<TableCache> {
        &self.inner.table_cache
    }

    /// The sequence number of the latest write.
    pub fn last_sequence(&self) -> SequenceNumber {
        self.inner.lock_state().versions.last_sequence
    }

    /// Entries in the memtables (recovered from the log, or written since the last flush).
    pub fn memtable_entries(&self) -> usize {
        let st = self.inner.lock_state();
        st.mem.len() + st.imm.as_ref().map_or(0, |m| m.len())
    }

    pub fn properties(&self) -> Properties {
        let mut st = self.inner.lock_state();
        let v = st.versions.current();
        Properties {
            files_per_level: (0..crate::options::config::NUM_LEVELS)
                .map(|l| v.num_files(l))
                .collect(),
            bytes_per_level: (0..crate::options::config::NUM_LEVELS)
                .map(|l| v.level_bytes(l))
                .collect(),
            last_sequence: st.versions.last_sequence,
            memtable_bytes: st.mem.approximate_memory_usage(),
            compactions: st.compactions,
            blocks_copied: st.blocks_copied,
            flushes: st.flushes,
            write_groups: st.write_groups,
        }
    }

    /// Whether a memtable flush or a compaction is scheduled or running: one relaxed atomic
    /// load, no lock, for instrumentation (`strata bench`'s writes_during_flush classifies
    /// each put by it). The answer can be stale by the time it is used.
    pub fn background_busy(&self) -> bool {
        self.inner
            .bg_busy
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets `key` to `value`.
    pub fn put(&self, options: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(WriteBatch::put_size(key, value));
        b.put(key, value);
        self.write(options, b)
    }

    /// Removes `key` (not an error if absent).
    pub fn delete(&self, options: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(WriteBatch::delete_size(key));
        b.delete(key);
        self.write(options, b)
    }

    /// Applies a batch atomically: after a crash, all of it or none of it is visible.
    pub fn write(&self, options: &WriteOptions, batch: WriteBatch) -> Result<()> {
        if self.inner.options.read_only {
            return Err(Error::not_supported("the database was opened read-only"));
        }
        let r = self.inner.write(options, Some(batch));
        self.inner.run_inline_work();
        r
    }

    /// A snapshot of the current state.
    pub fn snapshot(&self) -> Snapshot {
        let mut st = self.inner.lock_state();
        let seq = st.versions.last_sequence;
        *st.snapshots.entry(seq).or_insert(0) += 1;
        Snapshot {
            sequence: seq,
            db: Arc::downgrade(&self.inner),
        }
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, options: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.get_into(options, key, &mut value)?.then_some(value))
    }

    /// `get` into the caller's buffer, as LevelDB's `Get(options, key, std::string*)`: true
    /// when `key` has a value, which then replaces `value`'s contents in its existing
    /// capacity (a loop of gets with one buffer allocates only when a value outgrows it); on
    /// false or an error `value` is cleared.
    pub fn get_into(&self, options: &ReadOptions, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        let (view, last) = self.inner.read_view();
        let seq = options.snapshot.unwrap_or(last).min(last);
        let lkey = LookupKey::new(key, seq);
        for m in std::iter::once(&view.mem).chain(view.imm.as_ref()) {
            match m.get_into(&lkey, value) {
                Lookup::Found => return Ok(true),
                Lookup::Deleted => return Ok(false),
                Lookup::Missing => {}
            }
        }
        let found = view
            .version
            .get(options, &lkey, &self.inner.table_cache, value);
        let (found, seek_due) = found.inspect_err(|_| value.clear())?;
        if seek_due && !self.inner.options.read_only {
            let st = self.inner.lock_state();
            drop(self.inner.maybe_schedule_compaction(st));
        }
        Ok(found == Lookup::Found)
    }

    /// An iterator over user keys as of the options' snapshot (or now). Unpositioned.
    pub fn iter(&self, options: &ReadOptions) -> DbIter {
        let (view, last) = self.inner.read_view();
        let seq = options.snapshot.unwrap_or(last).min(last);
        let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(view.mem.iter())];
        if let Some(imm) = &view.imm {
            children.push(Box::new(imm.iter()));
        }
        children.extend(view.version.iterators(options, &self.inner.table_cache));
        DbIter::new(
            Box::new(MergingIterator::new(children)),
            seq,
            view.version.clone(),
        )
    }

    /// The headline workload: every live entry in key order.
    pub fn scan(&self) -> Result<ScanStats> {
        let options = ReadOptions {
            fill_cache: false,
            readahead: true,
            ..ReadOptions::default()
        };
        let mut it = self.iter(&options);
        let mut stats = ScanStats::default();
        it.seek_to_first();
        while it.valid() {
            stats.add(it.key(), it.value());
            it.next();
        }
        it.status()?;
        Ok(stats)
    }

    /// Flushes the memtable to a table and compacts every level overlapping
    /// `[begin, end]` (user keys; `None` = unbounded) down as far as it goes.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let mut steps = self.compact_range_steps(begin, end)?;
        while !self.compact_step(&mut steps)? {}
        Ok(())
    }

    /// `compact_range` in bounded pieces, for hosts that must yield between them (a wasm
    /// export reports progress and can stop): `compact_step` until it returns true. The
    /// same work in the same order as `compact_range`, so the same files result.
    pub fn compact_range_steps(
        &self,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<CompactSteps> {
        if self.inner.options.read_only {
            return Err(Error::not_supported("the database was opened read-only"));
        }
        Ok(CompactSteps {
            db: Arc::downgrade(&self.inner),
            begin: begin.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            level: 0,
            max_level: None,
            active: false,
            estimate: 0,
            done_bytes: 0,
        })
    }

    /// One piece of a range compaction: the memtable flush first, then one compaction
    /// (at most about `max_file_size` of inputs below level 0). Returns true when finished.
    pub fn compact_step(&self, steps: &mut CompactSteps) -> Result<bool> {
        // The caller waits for this work: its core may compress blocks.
        let _demand = self.inner.compression_pool.as_ref().map(|p| p.demand());
        if steps.max_level.is_none() {
            self.flush()?;
            let (begin, end) = (steps.begin.as_deref(), steps.end.as_deref());
            let mut st = self.inner.lock_state();
            let v = st.versions.current();
            drop(st);
            let mut max = 1;
            for level in 1..crate::options::config::NUM_LEVELS {
                if !v.overlapping_inputs(level, begin, end).is_empty() {
                    max = level;
                }
            }
            // Data at level l is rewritten about (max - l) times on its way down.
            steps.estimate = (0..max)
                .map(|l| {
                    let bytes: u64 = v.files[l].iter().map(|f| f.file_size).sum();
                    bytes * (max - l) as u64
                })
                .sum();
            steps.max_level = Some(max);
            return Ok(false);
        }
        let max = steps.max_level.unwrap_or(0);
        while steps.level < max {
            let (finished, bytes) = self.inner.manual_compaction_step(steps)?;
            steps.done_bytes += bytes;
            if !finished {
                return Ok(false);
            }
            steps.level += 1;
        }
        Ok(true)
    }

    /// Writes the memtable to a level-0 table (even if it is not full) and waits for it.
    pub fn flush(&self) -> Result<()> {
        if self.inner.options.read_only {
            return Ok(());
        }
        // The caller waits for the flush: its core may compress blocks.
        let _demand = self.inner.compression_pool.as_ref().map(|p| p.demand());
        self.inner.write(&WriteOptions::default(), None)?;
        self.inner.run_inline_work();
        self.inner.wait_for_imm_flush()
    }

    /// Runs pending background work (flush, one compaction) now, in this thread. For hosts
    /// without a background thread (wasm) to call when idle. Returns whether work remains.
    pub fn maintenance(&self) -> Result<bool> {
        if self.inner.options.read_only {
            return Ok(false);
        }
        let mut st = self.inner.lock_state();
        if !self.inner.options.background_thread && DbInner::inline_step_elsewhere(&st) {
            // Another caller is running the step: wait for it a little rather than report
            // work left at once (a host looping on this would spin).
            st = self.inner.wait_for_inline_step(st);
        }
        let st = self.inner.maybe_schedule_compaction(st);
        drop(st);
        self.inner.run_inline_work();
        let st = self.inner.lock_state();
        if let Some(e) = &st.bg_error {
            return Err(e.clone());
        }
        Ok(st.bg_scheduled)
    }

    /// Waits for background work to finish and closes the database, reporting any
    /// background error. (Dropping the handle also closes it.)
    pub fn close(self) -> Result<()> {
        let err = self.inner.lock_state().bg_error.clone();
        drop(self);
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        {
            let mut st = self.inner.lock_state();
            st.shutting_down = true;
            crate::util::sync_point::signal_point("Db::drop:shutting_down");
            // Hand buffered log bytes to the OS; what was not synced may still be lost in a
            // machine crash, as in LevelDB.
            if let Some(log) = st.log.as_mut() {
                let _ = log.flush();
            }
        }
        self.inner.bg_cv.notify_all();
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(h) = self.bg_thread.lock().unwrap().take() {
            let _ = h.join();
        }
        // The log created ahead for a switch that will not come: empty, never named by the
        // MANIFEST, so a reopen would only replay it as nothing.
        let next_log = self.inner.lock_state().next_log.take();
        if let Some((number, writer)) = next_log {
            drop(writer);
            let path = crate::version::filename::log_file_name(&self.inner.dir, number);
            let _ = self.inner.storage.remove(&path);
        }
    }
}

/// What a thread that finds the state lock poisoned records before it goes on: another call
/// panicked with the lock held.
const STATE_POISONED: &str =
    "a call panicked while holding the database's state: the database takes no more writes";

impl DbInner {
    /// The state lock. Never a panic of the caller's own: a poisoned lock (another call
    /// panicked holding it) is taken anyway, and the panic made sticky as `bg_error` first, so
    /// the database refuses writes from then on and reads go on. The state is consistent at
    /// every unlock but a panicking one; the one who unwinds (a write leader, the background
    /// loop) records its own error too, but a thread can take the lock between the guard's
    /// drop and that record, and must not panic there (the race a loaded machine found).
    fn lock_state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(st) => st,
            Err(poisoned) => self.poisoned_state(poisoned.into_inner()),
        }
    }

    /// Clears the state lock's poison, recording it as the sticky error (`lock_state`).
    fn poisoned_state<'a>(&'a self, mut st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.state.clear_poison();
        st.bg_error
            .get_or_insert_with(|| Error::internal(STATE_POISONED));
        st
    }

    /// Waits on `bg_cv` with the state lock (poison handled as `lock_state` does).
    fn wait_bg<'a>(&'a self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        match self.bg_cv.wait(st) {
            Ok(st) => st,
            Err(poisoned) => self.poisoned_state(poisoned.into_inner()),
        }
    }

    /// `wait_bg` for at most `timeout`.
    #[cfg(not(target_arch = "wasm32"))]
    fn wait_bg_timeout<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        timeout: std::time::Duration,
    ) -> MutexGuard<'a, State> {
        match self.bg_cv.wait_timeout(st, timeout) {
            Ok((st, _)) => st,
            Err(poisoned) => self.poisoned_state(poisoned.into_inner().0),
        }
    }

    /// The memtables and Version a read uses, and the last sequence, as of now.
    fn read_view(&self) -> (Arc<ReadView>, SequenceNumber) {
        let mut guard = self.lock_state();
        let st = &mut *guard;
        // Pointer equality is exact here: the view holds each of its Arcs, so none of them can
        // be freed and its address reused while the view is kept.
        let current = st.view.as_ref().is_some_and(|v| {
            Arc::ptr_eq(&v.mem, &st.mem)
                && match (&v.imm, &st.imm) {
                    (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                    (None, None) => true,
                    _ => false,
                }
                && Arc::ptr_eq(&v.version, st.versions.peek_current())
        });
        let view = if current { st.view.clone() } else { None };
        if let Some(view) = view {
            return (view, st.versions.last_sequence);
        }
        let view = Arc::new(ReadView {
            mem: st.mem.clone(),
            imm: st.imm.clone(),
            version: st.versions.current(),
        });
        let stale = st.view.replace(view.clone());
        let last = st.versions.last_sequence;
        drop(guard);
        // A stale view may be the last to hold a flushed memtable: freed without the lock.
        drop(stale);
        (view, last)
    }

    fn table_options(&self) -> TableBuilderOptions {
        TableBuilderOptions {
            compression_pool: self.compression_pool.clone(),
            ..TableBuilderOptions::from(&self.options)
        }
    }

    fn limits(&self) -> CompactionLimits {
        CompactionLimits {
            max_file_size: self.options.max_file_size,
            size_triggered: self.options.size_compactions && !self.options.disable_auto_compactions,
            seek_triggered: self.options.seek_compactions && !self.options.disable_auto_compactions,
        }
    }
}

/// A block cache for a database with these options (none if the capacity is 0).
fn new_block_cache(options: &Options) -> Option<Arc<Cache<Arc<crate::table::block::Block>>>> {
    (options.block_cache_capacity > 0).then(|| Arc::new(Cache::new(options.block_cache_capacity)))
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("dir", &self.inner.dir).finish()
    }
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Db>();
}
