//! The database: open/recover, point reads, iterators, the full scan, and inspection.
//!
//! Opening replays the MANIFEST named by `CURRENT` into a Version and the write-ahead logs it
//! does not yet cover into a memtable. A read-only open changes nothing in the folder: no
//! `LOCK` is created (an existing one is locked shared), no log is converted into a table,
//! no MANIFEST is written.
//!
//! Thread-safety: `Db` is `Send + Sync`; reads take a consistent snapshot of
//! (memtables, Version, last sequence) under a short read lock and then proceed without it.

pub mod db_iter;
pub mod inspect;
pub mod write_batch;

use std::sync::{Arc, RwLock};

pub use db_iter::DbIter;
pub use inspect::{TableStats, VerifyReport};
pub use write_batch::WriteBatch;

use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{LookupKey, SequenceNumber};
use crate::log;
use crate::memtable::{MemGet, MemTable};
use crate::options::{Options, ReadOptions};
use crate::storage::{join, FileLock, Storage};
use crate::table::merger::MergingIterator;
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::version::TableGet;
use crate::version::version_set::{self, RecoveredState};
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

/// The part of the state readers snapshot.
struct DbState {
    mem: Arc<MemTable>,
    imm: Option<Arc<MemTable>>,
    version: Arc<Version>,
    last_sequence: SequenceNumber,
}

/// One write-ahead log replayed at open.
#[derive(Clone, Debug)]
pub struct ReplayedLog {
    pub name: String,
    /// WriteBatches replayed.
    pub records: u64,
    pub bytes: u64,
}

/// What recovery found, for `info`.
#[derive(Clone, Debug)]
pub struct RecoveryInfo {
    pub manifest: String,
    pub log_number: u64,
    pub next_file_number: u64,
    /// Logs replayed, oldest first.
    pub logs: Vec<ReplayedLog>,
}

/// An open database.
pub struct Db {
    storage: Arc<dyn Storage>,
    dir: String,
    options: Options,
    table_cache: Arc<TableCache>,
    state: RwLock<DbState>,
    recovery: RecoveryInfo,
    _lock: Option<Box<dyn FileLock>>,
}

impl Db {
    /// Opens the database in folder `dir` of `storage`.
    pub fn open(storage: Arc<dyn Storage>, dir: &str, options: Options) -> Result<Db> {
        if !options.read_only {
            return Err(Error::not_supported(
                "this build opens databases read-only (set Options::read_only)",
            ));
        }
        let current = filename::current_file_name(dir);
        if !storage.exists(&current) {
            return Err(Error::not_found(format!(
                "{dir}: no database here (no CURRENT file)"
            )));
        }
        let lock = storage.lock_shared(&filename::lock_file_name(dir))?;
        let recovered = version_set::recover(&*storage, dir)?;
        let block_cache = (options.block_cache_capacity > 0)
            .then(|| Arc::new(Cache::new(options.block_cache_capacity)));
        let table_cache = Arc::new(TableCache::new(
            storage.clone(),
            dir,
            options.max_open_files,
            block_cache,
            options.max_block_size,
        ));
        let mem = Arc::new(MemTable::new());
        let (last_sequence, logs) = replay_logs(&*storage, dir, &recovered, &mem, &options)?;
        let recovery = RecoveryInfo {
            manifest: recovered.manifest_name.clone(),
            log_number: recovered.log_number,
            next_file_number: recovered.next_file_number,
            logs,
        };
        Ok(Db {
            storage,
            dir: dir.to_string(),
            options,
            table_cache,
            state: RwLock::new(DbState {
                mem,
                imm: None,
                version: recovered.version.clone(),
                last_sequence,
            }),
            recovery,
            _lock: lock,
        })
    }

    /// Opens a database folder on the native file system.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open_path(dir: &str, options: Options) -> Result<Db> {
        Self::open(Arc::new(crate::storage::FsStorage::new()), dir, options)
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }

    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    pub fn recovery_info(&self) -> &RecoveryInfo {
        &self.recovery
    }

    /// The current Version (live tables per level).
    pub fn version(&self) -> Arc<Version> {
        self.state.read().unwrap().version.clone()
    }

    pub fn table_cache(&self) -> &Arc<TableCache> {
        &self.table_cache
    }

    /// The sequence number of the latest write.
    pub fn last_sequence(&self) -> SequenceNumber {
        self.state.read().unwrap().last_sequence
    }

    /// Entries in the memtable (recovered from the log, or written since open).
    pub fn memtable_entries(&self) -> usize {
        self.state.read().unwrap().mem.len()
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, options: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let (mem, imm, version, last) = {
            let s = self.state.read().unwrap();
            (
                s.mem.clone(),
                s.imm.clone(),
                s.version.clone(),
                s.last_sequence,
            )
        };
        let seq = options.snapshot.unwrap_or(last).min(last);
        let lkey = LookupKey::new(key, seq);
        for m in std::iter::once(&mem).chain(imm.as_ref()) {
            match m.get(&lkey) {
                MemGet::Found(v) => return Ok(Some(v)),
                MemGet::Deleted => return Ok(None),
                MemGet::Missing => {}
            }
        }
        match version.get(options, &lkey, &self.table_cache)? {
            TableGet::Found(v) => Ok(Some(v)),
            TableGet::Deleted | TableGet::Missing => Ok(None),
        }
    }

    /// An iterator over user keys as of the options' snapshot (or now). Unpositioned.
    pub fn iter(&self, options: &ReadOptions) -> DbIter {
        let (mem, imm, version, last) = {
            let s = self.state.read().unwrap();
            (
                s.mem.clone(),
                s.imm.clone(),
                s.version.clone(),
                s.last_sequence,
            )
        };
        let seq = options.snapshot.unwrap_or(last).min(last);
        let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(mem.iter())];
        if let Some(imm) = imm {
            children.push(Box::new(imm.iter()));
        }
        children.extend(version.iterators(options, &self.table_cache));
        DbIter::new(Box::new(MergingIterator::new(children)), seq)
    }

    /// The headline workload: every live entry in key order.
    pub fn scan(&self) -> Result<ScanStats> {
        let options = ReadOptions {
            fill_cache: false,
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
}

/// Replays the logs the MANIFEST does not cover, oldest first, into `mem`. Returns the last
/// sequence number and what was replayed. Damage other than a torn tail is an error.
fn replay_logs(
    storage: &dyn Storage,
    dir: &str,
    recovered: &RecoveredState,
    mem: &MemTable,
    _options: &Options,
) -> Result<(SequenceNumber, Vec<ReplayedLog>)> {
    let mut logs: Vec<u64> = storage
        .list(dir)?
        .iter()
        .filter_map(|n| parse_file_name(n))
        .filter(|&(n, t)| {
            t == FileType::Log
                && (n >= recovered.log_number
                    || (recovered.prev_log_number != 0 && n == recovered.prev_log_number))
        })
        .map(|(n, _)| n)
        .collect();
    logs.sort_unstable();
    let mut last_sequence = recovered.last_sequence;
    let mut replayed = Vec::new();
    let mut record = Vec::new();
    for number in logs {
        let path = filename::log_file_name(dir, number);
        let name = crate::storage::base_name(&path).to_string();
        let file = storage.open_random(&path)?;
        let size = file.size()?;
        // Strict: damage that a crash cannot explain is an error, whatever paranoid_checks
        // says, so a read never silently returns less than the log holds.
        let mut reader = log::Reader::new(file, name.clone(), true, true);
        let mut records = 0u64;
        while reader.read_record(&mut record)? {
            records += 1;
            let at = |e: Error| {
                e.in_file(name.clone())
                    .at_offset(reader.last_record_offset())
            };
            let batch = WriteBatch::from_contents(std::mem::take(&mut record)).map_err(at)?;
            batch.insert_into(mem).map_err(at)?;
            let last = batch.sequence() + batch.count() as u64;
            if batch.count() > 0 {
                last_sequence = last_sequence.max(last - 1);
            }
            record = batch.into_contents();
        }
        replayed.push(ReplayedLog {
            name,
            records,
            bytes: size,
        });
    }
    Ok((last_sequence, replayed))
}

/// `true` if `dir` holds a database (a `CURRENT` file).
pub fn exists(storage: &dyn Storage, dir: &str) -> bool {
    storage.exists(&join(dir, "CURRENT"))
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("dir", &self.dir).finish()
    }
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<Db>();
}
