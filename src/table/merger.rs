//! Merges several sorted internal iterators into one sorted view (LevelDB's table/merger.cc),
//! in both directions. Duplicate keys across children are all returned (the DB iterator
//! collapses versions). Any child error stops the merged iterator: a damaged table never makes
//! a scan silently shorter.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::compare_internal_keys;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    current: Option<usize>,
    direction: Direction,
    error: Option<Error>,
}

impl MergingIterator {
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        MergingIterator {
            children,
            current: None,
            direction: Direction::Forward,
            error: None,
        }
    }

    fn note_errors(&mut self) {
        if self.error.is_some() {
            return;
        }
        for c in &self.children {
            if !c.valid() {
                if let Err(e) = c.status() {
                    self.error = Some(e);
                    return;
                }
            }
        }
    }

    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if c.valid() {
                match best {
                    Some(b)
                        if compare_internal_keys(c.key(), self.children[b].key())
                            != Ordering::Less => {}
                    _ => best = Some(i),
                }
            }
        }
        self.current = best;
        self.note_errors();
    }

    fn find_largest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate().rev() {
            if c.valid() {
                match best {
                    Some(b)
                        if compare_internal_keys(c.key(), self.children[b].key())
                            != Ordering::Greater => {}
                    _ => best = Some(i),
                }
            }
        }
        self.current = best;
        self.note_errors();
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.error.is_none() && self.current.is_some()
    }

    fn seek_to_first(&mut self) {
        self.error = None;
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.find_smallest();
        self.direction = Direction::Forward;
    }

    fn seek_to_last(&mut self) {
        self.error = None;
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.find_largest();
        self.direction = Direction::Reverse;
    }

    fn seek(&mut self, target: &[u8]) {
        self.error = None;
        for c in &mut self.children {
            c.seek(target);
        }
        self.find_smallest();
        self.direction = Direction::Forward;
    }

    fn next(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Forward {
            // Every other child is positioned before key(): move each to the first entry
            // after it.
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid() && compare_internal_keys(&key, c.key()) == Ordering::Equal {
                        c.next();
                    }
                }
            }
            self.direction = Direction::Forward;
        }
        self.children[cur].next();
        self.find_smallest();
    }

    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        if self.direction != Direction::Reverse {
            let key = self.children[cur].key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&key);
                    if c.valid() {
                        c.prev();
                    } else {
                        c.seek_to_last();
                    }
                }
            }
            self.direction = Direction::Reverse;
        }
        self.children[cur].prev();
        self.find_largest();
    }

    fn key(&self) -> &[u8] {
        match self.current {
            Some(i) => self.children[i].key(),
            None => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match self.current {
            Some(i) => self.children[i].value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for c in &self.children {
            c.status()?;
        }
        Ok(())
    }
}
