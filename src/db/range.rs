//! Bounded iteration: a `DbIter` restricted to a key range (`gt`/`gte`, `lt`/`lte`), walked
//! forwards or backwards, stopping after `limit` entries. This is the shape of iterator that
//! the `level` ecosystem (and the JS package) asks for.
//!
//! Invariants: an entry is yielded only if it lies inside both bounds; entries come in
//! strictly increasing (or, reversed, decreasing) key order; `seek` repositions without
//! resetting the count against `limit`; a damaged database ends iteration with the error, never
//! with a silent early end.

use std::cmp::Ordering;

use super::db_iter::DbIter;
use crate::error::Result;

/// One end of a range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub key: Vec<u8>,
    pub inclusive: bool,
}

/// What a bounded iterator walks over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyRange {
    /// Smallest key (`gte` when inclusive, `gt` otherwise); `None` is unbounded.
    pub lower: Option<Bound>,
    /// Largest key (`lte` when inclusive, `lt` otherwise); `None` is unbounded.
    pub upper: Option<Bound>,
    /// Walk from the upper end down.
    pub reverse: bool,
    /// Stop after this many entries; `None` is unlimited.
    pub limit: Option<u64>,
}

impl KeyRange {
    fn above_lower(&self, key: &[u8]) -> bool {
        match &self.lower {
            None => true,
            Some(b) => match key.cmp(&b.key[..]) {
                Ordering::Greater => true,
                Ordering::Equal => b.inclusive,
                Ordering::Less => false,
            },
        }
    }

    fn below_upper(&self, key: &[u8]) -> bool {
        match &self.upper {
            None => true,
            Some(b) => match key.cmp(&b.key[..]) {
                Ordering::Less => true,
                Ordering::Equal => b.inclusive,
                Ordering::Greater => false,
            },
        }
    }

    /// Whether `key` lies inside both bounds.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.above_lower(key) && self.below_upper(key)
    }
}

/// A `DbIter` walked over a `KeyRange`.
pub struct RangeIter {
    iter: DbIter,
    range: KeyRange,
    /// The iterator has been positioned (lazily, on the first `next_entry`).
    positioned: bool,
    /// The entry under the iterator was already returned; step before reading.
    step_pending: bool,
    yielded: u64,
}

impl RangeIter {
    pub fn new(iter: DbIter, range: KeyRange) -> Self {
        RangeIter {
            iter,
            range,
            positioned: false,
            step_pending: false,
            yielded: 0,
        }
    }

    pub fn range(&self) -> &KeyRange {
        &self.range
    }

    /// Places the iterator on the first entry at or after `target` in the walking direction
    /// (forward: smallest key ≥ target; reverse: largest key ≤ target), clamped to the range.
    pub fn seek(&mut self, target: &[u8]) {
        self.positioned = true;
        self.step_pending = false;
        if self.range.reverse {
            let clamp = match &self.range.upper {
                Some(b) if target > &b.key[..] => Some(b.clone()),
                _ => None,
            };
            match clamp {
                Some(b) => self.seek_at_or_before(&b.key, b.inclusive),
                None => self.seek_at_or_before(target, true),
            }
        } else {
            let clamp = match &self.range.lower {
                Some(b) if target < &b.key[..] => Some(b.clone()),
                _ => None,
            };
            match clamp {
                Some(b) => self.seek_at_or_after(&b.key, b.inclusive),
                None => self.seek_at_or_after(target, true),
            }
        }
    }

    fn seek_at_or_after(&mut self, key: &[u8], inclusive: bool) {
        self.iter.seek(key);
        if !inclusive && self.iter.valid() && self.iter.key() == key {
            self.iter.next();
        }
    }

    fn seek_at_or_before(&mut self, key: &[u8], inclusive: bool) {
        self.iter.seek(key);
        if !self.iter.valid() {
            if self.iter.status().is_err() {
                return;
            }
            self.iter.seek_to_last();
        } else {
            let k = self.iter.key();
            if k > key || (!inclusive && k == key) {
                self.iter.prev();
            }
        }
    }

    fn position(&mut self) {
        self.positioned = true;
        if self.range.reverse {
            match self.range.upper.clone() {
                Some(b) => self.seek_at_or_before(&b.key, b.inclusive),
                None => self.iter.seek_to_last(),
            }
        } else {
            match self.range.lower.clone() {
                Some(b) => self.seek_at_or_after(&b.key, b.inclusive),
                None => self.iter.seek_to_first(),
            }
        }
    }

    /// The next entry of the walk, `Ok(None)` at its end, or the error that stopped it.
    pub fn next_entry(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if !self.positioned {
            self.position();
        } else if self.step_pending {
            if self.range.reverse {
                self.iter.prev();
            } else {
                self.iter.next();
            }
        }
        self.step_pending = false;
        if let Some(limit) = self.range.limit {
            if self.yielded >= limit {
                return Ok(None);
            }
        }
        if !self.iter.valid() {
            self.iter.status()?;
            return Ok(None);
        }
        let key = self.iter.key();
        let inside = if self.range.reverse {
            self.range.above_lower(key)
        } else {
            self.range.below_upper(key)
        };
        if !inside {
            return Ok(None);
        }
        self.step_pending = true;
        self.yielded += 1;
        Ok(Some((self.iter.key(), self.iter.value())))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::options::{Options, ReadOptions, WriteOptions};
    use crate::storage::MemStorage;
    use crate::Db;

    fn db_with(keys: &[&str]) -> Db {
        let db = Db::open(
            Arc::new(MemStorage::new()),
            "db",
            Options::google().create(),
        )
        .unwrap();
        for k in keys {
            db.put(
                &WriteOptions::default(),
                k.as_bytes(),
                k.to_uppercase().as_bytes(),
            )
            .unwrap();
        }
        db
    }

    fn bound(key: &str, inclusive: bool) -> Option<Bound> {
        Some(Bound {
            key: key.as_bytes().to_vec(),
            inclusive,
        })
    }

    fn walk(db: &Db, range: KeyRange) -> Vec<String> {
        let mut it = RangeIter::new(db.iter(&ReadOptions::default()), range);
        let mut out = Vec::new();
        while let Some((k, v)) = it.next_entry().unwrap() {
            assert_eq!(v, k.to_ascii_uppercase());
            out.push(String::from_utf8(k.to_vec()).unwrap());
        }
        out
    }

    #[test]
    fn bounds_both_directions() {
        let db = db_with(&["a", "b", "c", "d", "e"]);
        let r = |lower, upper, reverse, limit| KeyRange {
            lower,
            upper,
            reverse,
            limit,
        };
        assert_eq!(
            walk(&db, r(None, None, false, None)),
            ["a", "b", "c", "d", "e"]
        );
        assert_eq!(
            walk(&db, r(None, None, true, None)),
            ["e", "d", "c", "b", "a"]
        );
        assert_eq!(
            walk(&db, r(bound("b", true), bound("d", false), false, None)),
            ["b", "c"]
        );
        assert_eq!(
            walk(&db, r(bound("b", false), bound("d", true), false, None)),
            ["c", "d"]
        );
        assert_eq!(
            walk(&db, r(bound("b", true), bound("d", false), true, None)),
            ["c", "b"]
        );
        assert_eq!(
            walk(&db, r(bound("b", false), bound("d", true), true, None)),
            ["d", "c"]
        );
        // Bounds that fall between keys and beyond the ends.
        assert_eq!(
            walk(&db, r(bound("bb", true), bound("dd", true), true, None)),
            ["d", "c"]
        );
        assert_eq!(
            walk(&db, r(bound("f", true), None, false, None)),
            Vec::<String>::new()
        );
        assert_eq!(
            walk(&db, r(None, bound("0", true), true, None)),
            Vec::<String>::new()
        );
        assert_eq!(
            walk(&db, r(None, bound("z", false), true, Some(2))),
            ["e", "d"]
        );
        assert_eq!(
            walk(&db, r(None, None, false, Some(0))),
            Vec::<String>::new()
        );
        // An empty range (lower above upper).
        assert_eq!(
            walk(&db, r(bound("d", true), bound("b", true), false, None)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn seek_is_clamped_and_directional() {
        let db = db_with(&["a", "c", "e", "g"]);
        let mut it = RangeIter::new(
            db.iter(&ReadOptions::default()),
            KeyRange {
                lower: bound("b", true),
                upper: bound("f", true),
                reverse: false,
                limit: None,
            },
        );
        it.seek(b"d");
        assert_eq!(it.next_entry().unwrap().unwrap().0, b"e");
        assert!(it.next_entry().unwrap().is_none());
        it.seek(b"a");
        assert_eq!(it.next_entry().unwrap().unwrap().0, b"c");

        let mut rev = RangeIter::new(
            db.iter(&ReadOptions::default()),
            KeyRange {
                lower: None,
                upper: bound("f", false),
                reverse: true,
                limit: None,
            },
        );
        rev.seek(b"d");
        assert_eq!(rev.next_entry().unwrap().unwrap().0, b"c");
        rev.seek(b"z");
        assert_eq!(rev.next_entry().unwrap().unwrap().0, b"e");
        rev.seek(b"0");
        assert!(rev.next_entry().unwrap().is_none());
    }
}
