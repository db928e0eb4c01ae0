//! A Version: the live tables of each level at one point in time (LevelDB db/version_set.cc,
//! class Version). Immutable once built; shared by readers through `Arc`.
//!
//! Invariants: level-0 files may overlap and are searched newest (highest number) first;
//! files of levels >= 1 are sorted by smallest key and do not overlap.

use std::cmp::Ordering;
use std::sync::Arc;

use super::table_cache::TableCache;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{
    compare_internal_keys, extract_user_key, parse_internal_key, LookupKey, ValueType,
};
use crate::options::config::NUM_LEVELS;
use crate::options::ReadOptions;
use crate::table::table::TableIterator;
use crate::table::two_level_iterator::{InnerOpener, TwoLevelIterator};

/// One table file as the MANIFEST describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMetaData {
    pub number: u64,
    pub file_size: u64,
    /// Smallest internal key in the table.
    pub smallest: Vec<u8>,
    /// Largest internal key in the table.
    pub largest: Vec<u8>,
}

/// Result of a lookup in the tables.
#[derive(Debug, PartialEq, Eq)]
pub enum TableGet {
    Found(Vec<u8>),
    Deleted,
    Missing,
}

#[derive(Clone, Debug, Default)]
pub struct Version {
    pub files: [Vec<Arc<FileMetaData>>; NUM_LEVELS],
}

/// Index of the first file whose largest key is >= `ikey` (files sorted, disjoint).
pub fn find_file(files: &[Arc<FileMetaData>], ikey: &[u8]) -> usize {
    files.partition_point(|f| compare_internal_keys(&f.largest, ikey) == Ordering::Less)
}

impl Version {
    /// Sorts each level and checks the level invariants.
    pub fn from_levels(mut files: [Vec<Arc<FileMetaData>>; NUM_LEVELS]) -> Result<Version> {
        for (level, level_files) in files.iter_mut().enumerate() {
            if level == 0 {
                level_files.sort_by_key(|f| std::cmp::Reverse(f.number));
            } else {
                level_files.sort_by(|a, b| {
                    compare_internal_keys(&a.smallest, &b.smallest).then(a.number.cmp(&b.number))
                });
                for pair in level_files.windows(2) {
                    if compare_internal_keys(&pair[0].largest, &pair[1].smallest) != Ordering::Less
                    {
                        return Err(Error::corruption(format!(
                            "MANIFEST: tables {:06} and {:06} overlap in level {level}",
                            pair[0].number, pair[1].number
                        )));
                    }
                }
            }
            for f in level_files.iter() {
                if compare_internal_keys(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(Error::corruption(format!(
                        "MANIFEST: table {:06} has smallest key > largest key",
                        f.number
                    )));
                }
            }
        }
        Ok(Version { files })
    }

    pub fn num_files(&self, level: usize) -> usize {
        self.files[level].len()
    }

    pub fn level_bytes(&self, level: usize) -> u64 {
        self.files[level].iter().map(|f| f.file_size).sum()
    }

    /// All live files, level by level.
    pub fn all_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        self.files
            .iter()
            .enumerate()
            .flat_map(|(l, fs)| fs.iter().map(move |f| (l, f)))
    }

    /// Looks a key up in the tables, newest data first.
    pub fn get(
        &self,
        options: &ReadOptions,
        key: &LookupKey,
        tables: &TableCache,
    ) -> Result<TableGet> {
        let user_key = key.user_key();
        let ikey = key.internal_key();
        let check = |f: &FileMetaData| -> Result<Option<TableGet>> {
            match tables.get(options, f.number, f.file_size, ikey)? {
                None => Ok(None),
                Some((found_key, value)) => {
                    let parsed = parse_internal_key(&found_key).ok_or_else(|| {
                        Error::corruption("corrupted internal key in table")
                            .in_file(format!("{:06}.ldb", f.number))
                    })?;
                    if parsed.user_key != user_key {
                        return Ok(None);
                    }
                    Ok(Some(match parsed.value_type {
                        ValueType::Value => TableGet::Found(value),
                        ValueType::Deletion => TableGet::Deleted,
                    }))
                }
            }
        };
        for f in &self.files[0] {
            if extract_user_key(&f.smallest) <= user_key && user_key <= extract_user_key(&f.largest)
            {
                if let Some(r) = check(f)? {
                    return Ok(r);
                }
            }
        }
        for level_files in &self.files[1..] {
            let i = find_file(level_files, ikey);
            if let Some(f) = level_files.get(i) {
                if extract_user_key(&f.smallest) <= user_key {
                    if let Some(r) = check(f)? {
                        return Ok(r);
                    }
                }
            }
        }
        Ok(TableGet::Missing)
    }

    /// One iterator per level-0 table and one concatenating iterator per deeper level.
    pub fn iterators(
        &self,
        options: &ReadOptions,
        tables: &Arc<TableCache>,
    ) -> Vec<Box<dyn InternalIterator>> {
        let mut out: Vec<Box<dyn InternalIterator>> = Vec::new();
        for f in &self.files[0] {
            match tables.iter(f.number, f.file_size, options) {
                Ok(it) => out.push(Box::new(it)),
                Err(e) => out.push(Box::new(crate::iterator::EmptyIterator::with_error(e))),
            }
        }
        for level_files in &self.files[1..] {
            if !level_files.is_empty() {
                out.push(Box::new(level_iterator(
                    level_files.clone(),
                    tables.clone(),
                    options.clone(),
                )));
            }
        }
        out
    }
}

/// Iterates a sorted, disjoint file list: key = a file's largest key, value = its index.
pub struct LevelFileIter {
    files: Vec<Arc<FileMetaData>>,
    index: usize,
    value: [u8; 8],
}

impl LevelFileIter {
    fn set(&mut self, index: usize) {
        self.index = index;
        self.value = (index as u64).to_le_bytes();
    }
}

impl InternalIterator for LevelFileIter {
    fn valid(&self) -> bool {
        self.index < self.files.len()
    }
    fn seek_to_first(&mut self) {
        self.set(0);
    }
    fn seek_to_last(&mut self) {
        self.set(if self.files.is_empty() {
            0
        } else {
            self.files.len() - 1
        });
    }
    fn seek(&mut self, target: &[u8]) {
        let i = find_file(&self.files, target);
        self.set(i);
    }
    fn next(&mut self) {
        self.set(self.index + 1);
    }
    fn prev(&mut self) {
        let i = if self.index == 0 {
            self.files.len()
        } else {
            self.index - 1
        };
        self.set(i);
    }
    fn key(&self) -> &[u8] {
        &self.files[self.index].largest
    }
    fn value(&self) -> &[u8] {
        &self.value
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

/// Opens the table named by a `LevelFileIter` value.
pub struct TableOpener {
    files: Vec<Arc<FileMetaData>>,
    tables: Arc<TableCache>,
    options: ReadOptions,
}

impl InnerOpener for TableOpener {
    type Inner = TableIterator;
    fn open(&mut self, index_value: &[u8]) -> Result<TableIterator> {
        let mut b = [0u8; 8];
        b.copy_from_slice(&index_value[..8]);
        let f = &self.files[u64::from_le_bytes(b) as usize];
        self.tables.iter(f.number, f.file_size, &self.options)
    }
}

/// All tables of one level >= 1, as one iterator.
pub type LevelIterator = TwoLevelIterator<LevelFileIter, TableOpener>;

/// An iterator over the tables of one level >= 1.
pub fn level_iterator(
    files: Vec<Arc<FileMetaData>>,
    tables: Arc<TableCache>,
    options: ReadOptions,
) -> LevelIterator {
    let n = files.len();
    TwoLevelIterator::new(
        LevelFileIter {
            files: files.clone(),
            index: n,
            value: [0; 8],
        },
        TableOpener {
            files,
            tables,
            options,
        },
    )
}
