//! The write path: group commit, room-making, the log, the memtable.
//!
//! Writers enqueue themselves; one becomes the leader, takes every batch queued so far (up to
//! about 1 MiB), assigns their sequence numbers, appends them to the log as one record, syncs
//! if any writer asked for it, inserts them into the memtable, publishes the new last
//! sequence, and wakes the group. Readers never see a batch half applied: entries become
//! visible only when the last sequence is published. The writer at the front of the queue
//! (the next leader) spins for a few microseconds before it sleeps; the others sleep at once.
//!
//! Before writing, the leader makes room: it slows down (1 ms, once) when level 0 has reached
//! the slowdown trigger, waits while a previous memtable is still being flushed or level 0 is
//! at the stop trigger, and switches to a fresh memtable and log when the current one is full.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;

use super::{DbInner, State, WriteBatch};
use crate::error::{Error, Result};
use crate::log;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::util::sync_point::{signal_point, sync_point};
use crate::version::filename;

/// Largest group a leader commits at once.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// How long the writer at the front of the queue spins before it parks. A commit without a
/// sync takes a few microseconds, so the front writer is usually handed the queue while
/// still spinning: neither it (`park`) nor the leader (`unpark` of a parked thread) makes a
/// futex call. Two writers on two cores: fillrandom x2 2.21 -> 1.76 micros/op (best of 3);
/// x1, x4 and x8 unchanged within noise (only the front spins, so at most one at a time).
#[cfg(not(target_arch = "wasm32"))]
const SPIN_FOR: std::time::Duration = std::time::Duration::from_micros(5);

/// Spins until `flag` is set or `SPIN_FOR` has passed (not at all with one core). Only reads
/// the flag: the caller's park loop takes it.
fn spin_until_notified(flag: &AtomicBool) {
    // No clock on wasm32-unknown-unknown (`Instant::now` panics there), and a browser's
    // workers should not busy-wait: park at once.
    #[cfg(not(target_arch = "wasm32"))]
    {
        // With one core the spinner would only hold the core the leader needs.
        if crate::util::cores() < 2 {
            return;
        }
        let start = std::time::Instant::now();
        loop {
            for _ in 0..16 {
                if flag.load(Ordering::Relaxed) {
                    return;
                }
                std::hint::spin_loop();
            }
            if start.elapsed() >= SPIN_FOR {
                return;
            }
        }
    }
    #[cfg(target_arch = "wasm32")]
    let _ = flag;
}

pub(super) struct Waiter {
    /// `None`: a request to switch to a new memtable (flush), with no data. Taken (or read)
    /// only by the leader whose group holds this writer.
    batch: Mutex<Option<WriteBatch>>,
    /// The batch's size, fixed at creation: the leader sizes its group without locking it.
    size: usize,
    options: WriteOptions,
    force: bool,
    /// Set once, by the leader that committed this batch (or failed to).
    done: Mutex<Option<Result<()>>>,
    /// The writer's thread, recorded (under the queue's lock) when it first decides to sleep:
    /// a writer that never waits never looks its thread up.
    thread: OnceLock<Thread>,
    /// Set before each wake that means something: `done` was set, or the writer became the
    /// front of the queue with no leader active. The writer sleeps until it finds this set, so
    /// a stray unpark (a token left by an earlier wake, or taken by other code parking on the
    /// thread) neither wakes it early nor loses its wake.
    notified: AtomicBool,
}

impl Waiter {
    fn take_done(&self) -> Option<Result<()>> {
        self.done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Wakes the writer, which has decided to sleep (so its thread is recorded).
    fn wake(&self) {
        self.notified.store(true, Ordering::Release);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    fn finish(&self, result: Result<()>) {
        *self.done.lock().unwrap_or_else(PoisonError::into_inner) = Some(result);
        self.wake();
    }
}

/// The writers waiting to commit, in arrival order, and whether a leader is committing. A
/// leader is either the writer that was at the front (its record popped with its group) or
/// one that found the queue empty and no leader, and never entered it.
#[derive(Default)]
pub(super) struct WriteQueue {
    queue: VecDeque<Arc<Waiter>>,
    leader_active: bool,
}

/// A leader's duty to the writers it took along and to those behind it: done by
/// `Leadership::hand_on` after the commit, or on drop if the commit unwinds (a panic in a
/// storage or a memtable insert), so that no writer sleeps forever behind a leader that is
/// gone.
struct Leadership<'a> {
    db: &'a DbInner,
    /// The writers committed with the leader's batch (none when it leads alone).
    followers: Vec<Arc<Waiter>>,
    /// Cleared once the leader hands on: a drop while still set is an unwinding commit.
    active: bool,
}

impl Drop for Leadership<'_> {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        // Unwinding out of the commit: what reached the log and the memtable is unknown, so
        // the database takes no more writes.
        // A panic with the state lock held poisoned it: clear that (as the background loop
        // does), so later calls get the sticky error set here, not a panic of their own.
        let e = Error::internal("a write leader panicked while committing its group");
        // The state lock, if the panic came with it held, is poisoned and free here.
        sync_point("DbInner::write:unwinding");
        // Cleared first: the error recorded is this one, not lock_state's general one.
        self.db.state.clear_poison();
        let mut st = self.db.lock_state();
        st.bg_error.get_or_insert_with(|| e.clone());
        drop(st);
        self.db.bg_cv.notify_all();
        // The leader's own result goes nowhere: it is unwinding.
        let _ = self.hand_on(Err(e));
    }
}

impl Leadership<'_> {
    /// Ends the leader's turn: hands the queue to its new front, then gives every follower
    /// `result` and wakes it; returns the leader's own result. The front goes first, so the
    /// next group starts while this one's threads are being woken.
    fn hand_on(&mut self, result: Result<()>) -> Result<()> {
        self.active = false;
        let mut q = self.db.writers.lock().unwrap_or_else(|p| p.into_inner());
        q.leader_active = false;
        let next = q.queue.front().cloned();
        drop(q);
        if let Some(next) = next {
            next.wake();
        }
        for w in std::mem::take(&mut self.followers) {
            w.finish(result.clone());
        }
        result
    }
}

impl DbInner {
    /// Commits `batch` (or, with `None`, forces a memtable switch).
    pub(super) fn write(&self, options: &WriteOptions, batch: Option<WriteBatch>) -> Result<()> {
        let force = batch.is_none();
        let mut q = self.writers.lock().unwrap_or_else(PoisonError::into_inner);
        if !q.leader_active && q.queue.is_empty() {
            // Nobody is committing or waiting (every single-threaded write): lead alone at
            // once. No record in the queue, no group, no locks of a waiter's own: writers that
            // come meanwhile queue behind this one's leadership as behind any leader's.
            q.leader_active = true;
            drop(q);
            let mut leadership = Leadership {
                db: self,
                followers: Vec::new(),
                active: true,
            };
            sync_point("DbInner::write:lead");
            let result = self.commit_group(force, batch, options, &[]);
            return leadership.hand_on(result);
        }
        let me = Arc::new(Waiter {
            size: batch.as_ref().map_or(0, |b| b.approximate_size()),
            batch: Mutex::new(batch),
            options: options.clone(),
            force,
            done: Mutex::new(None),
            thread: OnceLock::new(),
            notified: AtomicBool::new(false),
        });
        q.queue.push_back(me.clone());
        signal_point("DbInner::write:enqueued");
        // No leader can have taken this writer yet: groups are taken under the queue's lock,
        // held since the push. So its result is looked for only after a wake.
        loop {
            // Only the writer at the front of the queue may lead (LevelDB's rule): a writer
            // behind it that led would take a group starting at the front, which need not
            // include itself when the group is cut before it (a forced switch goes alone, a
            // group stops at MAX_GROUP_BYTES), and its own batch would never be committed.
            if !q.leader_active && q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me)) {
                break;
            }
            signal_point("DbInner::write:wait");
            if cfg!(all(target_arch = "wasm32", not(target_feature = "atomics"))) {
                // One thread, so nobody could wake this one: only a leader that trapped in the
                // middle of a commit, or a write made from inside a commit (a host storage's
                // callback), finds a queue. Refuse rather than spin forever, and leave the
                // queue as it was.
                q.queue.retain(|w| !Arc::ptr_eq(w, &me));
                return Err(Error::internal(
                    "a write found another still committing on a single-threaded target",
                ));
            }
            me.thread.get_or_init(std::thread::current);
            // The front writer waits only for the active leader's commit, then leads: it
            // spins a moment first (`SPIN_FOR`). The writers behind it park at once.
            let spin = q.queue.front().is_some_and(|f| Arc::ptr_eq(f, &me));
            drop(q);
            // Each writer sleeps on its own thread, woken only when its batch is committed or
            // it has become the front (LevelDB's per-writer condition variable), never by a
            // broadcast to every queued writer.
            sync_point("DbInner::write:parking");
            if spin {
                spin_until_notified(&me.notified);
            }
            while !me.notified.swap(false, Ordering::Acquire) {
                std::thread::park();
            }
            sync_point("DbInner::write:woken");
            if let Some(r) = me.take_done() {
                // Committed by a leader: no need for the queue's lock.
                return r;
            }
            q = self.writers.lock().unwrap_or_else(PoisonError::into_inner);
        }
        // Leader: this writer is the front (checked under the lock, held since); its group
        // is itself and the writers behind it, up to a forced switch or about 1 MiB.
        q.leader_active = true;
        q.queue.pop_front();
        let mut followers: Vec<Arc<Waiter>> = Vec::new();
        let mut bytes = me.size;
        while let Some(w) = q.queue.front() {
            // A forced flush goes alone.
            if me.force || w.force || bytes + w.size > MAX_GROUP_BYTES {
                break;
            }
            bytes += w.size;
            if let Some(w) = q.queue.pop_front() {
                followers.push(w);
            }
        }
        drop(q);
        let mut leadership = Leadership {
            db: self,
            followers,
            active: true,
        };
        sync_point("DbInner::write:lead");
        let lead = me
            .batch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let result = self.commit_group(force, lead, &me.options, &leadership.followers);
        leadership.hand_on(result)
    }

    /// Commits the leader's batch (`lead`, with its `options`) and its followers' as one: or,
    /// with `force`, switches the memtable (a forced switch goes alone, with no batch).
    fn commit_group(
        &self,
        force: bool,
        lead: Option<WriteBatch>,
        options: &WriteOptions,
        followers: &[Arc<Waiter>],
    ) -> Result<()> {
        let st = self.lock_state();
        let (mut st, room) = self.make_room_for_write(st, force);
        room?;
        if force {
            return Ok(());
        }
        // Data writes carry a batch, taken once by their leader; a forced switch (no batch)
        // goes alone and returned above.
        let missing = || Error::internal("a data write without its batch");
        let mut batch = lead.ok_or_else(missing)?;
        for w in followers {
            batch.append(
                w.batch
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .as_ref()
                    .ok_or_else(missing)?,
            );
        }
        if batch.is_empty() {
            return Ok(());
        }
        let sync = options.sync || followers.iter().any(|w| w.options.sync);
        let use_wal = !options.disable_wal || followers.iter().any(|w| !w.options.disable_wal);
        if sync && use_wal && !st.unsynced_logs.is_empty() {
            // Older logs first: a synced write must not survive a crash that loses earlier
            // acknowledged writes (recovery would then stop at the gap and drop it).
            for i in 0..st.unsynced_logs.len() {
                if let Err(e) = st.unsynced_logs[i].1.sync_final() {
                    st.bg_error.get_or_insert_with(|| e.clone());
                    return Err(e);
                }
            }
            st.unsynced_logs.clear();
        }
        if sync && use_wal && !st.log_dir_synced {
            // A synced write vanishes with its log if the log's folder entry is not durable.
            if let Err(e) = self.storage.sync_dir(&self.dir) {
                st.bg_error.get_or_insert_with(|| e.clone());
                return Err(e);
            }
            st.log_dir_synced = true;
        }
        let first = st.versions.last_sequence + 1;
        batch.set_sequence(first);
        let last = first + batch.count() as u64 - 1;
        // Write outside the state lock: only the leader touches the log and inserts.
        let mut log = st.log.take();
        let mem = st.mem.clone();
        drop(st);
        // Room in the memtable first: a batch it cannot hold (out of memory) is refused whole,
        // before the log has it, and the database stays writable.
        if let Err(e) = batch.reserve_in(&mem) {
            self.lock_state().log = log;
            return Err(e);
        }
        let mut result = Ok(());
        if use_wal {
            if let Some(log) = log.as_mut() {
                result = log.add_record(batch.contents());
                // Hand the record to the OS before acknowledging it: a write then survives a
                // crash of this process (a machine crash only if synced), as in LevelDB.
                if result.is_ok() {
                    result = if sync { log.sync() } else { log.flush() };
                }
            }
        }
        if result.is_ok() {
            result = batch.insert_reserved(&mem);
        }
        let mut st = self.lock_state();
        st.log = log;
        match result {
            Ok(()) => {
                st.versions.last_sequence = last;
                st.write_groups += 1;
                if use_wal {
                    st.last_logged_sequence = last;
                }
                Ok(())
            }
            Err(e) => {
                // The log may now hold a partial record; refuse further writes.
                if st.bg_error.is_none() {
                    st.bg_error = Some(e.clone());
                }
                self.bg_cv.notify_all();
                Err(e)
            }
        }
    }

    /// Ensures the memtable has room (or, with `force`, switches it regardless).
    fn make_room_for_write<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        mut force: bool,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        let mut allow_delay = !force;
        loop {
            if let Some(e) = st.bg_error.clone() {
                return (st, Err(e));
            }
            let l0 = st.versions.peek_current().num_files(0);
            // With automatic compactions off no compaction is coming to wait for: neither
            // trigger holds writes back (RocksDB's rule too).
            if allow_delay
                && l0 >= self.options.l0_slowdown_writes_trigger
                && self.options.background_thread
                && !self.options.disable_auto_compactions
            {
                // Give the compaction thread a moment rather than stall for seconds later.
                signal_point("DbInner::make_room:slowdown");
                drop(st);
                let _demand = self.compression_pool.as_ref().map(|p| p.demand());
                std::thread::sleep(std::time::Duration::from_millis(1));
                allow_delay = false;
                st = self.lock_state();
                continue;
            }
            if !force && st.mem.approximate_memory_usage() <= self.options.write_buffer_size {
                return (st, Ok(()));
            }
            if st.imm.is_some()
                || (l0 >= self.options.l0_stop_writes_trigger
                    && !self.options.disable_auto_compactions)
            {
                // Wait for the flush (or for compaction to bring level 0 down).
                if self.options.background_thread {
                    signal_point("DbInner::make_room:wait");
                    let _demand = self.compression_pool.as_ref().map(|p| p.demand());
                    st = self.wait_bg(st);
                } else if Self::inline_step_elsewhere(&st) {
                    st = self.wait_for_inline_step(st);
                } else {
                    st = self.background_call(st);
                }
                continue;
            }
            // Switch to a new memtable and log: the log the last flush created ahead, or a
            // new one (the first switch, or after that creation failed).
            let (number, mut new_log) = match st.next_log.take() {
                Some(ready) => {
                    signal_point("DbInner::make_room:log_ready");
                    ready
                }
                None => {
                    signal_point("DbInner::make_room:log_created");
                    let number = st.versions.new_file_number();
                    let path = filename::log_file_name(&self.dir, number);
                    match self.storage.create(&path) {
                        Ok(f) => (number, log::Writer::new(f)),
                        Err(e) => return (st, Err(e)),
                    }
                }
            };
            // The new log's folder entry is synced before the first synced write to it
            // (`commit_group`), not here: losing it loses only writes made after the old log.
            st.log_dir_synced = false;
            // The old log's tail is not synced here (LevelDB does not either); the new log
            // starts with a marker, an empty batch whose sequence is the one that follows the
            // old log's last record. Recovery that finds the old log shorter than the marker
            // says (its unsynced tail lost while the new log was written back) stops before
            // the new log, so it still yields a prefix of the history; the old log is synced
            // before the first synced write to the new one. The marker goes out with the next
            // write's record (one system call fewer here): a new log that lost it holds nothing
            // else either, so it replays as empty after the old log's prefix.
            let mut marker = WriteBatch::new();
            marker.set_sequence(st.last_logged_sequence + 1);
            if let Err(e) = new_log.add_record(marker.contents()) {
                st.bg_error.get_or_insert_with(|| e.clone());
                return (st, Err(e));
            }
            if let Some(old) = st.log.take() {
                let old_number = st.log_file_number;
                st.unsynced_logs.push((old_number, old));
            }
            st.log = Some(new_log);
            st.log_file_number = number;
            let fresh = MemTable::with_capacity(self.options.write_buffer_size);
            let full = std::mem::replace(&mut st.mem, Arc::new(fresh));
            st.imm = Some(full);
            st.view = None;
            self.has_imm.store(true, Ordering::Release);
            signal_point("DbInner::make_room:switched");
            force = false;
            st = self.maybe_schedule_compaction(st);
        }
    }
}
