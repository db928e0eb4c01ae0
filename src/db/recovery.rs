//! Opening a database: lock, create if asked, replay the MANIFEST and the logs it does not
//! cover. A writable open turns the replayed logs into level-0 tables (a full memtable is
//! flushed as soon as it fills, as LevelDB does), starts a new log, writes a new MANIFEST and
//! removes obsolete files; a read-only open keeps the replayed entries in memory.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};

use super::{
    new_block_cache, write, DbInner, LogGap, RecoveryInfo, ReplayedLog, State, WriteBatch,
};
use crate::compaction::run::build_table;
use crate::error::{Error, Result};
use crate::log;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::storage::{base_name, Storage};
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::version_set::{self, VersionSet};
use crate::version::{TableCache, VersionEdit};

pub(super) fn open(storage: Arc<dyn Storage>, dir: &str, options: Options) -> Result<DbInner> {
    let current = filename::current_file_name(dir);
    let lock = if options.read_only {
        if !storage.exists(&current) {
            return Err(Error::not_found(format!(
                "{dir}: no database here (CURRENT does not exist)"
            )));
        }
        storage.lock_shared(&filename::lock_file_name(dir))?
    } else {
        if options.create_if_missing {
            storage.create_dir_all(dir)?;
        } else if !storage.exists(&current) {
            return Err(Error::not_found(format!(
                "{dir}: no database here (CURRENT does not exist; set create_if_missing to create one)"
            )));
        }
        let lock = storage.lock(&filename::lock_file_name(dir))?;
        if !storage.exists(&current) {
            VersionSet::create_new(&*storage, dir)?;
        } else if options.error_if_exists {
            return Err(Error::invalid_argument(format!(
                "{dir}: database exists (error_if_exists)"
            )));
        }
        Some(lock)
    };

    let recovered = version_set::recover(&*storage, dir)?;
    let table_cache = Arc::new(TableCache::new(
        storage.clone(),
        dir,
        options.max_open_files,
        new_block_cache(&options),
        options.max_block_size,
        options.readahead_threads,
    ));
    let mut versions = VersionSet::from_recovered(
        storage.clone(),
        dir,
        recovered.clone(),
        options.l0_compaction_trigger,
    );
    let mut mem = Arc::new(fresh_memtable(&options));
    let mut edit = VersionEdit::default();
    let mut logs = Vec::new();

    // Logs newer than the MANIFEST's log number (and the previous log, if named), oldest first.
    let mut numbers: Vec<u64> = storage
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
    numbers.sort_unstable();
    let mut record = Vec::new();
    // The sequence the next record must carry for the history to be contiguous: a log that
    // starts with a switch marker (an empty batch, `write.rs`) names it. A marker beyond it
    // means the previous log lost an unsynced tail while this one survived: replay stops
    // there, so recovery yields a prefix of the history.
    let mut expected: Option<u64> = None;
    let mut dropped_logs = Vec::new();
    let mut gap: Option<LogGap> = None;
    for number in numbers {
        if gap.is_some() {
            dropped_logs.push(number);
            continue;
        }
        versions.mark_file_number_used(number);
        let path = filename::log_file_name(dir, number);
        let name = base_name(&path).to_string();
        let file = storage.open_random(&path)?;
        let size = file.size()?;
        // Strict: damage a crash cannot explain is an error, so a database never opens with
        // part of its log silently missing. `repair` salvages such a database.
        let mut reader = log::Reader::new(file, name.clone(), true, true);
        let mut records = 0u64;
        let mut first = true;
        while reader.read_record(&mut record)? {
            records += 1;
            let at = |e: Error| {
                e.in_file(name.clone())
                    .at_offset(reader.last_record_offset())
            };
            let batch = WriteBatch::from_contents(std::mem::take(&mut record)).map_err(at)?;
            let marker = batch.count() == 0;
            if first && marker {
                if let Some(want) = expected {
                    if batch.sequence() > want {
                        gap = Some(LogGap {
                            log: name.clone(),
                            expected: want,
                            found: batch.sequence(),
                        });
                        break;
                    }
                }
            }
            first = false;
            expected = Some(if marker {
                batch.sequence()
            } else {
                batch.sequence() + batch.count() as u64
            });
            batch.insert_into(&mem).map_err(at)?;
            if batch.count() > 0 {
                let last = batch.sequence() + batch.count() as u64 - 1;
                versions.last_sequence = versions.last_sequence.max(last);
            }
            record = batch.into_contents();
            if !options.read_only && mem.approximate_memory_usage() > options.write_buffer_size {
                flush_recovered(
                    &storage,
                    dir,
                    &options,
                    &table_cache,
                    &mut versions,
                    &mut mem,
                    &mut edit,
                )?;
            }
        }
        if gap.is_some() {
            dropped_logs.push(number);
            continue;
        }
        logs.push(ReplayedLog {
            name,
            records,
            bytes: size,
        });
    }
    // Logs after a gap hold writes made after writes the crash lost: replaying them would
    // break the prefix. They are kept, not deleted: a writable open moves them into `lost/`
    // (as LevelDB's repair archives what it cannot use), and the recovery report names them.
    let mut lost_logs = Vec::new();
    for number in dropped_logs {
        let path = filename::log_file_name(dir, number);
        let name = base_name(&path).to_string();
        let bytes = storage
            .open_random(&path)
            .and_then(|f| f.size())
            .unwrap_or(0);
        if !options.read_only {
            let lost_dir = crate::storage::join(dir, "lost");
            storage.create_dir_all(&lost_dir)?;
            storage.rename(&path, &crate::storage::join(&lost_dir, &name))?;
            storage.sync_dir(dir)?;
        }
        lost_logs.push(ReplayedLog {
            name,
            records: 0,
            bytes,
        });
    }

    let recovery = RecoveryInfo {
        gap,
        lost_logs,
        manifest: recovered.manifest_name.clone(),
        log_number: recovered.log_number,
        next_file_number: recovered.next_file_number,
        logs,
    };

    let mut log_writer = None;
    let mut log_file_number = recovered.log_number;
    if !options.read_only {
        if !mem.is_empty() {
            flush_recovered(
                &storage,
                dir,
                &options,
                &table_cache,
                &mut versions,
                &mut mem,
                &mut edit,
            )?;
        }
        log_file_number = versions.new_file_number();
        let file = storage.create(&filename::log_file_name(dir, log_file_number))?;
        log_writer = Some(log::Writer::new(file));
        edit.log_number = Some(log_file_number);
        edit.prev_log_number = Some(0);
        versions.log_and_apply(&mut edit)?;
    }

    let last_sequence = versions.last_sequence;
    let inner = DbInner {
        storage,
        dir: dir.to_string(),
        options,
        table_cache,
        state: Mutex::new(State {
            mem,
            imm: None,
            versions,
            log: log_writer,
            log_file_number,
            // The MANIFEST edit naming the new log synced the folder (log_and_apply).
            log_dir_synced: true,
            unsynced_logs: Vec::new(),
            last_logged_sequence: last_sequence,
            bg_scheduled: false,
            bg_error: None,
            shutting_down: false,
            pending_outputs: HashSet::new(),
            snapshots: BTreeMap::new(),
            manual: None,
            compactions: 0,
            flushes: 0,
        }),
        bg_cv: Condvar::new(),
        has_imm: AtomicBool::new(false),
        writers: Mutex::new(write::WriteQueue::default()),
        writers_cv: Condvar::new(),
        recovery,
        _lock: lock,
    };
    if !inner.options.read_only {
        let st = inner.state.lock().unwrap();
        drop(inner.delete_obsolete_files(st));
    }
    Ok(inner)
}

/// Writes a memtable replayed from a log as a level-0 table, records it in `edit`, and
/// starts a fresh memtable.
fn flush_recovered(
    storage: &Arc<dyn Storage>,
    dir: &str,
    options: &Options,
    table_cache: &Arc<TableCache>,
    versions: &mut VersionSet,
    mem: &mut Arc<MemTable>,
    edit: &mut VersionEdit,
) -> Result<()> {
    let number = versions.new_file_number();
    let mut it = mem.iter();
    if let Some(f) = build_table(
        &**storage,
        dir,
        number,
        &mut it,
        &options.into(),
        table_cache,
    )? {
        edit.add_file(0, f.number, f.file_size, &f.smallest, &f.largest);
    }
    *mem = Arc::new(fresh_memtable(options));
    Ok(())
}

/// The memtable writes go to: its arena reserved at the write buffer (none when read-only).
fn fresh_memtable(options: &Options) -> MemTable {
    MemTable::with_capacity(if options.read_only {
        0
    } else {
        options.write_buffer_size
    })
}
