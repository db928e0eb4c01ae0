//! The user-facing iterator (LevelDB db/db_iter.cc): turns the merged stream of internal
//! entries (every version of every key, newest first per key) into user keys as of one
//! sequence number, hiding deleted and overwritten versions, in both directions.
//!
//! Forward, the merged iterator sits on the entry being returned. Reverse, it sits just before
//! all entries of the current key, and the key and value are copies in `saved_key` /
//! `saved_value`. Damage anywhere below (a bad block, a malformed internal key) stops the
//! iterator with a `Corruption` status; it never skips data silently.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::version::Version;

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{
    append_internal_key, compare_bytes, extract_user_key, parse_internal_key, SequenceNumber,
    ValueType, VALUE_TYPE_FOR_SEEK,
};
use crate::util::inline_bytes::InlineBytes;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

pub struct DbIter {
    iter: Box<dyn InternalIterator>,
    /// Keeps the tables this iterator reads from out of obsolete-file deletion.
    _version: Arc<Version>,
    sequence: SequenceNumber,
    direction: Direction,
    valid: bool,
    /// Inline up to 32 bytes: copied on every forward step (the key whose older entries to
    /// skip), where a `Vec` copy was a call to `memmove` per entry.
    saved_key: InlineBytes<32>,
    saved_value: Vec<u8>,
    error: Option<Error>,
}

impl DbIter {
    pub fn new(
        iter: Box<dyn InternalIterator>,
        sequence: SequenceNumber,
        version: Arc<Version>,
    ) -> Self {
        DbIter {
            iter,
            _version: version,
            sequence,
            direction: Direction::Forward,
            valid: false,
            saved_key: InlineBytes::EMPTY,
            saved_value: Vec::new(),
            error: None,
        }
    }

    pub fn valid(&self) -> bool {
        self.valid && self.error.is_none()
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.direction {
            Direction::Forward => extract_user_key(self.iter.key()),
            Direction::Reverse => self.saved_key.get(),
        }
    }

    pub fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.direction {
            Direction::Forward => self.iter.value(),
            Direction::Reverse => &self.saved_value,
        }
    }

    pub fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => self.iter.status(),
        }
    }

    fn fail(&mut self, e: Error) {
        if self.error.is_none() {
            self.error = Some(e);
        }
        self.valid = false;
        self.saved_key.clear();
        self.saved_value.clear();
    }

    /// After the merged iterator stopped being valid: was it the end, or an error?
    fn check_end(&mut self) {
        if let Err(e) = self.iter.status() {
            self.fail(e);
        }
    }

    /// The merged iterator's current key does not parse as an internal key.
    fn fail_bad_key(&mut self) {
        self.fail(Error::corruption("corrupted internal key in table or log"));
    }

    fn find_next_user_entry(&mut self, mut skipping: bool) {
        // `saved_key` holds the user key to skip past when `skipping`. One key() per step:
        // every call walks the merged and two-level iterators down.
        loop {
            let Some(parsed) = parse_internal_key(self.iter.key()) else {
                self.fail_bad_key();
                return;
            };
            if parsed.sequence <= self.sequence {
                match parsed.value_type {
                    ValueType::Deletion => {
                        self.saved_key.set(parsed.user_key);
                        skipping = true;
                    }
                    ValueType::Value => {
                        let hidden = skipping
                            && compare_bytes(parsed.user_key, self.saved_key.get())
                                != Ordering::Greater;
                        if !hidden {
                            self.valid = true;
                            self.saved_key.clear();
                            return;
                        }
                    }
                }
            }
            self.iter.next();
            if !self.iter.valid() {
                break;
            }
        }
        self.saved_key.clear();
        self.valid = false;
        self.check_end();
    }

    fn find_prev_user_entry(&mut self) {
        let mut value_type = ValueType::Deletion;
        while self.iter.valid() {
            // One key() per step, as forward.
            let Some(parsed) = parse_internal_key(self.iter.key()) else {
                self.fail_bad_key();
                return;
            };
            if parsed.sequence <= self.sequence {
                if value_type != ValueType::Deletion
                    && compare_bytes(parsed.user_key, self.saved_key.get()) == Ordering::Less
                {
                    // A live value of the key after this one is complete.
                    break;
                }
                value_type = parsed.value_type;
                self.saved_key.clear();
                if value_type == ValueType::Deletion {
                    self.saved_value.clear();
                } else {
                    let raw = self.iter.value();
                    if self.saved_value.capacity() > raw.len() + (1 << 20) {
                        self.saved_value = Vec::new();
                    }
                    self.saved_value.clear();
                    self.saved_value.extend_from_slice(raw);
                    self.saved_key.set(parsed.user_key);
                }
            }
            self.iter.prev();
        }
        if !self.iter.valid() {
            self.check_end();
            if self.error.is_some() {
                return;
            }
        }
        if value_type == ValueType::Deletion {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
        }
    }

    pub fn next(&mut self) {
        debug_assert!(self.valid());
        if self.direction == Direction::Reverse {
            self.direction = Direction::Forward;
            // The merged iterator is just before the current key's entries: step into them;
            // saved_key already names the key to skip.
            if !self.iter.valid() {
                self.iter.seek_to_first();
            } else {
                self.iter.next();
            }
            if !self.iter.valid() {
                self.valid = false;
                self.saved_key.clear();
                self.check_end();
                return;
            }
        } else {
            self.saved_key.set(extract_user_key(self.iter.key()));
            self.iter.next();
            if !self.iter.valid() {
                self.valid = false;
                self.saved_key.clear();
                self.check_end();
                return;
            }
        }
        self.find_next_user_entry(true);
    }

    pub fn prev(&mut self) {
        debug_assert!(self.valid());
        if self.direction == Direction::Forward {
            // Move the merged iterator before every entry of the current key.
            self.saved_key.set(extract_user_key(self.iter.key()));
            loop {
                self.iter.prev();
                if !self.iter.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    self.saved_value.clear();
                    self.check_end();
                    return;
                }
                if compare_bytes(extract_user_key(self.iter.key()), self.saved_key.get())
                    == Ordering::Less
                {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }

    /// Positions at the first user key >= `target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.error = None;
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.saved_key.clear();
        let mut ikey = Vec::with_capacity(target.len() + 8);
        append_internal_key(&mut ikey, target, self.sequence, VALUE_TYPE_FOR_SEEK);
        self.iter.seek(&ikey);
        if self.iter.valid() {
            self.find_next_user_entry(false);
        } else {
            self.valid = false;
            self.check_end();
        }
    }

    pub fn seek_to_first(&mut self) {
        self.error = None;
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.saved_key.clear();
        self.iter.seek_to_first();
        if self.iter.valid() {
            self.find_next_user_entry(false);
        } else {
            self.valid = false;
            self.check_end();
        }
    }

    pub fn seek_to_last(&mut self) {
        self.error = None;
        self.direction = Direction::Reverse;
        self.saved_value.clear();
        self.saved_key.clear();
        self.iter.seek_to_last();
        self.find_prev_user_entry();
    }
}
