//! A Version: the live tables of each level at one point in time (LevelDB db/version_set.cc,
//! class Version). Immutable once built; shared by readers through `Arc`.
//!
//! Invariants: level-0 files may overlap and are searched newest (highest number) first;
//! files of levels >= 1 are sorted by smallest key and do not overlap.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, OnceLock};

use super::table_cache::TableCache;
use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{
    compare_internal_keys, extract_user_key, parse_internal_key, Lookup, LookupKey, ValueType,
};
use crate::options::config::NUM_LEVELS;
use crate::options::ReadOptions;
use crate::table::readahead::Successor;
use crate::table::table::TableIterator;
use crate::table::two_level_iterator::{InnerOpener, TwoLevelIterator};

/// Where a running compaction will put its outputs: `level`, within the user keys
/// `[smallest, largest]` (the span of its inputs). No other table may be placed there until
/// the compaction is installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusyRange {
    pub level: usize,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

impl BusyRange {
    /// Whether a table of user keys `[smallest, largest]` placed at `level` could overlap the
    /// outputs.
    pub fn blocks(&self, level: usize, smallest: &[u8], largest: &[u8]) -> bool {
        level == self.level
            && smallest <= self.largest.as_slice()
            && largest >= self.smallest.as_slice()
    }
}

/// One table file as the MANIFEST describes it.
#[derive(Clone, Debug)]
pub struct FileMetaData {
    pub number: u64,
    pub file_size: u64,
    /// Smallest internal key in the table.
    pub smallest: Vec<u8>,
    /// Largest internal key in the table.
    pub largest: Vec<u8>,
    /// Point reads that may still go through this file before it is worth compacting
    /// (LevelDB: one seek costs about as much as compacting 16 KiB). Shared by every
    /// Version that holds the file.
    pub allowed_seeks: Arc<AtomicI64>,
}

impl FileMetaData {
    pub fn new(number: u64, file_size: u64, smallest: Vec<u8>, largest: Vec<u8>) -> Self {
        let seeks = (file_size / 16384).max(100) as i64;
        FileMetaData {
            number,
            file_size,
            smallest,
            largest,
            allowed_seeks: Arc::new(AtomicI64::new(seeks)),
        }
    }
}

impl PartialEq for FileMetaData {
    fn eq(&self, o: &Self) -> bool {
        self.number == o.number
            && self.file_size == o.file_size
            && self.smallest == o.smallest
            && self.largest == o.largest
    }
}

impl Eq for FileMetaData {}

#[derive(Debug, Default)]
pub struct Version {
    pub files: [Vec<Arc<FileMetaData>>; NUM_LEVELS],
    /// Level most in need of a size compaction and its score (>= 1 means needed).
    pub compaction_level: usize,
    pub compaction_score: f64,
    /// A file whose allowed seeks ran out: (level, file).
    pub file_to_compact: Mutex<Option<(usize, Arc<FileMetaData>)>>,
    /// Each level's files as one shared list for its iterators, made on first use (`files`
    /// never changes once a version is built): an iterator then takes one reference instead
    /// of copying the list (db_bench's seekrandom opens an iterator per seek, and copied each
    /// deeper level's list twice, a reference count per file each time).
    level_lists: [OnceLock<Arc<[Arc<FileMetaData>]>>; NUM_LEVELS],
}

/// Bytes allowed in a level before it needs compaction: 10 MB for levels 0 and 1, then ×10.
pub fn max_bytes_for_level(level: usize) -> f64 {
    let mut result = 10.0 * 1_048_576.0;
    let mut l = level;
    while l > 1 {
        result *= 10.0;
        l -= 1;
    }
    result
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
        Ok(Version {
            files,
            ..Default::default()
        })
    }

    /// Computes which level most needs a size compaction (LevelDB `VersionSet::Finalize`).
    pub fn finalize(&mut self, l0_compaction_trigger: usize) {
        let mut best = (0usize, -1.0f64);
        for level in 0..NUM_LEVELS - 1 {
            let score = if level == 0 {
                self.files[0].len() as f64 / l0_compaction_trigger.max(1) as f64
            } else {
                self.level_bytes(level) as f64 / max_bytes_for_level(level)
            };
            if score > best.1 {
                best = (level, score);
            }
        }
        self.compaction_level = best.0;
        self.compaction_score = best.1;
    }

    /// Whether a size- or seek-triggered compaction is due.
    pub fn needs_compaction(&self, size: bool, seek: bool) -> bool {
        (size && self.compaction_score >= 1.0)
            || (seek && self.file_to_compact.lock().unwrap().is_some())
    }

    /// Files of `level` whose user-key range overlaps `[begin, end]` (None = unbounded).
    /// In level 0 the range grows to cover every file it touches, transitively.
    pub fn overlapping_inputs(
        &self,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Vec<Arc<FileMetaData>> {
        let mut begin = begin.map(|b| b.to_vec());
        let mut end = end.map(|e| e.to_vec());
        let mut out: Vec<Arc<FileMetaData>> = Vec::new();
        let files = &self.files[level];
        let mut i = 0;
        while i < files.len() {
            let f = &files[i];
            i += 1;
            let fs = extract_user_key(&f.smallest);
            let fl = extract_user_key(&f.largest);
            if begin.as_deref().is_some_and(|b| fl < b) || end.as_deref().is_some_and(|e| fs > e) {
                continue;
            }
            out.push(f.clone());
            if level == 0 {
                // Restart if this file widens the range.
                if begin.as_deref().is_some_and(|b| fs < b) {
                    begin = Some(fs.to_vec());
                    out.clear();
                    i = 0;
                } else if end.as_deref().is_some_and(|e| fl > e) {
                    end = Some(fl.to_vec());
                    out.clear();
                    i = 0;
                }
            }
        }
        out
    }

    /// Whether any file of `level` overlaps the user-key range.
    pub fn overlap_in_level(&self, level: usize, smallest: &[u8], largest: &[u8]) -> bool {
        !self
            .overlapping_inputs(level, Some(smallest), Some(largest))
            .is_empty()
    }

    /// The level a flushed memtable covering `[smallest, largest]` should go to: pushed below
    /// level 0 while it overlaps nothing and would not overlap too much of the grandparents,
    /// and never into the range a running compaction is writing (`busy`).
    ///
    /// `busy` matters because a flush can run in the middle of a compaction (the compaction
    /// yields to it) while this Version still holds the compaction's inputs and none of its
    /// outputs. The inputs of a manual compaction can leave a gap (two level-1 tables with
    /// nothing at levels 1 and 2 between them) that the memtable fits in, and the outputs,
    /// which span it, would then overlap the flushed table in their level. LevelDB's
    /// `PickLevelForMemTableOutput` has no such check.
    pub fn pick_level_for_memtable_output(
        &self,
        smallest: &[u8],
        largest: &[u8],
        max_file_size: u64,
        busy: Option<&BusyRange>,
    ) -> usize {
        use crate::options::config::MAX_MEM_COMPACT_LEVEL;
        let mut level = 0;
        if !self.overlap_in_level(0, smallest, largest) {
            while level < MAX_MEM_COMPACT_LEVEL {
                if self.overlap_in_level(level + 1, smallest, largest)
                    || busy.is_some_and(|b| b.blocks(level + 1, smallest, largest))
                {
                    break;
                }
                if level + 2 < NUM_LEVELS {
                    let overlap: u64 = self
                        .overlapping_inputs(level + 2, Some(smallest), Some(largest))
                        .iter()
                        .map(|f| f.file_size)
                        .sum();
                    if overlap > 10 * max_file_size {
                        break;
                    }
                }
                level += 1;
            }
        }
        level
    }

    /// Charges a seek to `file`; returns true if the file is now due for compaction.
    fn charge_seek(&self, level: usize, file: &Arc<FileMetaData>) -> bool {
        if file.allowed_seeks.fetch_sub(1, AtomicOrdering::Relaxed) <= 1 {
            let mut slot = self.file_to_compact.lock().unwrap();
            if slot.is_none() {
                *slot = Some((level, file.clone()));
                return true;
            }
        }
        false
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

    /// Looks a key up in the tables, newest data first; a value found is copied into `value`
    /// (replacing its contents), and no other entry is copied. Returns what was found and
    /// whether a compaction is due for seeks.
    pub fn get(
        &self,
        options: &ReadOptions,
        key: &LookupKey,
        tables: &TableCache,
        value: &mut Vec<u8>,
    ) -> Result<(Lookup, bool)> {
        let user_key = key.user_key();
        let ikey = key.internal_key();
        let mut check = |f: &FileMetaData| -> Result<Option<Lookup>> {
            let saver = |found_key: &[u8], found: &[u8]| -> Result<Option<Lookup>> {
                let parsed = parse_internal_key(found_key).ok_or_else(|| {
                    Error::corruption("corrupted internal key in table")
                        .in_file(format!("{:06}.ldb", f.number))
                })?;
                if parsed.user_key != user_key {
                    return Ok(None);
                }
                Ok(Some(match parsed.value_type {
                    ValueType::Value => {
                        value.clear();
                        value.extend_from_slice(found);
                        Lookup::Found
                    }
                    ValueType::Deletion => Lookup::Deleted,
                }))
            };
            Ok(tables
                .get_with(options, f.number, f.file_size, ikey, saver)?
                .transpose()?
                .flatten())
        };
        // Candidate files, newest data first: overlapping level-0 files, then at most one
        // file per deeper level.
        let level0 = self.files[0]
            .iter()
            .filter(|f| {
                extract_user_key(&f.smallest) <= user_key
                    && user_key <= extract_user_key(&f.largest)
            })
            .map(|f| (0, f));
        let deeper = self
            .files
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(level, files)| {
                files
                    .get(find_file(files, ikey))
                    .filter(|f| extract_user_key(&f.smallest) <= user_key)
                    .map(|f| (level, f))
            });
        let candidates = level0.chain(deeper);
        // The first file read, if a second one had to be read too, is charged a seek.
        let mut last_read: Option<(usize, &Arc<FileMetaData>)> = None;
        let mut seek_file: Option<(usize, &Arc<FileMetaData>)> = None;
        let mut result = Lookup::Missing;
        for (level, f) in candidates {
            if seek_file.is_none() {
                seek_file = last_read;
            }
            last_read = Some((level, f));
            if let Some(r) = check(f)? {
                result = r;
                break;
            }
        }
        let due = seek_file.is_some_and(|(l, f)| self.charge_seek(l, f));
        Ok((result, due))
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
        for (level_files, list) in self.files.iter().zip(&self.level_lists).skip(1) {
            if !level_files.is_empty() {
                let list = list.get_or_init(|| level_files.as_slice().into());
                out.push(Box::new(level_iterator(
                    list.clone(),
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
    files: Arc<[Arc<FileMetaData>]>,
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
    files: Arc<[Arc<FileMetaData>]>,
    tables: Arc<TableCache>,
    options: ReadOptions,
}

impl InnerOpener for TableOpener {
    type Inner = TableIterator;
    fn open(&mut self, index_value: &[u8], _: Option<TableIterator>) -> Result<TableIterator> {
        let mut b = [0u8; 8];
        b.copy_from_slice(&index_value[..8]);
        let i = u64::from_le_bytes(b) as usize;
        let f = &self.files[i];
        let table = self.tables.table(f.number, f.file_size)?;
        // Readahead continues into the next file of the level (opened only when it gets there).
        let successor = match self.files.get(i + 1) {
            Some(next) if self.options.readahead || self.options.auto_readahead => {
                let (tables, number, size) = (self.tables.clone(), next.number, next.file_size);
                Some(Box::new(move || tables.table(number, size).ok()) as Successor)
            }
            _ => None,
        };
        Ok(table.iter_then(self.options.clone(), successor))
    }
}

/// All tables of one level >= 1, as one iterator.
pub type LevelIterator = TwoLevelIterator<LevelFileIter, TableOpener>;

/// An iterator over the tables of one level >= 1.
pub fn level_iterator(
    files: Arc<[Arc<FileMetaData>]>,
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
