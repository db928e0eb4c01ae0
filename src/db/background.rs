//! Background work: flushing the immutable memtable, compactions (automatic and manual), and
//! deleting files no Version needs. On native targets a dedicated thread runs it; without one
//! (wasm, or `Options::background_thread = false`) the same steps run inline, one bounded
//! step at a time, from the write path and from `Db::maintenance`.
//!
//! Errors are sticky: a failed flush or compaction is recorded as the background error, which
//! every later write returns (the database stays readable), as LevelDB does.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use super::{DbInner, ManualCompaction, State};
use crate::compaction::run::{build_table, run_compaction, CompactionEnv};
use crate::compaction::{pick_compaction, range_compaction};
use crate::error::Result;
use crate::log;
use crate::util::sync_point::sync_point;
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::VersionEdit;

impl DbInner {
    /// The background thread's loop: run scheduled work until shutdown.
    ///
    /// A panic in background work (a bug) must not leave writers waiting forever for a flush
    /// that will never come: it becomes the sticky background error (kind `Internal`), every
    /// waiter is woken, and the thread goes on serving shutdown.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn background_loop(&self) {
        loop {
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.background_loop_until_shutdown()
            }));
            let Err(panic) = run else {
                return;
            };
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            // The state is consistent at every unlock; a panic while it was held only marks it.
            self.state.clear_poison();
            let mut st = self.lock_state();
            st.compacting = None;
            st.flushing = false;
            st.bg_error.get_or_insert_with(|| {
                crate::error::Error::internal(format!("background work panicked: {what}"))
            });
            self.set_bg_scheduled(&mut st, false);
            drop(st);
            self.bg_cv.notify_all();
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn background_loop_until_shutdown(&self) {
        let mut st = self.lock_state();
        loop {
            while !st.bg_scheduled && !st.shutting_down {
                st = self.wait_bg(st);
            }
            if st.shutting_down {
                self.set_bg_scheduled(&mut st, false);
                self.bg_cv.notify_all();
                return;
            }
            st = self.background_call(st);
        }
    }

    /// Sets `State::bg_scheduled` and its lock-free mirror (`Db::background_busy`).
    fn set_bg_scheduled(&self, st: &mut State, scheduled: bool) {
        st.bg_scheduled = scheduled;
        self.bg_busy.store(scheduled, Ordering::Relaxed);
    }

    /// Schedules background work if any is due.
    pub(super) fn maybe_schedule_compaction<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        if st.bg_scheduled || st.shutting_down || st.bg_error.is_some() || self.options.read_only {
            return st;
        }
        let limits = self.limits();
        let due = st.imm.is_some()
            || st.manual.as_ref().is_some_and(|m| !m.done)
            || st
                .versions
                .peek_current()
                .needs_compaction(limits.size_triggered, limits.seek_triggered);
        if due {
            self.set_bg_scheduled(&mut st, true);
            self.bg_cv.notify_all();
        }
        st
    }

    /// Without a background thread: runs the scheduled steps now, bounded (at most a few
    /// steps per call so no single write stalls for long).
    pub(super) fn run_inline_work(&self) {
        if self.options.background_thread || self.options.read_only {
            return;
        }
        sync_point("DbInner::run_inline_work");
        let mut st = self.lock_state();
        for _ in 0..2 {
            if !st.bg_scheduled || st.shutting_down {
                break;
            }
            st = self.background_call(st);
        }
    }

    /// One unit of background work, then reschedule if more is due.
    pub(super) fn background_call<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        let mut st = st;
        if !st.shutting_down && st.bg_error.is_none() {
            let (s, result) = self.background_compaction(st);
            st = s;
            if let Err(e) = result {
                if st.bg_error.is_none() {
                    st.bg_error = Some(e);
                }
            }
        }
        self.set_bg_scheduled(&mut st, false);
        let st = self.maybe_schedule_compaction(st);
        self.bg_cv.notify_all();
        st
    }

    fn background_compaction<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        if st.imm.is_some() {
            return self.compact_memtable(st);
        }
        if st.compacting.is_some() {
            // Another caller's compaction is running (only without a background thread, where
            // every caller runs background steps): picking now could take its inputs again,
            // or move a table into the span its outputs will cover.
            return (st, Ok(()));
        }
        let mut st = st;
        let version = st.versions.current();
        let limits = self.limits();
        // A finished manual compaction stays in `manual` until its waiter takes the lock; it
        // must not shadow due automatic work meanwhile, or this thread would reschedule itself
        // forever without doing anything and starve the waiter of the lock (a livelock seen in
        // `strata bench` fillrandom,compact: tests/regression_manual_compaction_livelock.rs).
        let manual = st
            .manual
            .as_ref()
            .filter(|m| !m.done)
            .map(|m| (m.level, m.begin.clone(), m.end.clone()));
        let compaction = match &manual {
            Some((level, begin, end)) => {
                let c =
                    range_compaction(&version, *level, begin.as_deref(), end.as_deref(), limits);
                if c.is_none() {
                    if let Some(m) = st.manual.as_mut() {
                        m.done = true;
                    }
                }
                c
            }
            None => pick_compaction(&version, &st.versions.compact_pointers, limits),
        };
        let Some(mut c) = compaction else {
            return (st, Ok(()));
        };
        if manual.is_none() && c.is_trivial_move() {
            // Move the file down a level without rewriting it.
            let f = c.inputs[0][0].clone();
            let mut edit = std::mem::take(&mut c.edit);
            edit.delete_file(c.level, f.number);
            edit.add_file(c.level + 1, f.number, f.file_size, &f.smallest, &f.largest);
            let (s, r) = self.log_and_apply(st, &mut edit);
            st = s;
            if r.is_ok() {
                st.compactions += 1;
                // A seek-triggered file has been dealt with.
                Self::clear_file_to_compact(&version, f.number);
            }
            drop(c);
            drop(version);
            st = self.delete_obsolete_files(st);
            return (st, r);
        }
        let smallest_snapshot = st
            .snapshots
            .keys()
            .next()
            .copied()
            .unwrap_or(st.versions.last_sequence);
        st.compacting = Some(c.busy_range());
        drop(st);
        let unwinding = ClearOnUnwind {
            db: self,
            mark: Mark::Compacting,
        };
        let new_file_number = || {
            let mut st = self.lock_state();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            st.known_tables.insert(n);
            n
        };
        let yield_to_flush = || -> Result<()> {
            if self.has_imm.load(Ordering::Acquire) {
                let st = self.lock_state();
                let (st, r) = self.compact_memtable(st);
                drop(st);
                self.bg_cv.notify_all();
                r?;
            }
            Ok(())
        };
        let env = CompactionEnv {
            storage: &*self.storage,
            dir: &self.dir,
            table_cache: &self.table_cache,
            table_options: self.table_options(),
            smallest_snapshot,
            new_file_number: &new_file_number,
            yield_to_flush: &yield_to_flush,
        };
        sync_point("DbInner::background_compaction:run");
        let result = run_compaction(&mut c, &env);
        std::mem::forget(unwinding);
        sync_point("DbInner::background_compaction:ran");
        let mut st = self.lock_state();
        let result = match result {
            Ok((mut edit, stats)) => {
                let outputs: Vec<u64> = edit.new_files.iter().map(|(_, f)| f.number).collect();
                let (s, r) = self.log_and_apply(st, &mut edit);
                st = s;
                for n in outputs {
                    st.pending_outputs.remove(&n);
                }
                r.map(|()| stats.blocks_copied)
            }
            Err(e) => Err(e),
        };
        // Installed (or abandoned): flushes may use the whole range again.
        st.compacting = None;
        if let Ok(copied) = result {
            st.compactions += 1;
            st.blocks_copied += copied;
            for f in &c.inputs[0] {
                Self::clear_file_to_compact(&version, f.number);
            }
        }
        // The input Version must be released first, or its files count as live.
        drop(c);
        drop(version);
        // After a failed install the MANIFEST may still hold the edit naming the outputs:
        // record the error first so that nothing is deleted (as LevelDB does).
        if let Err(e) = &result {
            st.bg_error.get_or_insert_with(|| e.clone());
        }
        st = self.delete_obsolete_files(st);
        (st, result.map(|_| ()))
    }

    fn clear_file_to_compact(version: &crate::version::Version, number: u64) {
        let mut slot = version.file_to_compact.lock().unwrap();
        if slot.as_ref().is_some_and(|(_, f)| f.number == number) {
            *slot = None;
        }
    }

    /// Writes the immutable memtable as a table and installs it with the new log number.
    fn compact_memtable<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        if st.flushing {
            // Another caller is writing this memtable (only without a background thread).
            return (st, Ok(()));
        }
        let Some(imm) = st.imm.clone() else {
            return (st, Ok(()));
        };
        st.flushing = true;
        let number = st.versions.new_file_number();
        st.pending_outputs.insert(number);
        st.known_tables.insert(number);
        // The next switch's log (`State::next_log`), numbered now: while `imm` is set no
        // switch can come, so this number is above the current log's and below any the
        // next switch could take. A log at least the MANIFEST's log number is never obsolete.
        let next_log =
            (st.next_log.is_none() && !st.shutting_down).then(|| st.versions.new_file_number());
        drop(st);
        let unwinding = ClearOnUnwind {
            db: self,
            mark: Mark::Flushing,
        };
        // Created with the lock released. A failure is left to the switch, which creates its
        // log itself and reports the error to the writer.
        let next_log = next_log.and_then(|n| {
            let file = self.storage.create(&filename::log_file_name(&self.dir, n));
            file.ok().map(|f| (n, log::Writer::new(f)))
        });
        sync_point("DbInner::compact_memtable:build");
        let mut it = imm.iter();
        let built = build_table(
            &*self.storage,
            &self.dir,
            number,
            &mut it,
            &self.table_options(),
            &self.table_cache,
        );
        std::mem::forget(unwinding);
        let mut st = self.lock_state();
        if next_log.is_some() {
            st.next_log = next_log;
        }
        let result = match built {
            Ok(meta) => {
                let mut edit = VersionEdit::default();
                if let Some(f) = meta {
                    // Chosen now, under the lock, against what is installed and what a
                    // running compaction (this flush may run inside it) is about to install.
                    let level = st.versions.peek_current().pick_level_for_memtable_output(
                        crate::key::extract_user_key(&f.smallest),
                        crate::key::extract_user_key(&f.largest),
                        self.options.max_file_size,
                        st.compacting.as_ref(),
                    );
                    edit.add_file(level, f.number, f.file_size, &f.smallest, &f.largest);
                }
                // The flushed memtable's log (and every older one) is no longer needed. No
                // memtable switch can come while the edit is written unlocked: the switch
                // waits for `imm` to be gone, so this stays the current log.
                edit.log_number = Some(st.log_file_number);
                edit.prev_log_number = Some(0);
                let (s, r) = self.log_and_apply(st, &mut edit);
                st = s;
                r
            }
            Err(e) => Err(e),
        };
        st.pending_outputs.remove(&number);
        st.flushing = false;
        if result.is_ok() {
            let flushed = st.imm.take();
            // The last read's view may hold the flushed memtable too: freed below with it.
            let view = st.view.take();
            // Older logs are no longer needed: their entries are in synced tables now.
            let live = st.log_file_number;
            st.unsynced_logs.retain(|(n, _)| *n >= live);
            // log_and_apply synced the folder, with the current log's entry in it.
            st.log_dir_synced = true;
            self.has_imm.store(false, Ordering::Release);
            st.flushes += 1;
            // The flushed memtable (megabytes of arena) is freed without the lock, once
            // everything above is settled (a writer may switch memtables meanwhile).
            drop(st);
            self.bg_cv.notify_all();
            drop(it);
            drop(flushed);
            drop(view);
            drop(imm);
            st = self.lock_state();
            st = self.delete_obsolete_files(st);
        } else if st.bg_error.is_none() {
            st.bg_error = result.clone().err();
        }
        self.bg_cv.notify_all();
        (st, result)
    }

    /// Records `edit` in the MANIFEST and makes it current (`VersionSet::log_and_apply`). With
    /// a background thread, the MANIFEST is written and synced with the state lock released,
    /// as LevelDB does: a flush's two syncs (folder, MANIFEST) no longer hold up every writer
    /// (they were the tail of put latency while flushes run: RucksDB's writes_during_flush
    /// p99.9, 216 µs against LevelDB's 67). Edits stay one at a time (`manifest_writing`);
    /// what readers see changes only at the install. Without a background thread (the
    /// engine driven by its callers, as in wasm) the lock stays held throughout.
    pub(super) fn log_and_apply<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        edit: &mut VersionEdit,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        if !self.options.background_thread {
            let r = st.versions.log_and_apply(edit);
            // Reads take the new Version from here on, and the old one (its files) is not
            // kept alive by a cached view until the next read.
            st.view = None;
            return (st, r);
        }
        while st.manifest_writing {
            st = self.wait_bg(st);
        }
        let mut w = match st.versions.begin_apply(edit) {
            Ok(w) => w,
            Err(e) => return (st, Err(e)),
        };
        st.manifest_writing = true;
        drop(st);
        let clear = ClearOnUnwind {
            db: self,
            mark: Mark::ManifestWriting,
        };
        sync_point("DbInner::log_and_apply:write");
        let written = w.write();
        std::mem::forget(clear);
        let mut st = self.lock_state();
        st.manifest_writing = false;
        let r = st.versions.finish_apply(w, written);
        st.view = None;
        self.bg_cv.notify_all();
        (st, r)
    }

    /// Removes files that no Version, pending output, or live log needs.
    ///
    /// The folder is listed, and its names parsed, with the state lock released (LevelDB
    /// lists it under its mutex: tens of microseconds per flush during which every write
    /// waits; here a put that met it slept on the lock and woke 15-20 µs late, about 100 puts
    /// per 100 flushes in RucksDB's writes_during_flush). What to delete is decided under the
    /// lock, against the state then: a listing taken earlier only misses files created since,
    /// which stay until the next pass, and every file it names is judged exactly as a listing
    /// taken under the lock would judge it (file numbers are never reused, so a file found
    /// obsolete stays so). The files are removed with the lock released (as LevelDB does:
    /// unlinking a table of megabytes takes milliseconds, and every write needs the lock).
    pub(super) fn delete_obsolete_files<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        drop(st);
        sync_point("DbInner::delete_obsolete_files:listing");
        let listed = self.storage.list(&self.dir);
        let parsed = listed.map(parse_names);
        let st = self.lock_state();
        let Ok(parsed) = parsed else {
            return st;
        };
        self.delete_obsolete_parsed(st, parsed)
    }

    /// `delete_obsolete_files` over `names`, a listing of the folder taken since its last
    /// change (the open's own, when the open wrote nothing).
    pub(super) fn delete_obsolete_files_among<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        names: Vec<String>,
    ) -> MutexGuard<'a, State> {
        self.delete_obsolete_parsed(st, parse_names(names))
    }

    fn delete_obsolete_parsed<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        parsed: Vec<ParsedName>,
    ) -> MutexGuard<'a, State> {
        let doomed = self.obsolete_files(&mut st, parsed);
        if doomed.is_empty() {
            return st;
        }
        drop(st);
        for path in doomed {
            let _ = self.storage.remove(&path);
        }
        self.lock_state()
    }

    /// Paths of the files among `names` that no Version, pending output or live log needs;
    /// their tables leave the table cache.
    fn obsolete_files(&self, st: &mut State, names: Vec<ParsedName>) -> Vec<String> {
        let mut doomed = Vec::new();
        // While an edit is written unlocked, the files it names (a new MANIFEST, its CURRENT
        // temp file) are not accounted yet: nothing is deleted until it is installed.
        if st.bg_error.is_some() || self.options.read_only || st.manifest_writing {
            return doomed;
        }
        let mut live = st.versions.live_files();
        live.extend(st.pending_outputs.iter().copied());
        for (name, number, kind) in names {
            let keep = match kind {
                FileType::Log => {
                    number >= st.versions.log_number
                        || number == st.versions.prev_log_number
                        || number == st.log_file_number
                }
                FileType::Descriptor => number >= st.versions.manifest_file_number,
                // A table is deleted only if this database knows it (named by the recovered
                // MANIFEST or written since the open): never one it cannot account for.
                FileType::Table => live.contains(&number) || !st.known_tables.contains(&number),
                FileType::Temp => live.contains(&number),
                FileType::Current | FileType::DbLock | FileType::InfoLog => true,
            };
            if !keep {
                if kind == FileType::Table {
                    self.table_cache.evict(number);
                    st.known_tables.remove(&number);
                }
                doomed.push(crate::storage::join(&self.dir, &name));
            }
        }
        doomed
    }

    /// One step of a stepped range compaction at `steps.level` (see `Db::compact_step`):
    /// registers the request (waiting for another one to finish), then lets one step of
    /// background work happen. Returns (level finished, input bytes compacted by the step).
    pub(super) fn manual_compaction_step(
        &self,
        steps: &mut super::CompactSteps,
    ) -> Result<(bool, u64)> {
        let mut st = self.lock_state();
        if !steps.active {
            while st.manual.is_some() {
                st = self.wait_bg(st);
            }
            st.manual = Some(ManualCompaction {
                level: steps.level,
                begin: steps.begin.clone(),
                end: steps.end.clone(),
                done: false,
            });
            steps.active = true;
        }
        if let Some(e) = &st.bg_error {
            let e = e.clone();
            st.manual = None;
            steps.active = false;
            self.bg_cv.notify_all();
            return Err(e);
        }
        if st.manual.as_ref().is_some_and(|m| m.done) {
            st.manual = None;
            steps.active = false;
            self.bg_cv.notify_all();
            return Ok((true, 0));
        }
        let before = level_bytes(&mut st, steps.level);
        let mut st = self.await_background_step(st);
        let after = level_bytes(&mut st, steps.level);
        Ok((false, before.saturating_sub(after)))
    }

    /// Lets one step of background work happen: waits for the background thread, or runs
    /// the step inline when there is none.
    fn await_background_step<'a>(&'a self, st: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        if self.options.background_thread {
            let st = self.maybe_schedule_compaction(st);
            self.wait_bg(st)
        } else if Self::inline_step_elsewhere(&st) {
            self.wait_for_inline_step(st)
        } else {
            let mut st = st;
            self.set_bg_scheduled(&mut st, true);
            self.background_call(st)
        }
    }

    /// Without a background thread, where every caller runs background steps: whether
    /// another caller is running the step a waiter needs (writing the memtable, or a
    /// compaction while no memtable waits). The waiter waits for it (`wait_for_inline_step`)
    /// instead of starting one of its own, which could take the same inputs again. Never on
    /// wasm32: one thread there, so no other caller.
    pub(super) fn inline_step_elsewhere(st: &State) -> bool {
        !cfg!(target_arch = "wasm32")
            && (st.flushing || (st.compacting.is_some() && st.imm.is_none()))
    }

    /// Waits a little for another caller's background step (`background_call` and
    /// `compact_memtable` notify at their ends); bounded, so that the caller's loop checks
    /// again whatever happens.
    pub(super) fn wait_for_inline_step<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
    ) -> MutexGuard<'a, State> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.wait_bg_timeout(st, std::time::Duration::from_millis(10))
        }
        #[cfg(target_arch = "wasm32")]
        {
            st
        }
    }

    /// Waits until no immutable memtable is waiting to be flushed.
    pub(super) fn wait_for_imm_flush(&self) -> Result<()> {
        let mut st = self.lock_state();
        while st.imm.is_some() {
            if let Some(e) = &st.bg_error {
                return Err(e.clone());
            }
            st = self.await_background_step(st);
        }
        match &st.bg_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// Which mark a `ClearOnUnwind` owns: without a background thread one caller's compaction
/// and another's flush run at once, and each clears only its own.
enum Mark {
    Compacting,
    Flushing,
    ManifestWriting,
}

/// Set while a flush or compaction runs, or a MANIFEST edit is written, with the state lock
/// released: if that work panics (a bug), its mark (`State::compacting`, `State::flushing`,
/// `State::manifest_writing`) is cleared, so that callers waiting for it (without a
/// background thread, other callers' threads) go on instead of waiting for good. The panic
/// itself reaches the caller that ran the work, or becomes the sticky error on the background
/// thread (`background_loop`). A MANIFEST left with part of an edit takes no further edit: its
/// panic is also the sticky error at once, whichever thread ran it. Forgotten when the work
/// returns.
struct ClearOnUnwind<'a> {
    db: &'a DbInner,
    mark: Mark,
}

impl Drop for ClearOnUnwind<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        // Cleared first: the error recorded is this one, not lock_state's general one.
        self.db.state.clear_poison();
        let mut st = self.db.lock_state();
        match self.mark {
            Mark::Compacting => st.compacting = None,
            Mark::Flushing => st.flushing = false,
            Mark::ManifestWriting => {
                st.manifest_writing = false;
                st.bg_error.get_or_insert_with(|| {
                    crate::error::Error::internal("writing a MANIFEST edit panicked")
                });
            }
        }
        drop(st);
        self.db.bg_cv.notify_all();
    }
}

/// A file name of the database's folder, with its number and kind.
type ParsedName = (String, u64, FileType);

/// The names among `names` that are the database's files (others are never touched).
fn parse_names(names: Vec<String>) -> Vec<ParsedName> {
    names
        .into_iter()
        .filter_map(|name| {
            let (number, kind) = parse_file_name(&name)?;
            Some((name, number, kind))
        })
        .collect()
}

/// Bytes of the tables at `level` of the current Version.
fn level_bytes(st: &mut State, level: usize) -> u64 {
    st.versions.current().files[level]
        .iter()
        .map(|f| f.file_size)
        .sum()
}
