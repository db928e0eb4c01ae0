//! The VersionSet: the current Version plus the counters the MANIFEST records (next file
//! number, last sequence, log numbers), recovered by replaying the MANIFEST that `CURRENT`
//! names (LevelDB db/version_set.cc, `VersionSet::Recover`).
//!
//! Recovery is strict: a MANIFEST record that fails its checksum or does not parse is a
//! `Corruption` error naming the MANIFEST and the record's offset (a torn final record, cut by
//! a crash while it was being written, is dropped as LevelDB drops it).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::filename::{read_current_file, FileType};
use super::version::{FileMetaData, Version};
use super::version_edit::VersionEdit;
use crate::error::{Error, ErrorKind, Result};
use crate::key::{SequenceNumber, BYTEWISE_COMPARATOR};
use crate::log;
use crate::options::config::NUM_LEVELS;
use crate::storage::{join, Storage};

/// What recovering a MANIFEST yields.
#[derive(Clone, Debug)]
pub struct RecoveredState {
    pub manifest_name: String,
    pub manifest_number: u64,
    pub manifest_size: u64,
    pub version: Arc<Version>,
    pub log_number: u64,
    pub prev_log_number: u64,
    pub next_file_number: u64,
    pub last_sequence: SequenceNumber,
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    /// Every table number an edit of the MANIFEST added or deleted: tables it accounts for
    /// (live, or compacted away), which the database may delete once no Version needs them.
    pub mentioned_tables: std::collections::HashSet<u64>,
    /// Bytes after the MANIFEST's last complete record that were not used (offset, bytes):
    /// a record torn by a crash, or damage that reads like one.
    pub manifest_tail: Option<(u64, u64)>,
}

/// Accumulates edits into per-level file sets.
#[derive(Default)]
pub struct VersionBuilder {
    levels: [BTreeMap<u64, Arc<FileMetaData>>; NUM_LEVELS],
}

impl VersionBuilder {
    pub fn from_version(v: &Version) -> Self {
        let mut b = VersionBuilder::default();
        for (level, files) in v.files.iter().enumerate() {
            for f in files {
                b.levels[level].insert(f.number, f.clone());
            }
        }
        b
    }

    pub fn apply(&mut self, edit: &VersionEdit) {
        for &(level, number) in &edit.deleted_files {
            self.levels[level].remove(&number);
        }
        for (level, f) in &edit.new_files {
            self.levels[*level].insert(f.number, Arc::new(f.clone()));
        }
    }

    pub fn build(self) -> Result<Version> {
        let files = self.levels.map(|l| l.into_values().collect());
        Version::from_levels(files)
    }
}

/// Replays the MANIFEST named by `CURRENT` in `dir`.
pub fn recover(storage: &dyn Storage, dir: &str) -> Result<RecoveredState> {
    let manifest_name = read_current_file(storage, dir)?;
    let manifest_number = match super::filename::parse_file_name(&manifest_name) {
        Some((n, FileType::Descriptor)) => n,
        // read_current_file accepts MANIFEST names only; stay total all the same.
        _ => {
            return Err(Error::corruption(format!(
                "CURRENT names {manifest_name:?}, not a MANIFEST"
            ))
            .in_file("CURRENT"))
        }
    };
    let path = join(dir, &manifest_name);
    let file = storage.open_random(&path).map_err(|e| {
        if e.kind() == ErrorKind::NotFound {
            Error::corruption(format!(
                "CURRENT names {manifest_name}, which does not exist"
            ))
            .in_file("CURRENT")
        } else {
            e
        }
    })?;
    let manifest_size = file.size()?;
    let mut reader = log::Reader::new(file, manifest_name.clone(), true, true);
    let mut builder = VersionBuilder::default();
    let mut log_number = None;
    let mut prev_log_number = None;
    let mut next_file_number = None;
    let mut last_sequence = None;
    let mut compact_pointers: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut record = Vec::new();
    let mut records = 0u64;
    let mut mentioned_tables = std::collections::HashSet::new();
    while reader.read_record(&mut record)? {
        records += 1;
        let edit = VersionEdit::decode(&record).map_err(|e| {
            e.in_file(manifest_name.clone())
                .at_offset(reader.last_record_offset())
        })?;
        if let Some(c) = &edit.comparator {
            if c != BYTEWISE_COMPARATOR {
                return Err(Error::invalid_argument(format!(
                    "database uses comparator {c:?}; only {BYTEWISE_COMPARATOR} is supported"
                ))
                .in_file(manifest_name.clone()));
            }
        }
        mentioned_tables.extend(edit.new_files.iter().map(|(_, f)| f.number));
        mentioned_tables.extend(edit.deleted_files.iter().map(|&(_, n)| n));
        builder.apply(&edit);
        log_number = edit.log_number.or(log_number);
        prev_log_number = edit.prev_log_number.or(prev_log_number);
        next_file_number = edit.next_file_number.or(next_file_number);
        last_sequence = edit.last_sequence.or(last_sequence);
        for (level, key) in edit.compact_pointers {
            compact_pointers.insert(level, key);
        }
    }
    let end = reader.end_of_last_record();
    let manifest_tail = (manifest_size > end).then(|| (end, manifest_size - end));
    let missing = |what: &str| {
        Error::corruption(format!(
            "MANIFEST has no {what} entry ({records} records read)"
        ))
        .in_file(manifest_name.clone())
    };
    let next_file_number = next_file_number.ok_or_else(|| missing("next-file-number"))?;
    let log_number = log_number.ok_or_else(|| missing("log-number"))?;
    let last_sequence = last_sequence.ok_or_else(|| missing("last-sequence"))?;
    let version = builder
        .build()
        .map_err(|e| e.in_file(manifest_name.clone()))?;
    // File numbers in use must stay below next_file_number.
    let max_number = version
        .all_files()
        .map(|(_, f)| f.number)
        .chain([manifest_number, log_number])
        .max()
        .unwrap_or(0);
    Ok(RecoveredState {
        manifest_name,
        manifest_number,
        manifest_size,
        version: Arc::new(version),
        log_number,
        prev_log_number: prev_log_number.unwrap_or(0),
        next_file_number: next_file_number.max(max_number + 1),
        last_sequence,
        compact_pointers: compact_pointers.into_iter().collect(),
        manifest_tail,
        mentioned_tables,
    })
}

/// The live VersionSet of a writable database: the current Version, the counters, and the
/// open MANIFEST. Not thread-safe by itself: the database calls it under its state lock.
pub struct VersionSet {
    storage: Arc<dyn Storage>,
    dir: String,
    l0_compaction_trigger: usize,
    current: Arc<Version>,
    pub next_file_number: u64,
    pub manifest_file_number: u64,
    pub last_sequence: SequenceNumber,
    pub log_number: u64,
    pub prev_log_number: u64,
    /// The MANIFEST being appended to; `None` until the first edit of this session, which
    /// starts a new MANIFEST with a snapshot of the current Version.
    manifest: Option<log::Writer>,
    pub compact_pointers: [Vec<u8>; NUM_LEVELS],
    /// Versions handed to readers; their files stay on disk while any is alive.
    handed_out: Vec<std::sync::Weak<Version>>,
    /// Whether `current` is in `handed_out` already: only the first call after it changed
    /// needs to record it (when every read called this, each search of the list was 4% of a
    /// point read from the memtable; reads now call it once per change, through their view).
    current_recorded: bool,
}

impl VersionSet {
    pub fn from_recovered(
        storage: Arc<dyn Storage>,
        dir: &str,
        state: RecoveredState,
        l0_compaction_trigger: usize,
    ) -> Self {
        let mut pointers: [Vec<u8>; NUM_LEVELS] = Default::default();
        for (level, key) in state.compact_pointers {
            pointers[level] = key;
        }
        // Unreachable panic: `recover` built `state.version` with `Version::from_levels`, which
        // returned Ok for these very levels (same validation, same input).
        let mut version = Version::from_levels(state.version.files.clone())
            .expect("recovered levels were validated");
        version.finalize(l0_compaction_trigger);
        VersionSet {
            storage,
            dir: dir.to_string(),
            l0_compaction_trigger,
            current: Arc::new(version),
            next_file_number: state.next_file_number,
            manifest_file_number: state.manifest_number,
            last_sequence: state.last_sequence,
            log_number: state.log_number,
            prev_log_number: state.prev_log_number,
            manifest: None,
            compact_pointers: pointers,
            handed_out: Vec::new(),
            current_recorded: false,
        }
    }

    /// Writes the MANIFEST and CURRENT of an empty database (LevelDB `DBImpl::NewDB`).
    pub fn create_new(storage: &dyn Storage, dir: &str) -> Result<()> {
        let edit = VersionEdit {
            comparator: Some(BYTEWISE_COMPARATOR.to_string()),
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..Default::default()
        };
        let path = super::filename::descriptor_file_name(dir, 1);
        let result = (|| {
            let mut w = log::Writer::new(storage.create(&path)?);
            w.add_record(&edit.encode())?;
            w.sync()?;
            super::filename::set_current_file(storage, dir, 1)
        })();
        if result.is_err() {
            super::filename::remove_uninstalled_manifest(storage, dir, 1);
        }
        result
    }

    /// The current Version, recorded as handed out.
    pub fn current(&mut self) -> Arc<Version> {
        let v = self.current.clone();
        if !self.current_recorded {
            // The current Version is alive (held here), so no pruning below drops its record.
            self.handed_out.retain(|w| w.strong_count() > 0);
            if !self
                .handed_out
                .iter()
                .any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&v)))
            {
                self.handed_out.push(Arc::downgrade(&v));
            }
            self.current_recorded = true;
        }
        v
    }

    /// The current Version without recording it (for the owner's own use under the lock).
    pub fn peek_current(&self) -> &Arc<Version> {
        &self.current
    }

    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    pub fn mark_file_number_used(&mut self, number: u64) {
        if self.next_file_number <= number {
            self.next_file_number = number + 1;
        }
    }

    /// Numbers of every table in the current Version or in a Version a reader still holds.
    pub fn live_files(&mut self) -> std::collections::HashSet<u64> {
        self.handed_out.retain(|w| w.strong_count() > 0);
        let mut live: std::collections::HashSet<u64> =
            self.current.all_files().map(|(_, f)| f.number).collect();
        for w in &self.handed_out {
            if let Some(v) = w.upgrade() {
                live.extend(v.all_files().map(|(_, f)| f.number));
            }
        }
        live
    }

    /// Applies `edit` to the current Version, records it in the MANIFEST (starting a new
    /// MANIFEST on the first edit of the session), syncs, and makes the result current.
    pub fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        let mut w = self.begin_apply(edit)?;
        let written = w.write();
        self.finish_apply(w, written)
    }

    /// The first step of `log_and_apply`, under the owner's lock: the MANIFEST record (and,
    /// on the first edit of the session, the new MANIFEST's snapshot), with the current
    /// Version and the MANIFEST's writer taken along; the new Version is built by `write`,
    /// outside the lock (copying and sorting every level's file list takes microseconds, and
    /// every write needs the lock). Nothing is written and nothing changes that a reader sees;
    /// the owner runs no other `begin_apply` until it has called `finish_apply`, so the
    /// Version taken along is still current when the new one is installed.
    pub fn begin_apply(&mut self, edit: &mut VersionEdit) -> Result<ManifestWrite> {
        let log_number = edit.log_number.unwrap_or(self.log_number);
        let prev_log_number = edit.prev_log_number.unwrap_or(self.prev_log_number);
        edit.log_number = Some(log_number);
        edit.prev_log_number = Some(prev_log_number);
        // A fresh MANIFEST starts with a snapshot of the current state; its number is taken
        // before the edit records the next file number.
        let fresh = match self.manifest {
            None => Some(self.new_file_number()),
            Some(_) => None,
        };
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);
        Ok(ManifestWrite {
            storage: self.storage.clone(),
            dir: self.dir.clone(),
            base: self.current.clone(),
            edit: edit.clone(),
            l0_compaction_trigger: self.l0_compaction_trigger,
            version: None,
            refused: false,
            record: edit.encode(),
            fresh: fresh.map(|n| (n, self.snapshot_edit().encode())),
            writer: self.manifest.take(),
            log_number,
            prev_log_number,
            compact_pointers: edit.compact_pointers.clone(),
        })
    }

    /// The last step of `log_and_apply`, under the owner's lock again: with the MANIFEST
    /// written and synced, the new Version becomes current and the writer is kept for the
    /// next edit; after a failure nothing changes, the MANIFEST is dropped (the next edit
    /// starts a new one) and a new MANIFEST that CURRENT does not name is removed.
    pub fn finish_apply(&mut self, w: ManifestWrite, written: Result<()>) -> Result<()> {
        if w.refused {
            // The edit does not apply to the Version it was made against (nothing written):
            // the MANIFEST stays as it was, writer included.
            self.manifest = w.writer;
            return Err(written
                .err()
                .unwrap_or_else(|| Error::internal("an edit refused without an error")));
        }
        if let Err(e) = written {
            self.manifest = None;
            if let Some((number, _)) = w.fresh {
                super::filename::remove_uninstalled_manifest(&*self.storage, &self.dir, number);
            }
            return Err(e);
        }
        if let Some((number, _)) = w.fresh {
            self.manifest_file_number = number;
        }
        self.manifest = w.writer;
        for (level, key) in w.compact_pointers {
            self.compact_pointers[level] = key;
        }
        let Some(version) = w.version else {
            // `write` succeeded only after building it; stay total all the same.
            self.manifest = None;
            return Err(Error::internal(
                "a MANIFEST edit written without its Version",
            ));
        };
        self.current = Arc::new(version);
        self.current_recorded = false;
        self.log_number = w.log_number;
        self.prev_log_number = w.prev_log_number;
        Ok(())
    }

    /// An edit describing the whole current state (the first record of a new MANIFEST).
    fn snapshot_edit(&self) -> VersionEdit {
        let mut e = VersionEdit {
            comparator: Some(BYTEWISE_COMPARATOR.to_string()),
            ..Default::default()
        };
        for (level, key) in self.compact_pointers.iter().enumerate() {
            if !key.is_empty() {
                e.compact_pointers.push((level, key.clone()));
            }
        }
        for (level, f) in self.current.all_files() {
            e.new_files.push((level, (**f).clone()));
        }
        e
    }
}

/// One edit on its way into the MANIFEST (`VersionSet::begin_apply` .. `finish_apply`):
/// everything `write` needs, so that the writing and syncing can run without the database's
/// lock (LevelDB's LogAndApply unlocks around them too), while writers go on.
pub struct ManifestWrite {
    storage: Arc<dyn Storage>,
    dir: String,
    /// The Version the edit applies to (current when `begin_apply` ran, and still current
    /// until `finish_apply`: edits go one at a time) and the edit.
    base: Arc<Version>,
    edit: VersionEdit,
    l0_compaction_trigger: usize,
    /// The new Version, built by `write`.
    version: Option<Version>,
    /// `write` found that the edit does not apply to `base`, and wrote nothing.
    refused: bool,
    record: Vec<u8>,
    /// A new MANIFEST to start first: its number and its first record.
    fresh: Option<(u64, Vec<u8>)>,
    /// The MANIFEST appended to (the session's, or the new one once created).
    writer: Option<log::Writer>,
    log_number: u64,
    prev_log_number: u64,
    compact_pointers: Vec<(usize, Vec<u8>)>,
}

impl ManifestWrite {
    /// Builds the new Version (an edit that does not apply to its base is refused here,
    /// before anything is written), then writes the record (after the new MANIFEST's
    /// snapshot, if any) and syncs it; a new MANIFEST is then named by CURRENT. The folder is synced first: the entries of the
    /// tables and log the edit names must be durable before the edit is (LevelDB syncs the
    /// folder when it syncs a MANIFEST), or a crash could leave a MANIFEST naming a table
    /// whose entry was lost.
    pub fn write(&mut self) -> Result<()> {
        if self.version.is_none() {
            let mut builder = VersionBuilder::from_version(&self.base);
            builder.apply(&self.edit);
            match builder.build() {
                Ok(mut version) => {
                    version.finalize(self.l0_compaction_trigger);
                    self.version = Some(version);
                }
                Err(e) => {
                    self.refused = true;
                    return Err(e);
                }
            }
        }
        if let Some((number, snapshot)) = &self.fresh {
            let path = super::filename::descriptor_file_name(&self.dir, *number);
            let mut w = log::Writer::new(self.storage.create(&path)?);
            w.add_record(snapshot)?;
            self.writer = Some(w);
        }
        let Some(w) = self.writer.as_mut() else {
            return Err(Error::internal("no MANIFEST open after opening one"));
        };
        self.storage.sync_dir(&self.dir)?;
        w.add_record(&self.record)?;
        w.sync()?;
        match &self.fresh {
            Some((number, _)) => {
                super::filename::set_current_file(&*self.storage, &self.dir, *number)
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{make_internal_key, ValueType};
    use crate::storage::MemStorage;

    fn add(edit: &mut VersionEdit, number: u64, from: &[u8], to: &[u8]) {
        let (a, b) = (
            make_internal_key(from, 1, ValueType::Value),
            make_internal_key(to, 1, ValueType::Value),
        );
        edit.add_file(1, number, 1000, &a, &b);
    }

    fn level1(v: &Version) -> Vec<u64> {
        v.files[1].iter().map(|f| f.number).collect()
    }

    /// The new Version is built outside the owner's lock (`ManifestWrite::write`): an edit
    /// that does not apply (a table overlapping another in level 1) is refused there with
    /// nothing written and nothing changed, and the MANIFEST takes the next edit as before.
    #[test]
    fn an_edit_refused_by_the_build_writes_nothing_and_the_manifest_goes_on() {
        let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
        storage.create_dir_all("db").unwrap();
        VersionSet::create_new(&*storage, "db").unwrap();
        let state = recover(&*storage, "db").unwrap();
        let mut vs = VersionSet::from_recovered(storage.clone(), "db", state, 4);

        let mut first = VersionEdit::default();
        add(&mut first, 10, b"a", b"c");
        vs.log_and_apply(&mut first).unwrap();
        let manifest = vs.manifest_file_number;
        let size = storage
            .file_size(&super::super::filename::descriptor_file_name(
                "db", manifest,
            ))
            .unwrap();

        let mut overlapping = VersionEdit::default();
        add(&mut overlapping, 11, b"b", b"d");
        let err = vs.log_and_apply(&mut overlapping).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert_eq!(level1(vs.peek_current()), vec![10]);
        assert_eq!(vs.manifest_file_number, manifest);
        assert_eq!(
            storage
                .file_size(&super::super::filename::descriptor_file_name(
                    "db", manifest
                ))
                .unwrap(),
            size,
            "nothing written"
        );

        let mut next = VersionEdit::default();
        add(&mut next, 12, b"x", b"z");
        vs.log_and_apply(&mut next).unwrap();
        assert_eq!(level1(vs.peek_current()), vec![10, 12]);
        assert_eq!(
            vs.manifest_file_number, manifest,
            "the same MANIFEST goes on"
        );
        let reopened = recover(&*storage, "db").unwrap();
        assert_eq!(level1(&reopened.version), vec![10, 12]);
    }
}
