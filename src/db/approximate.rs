//! Approximate sizes (LevelDB `DB::GetApproximateSizes`): the bytes of table files a key range
//! takes, for callers that want a cheap estimate (classic-level's `approximateSize`).
//!
//! Invariants: only the current Version's tables count, as in LevelDB: entries still in the
//! memtable (not yet flushed) are not included, and a range's figure is the distance between
//! the file offsets of its two ends (the start of the data block that would hold each end),
//! summed over every level. Nothing is read beyond the tables' index blocks.

use crate::error::Result;
use crate::key::{
    compare_internal_keys, make_internal_key, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK,
};
use crate::version::{TableCache, Version};

use super::Db;

impl Db {
    /// Approximate table bytes of the user keys in `[start, end)`; 0 when `end <= start`.
    pub fn approximate_size(&self, start: &[u8], end: &[u8]) -> Result<u64> {
        let v = self.version();
        let cache = self.table_cache();
        let from = offset_of(
            &v,
            cache,
            &make_internal_key(start, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK),
        )?;
        let to = offset_of(
            &v,
            cache,
            &make_internal_key(end, MAX_SEQUENCE_NUMBER, VALUE_TYPE_FOR_SEEK),
        )?;
        Ok(to.saturating_sub(from))
    }
}

/// LevelDB's `VersionSet::ApproximateOffsetOf`: the bytes, over every level, of the tables
/// before internal key `ikey`, plus the offset of `ikey` in the tables that span it.
fn offset_of(v: &Version, cache: &TableCache, ikey: &[u8]) -> Result<u64> {
    let mut result = 0;
    for (level, files) in v.files.iter().enumerate() {
        for f in files {
            if compare_internal_keys(&f.largest, ikey).is_le() {
                // Entirely before `ikey`.
                result += f.file_size;
            } else if compare_internal_keys(&f.smallest, ikey).is_gt() {
                // Entirely after `ikey`; above level 0 the files are sorted, so none later
                // in this level comes before it either.
                if level > 0 {
                    break;
                }
            } else {
                result += cache
                    .table(f.number, f.file_size)?
                    .approximate_offset_of(ikey);
            }
        }
    }
    Ok(result)
}
