//! Keeps recently used tables open (LevelDB db/table_cache.cc): an LRU of `Arc<Table>` keyed
//! by file number, bounded by `max_open_files`. Tables share one block cache.

use std::sync::Arc;

use super::filename::{sst_table_file_name, table_file_name};
use crate::cache::Cache;
use crate::error::{Error, ErrorKind, Result};
use crate::options::ReadOptions;
use crate::storage::{base_name, Storage};
use crate::table::block::Block;
use crate::table::readahead::ReadaheadPool;
use crate::table::table::{TableIterator, TableSettings};
use crate::table::Table;

pub struct TableCache {
    storage: Arc<dyn Storage>,
    dir: String,
    settings: TableSettings,
    tables: Cache<Arc<Table>>,
}

impl TableCache {
    pub fn new(
        storage: Arc<dyn Storage>,
        dir: &str,
        max_open_files: usize,
        block_cache: Option<Arc<Cache<Arc<Block>>>>,
        max_block_size: usize,
        readahead_threads: usize,
    ) -> Self {
        TableCache {
            storage,
            dir: dir.to_string(),
            settings: TableSettings {
                block_cache,
                max_block_size,
                verify_checksums: true,
                readahead: ReadaheadPool::new(readahead_threads),
            },
            tables: Cache::new(max_open_files.max(1)),
        }
    }

    /// The open table for file `number` of `size` bytes.
    pub fn table(&self, number: u64, size: u64) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.get(&(number, 0)) {
            return Ok(t);
        }
        let path = table_file_name(&self.dir, number);
        let (path, file) = match self.storage.open_random(&path) {
            Ok(f) => (path, f),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                let sst = sst_table_file_name(&self.dir, number);
                match self.storage.open_random(&sst) {
                    Ok(f) => (sst, f),
                    Err(e2) if e2.kind() == ErrorKind::NotFound => {
                        return Err(Error::corruption(format!(
                            "table {number:06}.ldb named by the MANIFEST is missing"
                        ))
                        .in_file(base_name(&path)));
                    }
                    Err(e2) => return Err(e2),
                }
            }
            Err(e) => return Err(e),
        };
        let actual = file.size()?;
        if actual < size {
            return Err(Error::corruption(format!(
                "table is {actual} bytes, the MANIFEST says {size}"
            ))
            .in_file(base_name(&path)));
        }
        let table = Arc::new(Table::open(
            file,
            base_name(&path),
            size,
            self.settings.clone(),
        )?);
        self.tables.insert((number, 0), table.clone(), 1);
        Ok(table)
    }

    /// An iterator over table `number`; an open failure becomes an iterator carrying the error.
    pub fn iter(&self, number: u64, size: u64, options: &ReadOptions) -> Result<TableIterator> {
        Ok(self.table(number, size)?.iter(options.clone()))
    }

    /// Looks `ikey` up in one table: the first entry >= it in the block that may hold it,
    /// handed to `saver` in place (`Table::internal_get_with`).
    pub fn get_with<R>(
        &self,
        options: &ReadOptions,
        number: u64,
        size: u64,
        ikey: &[u8],
        saver: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        self.table(number, size)?
            .internal_get_with(options, ikey, saver)
    }

    /// The readahead workers tables of this database share, if any.
    pub fn readahead(&self) -> Option<&Arc<ReadaheadPool>> {
        self.settings.readahead.as_ref()
    }

    /// Drops a table (after its file is deleted).
    pub fn evict(&self, number: u64) {
        self.tables.erase(&(number, 0));
    }
}
