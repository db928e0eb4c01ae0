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
use crate::table::compress_pool::CompressionPool;
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::version_set::{self, VersionSet};
use crate::version::{TableCache, VersionEdit};

pub(super) fn open(storage: Arc<dyn Storage>, dir: &str, options: Options) -> Result<DbInner> {
    let mut options = options;
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
    // The database's own dialect decides what is written (unless the caller chose), and a
    // codec it cannot read is refused before anything is written.
    let listing = storage.list(dir)?;
    let dialect = {
        let probe = TableCache::new(storage.clone(), dir, 16, None, options.max_block_size, 0);
        let logs: Vec<String> = listing
            .iter()
            .filter_map(|n| parse_file_name(n))
            .filter(|&(n, t)| t == FileType::Log && n >= recovered.log_number)
            .map(|(n, _)| filename::log_file_name(dir, n))
            .collect();
        super::dialect::detect(&*storage, dir, &recovered.version, &probe, &logs)
    };
    super::dialect::settle(&mut options, dir, &dialect)?;
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

    // No new file may take the number of any file present (a table the MANIFEST lost track of
    // must never be overwritten), nor of one archived in lost/.
    let lost_listing = storage
        .list(&crate::storage::join(dir, "lost"))
        .unwrap_or_default();
    for (n, _) in listing
        .iter()
        .chain(lost_listing.iter())
        .filter_map(|n| parse_file_name(n.strip_suffix(UNREPLAYED).unwrap_or(n)))
    {
        versions.mark_file_number_used(n);
    }
    let mut dropped_tails = Vec::new();
    if let Some((offset, bytes)) = recovered.manifest_tail {
        dropped_tails.push(super::DroppedTail {
            file: recovered.manifest_name.clone(),
            offset,
            bytes,
        });
    }

    // Logs newer than the MANIFEST's log number (and the previous log, if named), oldest first.
    let mut numbers: Vec<u64> = listing
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
    // Before the first log: everything up to the MANIFEST's last sequence is accounted for (a
    // flushed log's writes are in synced tables, and the MANIFEST's last sequence is at least
    // the last of them), so a first log whose marker names a later sequence lost its
    // predecessor's tail too (e.g. the log of a fresh database, written back after it).
    let mut expected: Option<u64> = Some(recovered.last_sequence + 1);
    let mut dropped_logs = Vec::new();
    let mut gap: Option<LogGap> = None;
    // Each replayed log: its number, and its size when it ends at its last record exactly
    // (nothing torn, no zeros after it), so that writing can go on at its end.
    let mut replayed: Vec<(u64, Option<u64>)> = Vec::new();
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
        // A power cut's hole ends the log (`log::Reader::ending_at_holes`).
        let mut reader = log::Reader::new(file.clone(), name.clone(), true, true).ending_at_holes();
        let mut records = 0u64;
        let mut first = true;
        // Where the last record replayed ends.
        let mut replayed_end = 0u64;
        while reader.read_record(&mut record)? {
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
            // Zero-filled space skipped before it: a record a peer appended after the zeros
            // continues the history; anything else lies past a hole a power cut left, and the
            // log ends before it (the next log's marker then shows the gap).
            if reader.last_record_after_zeros() && expected != Some(batch.sequence()) {
                break;
            }
            first = false;
            records += 1;
            replayed_end = reader.end_of_last_record();
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
        let unused = replayed_end;
        let mut torn_end = size;
        if size > unused {
            // Zeros to a block boundary are the space a synced log was extended with.
            let data_end = last_nonzero_end(&*file, unused, size)?;
            if data_end == unused || size % log::BLOCK_SIZE as u64 == 0 {
                torn_end = data_end;
            }
        }
        if torn_end > unused {
            dropped_tails.push(super::DroppedTail {
                file: name.clone(),
                offset: unused,
                bytes: torn_end - unused,
            });
        }
        replayed.push((number, (replayed_end == size).then_some(size)));
        logs.push(ReplayedLog {
            name,
            records,
            bytes: size,
        });
    }
    // Logs after a gap hold writes made after writes the crash lost: replaying them would
    // break the prefix. They are kept, not deleted: a writable open moves them to
    // `lost/NNNNNN.log.unreplayed`, which `repair` folds back in, and the recovery report
    // names them. New writes get sequences above all of theirs, so a repair that brings them
    // back never lets them shadow a newer write.
    let mut lost_logs = Vec::new();
    for number in dropped_logs {
        let path = filename::log_file_name(dir, number);
        let name = base_name(&path).to_string();
        let file = storage.open_random(&path)?;
        let bytes = file.size()?;
        let mut reader = log::Reader::new(file, name.clone(), true, false);
        while reader.read_record(&mut record)? {
            if let Ok(batch) = WriteBatch::from_contents(std::mem::take(&mut record)) {
                let end = batch.sequence() + (batch.count() as u64).max(1) - 1;
                versions.last_sequence = versions.last_sequence.max(end);
                record = batch.into_contents();
            }
        }
        if !options.read_only {
            let lost_dir = crate::storage::join(dir, "lost");
            storage.create_dir_all(&lost_dir)?;
            let parked = crate::storage::join(&lost_dir, &format!("{name}{UNREPLAYED}"));
            storage.rename(&path, &parked)?;
            storage.sync_dir(&lost_dir)?;
            storage.sync_dir(dir)?;
        }
        lost_logs.push(ReplayedLog {
            name,
            records: 0,
            bytes,
        });
    }

    // Tables in the folder the MANIFEST never mentions: reported, never deleted.
    let mut unreferenced_tables = Vec::new();
    for name in &listing {
        let Some((number, FileType::Table)) = parse_file_name(name) else {
            continue;
        };
        if recovered.mentioned_tables.contains(&number) {
            continue; // named, or compacted away by an edit: accounted for
        }
        let path = crate::storage::join(dir, name);
        let bytes = storage
            .open_random(&path)
            .and_then(|f| f.size())
            .unwrap_or(0);
        let (entries, max_seq) = match count_table_entries(&table_cache, number, bytes) {
            Some((n, s)) => (Some(n), s),
            None => (None, 0),
        };
        versions.last_sequence = versions.last_sequence.max(max_seq);
        unreferenced_tables.push(super::UnreferencedTable {
            file: name.clone(),
            bytes,
            entries,
        });
    }

    let recovery = RecoveryInfo {
        dropped_tails,
        unreferenced_tables,
        gap,
        lost_logs,
        manifest: recovered.manifest_name.clone(),
        log_number: recovered.log_number,
        next_file_number: recovered.next_file_number,
        logs,
    };

    let mut log_writer = None;
    let mut log_file_number = recovered.log_number;
    // Nothing to recover: the MANIFEST's own log is the only one and is empty, and the
    // MANIFEST read whole. Writing goes on in that log, and the open writes nothing: no new
    // log, no new MANIFEST, no sync (a writable open of an idle database cost four syncs,
    // kvbench's `open` 1.37 ms). The first edit of the session starts a new MANIFEST, as
    // after any open. Only an empty log is taken over: it is created again (truncating
    // nothing) so that a synced log gets its zeros ahead (`storage::fs`), which a file
    // opened to append cannot have; a log holding anything, even a switch marker, is
    // replaced as before.
    let quiet = match replayed.as_slice() {
        [(number, Some(0))] => (mem.is_empty()
            && *number == recovered.log_number
            && recovered.prev_log_number == 0
            && recovery.dropped_tails.is_empty()
            && recovery.gap.is_none()
            && recovery.lost_logs.is_empty()
            // A table the MANIFEST does not name can raise the last sequence; only a new
            // MANIFEST records that (a later log's marker would otherwise look like a gap).
            && versions.last_sequence == recovered.last_sequence
            && !options.read_only)
            .then_some(*number),
        _ => None,
    };
    if let Some(number) = quiet {
        let file = storage.create(&filename::log_file_name(dir, number))?;
        log_writer = Some(log::Writer::new(file));
        log_file_number = number;
    } else if !options.read_only {
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
    // This database may delete the tables the MANIFEST named and those this open wrote.
    let mut known_tables = recovered.mentioned_tables.clone();
    known_tables.extend(edit.new_files.iter().map(|(_, f)| f.number));
    let inner = DbInner {
        dialect,
        storage,
        dir: dir.to_string(),
        compression_pool: CompressionPool::new(options.compression_threads),
        options,
        table_cache,
        state: Mutex::new(State {
            mem,
            imm: None,
            versions,
            view: None,
            log: log_writer,
            log_file_number,
            // The MANIFEST edit naming the new log synced the folder (log_and_apply). A log
            // taken over from an earlier session gets its folder synced again before the
            // first synced write, as a new log would: who created it is not known here.
            log_dir_synced: quiet.is_none(),
            unsynced_logs: Vec::new(),
            next_log: None,
            last_logged_sequence: last_sequence,
            bg_scheduled: false,
            manifest_writing: false,
            compacting: None,
            flushing: false,
            bg_error: None,
            shutting_down: false,
            pending_outputs: HashSet::new(),
            known_tables,
            snapshots: BTreeMap::new(),
            manual: None,
            compactions: 0,
            flushes: 0,
            blocks_copied: 0,
            write_groups: 0,
        }),
        bg_cv: Condvar::new(),
        has_imm: AtomicBool::new(false),
        bg_busy: AtomicBool::new(false),
        writers: Mutex::new(write::WriteQueue::default()),
        recovery,
        _lock: lock,
    };
    if !inner.options.read_only {
        let st = inner.lock_state();
        if quiet.is_some() {
            // Nothing was written since the listing.
            drop(inner.delete_obsolete_files_among(st, listing));
        } else {
            drop(inner.delete_obsolete_files(st));
        }
    }
    Ok(inner)
}

/// Suffix of a log recovery did not replay, parked in `lost/` for `repair`.
pub const UNREPLAYED: &str = ".unreplayed";

/// Entries of a table file and its largest sequence, when it reads whole (for the recovery
/// report, and so that new writes sort after everything in it).
fn count_table_entries(table_cache: &TableCache, number: u64, size: u64) -> Option<(u64, u64)> {
    let options = crate::options::ReadOptions {
        fill_cache: false,
        ..Default::default()
    };
    let mut it = table_cache.iter(number, size, &options).ok()?;
    use crate::iterator::InternalIterator;
    let mut n = 0u64;
    let mut max_seq = 0;
    it.seek_to_first();
    while it.valid() {
        n += 1;
        if let Some(p) = crate::key::parse_internal_key(it.key()) {
            max_seq = max_seq.max(p.sequence);
        }
        it.next();
    }
    it.status().ok()?;
    table_cache.evict(number);
    Some((n, max_seq))
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

/// The offset just past the last byte in `from..size` of `file` that is not zero (`from` if
/// there is none). A log's unused tail is counted to there when the zeros after it are the
/// space a synced log is extended with (`storage::fs`: they end on a block boundary), which
/// holds nothing that was written; a tail of zeros alone is not reported.
fn last_nonzero_end(
    file: &dyn crate::storage::RandomAccessFile,
    from: u64,
    size: u64,
) -> Result<u64> {
    let mut end = from;
    let mut buf = vec![0u8; 64 << 10];
    let mut at = from;
    while at < size {
        let want = ((size - at) as usize).min(buf.len());
        let n = file.read_at(at, &mut buf[..want])?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().rposition(|&b| b != 0) {
            end = at + i as u64 + 1;
        }
        at += n as u64;
    }
    Ok(end)
}
