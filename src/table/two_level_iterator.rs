//! An iterator over an index whose values name inner iterators (LevelDB's
//! table/two_level_iterator.cc): a table's index block over its data blocks, or a level's
//! file list over its tables.
//!
//! Unlike LevelDB, an inner iterator that cannot be opened (a damaged block, a missing table)
//! stops the iteration with that error instead of being skipped: a scan never silently returns
//! less than the database holds.

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;

/// Opens the inner iterator for an index value.
pub trait InnerOpener: Send {
    type Inner: InternalIterator;
    /// Opens the inner iterator `index_value` names; `recycled` is the one it replaces (done
    /// with), whose buffers it may keep.
    fn open(&mut self, index_value: &[u8], recycled: Option<Self::Inner>) -> Result<Self::Inner>;
}

pub struct TwoLevelIterator<I: InternalIterator, O: InnerOpener> {
    index: I,
    opener: O,
    inner: Option<O::Inner>,
    /// The index value `inner` was opened from (to avoid reopening it).
    inner_handle: Vec<u8>,
    error: Option<Error>,
}

impl<I: InternalIterator, O: InnerOpener> TwoLevelIterator<I, O> {
    pub fn new(index: I, opener: O) -> Self {
        TwoLevelIterator {
            index,
            opener,
            inner: None,
            inner_handle: Vec::new(),
            error: None,
        }
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.inner = None;
    }

    /// Opens the inner iterator for the index's current entry (if not already open).
    fn init_inner(&mut self) {
        if !self.index.valid() {
            self.inner = None;
            return;
        }
        let handle = self.index.value();
        if self.inner.is_some() && handle == &self.inner_handle[..] {
            return;
        }
        match self.opener.open(handle, self.inner.take()) {
            Ok(it) => {
                self.inner_handle.clear();
                self.inner_handle.extend_from_slice(self.index.value());
                self.inner = Some(it);
            }
            Err(e) => self.fail(e),
        }
    }

    fn inner_valid(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.valid())
    }

    /// Collects an inner iterator's error (damage inside a block) before leaving it.
    fn check_inner(&mut self) -> bool {
        if let Some(inner) = &self.inner {
            if let Err(e) = inner.status() {
                self.fail(e);
                return false;
            }
        }
        true
    }

    fn skip_empty_forward(&mut self) {
        while !self.inner_valid() {
            if self.error.is_some() || !self.check_inner() {
                return;
            }
            if !self.index.valid() {
                self.inner = None;
                return;
            }
            self.index.next();
            self.init_inner();
            if let Some(inner) = &mut self.inner {
                inner.seek_to_first();
            }
        }
    }

    fn skip_empty_backward(&mut self) {
        while !self.inner_valid() {
            if self.error.is_some() || !self.check_inner() {
                return;
            }
            if !self.index.valid() {
                self.inner = None;
                return;
            }
            self.index.prev();
            self.init_inner();
            if let Some(inner) = &mut self.inner {
                inner.seek_to_last();
            }
        }
    }

    fn index_failed(&mut self) -> bool {
        if let Err(e) = self.index.status() {
            self.fail(e);
            return true;
        }
        false
    }
}

impl<I: InternalIterator, O: InnerOpener> InternalIterator for TwoLevelIterator<I, O> {
    fn valid(&self) -> bool {
        self.error.is_none() && self.inner_valid()
    }

    fn seek_to_first(&mut self) {
        self.error = None;
        self.index.seek_to_first();
        if self.index_failed() {
            return;
        }
        self.init_inner();
        if let Some(inner) = &mut self.inner {
            inner.seek_to_first();
        }
        self.skip_empty_forward();
        self.index_failed();
    }

    fn seek_to_last(&mut self) {
        self.error = None;
        self.index.seek_to_last();
        if self.index_failed() {
            return;
        }
        self.init_inner();
        if let Some(inner) = &mut self.inner {
            inner.seek_to_last();
        }
        self.skip_empty_backward();
        self.index_failed();
    }

    fn seek(&mut self, target: &[u8]) {
        self.error = None;
        self.index.seek(target);
        if self.index_failed() {
            return;
        }
        self.init_inner();
        if let Some(inner) = &mut self.inner {
            inner.seek(target);
        }
        self.skip_empty_forward();
        self.index_failed();
    }

    fn next(&mut self) {
        if let Some(inner) = &mut self.inner {
            inner.next();
        }
        self.skip_empty_forward();
        self.index_failed();
    }

    fn prev(&mut self) {
        if let Some(inner) = &mut self.inner {
            inner.prev();
        }
        self.skip_empty_backward();
        self.index_failed();
    }

    fn key(&self) -> &[u8] {
        self.inner.as_ref().map_or(&[], |i| i.key())
    }

    fn value(&self) -> &[u8] {
        self.inner.as_ref().map_or(&[], |i| i.value())
    }

    fn sole_entry_block(&self) -> Option<crate::iterator::SoleEntryBlock> {
        match &self.inner {
            Some(inner) if self.error.is_none() => inner.sole_entry_block(),
            _ => None,
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.index.status()?;
        if let Some(inner) = &self.inner {
            inner.status()?;
        }
        Ok(())
    }
}
