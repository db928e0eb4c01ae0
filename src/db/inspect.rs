//! Whole-database inspection for `strata verify` and `strata info`: read every block of every
//! live table (bypassing the cache), check checksums, block structure and key order, and
//! count entries and compression ids. The first damage found is reported with file and offset.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use super::Db;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{compare_internal_keys, parse_internal_key};
use crate::storage::{read_exact_at, Storage};
use crate::table::block::Block;
use crate::table::format::{read_block, BlockHandle, Footer, FOOTER_SIZE};
use crate::version::FileMetaData;

/// What one table holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    pub entries: u64,
    pub data_blocks: u64,
    /// Compression id → number of data blocks.
    pub compression_ids: BTreeMap<u8, u64>,
    pub index_compression: u8,
    pub has_filter: bool,
    /// Uncompressed bytes of all data blocks.
    pub raw_bytes: u64,
}

/// Totals of a successful verification.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub tables: u64,
    pub blocks: u64,
    pub entries: u64,
    pub bytes: u64,
}

impl Db {
    /// Bytes that identify the database's contents, for a cache of something derived from
    /// them (the viewer keeps a world's chunk index under their SHA-256): the last sequence;
    /// every live table's level, number, size and key range (the MANIFEST's record of it);
    /// and the name, length and bytes of every log in the folder (the writes not in a table
    /// yet). A write changes them (its sequence, its log bytes). Two databases with equal
    /// identities hold the same tables by number, size and key range and the same logs: the
    /// same entries unless a table's contents differ at equal compressed size (a table is
    /// never rewritten under its number by a LevelDB writer; a repair tool may). Reads the
    /// logs only: no table is opened (a world of 130 tables picked as a folder: 180 ms with
    /// each table's footer read too).
    pub fn content_identity(&self) -> Result<Vec<u8>> {
        let storage = self.storage();
        let dir = self.dir();
        let mut out = Vec::new();
        out.extend_from_slice(b"strata-content-identity-1\0");
        // The sequence and the tables of one state (a flush between two reads would mix two).
        let (sequence, version) = {
            let mut st = self.inner.lock_state();
            (st.versions.last_sequence, st.versions.current())
        };
        out.extend_from_slice(&sequence.to_le_bytes());
        for (level, files) in version.files.iter().enumerate() {
            for f in files {
                out.extend_from_slice(&(level as u64).to_le_bytes());
                out.extend_from_slice(&f.number.to_le_bytes());
                out.extend_from_slice(&f.file_size.to_le_bytes());
                for key in [&f.smallest, &f.largest] {
                    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
                    out.extend_from_slice(key);
                }
            }
        }
        let mut logs: Vec<String> = storage
            .list(dir)?
            .into_iter()
            .filter(|n| n.ends_with(".log"))
            .collect();
        logs.sort();
        for name in logs {
            let path = crate::storage::join(dir, &name);
            let file = storage.open_random(&path)?;
            let len = file.size()?;
            let bytes = read_exact_at(&*file, 0, len as usize)?;
            out.extend_from_slice(&(name.len() as u64).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// Reads every data block of one live table, checking everything it can.
    pub fn table_stats(&self, file: &FileMetaData) -> Result<TableStats> {
        let table = self.table_cache().table(file.number, file.file_size)?;
        let name = table.name().to_string();
        let mut stats = TableStats {
            index_compression: table.index_compression(),
            has_filter: table.has_filter(),
            ..Default::default()
        };
        let mut index = table.index_iter();
        index.seek_to_first();
        let mut last_key: Vec<u8> = Vec::new();
        let mut first = true;
        while index.valid() {
            let (handle, _) = BlockHandle::decode(index.value()).ok_or_else(|| {
                Error::corruption("bad block handle in index block").in_file(name.clone())
            })?;
            let (block, id) = table.read_block_uncached(handle, true)?;
            stats.data_blocks += 1;
            stats.raw_bytes += block.size() as u64;
            *stats.compression_ids.entry(id).or_default() += 1;
            let block = std::sync::Arc::new(block);
            let mut it = block.iter();
            it.seek_to_first();
            let at = |e: Error| e.in_file(name.clone()).at_offset(handle.offset);
            while it.valid() {
                let key = it.key();
                if parse_internal_key(key).is_none() {
                    return Err(at(Error::corruption(
                        "malformed internal key in data block",
                    )));
                }
                if !first && compare_internal_keys(&last_key, key) != Ordering::Less {
                    return Err(at(Error::corruption("keys out of order")));
                }
                if compare_internal_keys(key, index.key()) == Ordering::Greater {
                    return Err(at(Error::corruption("key beyond its index separator")));
                }
                first = false;
                last_key.clear();
                last_key.extend_from_slice(key);
                stats.entries += 1;
                it.next();
            }
            it.status().map_err(at)?;
            index.next();
        }
        index.status().map_err(|e| e.in_file(name.clone()))?;
        let path = crate::version::filename::table_file_name(self.dir(), file.number);
        check_meta_blocks(&**self.storage(), &path, self.options().max_block_size)
            .map_err(|e| e.in_file(name.clone()))?;
        if !first
            && (compare_internal_keys(&last_key, &file.largest) == Ordering::Greater
                || stats.entries == 0)
        {
            return Err(
                Error::corruption("table holds keys past its MANIFEST range").in_file(name),
            );
        }
        Ok(stats)
    }

    /// Checks every block of every live table. The logs and the MANIFEST were already read
    /// strictly when the database was opened.
    pub fn verify(&self) -> Result<VerifyReport> {
        let version = self.version();
        let mut report = VerifyReport::default();
        for (_, f) in version.all_files() {
            let stats = self.table_stats(f)?;
            report.tables += 1;
            report.blocks += stats.data_blocks;
            report.entries += stats.entries;
            report.bytes += f.file_size;
        }
        Ok(report)
    }
}

/// Reads the metaindex block and every meta block it names (the filter), which the table
/// reader skips when damaged (a filter is only an optimization) but verify must report.
pub(crate) fn check_meta_blocks(storage: &dyn Storage, path: &str, max: usize) -> Result<()> {
    let f = storage.open_random(path)?;
    let size = f.size()?;
    let tail = size
        .checked_sub(FOOTER_SIZE as u64)
        .ok_or_else(|| Error::corruption("table is shorter than its footer"))?;
    let footer =
        Footer::decode(&read_exact_at(&*f, tail, FOOTER_SIZE)?).map_err(|e| e.at_offset(tail))?;
    let meta = read_block(&*f, size, footer.metaindex, true, max)?;
    let meta = Arc::new(Block::new(meta.data).map_err(|e| e.at_offset(footer.metaindex.offset))?);
    let mut it = meta.iter();
    it.seek_to_first();
    while it.valid() {
        let (handle, _) = BlockHandle::decode(it.value()).ok_or_else(|| {
            Error::corruption("bad block handle in metaindex block")
                .at_offset(footer.metaindex.offset)
        })?;
        read_block(&*f, size, handle, true, max)?;
        it.next();
    }
    it.status()
        .map_err(|e| e.at_offset(footer.metaindex.offset))
}
