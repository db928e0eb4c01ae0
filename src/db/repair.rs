//! Repair (LevelDB `RepairDB`): rebuild a database's MANIFEST from the files found, when the
//! MANIFEST or CURRENT is lost or damaged, or a log or table is partly unreadable.
//!
//! 1. Every log is replayed in skip mode (damaged records are dropped and counted) and
//!    written out as a table.
//! 2. Every table is scanned; its key range and largest sequence are taken from the entries
//!    that read back. A table that is damaged part-way is rewritten with the entries that
//!    could be read; one that cannot be opened at all is set aside. Only damage counts
//!    (corruption): a read error or a shortage of memory ends the repair with that error.
//! 3. A new MANIFEST lists every table at level 0 (tables may overlap there) with a last
//!    sequence above every entry and a log number past every log, and CURRENT is pointed at
//!    it. Only then are the replayed logs, the tables set aside and the old MANIFESTs moved
//!    to `lost/`.
//!
//! A repair that fails before CURRENT's switch removes what it wrote and leaves the folder as
//! it found it (an open sees the database as before; a repair run again starts over). A
//! table that keeps failing to read (a bad sector) is named in the error: moving it out of
//! the folder is the user's call.
//!
//! Nothing readable is lost; what was not readable is counted in the report.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::cache::Cache;
use crate::error::{Error, ErrorKind, Result};
use crate::iterator::InternalIterator;
use crate::key::{compare_internal_keys, parse_internal_key};
use crate::log;
use crate::memtable::MemTable;
use crate::options::{Options, ReadOptions};
use crate::storage::{join, Storage};
use crate::table::table_builder::TableBuilder;
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::{TableCache, VersionEdit};

use super::WriteBatch;

/// What repair found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    pub logs_replayed: u64,
    /// Logs an open had parked in `lost/` (not replayed after a gap), folded back in.
    pub unreplayed_logs_restored: u64,
    pub log_records: u64,
    pub log_bytes_dropped: u64,
    pub tables: u64,
    pub tables_rewritten: u64,
    pub tables_lost: u64,
    /// Live-or-dead internal entries kept in tables (not user keys).
    pub entries: u64,
    pub last_sequence: u64,
}

/// Rebuilds the MANIFEST of the database in `dir`. The database must not be open.
pub fn repair(storage: Arc<dyn Storage>, dir: &str, options: &Options) -> Result<RepairReport> {
    let _lock = storage.lock(&filename::lock_file_name(dir))?;
    let mut report = RepairReport::default();
    // Logs an open did not replay (they followed a gap in the history) come back first.
    let lost = join(dir, "lost");
    let mut restored = Vec::new();
    for name in storage.list(&lost).unwrap_or_default() {
        if let Some(log) = name.strip_suffix(super::recovery::UNREPLAYED) {
            let to = join(dir, log);
            if !storage.exists(&to) {
                let from = join(&lost, &name);
                storage.rename(&from, &to)?;
                restored.push((to, from));
                report.unreplayed_logs_restored += 1;
            }
        }
    }
    // Nothing of the database changes until its new MANIFEST is CURRENT: files to set aside
    // are moved to `lost/` after that, and a repair that fails first removes the files it
    // wrote, leaving the folder as it found it.
    let mut plan = Plan::default();
    match rebuild(&storage, dir, options, &mut report, &mut plan) {
        Ok(()) => {}
        Err(e) => {
            for path in &plan.created {
                let _ = storage.remove(path);
            }
            for (at, back) in &restored {
                let _ = storage.rename(at, back);
            }
            return Err(e);
        }
    }
    for path in &plan.set_aside {
        archive(&*storage, dir, path)?;
    }
    Ok(report)
}

/// What a repair wrote and what it sets aside once its MANIFEST is CURRENT.
#[derive(Default)]
struct Plan {
    /// Files this repair wrote (tables, the MANIFEST): removed if it fails.
    created: Vec<String>,
    /// Logs replayed, tables damaged, empty or unreadable, old MANIFESTs: moved to `lost/`.
    set_aside: Vec<String>,
}

/// Steps 1 to 3 (the module comment): new tables and a new MANIFEST written, CURRENT pointed
/// at it; nothing present before is moved or changed.
fn rebuild(
    storage: &Arc<dyn Storage>,
    dir: &str,
    options: &Options,
    report: &mut RepairReport,
    plan: &mut Plan,
) -> Result<()> {
    let names = storage.list(dir)?;
    let mut logs = Vec::new();
    let mut tables = Vec::new();
    let mut manifests = Vec::new();
    let mut max_number = 1;
    for name in &names {
        if let Some((n, t)) = parse_file_name(name) {
            max_number = max_number.max(n);
            match t {
                FileType::Log => logs.push(n),
                FileType::Table => tables.push((n, name.clone())),
                FileType::Descriptor => manifests.push(name.clone()),
                _ => {}
            }
        }
    }
    logs.sort_unstable();
    let mut next_number = max_number + 1;
    let table_cache = Arc::new(TableCache::new(
        storage.clone(),
        dir,
        options.max_open_files,
        Some(Arc::new(Cache::new(8 << 20))),
        options.max_block_size,
        0,
    ));

    // 1. Logs → tables.
    for number in logs {
        let path = filename::log_file_name(dir, number);
        let file = storage.open_random(&path)?;
        let mut reader = log::Reader::new(file, storage_name(&path), true, false);
        let mem = Arc::new(MemTable::new());
        let mut record = Vec::new();
        while reader.read_record(&mut record)? {
            match WriteBatch::from_contents(std::mem::take(&mut record)) {
                Ok(batch) => {
                    if batch.insert_into(&mem).is_ok() {
                        // A log's switch marker (an empty batch) carries no data.
                        report.log_records += u64::from(batch.count() > 0);
                    } else {
                        report.log_bytes_dropped += batch.approximate_size() as u64;
                    }
                    record = batch.into_contents();
                }
                Err(_) => report.log_bytes_dropped += 1,
            }
        }
        report.log_bytes_dropped += reader.dropped_bytes();
        report.logs_replayed += 1;
        let n = next_number;
        next_number += 1;
        let mut it = mem.iter();
        if crate::compaction::run::build_table(
            &**storage,
            dir,
            n,
            &mut it,
            &options.into(),
            &table_cache,
        )?
        .is_some()
        {
            plan.created.push(filename::table_file_name(dir, n));
            tables.push((n, format!("{n:06}.ldb")));
        }
        plan.set_aside.push(path);
    }

    // 2. Scan every table.
    let mut edit = VersionEdit {
        comparator: Some(crate::key::BYTEWISE_COMPARATOR.to_string()),
        log_number: Some(0),
        prev_log_number: Some(0),
        ..Default::default()
    };
    let read = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        snapshot: None,
        readahead: false,
        lend_filter: None,
    };
    for (number, name) in tables {
        let path = join(dir, &name);
        let size = storage.file_size(&path)?;
        let table = match table_cache.table(number, size) {
            Ok(t) => t,
            Err(e) => {
                is_damage(e.in_file(name.clone()))?;
                report.tables_lost += 1;
                table_cache.evict(number);
                plan.set_aside.push(path);
                continue;
            }
        };
        // Read block by block so a damaged block costs only its own entries.
        let mut entries = 0u64;
        let mut smallest = Vec::new();
        let mut largest = Vec::new();
        let mut max_seq = 0;
        let mut damaged = false;
        let mut kept: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut index = table.index_iter();
        index.seek_to_first();
        while index.valid() {
            match table.block(index.value(), &read) {
                Ok(block) => {
                    let mut it = block.iter();
                    it.seek_to_first();
                    while it.valid() {
                        if let Some(p) = parse_internal_key(it.key()) {
                            // Blocks out of order (swapped): intact entries, but the table
                            // must be rewritten sorted.
                            if kept.last().is_some_and(|(last, _)| {
                                compare_internal_keys(last, it.key()) != Ordering::Less
                            }) {
                                damaged = true;
                            }
                            if entries == 0 {
                                smallest = it.key().to_vec();
                            }
                            largest.clear();
                            largest.extend_from_slice(it.key());
                            max_seq = max_seq.max(p.sequence);
                            entries += 1;
                            kept.push((it.key().to_vec(), it.value().to_vec()));
                        } else {
                            damaged = true;
                        }
                        it.next();
                    }
                    if let Err(e) = it.status() {
                        damaged |= is_damage(e.in_file(name.clone()))?;
                    }
                }
                Err(e) => damaged |= is_damage(e.in_file(name.clone()))?,
            }
            index.next();
        }
        if let Err(e) = index.status() {
            damaged |= is_damage(e.in_file(name.clone()))?;
        }
        // A damaged filter or metaindex costs no entries, but the table is rewritten.
        if let Err(e) = super::inspect::check_meta_blocks(&**storage, &path, options.max_block_size)
        {
            damaged |= is_damage(e.in_file(name.clone()))?;
        }
        if damaged {
            // Keep what could be read: copy the intact entries into a new table.
            table_cache.evict(number);
            plan.set_aside.push(path);
            report.tables_rewritten += 1;
            if kept.is_empty() {
                continue;
            }
            kept.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            kept.dedup_by(|a, b| a.0 == b.0);
            entries = kept.len() as u64;
            smallest.clone_from(&kept[0].0);
            largest.clone_from(&kept[kept.len() - 1].0);
            let n = next_number;
            next_number += 1;
            let name = filename::table_file_name(dir, n);
            plan.created.push(name.clone());
            let out = storage.create(&name)?;
            let mut builder = TableBuilder::new(options.into(), out);
            for (k, v) in &kept {
                builder.add(k, v)?;
            }
            let (mut f, new_size) = builder.finish()?;
            f.sync()?;
            drop(f);
            edit.add_file(0, n, new_size, &smallest, &largest);
        } else if entries > 0 {
            edit.add_file(0, number, size, &smallest, &largest);
        } else {
            plan.set_aside.push(path);
            continue;
        }
        report.tables += 1;
        report.entries += entries;
        report.last_sequence = report.last_sequence.max(max_seq);
    }

    // 3. A new MANIFEST.
    let manifest_number = next_number;
    next_number += 1;
    edit.next_file_number = Some(next_number);
    edit.last_sequence = Some(report.last_sequence);
    // Every log found is in the tables now: the MANIFEST's log number is past all of them, so
    // an open between CURRENT's switch and their move to lost/ (a crash there) replays none.
    edit.log_number = Some(manifest_number);
    let path = filename::descriptor_file_name(dir, manifest_number);
    plan.created.push(path.clone());
    let mut w = log::Writer::new(storage.create(&path)?);
    w.add_record(&edit.encode())?;
    w.sync()?;
    drop(w);
    storage.sync_dir(dir)?;
    filename::set_current_file(&**storage, dir, manifest_number)?;
    // CURRENT names the new MANIFEST: from here on, what this repair wrote is the database.
    plan.created.clear();
    plan.set_aside
        .extend(manifests.iter().map(|m| join(dir, m)));
    Ok(())
}

/// `Ok(true)` for an error that is damage in the table's bytes (they do not parse, fail their
/// checksum, or name a codec nobody writes): the table is rewritten or set aside. Any other
/// error (the storage failed, memory ran short) ends the repair with it: a passing failure
/// must not cost an intact table its entries.
fn is_damage(e: Error) -> Result<bool> {
    match e.kind() {
        ErrorKind::Corruption | ErrorKind::NotSupported => Ok(true),
        _ => Err(e),
    }
}

fn storage_name(path: &str) -> String {
    crate::storage::base_name(path).to_string()
}

/// Moves a file into `dir/lost/` (kept for the user, out of the database's way).
fn archive(storage: &dyn Storage, dir: &str, path: &str) -> Result<()> {
    let lost = join(dir, "lost");
    storage.create_dir_all(&lost)?;
    let to = join(&lost, crate::storage::base_name(path));
    storage.rename(path, &to).or_else(|e| {
        if e.is_not_found() {
            Ok(())
        } else {
            Err(Error::io(format!("cannot move {path} to lost/: {e}")))
        }
    })
}
