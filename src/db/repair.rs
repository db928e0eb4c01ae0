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
use crate::key::{compare_internal_keys, extract_user_key, parse_internal_key};
use crate::log;
use crate::memtable::MemTable;
use crate::options::{config, Options, ReadOptions};
use crate::storage::{join, Storage};
use crate::table::merger::MergingIterator;
use crate::table::table_builder::TableBuilder;
use crate::version::filename::{self, parse_file_name, FileType};
use crate::version::version::{level_iterator, FileMetaData};
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
    /// Tables merged into one sorted run at the last level, because level 0's search order
    /// (newest file number first) would have found an older entry first; 0 when not needed.
    pub tables_merged: u64,
    /// Live-or-dead internal entries kept in tables (not user keys).
    pub entries: u64,
    pub last_sequence: u64,
}

/// Rebuilds the MANIFEST of the database in `dir`. The database must not be open.
pub fn repair(storage: Arc<dyn Storage>, dir: &str, options: &Options) -> Result<RepairReport> {
    let _lock = storage.lock(&filename::lock_file_name(dir))?;
    let mut report = RepairReport::default();
    // Nothing of the database changes until its new MANIFEST is CURRENT: files to set aside
    // are moved to `lost/` after that, and a repair that fails first removes the files it
    // wrote, leaving the folder as it found it.
    let mut plan = Plan::default();
    if let Err(e) = rebuild(&storage, dir, options, &mut report, &mut plan) {
        for path in &plan.created {
            let _ = storage.remove(path);
        }
        return Err(e);
    }
    for (from, to) in &plan.set_aside {
        archive(&*storage, dir, from, to)?;
    }
    for path in &plan.obsolete {
        storage.remove(path)?;
    }
    let lost = join(dir, "lost");
    if storage.exists(&lost) {
        storage.sync_dir(&lost)?;
    }
    storage.sync_dir(dir)?;
    match plan.installed_with {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

/// What a repair wrote and what it sets aside once its MANIFEST is CURRENT.
#[derive(Default)]
struct Plan {
    /// Files this repair wrote (tables, the MANIFEST): removed if it fails.
    created: Vec<String>,
    /// Logs replayed, tables damaged, empty, unreadable or merged, old MANIFESTs: moved into
    /// `lost/` under the name given.
    set_aside: Vec<(String, String)>,
    /// Tables this repair wrote and then merged into others: removed.
    obsolete: Vec<String>,
    /// The error of a CURRENT switch that happened though it reported failure (the folder's
    /// sync after the rename): the repair finishes, then reports it.
    installed_with: Option<Error>,
}

/// A table the new MANIFEST lists: its range and the range of its sequences.
struct Found {
    number: u64,
    /// Its file name (`.ldb`, or `.sst` as older LevelDB named tables).
    name: String,
    size: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
    min_seq: u64,
    max_seq: u64,
    /// Written by this repair (from a log, or a damaged table's intact entries).
    ours: bool,
}

/// Steps 1 to 4 (the module comment): new tables and a new MANIFEST written, CURRENT pointed
/// at it; nothing present before is moved or changed.
fn rebuild(
    storage: &Arc<dyn Storage>,
    dir: &str,
    options: &Options,
    report: &mut RepairReport,
    plan: &mut Plan,
) -> Result<()> {
    let names = storage.list(dir)?;
    let lost = join(dir, "lost");
    let lost_names = storage.list(&lost).unwrap_or_default();
    // Logs: (number, path, name in lost/ once replayed).
    let mut logs: Vec<(u64, String, String)> = Vec::new();
    let mut tables = Vec::new();
    let mut manifests = Vec::new();
    let mut max_number = 1;
    for name in &names {
        if let Some((n, t)) = parse_file_name(name) {
            max_number = max_number.max(n);
            match t {
                FileType::Log => logs.push((n, join(dir, name), name.clone())),
                FileType::Table => tables.push((n, name.clone())),
                FileType::Descriptor => manifests.push(name.clone()),
                _ => {}
            }
        }
    }
    // Logs an open did not replay (they followed a gap in the history) are replayed where they
    // lie, and lose their mark only once the new MANIFEST is CURRENT: moved back into the
    // folder first, a crash before that would leave them to an open that deletes them (its
    // MANIFEST's log number is past them). No new file takes the number of one in lost/.
    for name in &lost_names {
        let base = name.strip_suffix(super::recovery::UNREPLAYED);
        if let Some((n, t)) = parse_file_name(base.unwrap_or(name)) {
            max_number = max_number.max(n);
            if let (Some(log), FileType::Log) = (base, t) {
                if !logs.iter().any(|(m, _, _)| *m == n) {
                    logs.push((n, join(&lost, name), log.to_string()));
                    report.unreplayed_logs_restored += 1;
                }
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
    for (_, path, lost_name) in logs {
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
        plan.created.push(filename::table_file_name(dir, n));
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
            tables.push((n, format!("{n:06}.ldb")));
        }
        plan.set_aside.push((path, lost_name));
    }

    // 2. Scan every table.
    let read = bulk_read();
    let mut found: Vec<Found> = Vec::new();
    for (number, name) in tables {
        let path = join(dir, &name);
        let size = storage.file_size(&path)?;
        let table = match table_cache.table(number, size) {
            Ok(t) => t,
            Err(e) => {
                is_damage(e.in_file(name.clone()))?;
                report.tables_lost += 1;
                table_cache.evict(number);
                plan.set_aside.push((path, name));
                continue;
            }
        };
        // Read block by block so a damaged block costs only its own entries.
        let mut entries = 0u64;
        let mut smallest = Vec::new();
        let mut largest = Vec::new();
        let (mut min_seq, mut max_seq) = (u64::MAX, 0);
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
                            min_seq = min_seq.min(p.sequence);
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
        let ours = number > max_number;
        if damaged {
            // Keep what could be read: copy the intact entries into a new table.
            table_cache.evict(number);
            if ours {
                plan.obsolete.push(path);
            } else {
                plan.set_aside.push((path, name));
            }
            report.tables_rewritten += 1;
            if kept.is_empty() {
                continue;
            }
            kept.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            kept.dedup_by(|a, b| a.0 == b.0);
            let n = next_number;
            next_number += 1;
            let out = filename::table_file_name(dir, n);
            plan.created.push(out.clone());
            let mut builder = TableBuilder::new(options.into(), storage.create(&out)?);
            for (k, v) in &kept {
                builder.add(k, v)?;
            }
            let (mut f, new_size) = builder.finish()?;
            f.sync()?;
            drop(f);
            found.push(Found {
                number: n,
                name: storage_name(&out),
                size: new_size,
                smallest: kept[0].0.clone(),
                largest: kept[kept.len() - 1].0.clone(),
                min_seq,
                max_seq,
                ours: true,
            });
            report.entries += kept.len() as u64;
        } else if entries > 0 {
            found.push(Found {
                number,
                name: name.clone(),
                size,
                smallest,
                largest,
                min_seq,
                max_seq,
                ours,
            });
            report.entries += entries;
        } else {
            if ours {
                plan.obsolete.push(path);
            } else {
                plan.set_aside.push((path, name));
            }
            continue;
        }
        report.tables += 1;
        report.last_sequence = report.last_sequence.max(max_seq);
    }

    // 3. Level 0 is searched newest file number first, stopping at the first table that holds
    // a key: that is right only if, of two tables whose keys overlap, the higher-numbered
    // holds only newer entries. Tables from different levels (a deeper one compacted later),
    // from a log an open had parked, or rewritten from damage can break that; then every table
    // is merged into one sorted run at the last level, where no order between files matters.
    let mut edit = VersionEdit {
        comparator: Some(crate::key::BYTEWISE_COMPARATOR.to_string()),
        prev_log_number: Some(0),
        ..Default::default()
    };
    if search_order_holds(&found) {
        for f in &found {
            edit.add_file(0, f.number, f.size, &f.smallest, &f.largest);
        }
    } else {
        report.tables = 0;
        let (outputs, entries) = merge_into_run(
            &**storage,
            dir,
            options,
            &table_cache,
            &found,
            &mut next_number,
            plan,
        )?;
        for (n, size, smallest, largest) in outputs {
            edit.add_file(config::NUM_LEVELS - 1, n, size, &smallest, &largest);
            report.tables += 1;
        }
        report.tables_merged = found.len() as u64;
        report.entries = entries; // identical entries (a table and its copy) once
        for f in &found {
            let path = join(dir, &f.name);
            if f.ours {
                plan.obsolete.push(path);
            } else {
                plan.set_aside.push((path, f.name.clone()));
            }
        }
    }

    // 4. A new MANIFEST.
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
    if let Err(e) = filename::set_current_file(&**storage, dir, manifest_number) {
        // The rename may have happened with only the folder's sync failing: then CURRENT
        // names the new MANIFEST, which is the database now; what it replaced is set aside
        // as after a success, and the error is still reported.
        if filename::read_current_file(&**storage, dir)
            .is_ok_and(|name| name == storage_name(&path))
        {
            plan.created.clear();
            plan.set_aside
                .extend(manifests.into_iter().map(|m| (join(dir, &m), m)));
            plan.installed_with = Some(e);
            return Ok(());
        }
        return Err(e);
    }
    // CURRENT names the new MANIFEST: from here on, what this repair wrote is the database.
    plan.created.clear();
    plan.set_aside
        .extend(manifests.into_iter().map(|m| (join(dir, &m), m)));
    Ok(())
}

/// Whether level 0's search order (newest file number first) finds each key's newest entry:
/// of every two tables whose user keys overlap, the higher-numbered holds only entries newer
/// than every entry of the other.
fn search_order_holds(found: &[Found]) -> bool {
    let user = |k: &[u8]| extract_user_key(k).to_vec();
    let mut by_start: Vec<(Vec<u8>, Vec<u8>, &Found)> = found
        .iter()
        .map(|f| (user(&f.smallest), user(&f.largest), f))
        .collect();
    by_start.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (_, end, a)) in by_start.iter().enumerate() {
        for (start, _, b) in &by_start[i + 1..] {
            if start > end {
                break;
            }
            let (newer, older) = if a.number > b.number { (a, b) } else { (b, a) };
            if newer.min_seq <= older.max_seq {
                return false;
            }
        }
    }
    true
}

/// A table of a merged run: number, size, smallest and largest internal key.
type RunTable = (u64, u64, Vec<u8>, Vec<u8>);

/// Merges every table of `found` into one sorted run (identical internal keys, from a table
/// and its copy, once), cut into tables of about `max_file_size` at user-key boundaries;
/// each output's number, size and key range.
fn merge_into_run(
    storage: &dyn Storage,
    dir: &str,
    options: &Options,
    table_cache: &Arc<TableCache>,
    found: &[Found],
    next_number: &mut u64,
    plan: &mut Plan,
) -> Result<(Vec<RunTable>, u64)> {
    let read = bulk_read();
    // One child per run of tables with disjoint keys, read a table at a time (as a level
    // is): the tables open at once are as many as overlap at one key (the table cache bounds
    // the rest by `max_open_files`), not every table of the database.
    let children: Vec<Box<dyn InternalIterator>> = disjoint_runs(found)
        .into_iter()
        .map(|run| {
            Box::new(level_iterator(
                run.into(),
                table_cache.clone(),
                read.clone(),
            )) as Box<dyn InternalIterator>
        })
        .collect();
    let mut input = MergingIterator::new(children);
    input.seek_to_first();
    let mut outputs = Vec::new();
    let mut current: Option<(u64, TableBuilder, Vec<u8>)> = None;
    let mut last: Vec<u8> = Vec::new();
    let mut entries = 0u64;
    let finish = |(n, builder, smallest): (u64, TableBuilder, Vec<u8>),
                  largest: &[u8],
                  outputs: &mut Vec<RunTable>|
     -> Result<()> {
        let (mut f, size) = builder.finish()?;
        f.sync()?;
        drop(f);
        outputs.push((n, size, smallest, largest.to_vec()));
        Ok(())
    };
    while input.valid() {
        let key = input.key();
        if !last.is_empty() && key == &last[..] {
            input.next();
            continue;
        }
        let cut = match current.as_mut() {
            Some((_, b, _)) => {
                extract_user_key(key) != extract_user_key(&last)
                    && b.reached(options.max_file_size)?
            }
            None => false,
        };
        if cut {
            finish(current.take().unwrap(), &last, &mut outputs)?;
        }
        if current.is_none() {
            let n = *next_number;
            *next_number += 1;
            let path = filename::table_file_name(dir, n);
            plan.created.push(path.clone());
            current = Some((
                n,
                TableBuilder::new(options.into(), storage.create(&path)?),
                key.to_vec(),
            ));
        }
        if let Some((_, builder, _)) = current.as_mut() {
            builder.add(key, input.value())?;
            entries += 1;
        }
        last.clear();
        last.extend_from_slice(key);
        input.next();
    }
    // Every table read whole in step 2: an error now is not damage, and ends the repair.
    input.status()?;
    if let Some(c) = current.take() {
        finish(c, &last, &mut outputs)?;
    }
    Ok((outputs, entries))
}

/// `found` split into runs of tables whose user keys are disjoint, each sorted by key (what a
/// level iterator reads): each table joins the first run whose last table ends before it
/// starts. There are as many runs as tables overlap at one key.
fn disjoint_runs(found: &[Found]) -> Vec<Vec<Arc<FileMetaData>>> {
    let mut order: Vec<&Found> = found.iter().collect();
    order.sort_by(|a, b| compare_internal_keys(&a.smallest, &b.smallest));
    let mut runs: Vec<Vec<Arc<FileMetaData>>> = Vec::new();
    for f in order {
        let start = extract_user_key(&f.smallest);
        let meta = Arc::new(FileMetaData::new(
            f.number,
            f.size,
            f.smallest.clone(),
            f.largest.clone(),
        ));
        let free = runs.iter().position(|run| {
            run.last()
                .is_some_and(|last| extract_user_key(&last.largest) < start)
        });
        match free {
            Some(i) => runs[i].push(meta),
            None => runs.push(vec![meta]),
        }
    }
    runs
}

/// How repair reads: every block once, checked, nothing kept in the block cache.
fn bulk_read() -> ReadOptions {
    ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    }
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

/// Moves file `path` into `dir/lost/` as `name` (kept for the user, out of the database's
/// way); a name already taken there gets `.1`, `.2`, ... (nothing in lost/ is overwritten).
fn archive(storage: &dyn Storage, dir: &str, path: &str, name: &str) -> Result<()> {
    let lost = join(dir, "lost");
    storage.create_dir_all(&lost)?;
    let mut to = join(&lost, name);
    if to == path {
        return Ok(());
    }
    let mut k = 0;
    while storage.exists(&to) {
        k += 1;
        to = join(&lost, &format!("{name}.{k}"));
    }
    storage.rename(path, &to).or_else(|e| {
        if e.is_not_found() {
            Ok(())
        } else {
            Err(Error::io(format!("cannot move {path} to lost/: {e}")))
        }
    })
}
