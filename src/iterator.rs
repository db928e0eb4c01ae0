//! The internal iterator contract shared by blocks, tables, the memtable, merged views and
//! level concatenations (LevelDB's `Iterator`): positioned or not, movable both ways, with
//! errors reported through `status()` rather than by panicking.
//!
//! Keys are internal keys except where a type says otherwise. `key()`/`value()` may only be
//! called while `valid()`; the slices they return stay good until the iterator moves.

use crate::error::{Error, Result};

pub trait InternalIterator: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    /// Positions at the first entry with key >= `target`.
    fn seek(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error met, if any. An iterator that met an error is not valid.
    fn status(&self) -> Result<()>;
    /// The stored data block the current entry is the only entry of, when the entry comes
    /// straight from a table: a compaction writes such a block (a large value) as stored
    /// instead of compressing it again (`TableBuilder::add_copied`). `None` by default.
    fn sole_entry_block(&self) -> Option<SoleEntryBlock> {
        None
    }
    /// False only if the source holds no entry at all for `user_key` (a filter's answer: a
    /// memtable's). A merging iterator's seek for a key it then finds elsewhere leaves such a
    /// child unpositioned until it moves on (`MergingIterator::seek`). True by default.
    fn may_hold(&self, _user_key: &[u8]) -> bool {
        true
    }
}

pub use crate::table::table::SoleEntryBlock;

/// An iterator over nothing, possibly carrying an error.
pub struct EmptyIterator {
    error: Option<Error>,
}

impl EmptyIterator {
    pub fn new() -> Self {
        EmptyIterator { error: None }
    }

    pub fn with_error(e: Error) -> Self {
        EmptyIterator { error: Some(e) }
    }
}

impl Default for EmptyIterator {
    fn default() -> Self {
        Self::new()
    }
}

impl InternalIterator for EmptyIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
