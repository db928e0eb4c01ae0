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
        _ => unreachable!("read_current_file returns MANIFEST names only"),
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
        builder.apply(&edit);
        log_number = edit.log_number.or(log_number);
        prev_log_number = edit.prev_log_number.or(prev_log_number);
        next_file_number = edit.next_file_number.or(next_file_number);
        last_sequence = edit.last_sequence.or(last_sequence);
        for (level, key) in edit.compact_pointers {
            compact_pointers.insert(level, key);
        }
    }
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
    })
}
