//! Merges several sorted internal iterators into one sorted view (LevelDB's table/merger.cc),
//! in both directions. Duplicate keys across children are all returned (the DB iterator
//! collapses versions). Any child error stops the merged iterator: a damaged table never makes
//! a scan silently shorter.
//!
//! The valid children sit in a binary heap ordered by their keys in the direction of travel
//! (RocksDB's merger; LevelDB compares against every child on every step): a step moves only
//! the current child, the heap's root, and sifts it down, so a step costs O(log n) comparisons
//! when the children interleave (a random fill's level-0 files: readseq over 7 of them plus
//! two levels) and one when the root keeps the lead (a child holding a long run: the root's
//! runner-up is remembered while heap positions 1 and 2 stay put). The heap is rebuilt on seeks and
//! direction changes. Equal keys come in child order forward, reverse child order backward.
//! The heap compares copies of its children's keys (`keys`), taken as each child moves: a
//! child's own key lies behind its level and table iterators. Each copy carries its user
//! key's first 16 bytes as two big-endian words (`user_key_prefix`); a comparison whose
//! prefixes differ ends there, with the order the full comparison would give.
//!
//! A seek skips the children that rule the target's user key out (`may_hold`: a memtable's
//! filter) when another child holds that user key: the merged position is then an entry of
//! it, and the skipped children, holding no entry of it, start past it. They stay pending
//! (outside the heap, their status not consulted) until the iterator moves, and are sought
//! then (db_bench's seekrandom searched a cold memtable skiplist for every key it found in a
//! table). If no child holds the user key, the skipped ones are sought at once.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{compare_internal_keys, extract_user_key};
use crate::util::inline_bytes::InlineBytes;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

pub struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// A copy of each child's current key, for every child in the heap: the heap's
    /// comparisons and `key` read these (a step compares the moved child with one or more
    /// others, each of whose keys was otherwise two virtual calls deep behind its table and
    /// level iterators: 3B's sequential read after a random fill spent a third of its time in
    /// the merge). Refreshed wherever a child moves (`rebuild`, `current_moved`).
    keys: Vec<KeyCopy>,
    /// Indices of the valid children, a binary heap whose root comes first in the direction
    /// of travel (`comes_first`); the root is the current child.
    heap: Vec<usize>,
    /// `heap[0]`, kept beside it: `key` and `value` are called several times per step.
    current: Option<usize>,
    /// Which of heap positions 1 and 2 comes first, while both are unchanged: a step that
    /// leaves the root in place (one child holding a long run) then costs one comparison.
    root_runner_up: Option<usize>,
    direction: Direction,
    error: Option<Error>,
    /// Children the last seek left unpositioned (see the module comment), to seek to
    /// `pending_target` before the iterator moves.
    pending: Vec<usize>,
    pending_target: Vec<u8>,
}

/// Bytes of a key held inline by a `KeyCopy` (a db_bench key is 24 bytes internal, a Bedrock
/// chunk record's 17 to 22).
const INLINE_KEY: usize = 40;

/// A copy of one child's key: inline when short, so that taking one allocates nothing (db_bench's
/// seekrandom opens an iterator per seek, and a `Vec` per child then cost an allocation each)
/// and the heap's comparisons read keys laid side by side.
#[derive(Clone)]
struct KeyCopy {
    /// The user key's first 16 bytes, big-endian, zero-padded (`user_key_prefix`): most
    /// comparisons end here, in one integer comparison (see `comes_first`).
    /// Two words, not one `u128`: each is stored and loaded whole (a 16-byte load of a key
    /// just stored as two 8-byte halves waits for the stores, every step).
    prefix: (u64, u64),
    key: InlineBytes<INLINE_KEY>,
}

impl KeyCopy {
    const EMPTY: KeyCopy = KeyCopy {
        prefix: (0, 0),
        key: InlineBytes::EMPTY,
    };

    #[inline(always)]
    fn set(&mut self, key: &[u8]) {
        self.prefix = user_key_prefix(key);
        self.key.set(key);
    }

    #[inline(always)]
    fn get(&self) -> &[u8] {
        self.key.get()
    }
}

/// The first 16 bytes of an internal key's user key as a big-endian integer, zero-padded.
/// Where two prefixes differ they order the user keys as `compare_internal_keys` does: at the
/// first differing byte either both keys have a byte there, or the shorter key ended (its
/// padding 0 against the other's byte, and a key ordering before any key it is a prefix of).
/// Equal prefixes decide nothing (the keys may differ later, in length or in their trailers).
#[inline(always)]
fn user_key_prefix(ikey: &[u8]) -> (u64, u64) {
    let user = extract_user_key(ikey);
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    match user.first_chunk::<16>() {
        Some(first) => (word(&first[..8]), word(&first[8..])),
        None => {
            let mut padded = [0u8; 16];
            padded[..user.len()].copy_from_slice(user);
            (word(&padded[..8]), word(&padded[8..]))
        }
    }
}

/// Whether child `a` comes before child `b` in `direction`: by key, then by child index
/// (forward: lower index first; reverse: higher index first).
#[inline(always)]
fn comes_first(keys: &[KeyCopy], direction: Direction, a: usize, b: usize) -> bool {
    let (ka, kb) = (&keys[a], &keys[b]);
    if ka.prefix != kb.prefix {
        return (ka.prefix < kb.prefix) == (direction == Direction::Forward);
    }
    let o = compare_internal_keys(ka.get(), kb.get());
    match direction {
        Direction::Forward => o == Ordering::Less || (o == Ordering::Equal && a < b),
        Direction::Reverse => o == Ordering::Greater || (o == Ordering::Equal && a > b),
    }
}

impl MergingIterator {
    pub fn new(children: Vec<Box<dyn InternalIterator>>) -> Self {
        let heap = Vec::with_capacity(children.len());
        MergingIterator {
            keys: vec![KeyCopy::EMPTY; children.len()],
            children,
            heap,
            current: None,
            root_runner_up: None,
            direction: Direction::Forward,
            error: None,
            pending: Vec::new(),
            pending_target: Vec::new(),
        }
    }

    /// Seeks the children the last seek left pending and rebuilds the heap with them. The
    /// current entry stays current: theirs come after it.
    fn resolve_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        for &i in &self.pending {
            self.children[i].seek(&self.pending_target);
        }
        self.pending.clear();
        self.rebuild(self.direction);
    }

    fn note_errors(&mut self) {
        if self.error.is_some() {
            return;
        }
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() && !self.pending.contains(&i) {
                if let Err(e) = c.status() {
                    self.error = Some(e);
                    return;
                }
            }
        }
    }

    /// Rebuilds the heap from every valid child for travel in `direction`.
    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.root_runner_up = None;
        self.heap.clear();
        let (children, pending) = (&self.children, &self.pending);
        self.heap
            .extend((0..children.len()).filter(|&i| children[i].valid() && !pending.contains(&i)));
        for &i in &self.heap {
            self.keys[i].set(self.children[i].key());
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.current = self.heap.first().copied();
        self.note_errors();
    }

    /// Restores the heap below position `i`, whose child moved on in the direction of travel
    /// (or was replaced by the heap's last child).
    ///
    /// Bottom-up (Floyd's): the hole left by the moved child goes down the path of the
    /// children that come first, one comparison per level, to a leaf, and the moved child
    /// rises back up it from there. A child that moved on among interleaved children (a
    /// random fill's level-0 files) usually belongs near the bottom, so this costs about one
    /// comparison per level where the classic sift, which also compares the moved child at
    /// every level, costs two. When the root's runner-up is known and the moved child still
    /// comes before it, nothing moves (one comparison: a child holding a long run).
    fn sift_down(&mut self, i: usize) {
        let (keys, heap, dir) = (&self.keys, &mut self.heap, self.direction);
        let n = heap.len();
        let Some(&moved) = heap.get(i) else { return };
        let mut hole = i;
        loop {
            let l = 2 * hole + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = match self.root_runner_up.filter(|_| hole == 0) {
                Some(c) => c,
                None => {
                    if r < n && comes_first(keys, dir, heap[r], heap[l]) {
                        r
                    } else {
                        l
                    }
                }
            };
            if hole == 0 {
                if !comes_first(keys, dir, heap[c], moved) {
                    // The root keeps the lead; remember its runner-up for the next step.
                    self.root_runner_up = Some(c);
                    return;
                }
                self.root_runner_up = None;
            }
            heap[hole] = heap[c];
            hole = c;
        }
        while hole > i {
            let parent = (hole - 1) / 2;
            if !comes_first(keys, dir, moved, heap[parent]) {
                break;
            }
            heap[hole] = heap[parent];
            hole = parent;
        }
        heap[hole] = moved;
    }

    /// After the current child (the root) moved one step in the direction of travel: sift
    /// it down, or drop it from the heap when it ran out (an error stops the merge).
    fn current_moved(&mut self) {
        let cur = self.heap[0];
        let c = &self.children[cur];
        if c.valid() {
            self.keys[cur].set(c.key());
            if let Some(r) = self.root_runner_up {
                // The common case of a long run: the root still comes before its runner-up.
                if !comes_first(&self.keys, self.direction, self.heap[r], cur) {
                    return;
                }
                // The runner-up takes the lead (that comparison is not repeated): the old root
                // sinks on from its place.
                self.heap.swap(0, r);
                self.root_runner_up = None;
                self.current = Some(self.heap[0]);
                self.sift_down(r);
                return;
            }
        } else {
            if let Err(e) = c.status() {
                self.error.get_or_insert(e);
            }
            self.heap.swap_remove(0);
            self.root_runner_up = None;
        }
        self.sift_down(0);
        self.current = self.heap.first().copied();
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        self.error.is_none() && self.current.is_some()
    }

    fn seek_to_first(&mut self) {
        self.error = None;
        self.pending.clear();
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_to_last(&mut self) {
        self.error = None;
        self.pending.clear();
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.rebuild(Direction::Reverse);
    }

    fn seek(&mut self, target: &[u8]) {
        self.error = None;
        self.pending.clear();
        let user_key = extract_user_key(target);
        for (i, c) in self.children.iter_mut().enumerate() {
            if c.may_hold(user_key) {
                c.seek(target);
            } else {
                self.pending.push(i);
            }
        }
        if self.pending.is_empty() {
            self.rebuild(Direction::Forward);
            return;
        }
        self.pending_target.clear();
        self.pending_target.extend_from_slice(target);
        self.rebuild(Direction::Forward);
        // Pending children start past `user_key`: they may stay so only behind an entry of it.
        if !(self.valid() && extract_user_key(self.key()) == user_key) {
            self.resolve_pending();
        }
    }

    fn next(&mut self) {
        self.resolve_pending();
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
            self.children[cur].next();
            self.rebuild(Direction::Forward);
            return;
        }
        self.children[cur].next();
        self.current_moved();
    }

    fn prev(&mut self) {
        let Some(cur) = self.current else { return };
        // After a seek (forward): every child but the current one is sought below.
        self.pending.clear();
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
            self.children[cur].prev();
            self.rebuild(Direction::Reverse);
            return;
        }
        self.children[cur].prev();
        self.current_moved();
    }

    fn key(&self) -> &[u8] {
        match self.current {
            Some(i) => self.keys[i].get(),
            None => &[],
        }
    }

    fn value(&self) -> &[u8] {
        match self.current {
            Some(i) => self.children[i].value(),
            None => &[],
        }
    }

    fn sole_entry_block(&self) -> Option<crate::iterator::SoleEntryBlock> {
        match self.current {
            Some(i) if self.error.is_none() => self.children[i].sole_entry_block(),
            _ => None,
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        for (i, c) in self.children.iter().enumerate() {
            if !self.pending.contains(&i) {
                c.status()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueType};
    use crate::util::random::Random;
    use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
    use std::sync::Arc;

    /// A sorted in-memory child; with `fail_after`, moving past that many entries forward
    /// makes it invalid with an error (a damaged block met mid-scan); with `fail_at_back`,
    /// so does stepping back onto that entry.
    struct VecIter {
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        pos: usize,
        fail_after: Option<usize>,
        fail_at_back: Option<usize>,
        error: Option<Error>,
        /// With a filter, `may_hold` answers for the user keys held (and, as a false
        /// positive, for user keys ending in `7`); seeks are counted.
        filter: bool,
        seeks: Arc<AtomicUsize>,
    }

    impl VecIter {
        fn new(entries: Vec<(Vec<u8>, Vec<u8>)>, fail_after: Option<usize>) -> Self {
            let pos = entries.len();
            VecIter {
                entries,
                pos,
                fail_after,
                fail_at_back: None,
                error: None,
                filter: false,
                seeks: Arc::new(AtomicUsize::new(0)),
            }
        }

        fn filtered(entries: Vec<(Vec<u8>, Vec<u8>)>, seeks: &Arc<AtomicUsize>) -> Self {
            VecIter {
                filter: true,
                seeks: seeks.clone(),
                ..VecIter::new(entries, None)
            }
        }
    }

    impl InternalIterator for VecIter {
        fn valid(&self) -> bool {
            self.error.is_none() && self.pos < self.entries.len()
        }
        fn seek_to_first(&mut self) {
            self.pos = 0;
        }
        fn seek_to_last(&mut self) {
            self.pos = self
                .entries
                .len()
                .checked_sub(1)
                .unwrap_or(self.entries.len());
        }
        fn seek(&mut self, target: &[u8]) {
            self.seeks.fetch_add(1, AtomicOrdering::Relaxed);
            self.pos = self
                .entries
                .partition_point(|(k, _)| compare_internal_keys(k, target) == Ordering::Less);
        }
        fn next(&mut self) {
            self.pos += 1;
            if self.fail_after == Some(self.pos) {
                self.error = Some(Error::corruption("damaged test child"));
            }
        }
        fn prev(&mut self) {
            self.pos = self.pos.checked_sub(1).unwrap_or(self.entries.len());
            if self.fail_at_back == Some(self.pos) {
                self.error = Some(Error::corruption("damaged test child"));
            }
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos].1
        }
        fn status(&self) -> Result<()> {
            self.error.clone().map_or(Ok(()), Err)
        }
        fn may_hold(&self, user_key: &[u8]) -> bool {
            !self.filter
                || user_key.last() == Some(&b'7')
                || self
                    .entries
                    .iter()
                    .any(|(k, _)| extract_user_key(k) == user_key)
        }
    }

    /// An internal key of user key `k{user:05}`; every fifth is longer than a `KeyCopy`
    /// holds inline, so children step between inline and spilled copies.
    fn ikey(user: u32, seq: u64) -> Vec<u8> {
        let mut user_key = format!("k{user:05}").into_bytes();
        if user.is_multiple_of(5) {
            user_key.extend_from_slice(&[b'~'; INLINE_KEY]);
        }
        let mut k = Vec::new();
        append_internal_key(&mut k, &user_key, seq, ValueType::Value);
        k
    }

    /// Random children; keys shared across children (other sequence numbers) and, with
    /// `duplicates`, the very same internal key in several children. Values name the child.
    fn children(rng: &mut Random, duplicates: bool) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        let n = 1 + rng.uniform(12) as usize;
        let mut out = Vec::new();
        for c in 0..n {
            // Skewed sizes: one child often holds long runs, as a big level does.
            let max = if rng.one_in(3) { 400 } else { 40 };
            let len = rng.uniform(max) as usize;
            let mut v: Vec<(Vec<u8>, Vec<u8>)> = (0..len)
                .map(|_| {
                    let seq = if duplicates {
                        rng.uniform(3) as u64
                    } else {
                        (c * 1000) as u64 + rng.uniform(900) as u64
                    };
                    (ikey(rng.uniform(300), seq), vec![c as u8])
                })
                .collect();
            v.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            v.dedup_by(|a, b| a.0 == b.0);
            out.push(v);
        }
        out
    }

    fn merged(children: &[Vec<(Vec<u8>, Vec<u8>)>]) -> MergingIterator {
        MergingIterator::new(
            children
                .iter()
                .map(|c| Box::new(VecIter::new(c.clone(), None)) as Box<dyn InternalIterator>)
                .collect(),
        )
    }

    /// Every entry of every child, ordered by key and, for equal keys, by child index.
    fn expected(children: &[Vec<(Vec<u8>, Vec<u8>)>]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut all: Vec<(Vec<u8>, Vec<u8>)> = children.iter().flatten().cloned().collect();
        all.sort_by(|a, b| compare_internal_keys(&a.0, &b.0).then(a.1.cmp(&b.1)));
        all
    }

    /// `comes_first` (prefix first) orders every pair of children exactly as the full
    /// comparison with the child-index tiebreak does, both ways: user keys of 0 to 20 bytes
    /// over {0, 1, 0xff} (prefixes of each other, zero bytes that look like padding), long keys
    /// sharing their first 16 bytes and differing after them, raw keys shorter than a trailer.
    #[test]
    fn user_key_prefixes_order_keys_as_the_full_comparison() {
        let mut rng = Random::new(7);
        let mut raw: Vec<Vec<u8>> = (0..300)
            .map(|_| {
                let len = rng.uniform(21) as usize;
                let user: Vec<u8> = (0..len)
                    .map(|_| [0u8, 1, 0xff][rng.uniform(3) as usize])
                    .collect();
                let mut k = Vec::new();
                append_internal_key(&mut k, &user, rng.uniform(4) as u64, ValueType::Value);
                k
            })
            .collect();
        for i in 0..40u8 {
            let mut user = b"sixteen-byte-pfx".to_vec();
            user.extend_from_slice(&[i % 3, i % 7]);
            user.truncate(16 + (i % 3) as usize);
            let mut k = Vec::new();
            append_internal_key(&mut k, &user, (i % 4) as u64, ValueType::Value);
            raw.push(k);
        }
        raw.extend([vec![], vec![1], vec![1, 2, 3], vec![0xff; 7]]);
        let mut keys = vec![KeyCopy::EMPTY; raw.len()];
        for (copy, k) in keys.iter_mut().zip(&raw) {
            copy.set(k);
        }
        let (mut decided, mut ties) = (0, 0);
        for a in 0..raw.len() {
            for b in 0..raw.len() {
                let o = compare_internal_keys(&raw[a], &raw[b]);
                let forward = o == Ordering::Less || (o == Ordering::Equal && a < b);
                let reverse = o == Ordering::Greater || (o == Ordering::Equal && a > b);
                assert_eq!(comes_first(&keys, Direction::Forward, a, b), forward);
                assert_eq!(comes_first(&keys, Direction::Reverse, a, b), reverse);
                if keys[a].prefix == keys[b].prefix {
                    ties += (raw[a] != raw[b]) as usize;
                } else {
                    decided += 1;
                    assert_eq!(
                        keys[a].prefix.cmp(&keys[b].prefix),
                        o,
                        "{:?} {:?}",
                        raw[a],
                        raw[b]
                    );
                }
            }
        }
        // Both paths taken: most pairs decided by the prefix, many different keys left to
        // the full comparison.
        assert!(decided > 100_000 && ties > 1_000, "{decided} {ties}");
    }

    #[test]
    fn forward_and_backward_equal_a_sorted_model() {
        let mut rng = Random::new(301);
        for round in 0..300 {
            let ch = children(&mut rng, round % 2 == 0);
            let want = expected(&ch);
            let mut it = merged(&ch);
            let mut got = Vec::new();
            it.seek_to_first();
            while it.valid() {
                got.push((it.key().to_vec(), it.value().to_vec()));
                it.next();
            }
            assert!(it.status().is_ok());
            assert_eq!(got, want, "forward, round {round}");
            got.clear();
            it.seek_to_last();
            while it.valid() {
                got.push((it.key().to_vec(), it.value().to_vec()));
                it.prev();
            }
            got.reverse();
            assert_eq!(got, want, "backward, round {round}");
        }
    }

    /// One random step, next or prev, and the model position it leads to (wrapping below 0,
    /// so past either end is `>= len`).
    fn random_step(it: &mut MergingIterator, rng: &mut Random, pos: usize) -> usize {
        if rng.one_in(2) {
            it.next();
            pos + 1
        } else {
            it.prev();
            pos.wrapping_sub(1)
        }
    }

    #[test]
    fn seeks_and_direction_changes_follow_the_model() {
        let mut rng = Random::new(302);
        for round in 0..200 {
            let ch = children(&mut rng, false);
            let want = expected(&ch);
            if want.is_empty() {
                continue;
            }
            let mut it = merged(&ch);
            let mut pos = rng.uniform(want.len() as u32) as usize;
            it.seek(&want[pos].0);
            for step in 0..500 {
                assert!(it.valid(), "round {round} step {step}");
                assert_eq!(it.key(), &want[pos].0[..], "round {round} step {step}");
                pos = random_step(&mut it, &mut rng, pos);
                if pos >= want.len() {
                    assert!(!it.valid());
                    break;
                }
            }
        }
    }

    /// Children with filters (a memtable's) left pending by seeks: every seek and every step
    /// after it either way still follows the model, and the filtered children are sought only
    /// when their filter admits the key, no other child holds it, or the iterator moves.
    #[test]
    fn seeks_past_filtered_children_follow_the_model() {
        let mut rng = Random::new(303);
        let (mut deferred, mut seeks_made) = (0, 0);
        for round in 0..300 {
            let ch = children(&mut rng, false);
            let want = expected(&ch);
            let seeks = Arc::new(AtomicUsize::new(0));
            let filtered = |c: usize| c.is_multiple_of(3);
            let mut it = MergingIterator::new(
                ch.iter()
                    .enumerate()
                    .map(|(c, e)| {
                        let child = if filtered(c) {
                            VecIter::filtered(e.clone(), &seeks)
                        } else {
                            VecIter::new(e.clone(), None)
                        };
                        Box::new(child) as Box<dyn InternalIterator>
                    })
                    .collect(),
            );
            let n_filtered = (0..ch.len()).filter(|&c| filtered(c)).count();
            for _ in 0..20 {
                // Held keys at their own sequence or a later one, and user keys held nowhere.
                let target = match want.get(rng.uniform(want.len().max(1) as u32) as usize) {
                    Some((k, _)) if !rng.one_in(4) => {
                        let user = extract_user_key(k);
                        let mut t = Vec::new();
                        let seq = 1000 * 12 * (rng.uniform(2) as u64);
                        append_internal_key(&mut t, user, seq, ValueType::Value);
                        t
                    }
                    _ => ikey(rng.uniform(320), rng.uniform(12_000) as u64),
                };
                let before = seeks.load(AtomicOrdering::Relaxed);
                it.seek(&target);
                seeks_made += n_filtered;
                deferred += n_filtered - (seeks.load(AtomicOrdering::Relaxed) - before);
                let mut pos = want
                    .partition_point(|(k, _)| compare_internal_keys(k, &target) == Ordering::Less);
                for step in 0..30 {
                    if pos >= want.len() {
                        assert!(!it.valid(), "round {round} step {step}");
                        break;
                    }
                    assert!(it.valid(), "round {round} step {step}");
                    assert_eq!(it.key(), &want[pos].0[..], "round {round} step {step}");
                    assert_eq!(it.value(), &want[pos].1[..]);
                    assert!(it.status().is_ok());
                    pos = random_step(&mut it, &mut rng, pos);
                }
            }
        }
        // Most filtered children are ruled out by their filter on seeks that land on a held
        // key elsewhere; the rest were sought.
        assert!(
            deferred > seeks_made / 4,
            "{deferred} of {seeks_made} deferred"
        );
        assert!(deferred < seeks_made);
    }

    /// The skipped child is sought when the merge moves on, and at once when no child holds
    /// the target's user key.
    #[test]
    fn a_filtered_child_is_sought_when_the_merge_moves_or_misses() {
        let seeks = Arc::new(AtomicUsize::new(0));
        let mem = vec![(ikey(5, 90), vec![0]), (ikey(20, 91), vec![0])];
        let table = vec![(ikey(10, 3), vec![1]), (ikey(30, 4), vec![1])];
        let mut it = MergingIterator::new(vec![
            Box::new(VecIter::filtered(mem, &seeks)) as Box<dyn InternalIterator>,
            Box::new(VecIter::new(table, None)),
        ]);
        it.seek(&ikey(10, 100));
        assert_eq!(
            (it.key(), seeks.load(AtomicOrdering::Relaxed)),
            (&ikey(10, 3)[..], 0)
        );
        it.next();
        assert_eq!(
            (it.key(), seeks.load(AtomicOrdering::Relaxed)),
            (&ikey(20, 91)[..], 1)
        );
        // Held nowhere: the filtered child is sought at once and its entry comes first.
        it.seek(&ikey(15, 100));
        assert_eq!(
            (it.key(), seeks.load(AtomicOrdering::Relaxed)),
            (&ikey(20, 91)[..], 2)
        );
        // Held elsewhere, then a step back: the pending child is positioned by the turn.
        it.seek(&ikey(30, 100));
        assert_eq!(
            (it.key(), seeks.load(AtomicOrdering::Relaxed)),
            (&ikey(30, 4)[..], 2)
        );
        it.prev();
        assert_eq!(it.key(), &ikey(20, 91)[..]);
        it.prev();
        assert_eq!(it.key(), &ikey(10, 3)[..]);
        it.prev();
        assert_eq!(it.key(), &ikey(5, 90)[..]);
        it.prev();
        assert!(!it.valid());
        it.status().unwrap();
    }

    /// A child damaged mid-way stops the merge, forward (`fail_after`) or backward
    /// (`fail_at_back`), exactly after the victim's last good entry in that direction.
    fn check_a_failing_child_stops_the_merge(seed: u32, forward: bool) {
        let mut rng = Random::new(seed);
        let mut checked = 0;
        for _ in 0..200 {
            let ch = children(&mut rng, false);
            let Some(victim) = (0..ch.len()).find(|&c| ch[c].len() > 5) else {
                continue;
            };
            // Forward, moving past entry `damaged - 1` fails; backward, stepping back onto
            // entry `damaged` does. Either way the last good one is `last_good`.
            let (damaged, last_good) = if forward {
                let fail_after = 1 + rng.uniform(ch[victim].len() as u32 - 1) as usize;
                (fail_after, fail_after - 1)
            } else {
                let fail_at = rng.uniform(ch[victim].len() as u32 - 1) as usize;
                (fail_at, fail_at + 1)
            };
            let mut it = MergingIterator::new(
                ch.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let mut v = VecIter::new(c.clone(), None);
                        if i == victim {
                            if forward {
                                v.fail_after = Some(damaged);
                            } else {
                                v.fail_at_back = Some(damaged);
                            }
                        }
                        Box::new(v) as Box<dyn InternalIterator>
                    })
                    .collect(),
            );
            // The merge yields exactly the entries up to the victim's last good one.
            let mut want = expected(&ch);
            if !forward {
                want.reverse();
            }
            let stop = want
                .iter()
                .position(|e| *e == ch[victim][last_good])
                .unwrap()
                + 1;
            let mut n = 0;
            if forward {
                it.seek_to_first();
            } else {
                it.seek_to_last();
            }
            while it.valid() {
                assert_eq!((it.key(), it.value()), (&want[n].0[..], &want[n].1[..]));
                n += 1;
                if forward {
                    it.next();
                } else {
                    it.prev();
                }
            }
            assert_eq!(n, stop);
            assert!(it.status().is_err());
            checked += 1;
        }
        assert!(checked > 100, "only {checked} rounds had a child to damage");
    }

    #[test]
    fn a_child_failing_mid_scan_stops_the_merge() {
        check_a_failing_child_stops_the_merge(303, true);
    }

    #[test]
    fn a_child_failing_mid_scan_backward_stops_the_merge() {
        check_a_failing_child_stops_the_merge(304, false);
    }
}
