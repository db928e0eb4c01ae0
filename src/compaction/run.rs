//! Doing a compaction (LevelDB `DBImpl::DoCompactionWork`) and writing tables (`BuildTable`).
//!
//! Inputs are merged in internal-key order; for each user key, versions hidden by a newer one
//! that every snapshot can see are dropped, and so are deletions when no deeper level can hold
//! the key. Outputs are cut at the target file size or where they would overlap too much of
//! the grandparent level. Every output table is synced and re-opened before it is installed.
//! An entry that is alone in its input block and would be alone in its output block (its
//! one-entry block reaches `block_size`) is written by copying the stored block, checksum verified, when
//! it is in the form the output's codec stores (`TableBuilder::add_copied`): a block this
//! build compressed comes out as a rebuild would write it.

use std::sync::Arc;

use super::pick::Compaction;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{parse_internal_key, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER};
use crate::options::ReadOptions;
use crate::storage::Storage;
use crate::table::merger::MergingIterator;
use crate::table::table_builder::{TableBuilder, TableBuilderOptions};
use crate::version::filename::table_file_name;
use crate::version::version::level_iterator;
use crate::version::{FileMetaData, TableCache, VersionEdit};

/// Writes the entries of `iter` (already positioned or not) into table `number`.
/// Returns `None` (and leaves no file) if there was nothing to write.
pub fn build_table(
    storage: &dyn Storage,
    dir: &str,
    number: u64,
    iter: &mut dyn InternalIterator,
    options: &TableBuilderOptions,
    table_cache: &TableCache,
) -> Result<Option<FileMetaData>> {
    iter.seek_to_first();
    if !iter.valid() {
        iter.status()?;
        return Ok(None);
    }
    let path = table_file_name(dir, number);
    let result = (|| {
        let mut builder = TableBuilder::new(options.clone(), storage.create(&path)?);
        let smallest = iter.key().to_vec();
        let mut largest = Vec::new();
        while iter.valid() {
            builder.add(iter.key(), iter.value())?;
            largest.clear();
            largest.extend_from_slice(iter.key());
            iter.next();
        }
        iter.status()?;
        let (mut file, size) = builder.finish()?;
        file.sync()?;
        drop(file);
        // Check that the table is usable before it is installed.
        table_cache.table(number, size)?;
        Ok(FileMetaData::new(number, size, smallest, largest))
    })();
    match result {
        Ok(meta) => Ok(Some(meta)),
        Err(e) => {
            table_cache.evict(number);
            let _ = storage.remove(&path);
            Err(e)
        }
    }
}

/// What the runner needs from the database.
pub struct CompactionEnv<'a> {
    pub storage: &'a dyn Storage,
    pub dir: &'a str,
    pub table_cache: &'a Arc<TableCache>,
    pub table_options: TableBuilderOptions,
    /// Versions at or below this sequence must stay readable (the oldest snapshot).
    pub smallest_snapshot: SequenceNumber,
    /// Allocates a file number (and protects it from obsolete-file deletion).
    pub new_file_number: &'a dyn Fn() -> u64,
    /// Called between keys; flushes a waiting immutable memtable so writers do not stall
    /// behind a long compaction.
    pub yield_to_flush: &'a dyn Fn() -> Result<()>,
}

/// Statistics of a finished compaction.
#[derive(Clone, Debug, Default)]
pub struct CompactionStats {
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub entries_in: u64,
    pub entries_out: u64,
    pub entries_dropped: u64,
    /// Data blocks written as they were stored (one large value each), not recompressed.
    pub blocks_copied: u64,
}

struct Output {
    builder: Option<TableBuilder>,
    number: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

/// Merges the compaction's inputs into new tables at `level + 1`. Returns the edit to install
/// (input deletions + outputs + compaction pointer). On error, partial outputs are removed.
pub fn run_compaction(
    c: &mut Compaction,
    env: &CompactionEnv,
) -> Result<(VersionEdit, CompactionStats)> {
    let read = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        snapshot: None,
        readahead: false,
        // A compaction's reads compete with the writers for the cores; LevelDB's run on its
        // one background thread too.
        auto_readahead: false,
        lend_filter: None,
    };
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    for (which, files) in c.inputs.iter().enumerate() {
        if c.level + which == 0 {
            for f in files {
                children.push(Box::new(env.table_cache.iter(
                    f.number,
                    f.file_size,
                    &read,
                )?));
            }
        } else if !files.is_empty() {
            children.push(Box::new(level_iterator(
                files.as_slice().into(),
                env.table_cache.clone(),
                read.clone(),
            )));
        }
    }
    let mut input = MergingIterator::new(children);
    let mut stats = CompactionStats {
        bytes_read: c.inputs.iter().flatten().map(|f| f.file_size).sum(),
        ..Default::default()
    };
    let mut outputs: Vec<FileMetaData> = Vec::new();
    let mut current: Option<Output> = None;
    let result = (|| -> Result<()> {
        input.seek_to_first();
        let mut current_user_key: Option<Vec<u8>> = None;
        let mut last_sequence_for_key = MAX_SEQUENCE_NUMBER;
        let mut checked = 0u32;
        while input.valid() {
            checked += 1;
            if checked.is_multiple_of(64) {
                (env.yield_to_flush)()?;
            }
            let key = input.key();
            if current.is_some() && c.should_stop_before(key) {
                finish_output(&mut current, &mut outputs, env)?;
            } else if current.is_none() {
                // Keep the grandparent cursor moving even between outputs.
                let _ = c.should_stop_before(key);
            }
            stats.entries_in += 1;
            let mut drop = false;
            match parse_internal_key(key) {
                None => {
                    // Keep unparseable keys rather than lose data silently.
                    current_user_key = None;
                    last_sequence_for_key = MAX_SEQUENCE_NUMBER;
                }
                Some(p) => {
                    if current_user_key.as_deref() != Some(p.user_key) {
                        current_user_key = Some(p.user_key.to_vec());
                        last_sequence_for_key = MAX_SEQUENCE_NUMBER;
                    }
                    if last_sequence_for_key <= env.smallest_snapshot {
                        drop = true; // hidden by a newer entry for the same user key
                    } else if p.value_type == ValueType::Deletion
                        && p.sequence <= env.smallest_snapshot
                        && c.is_base_level_for_key(p.user_key)
                    {
                        drop = true; // nothing older below it to hide
                    }
                    last_sequence_for_key = p.sequence;
                }
            }
            if drop {
                stats.entries_dropped += 1;
            } else {
                if current.is_none() {
                    let number = (env.new_file_number)();
                    let file = env.storage.create(&table_file_name(env.dir, number))?;
                    current = Some(Output {
                        builder: Some(TableBuilder::new(env.table_options.clone(), file)),
                        number,
                        smallest: key.to_vec(),
                        largest: Vec::new(),
                    });
                }
                // Both are set just above (a new output has its builder until it is finished).
                let Some(out) = current.as_mut() else {
                    return Err(Error::internal("compaction output missing"));
                };
                out.largest.clear();
                out.largest.extend_from_slice(key);
                let Some(builder) = out.builder.as_mut() else {
                    return Err(Error::internal("compaction output already finished"));
                };
                // A large value alone in its block keeps the block as stored: no
                // decompressed copy is compressed again (`TableBuilder::add_copied`).
                let copied = match input.sole_entry_block() {
                    Some(b) if builder.may_copy(b.compression_id, b.decoded_len) => {
                        let (stored, type_id) = b.read()?;
                        builder.add_copied(key, b.decoded_len, stored, type_id)?
                    }
                    _ => false,
                };
                if copied {
                    stats.blocks_copied += 1;
                } else {
                    builder.add(key, input.value())?;
                }
                stats.entries_out += 1;
                if builder.reached(c.limits.max_file_size)? {
                    finish_output(&mut current, &mut outputs, env)?;
                }
            }
            input.next();
        }
        input.status()?;
        finish_output(&mut current, &mut outputs, env)
    })();
    if let Err(e) = result {
        if let Some(out) = current.take() {
            drop(out.builder);
            let _ = env.storage.remove(&table_file_name(env.dir, out.number));
        }
        for f in &outputs {
            env.table_cache.evict(f.number);
            let _ = env.storage.remove(&table_file_name(env.dir, f.number));
        }
        return Err(e);
    }
    let mut edit = std::mem::take(&mut c.edit);
    c.add_input_deletions(&mut edit);
    for f in outputs {
        stats.bytes_written += f.file_size;
        edit.add_file(c.level + 1, f.number, f.file_size, &f.smallest, &f.largest);
    }
    Ok((edit, stats))
}

fn finish_output(
    current: &mut Option<Output>,
    outputs: &mut Vec<FileMetaData>,
    env: &CompactionEnv,
) -> Result<()> {
    let Some(mut out) = current.take() else {
        return Ok(());
    };
    let Some(builder) = out.builder.take() else {
        return Err(Error::internal("compaction output finished twice"));
    };
    let (mut file, size) = builder.finish()?;
    file.sync()?;
    drop(file);
    env.table_cache.table(out.number, size)?;
    outputs.push(FileMetaData::new(
        out.number,
        size,
        out.smallest,
        out.largest,
    ));
    Ok(())
}
