//! The memtable: recent writes, ordered by internal key, held in a skiplist over an
//! append-only arena (LevelDB's db/skiplist.h + db/memtable.cc).
//!
//! Entries are stored once in the arena as LevelDB encodes them
//! (`varint32 klen ‖ internal key ‖ varint32 vlen ‖ value`); a skiplist node is a tower (entry
//! offset and forward links) in one append-only `u32` vector, named by its index there, so a
//! node, once inserted, never moves or changes its entry and an iterator can hold a node index
//! across calls.
//!
//! Thread-safety: one `RwLock` guards the list. Writers (already serialized by the write path)
//! take it to insert; readers take it only for the O(1)/O(log n) step they make, then copy the
//! current key and value into their own buffers.

use std::cmp::Ordering;
use std::sync::{Arc, RwLock};

use crate::error::Result;
use crate::iterator::InternalIterator;
use crate::key::{
    append_internal_key, compare_internal_keys, parse_internal_key, LookupKey, SequenceNumber,
    ValueType,
};
use crate::util::coding::{get_varint32, put_varint32};
use crate::util::random::Random;

const MAX_HEIGHT: usize = 12;
const BRANCHING: u32 = 4;
const NIL: u32 = u32::MAX;
const HEAD: u32 = 0;
/// Words before a tower's links: the entry's arena offset (low, high 32 bits).
const TOWER_HEADER: usize = 2;

/// The skiplist. A node is a *tower* in one vector of `u32`s, at the node's index:
/// `[entry offset low, entry offset high, link 0, link 1, …, link height-1]`. A step along a
/// level reads the next node's tower (its entry offset, then, once the cursor moves there, its
/// links on the same cache line) and its key in the arena: two cache misses, as in LevelDB,
/// where separate node and link vectors cost three (bulkload_random spent 52% of its writer
/// thread in `SkipList::key`).
struct SkipList {
    arena: Vec<u8>,
    towers: Vec<u32>,
    /// Entries inserted.
    len: usize,
    height: usize,
    rng: Random,
}

impl SkipList {
    fn new(arena_capacity: usize) -> Self {
        // Towers are on average 4/3 links high (branching 4) and an entry takes at least ~20
        // bytes of arena: reserve what a full arena needs, so towers never move either.
        let mut towers = Vec::with_capacity(TOWER_HEADER + MAX_HEIGHT + arena_capacity / 6);
        towers.extend_from_slice(&[0; TOWER_HEADER]);
        towers.extend_from_slice(&[NIL; MAX_HEIGHT]);
        SkipList {
            arena: Vec::with_capacity(arena_capacity),
            towers,
            len: 0,
            height: 1,
            rng: Random::new(0xdead_beef),
        }
    }

    #[inline]
    fn next(&self, node: u32, level: usize) -> u32 {
        self.towers[node as usize + TOWER_HEADER + level]
    }

    #[inline]
    fn entry(&self, node: u32) -> usize {
        let n = node as usize;
        (self.towers[n] as usize) | ((self.towers[n + 1] as u64) << 32) as usize
    }

    /// The internal key of a (non-head) node.
    ///
    /// Unreachable panics here and in `value`: the arena is append-only and written only by
    /// `insert`, which encodes each entry as varint32 lengths followed by exactly those bytes;
    /// tower entry offsets point at entries `insert` wrote.
    #[inline]
    fn key(&self, node: u32) -> &[u8] {
        let off = self.entry(node);
        let (klen, n) = get_varint32(&self.arena[off..]).expect("arena entries are well formed");
        &self.arena[off + n..off + n + klen as usize]
    }

    fn value(&self, node: u32) -> &[u8] {
        let off = self.entry(node);
        let (klen, n) = get_varint32(&self.arena[off..]).expect("arena entries are well formed");
        let voff = off + n + klen as usize;
        let (vlen, m) = get_varint32(&self.arena[voff..]).expect("arena entries are well formed");
        &self.arena[voff + m..voff + m + vlen as usize]
    }

    /// First node with key >= `key` (NIL if none); fills `prev` with the last node before it
    /// at every level.
    fn find_greater_or_equal(&self, key: &[u8], mut prev: Option<&mut [u32; MAX_HEIGHT]>) -> u32 {
        let mut x = HEAD;
        let mut level = self.height - 1;
        loop {
            let next = self.next(x, level);
            if next != NIL && compare_internal_keys(self.key(next), key) == Ordering::Less {
                x = next;
            } else {
                if let Some(p) = prev.as_deref_mut() {
                    p[level] = x;
                }
                if level == 0 {
                    return next;
                }
                level -= 1;
            }
        }
    }

    /// Last node with key < `key` (HEAD if none).
    fn find_less_than(&self, key: &[u8]) -> u32 {
        let mut x = HEAD;
        let mut level = self.height - 1;
        loop {
            let next = self.next(x, level);
            if next == NIL || compare_internal_keys(self.key(next), key) != Ordering::Less {
                if level == 0 {
                    return x;
                }
                level -= 1;
            } else {
                x = next;
            }
        }
    }

    /// Last node (HEAD if empty).
    fn find_last(&self) -> u32 {
        let mut x = HEAD;
        let mut level = self.height - 1;
        loop {
            let next = self.next(x, level);
            if next == NIL {
                if level == 0 {
                    return x;
                }
                level -= 1;
            } else {
                x = next;
            }
        }
    }

    fn random_height(&mut self) -> usize {
        let mut h = 1;
        while h < MAX_HEIGHT && self.rng.one_in(BRANCHING) {
            h += 1;
        }
        h
    }

    fn insert(&mut self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) {
        let entry = self.arena.len();
        put_varint32(&mut self.arena, (user_key.len() + 8) as u32);
        append_internal_key(&mut self.arena, user_key, seq, t);
        put_varint32(&mut self.arena, value.len() as u32);
        self.arena.extend_from_slice(value);

        let node = self.towers.len() as u32;
        let mut prev = [HEAD; MAX_HEIGHT];
        let key_start = entry + crate::util::coding::varint_length((user_key.len() + 8) as u64);
        let key_end = key_start + user_key.len() + 8;
        self.find_greater_or_equal(&self.arena[key_start..key_end], Some(&mut prev));
        let height = self.random_height();
        if height > self.height {
            for p in prev.iter_mut().take(height).skip(self.height) {
                *p = HEAD;
            }
            self.height = height;
        }
        self.towers.push(entry as u32);
        self.towers.push((entry as u64 >> 32) as u32);
        for (level, &p) in prev.iter().enumerate().take(height) {
            let succ = self.next(p, level);
            self.towers.push(succ);
            self.towers[p as usize + TOWER_HEADER + level] = node;
        }
        self.len += 1;
    }

    /// Bytes in use, as LevelDB's arena counts them: not the vectors' capacities, which
    /// double (a memtable of 100 KB values was declared full at ~2/3 of the write buffer).
    fn memory_usage(&self) -> usize {
        // Counted as before the tower layout (16 bytes a node, 4 a link), so memtables fill
        // and flush at exactly the same entries as before.
        self.arena.len() + (self.len + 1) * 8 + self.towers.len() * 4
    }
}

/// Result of a memtable lookup.
#[derive(Debug, PartialEq, Eq)]
pub enum MemGet {
    /// The newest visible entry is a value.
    Found(Vec<u8>),
    /// The newest visible entry is a deletion.
    Deleted,
    /// No entry for the key at or below the sequence.
    Missing,
}

/// An ordered table of recent writes.
pub struct MemTable {
    list: RwLock<SkipList>,
}

impl Default for MemTable {
    fn default() -> Self {
        Self::new()
    }
}

impl MemTable {
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// A memtable whose arena holds `bytes` of entries before it grows (the write path
    /// reserves the write buffer, so filling it never copies the arena to a larger one).
    pub fn with_capacity(bytes: usize) -> Self {
        MemTable {
            list: RwLock::new(SkipList::new(bytes)),
        }
    }

    /// Adds an entry. The caller guarantees `(user_key, seq)` is new.
    pub fn add(&self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) {
        self.list.write().unwrap().insert(seq, t, user_key, value);
    }

    /// The newest entry for `key.user_key()` with sequence <= the key's sequence.
    pub fn get(&self, key: &LookupKey) -> MemGet {
        let list = self.list.read().unwrap();
        let node = list.find_greater_or_equal(key.internal_key(), None);
        if node == NIL {
            return MemGet::Missing;
        }
        match parse_internal_key(list.key(node)) {
            Some(p) if p.user_key == key.user_key() => match p.value_type {
                ValueType::Value => MemGet::Found(list.value(node).to_vec()),
                ValueType::Deletion => MemGet::Deleted,
            },
            _ => MemGet::Missing,
        }
    }

    /// Bytes held, for deciding when to flush.
    pub fn approximate_memory_usage(&self) -> usize {
        self.list.read().unwrap().memory_usage()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.list.read().unwrap().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// An iterator over internal keys; it sees entries added after its creation too.
    pub fn iter(self: &Arc<Self>) -> MemTableIterator {
        MemTableIterator {
            mem: self.clone(),
            node: NIL,
            key: Vec::new(),
            value: Vec::new(),
        }
    }
}

/// Iterator over a memtable, holding a node index and a copy of its entry.
pub struct MemTableIterator {
    mem: Arc<MemTable>,
    node: u32,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl MemTableIterator {
    fn load(&mut self, list: &SkipList, node: u32) {
        self.node = if node == HEAD { NIL } else { node };
        if self.node != NIL {
            self.key.clear();
            self.key.extend_from_slice(list.key(node));
            self.value.clear();
            self.value.extend_from_slice(list.value(node));
        }
    }
}

impl InternalIterator for MemTableIterator {
    fn valid(&self) -> bool {
        self.node != NIL
    }

    fn seek_to_first(&mut self) {
        let mem = self.mem.clone();
        let list = mem.list.read().unwrap();
        let first = list.next(HEAD, 0);
        self.load(&list, first);
    }

    fn seek_to_last(&mut self) {
        let mem = self.mem.clone();
        let list = mem.list.read().unwrap();
        let last = list.find_last();
        self.load(&list, last);
    }

    fn seek(&mut self, target: &[u8]) {
        let mem = self.mem.clone();
        let list = mem.list.read().unwrap();
        let node = list.find_greater_or_equal(target, None);
        self.load(&list, node);
    }

    fn next(&mut self) {
        let mem = self.mem.clone();
        let list = mem.list.read().unwrap();
        let node = list.next(self.node, 0);
        self.load(&list, node);
    }

    fn prev(&mut self) {
        let mem = self.mem.clone();
        let list = mem.list.read().unwrap();
        let node = list.find_less_than(&self.key);
        self.load(&list, node);
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        &self.value
    }

    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::make_internal_key;
    use std::collections::BTreeMap;

    #[test]
    fn get_sees_the_newest_visible_version() {
        let mem = MemTable::new();
        mem.add(1, ValueType::Value, b"a", b"v1");
        mem.add(2, ValueType::Value, b"a", b"v2");
        mem.add(3, ValueType::Deletion, b"a", b"");
        mem.add(4, ValueType::Value, b"b", b"bv");
        assert_eq!(
            mem.get(&LookupKey::new(b"a", 1)),
            MemGet::Found(b"v1".to_vec())
        );
        assert_eq!(
            mem.get(&LookupKey::new(b"a", 2)),
            MemGet::Found(b"v2".to_vec())
        );
        assert_eq!(mem.get(&LookupKey::new(b"a", 10)), MemGet::Deleted);
        assert_eq!(mem.get(&LookupKey::new(b"a", 0)), MemGet::Missing);
        assert_eq!(mem.get(&LookupKey::new(b"b", 3)), MemGet::Missing);
        assert_eq!(
            mem.get(&LookupKey::new(b"b", 4)),
            MemGet::Found(b"bv".to_vec())
        );
        assert_eq!(mem.get(&LookupKey::new(b"c", 9)), MemGet::Missing);
        assert_eq!(mem.len(), 4);
    }

    #[test]
    fn iterates_in_internal_key_order_both_ways_against_a_model() {
        let mem = Arc::new(MemTable::new());
        let mut rng = Random::new(1234);
        let mut model = BTreeMap::new();
        for seq in 1..=3000u64 {
            let k = format!("key{:04}", rng.uniform(700)).into_bytes();
            let t = if rng.one_in(5) {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let v = format!("v{seq}").into_bytes();
            mem.add(seq, t, &k, &v);
            // Model ordered the same way: user key asc, sequence desc.
            model.insert(
                (k.clone(), std::cmp::Reverse(seq)),
                (make_internal_key(&k, seq, t), v),
            );
        }
        let expected: Vec<_> = model.values().cloned().collect();
        let mut it = mem.iter();
        it.seek_to_first();
        let mut got = Vec::new();
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert_eq!(got, expected);
        it.seek_to_last();
        let mut back = Vec::new();
        while it.valid() {
            back.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        back.reverse();
        assert_eq!(back, expected);
        // Seek lands on the first entry >= target.
        for probe in 0..800u32 {
            let target =
                make_internal_key(format!("key{probe:04}").as_bytes(), 1500, ValueType::Value);
            it.seek(&target);
            let want = expected
                .iter()
                .find(|(k, _)| compare_internal_keys(k, &target) != Ordering::Less);
            match want {
                Some((k, _)) => assert_eq!(it.key(), &k[..]),
                None => assert!(!it.valid()),
            }
        }
    }
}
