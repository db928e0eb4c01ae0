//! The memtable: recent writes, ordered by internal key, held in a skiplist over two
//! append-only vectors (LevelDB's db/skiplist.h + db/memtable.cc).
//!
//! A skiplist node is a *tower* in one byte vector, named by its offset there in 4-byte words:
//! its value's place in the value arena, its forward links, and its internal key itself, so a
//! step along a level reads one tower (LevelDB reads a node, then the key its node points at).
//! Values live apart in the value arena, where a search never looks. A node, once inserted,
//! never moves or changes (only its links are rewritten, by the writer), so an iterator can hold
//! a node across calls.
//!
//! Thread-safety: one `RwLock` guards the list. Writers (already serialized by the write path)
//! take it to insert; readers take it only for the O(1)/O(log n) step they make, then copy the
//! current key and value into their own buffers.

use std::cmp::Ordering;
use std::collections::TryReserveError;
use std::sync::{Arc, RwLock};

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::{
    append_internal_key, compare_internal_keys, parse_internal_key, Lookup, LookupKey,
    SequenceNumber, ValueType,
};
use crate::memtable_filter::MemTableFilter;
use crate::util::coding::varint_length;
use crate::util::prefetch::prefetch;
use crate::util::random::Random;

const MAX_HEIGHT: usize = 12;
const BRANCHING: u32 = 4;
const NIL: u32 = u32::MAX;
const HEAD: u32 = 0;
/// Bytes before a tower's links: value offset (u64), value length, key length, height (u32s).
const TOWER_HEADER: usize = 20;
/// Most bytes one entry's tower takes besides its user key: the header, MAX_HEIGHT links, the
/// 8-byte sequence and type, 3 bytes of padding.
const TOWER_MOST: u64 = (TOWER_HEADER + 4 * MAX_HEIGHT + 8 + 3) as u64;
/// What a wasm memtable's arenas hold before their first growth.
const FIRST_GROWTH: usize = 64 << 10;

/// The most bytes `entries` more towers with `user_key_bytes` of user keys add to towers
/// `towers_len` long, if every node number then stays below NIL (towers under 16 GiB).
fn tower_bytes_below_nil(towers_len: usize, entries: u64, user_key_bytes: u64) -> Option<u64> {
    entries
        .checked_mul(TOWER_MOST)
        .and_then(|b| b.checked_add(user_key_bytes))
        .filter(|b| {
            b.checked_add(towers_len as u64)
                .is_some_and(|end| end / 4 < NIL as u64)
        })
}

/// Makes room in `v` for `additional` more bytes without aborting when memory runs out. The
/// capacity doubles (at least to `FIRST_GROWTH`), but stops at `target` while the need is
/// within it: an arena headed for the write buffer ends there, not at twice it.
fn try_grow(
    v: &mut Vec<u8>,
    additional: usize,
    target: usize,
) -> std::result::Result<(), TryReserveError> {
    let need = v.len().saturating_add(additional);
    if need <= v.capacity() {
        return Ok(());
    }
    let doubled = v.capacity().saturating_mul(2).max(FIRST_GROWTH);
    let want = if need <= target {
        doubled.min(target).max(need)
    } else {
        doubled.max(need)
    };
    v.try_reserve_exact(want - v.len())
}

/// The skiplist. A node is a *tower* at byte `4 * node` of `towers`, all fields little-endian:
/// `[value offset: u64][value length: u32][key length: u32][height: u32][link 0 .. link
/// height-1: u32][internal key][padding to 4 bytes]`. A step along a level reads the next
/// node's tower: its key (the comparison), then, once the cursor moves there, its links, on the
/// same one or two cache lines. Keeping the key in the tower (before 2026-11-27 the tower held
/// the entry's offset in one arena of LevelDB-encoded entries) saves a cache miss a step: the
/// bulkload_random writer spent 52% in `SkipList::key` before towers, and readrandom with a
/// 1 MB memtable 13% in the search.
///
/// Node numbers are u32 words, so the towers of one memtable hold at most 16 GiB: a memtable is
/// flushed at the write buffer size, far below (and a recovery that may not flush replays a
/// log, whose size the write buffer bounded too).
struct SkipList {
    /// Values, end to end.
    values: Vec<u8>,
    towers: Vec<u8>,
    /// Capacities the arenas grow to before doubling past them (see `try_grow`).
    towers_target: usize,
    values_target: usize,
    /// Entries inserted.
    len: usize,
    height: usize,
    /// `memory_usage`, counted as LevelDB's arena counts an entry (see there).
    usage: usize,
    /// The internal key being inserted.
    scratch: Vec<u8>,
    rng: Random,
    /// The user keys inserted, for lookups of keys the list does not hold.
    filter: MemTableFilter,
    /// The node inserted last (HEAD before any) and the nodes before it at every level when
    /// it went in: exactly its predecessors still, as no insert has come since. An insert
    /// whose key goes right after it (keys in ascending order: a sequential fill, a log's
    /// replay, a sorted batch) takes its predecessors from here without a search.
    last: u32,
    last_prev: [u32; MAX_HEIGHT],
}

impl SkipList {
    fn new(arena_capacity: usize) -> Self {
        // The values are headed for the write buffer and the towers for 2/3 of it: 5/3 of it
        // in all, as the layouts before reserved. A tower is its key plus 20 + 4h bytes and
        // pads to 4, so towers outgrow 2/3 only when values are shorter than about half the
        // key plus 7 bytes. Native builds reserve it all now (untouched pages cost nothing),
        // so filling never moves an arena. In wasm, every database of an instance shares 4 GiB
        // of linear memory that grows but never shrinks: a memtable starts small and doubles
        // (see `try_grow`), so an idle database holds kilobytes, not 5/3 of its write buffer
        // (the abstract-level suite's open databases exhausted 4 GiB at 613 open memtables).
        let towers_target = arena_capacity / 3 * 2;
        let values_target = arena_capacity;
        let first = |target: usize| {
            if cfg!(target_arch = "wasm32") {
                target.min(FIRST_GROWTH)
            } else {
                target
            }
        };
        let mut towers = Vec::with_capacity(TOWER_HEADER + 4 * MAX_HEIGHT + first(towers_target));
        // The head: no value, an empty key, MAX_HEIGHT links.
        towers.extend_from_slice(&[0; 16]);
        towers.extend_from_slice(&(MAX_HEIGHT as u32).to_le_bytes());
        for _ in 0..MAX_HEIGHT {
            towers.extend_from_slice(&NIL.to_le_bytes());
        }
        debug_assert_eq!(towers.len(), TOWER_HEADER + 4 * MAX_HEIGHT);
        SkipList {
            values: Vec::with_capacity(first(values_target)),
            towers,
            towers_target: TOWER_HEADER + 4 * MAX_HEIGHT + towers_target,
            values_target,
            len: 0,
            height: 1,
            // The head, as LevelDB's arena and node vectors counted it.
            usage: 8 + (2 + MAX_HEIGHT) * 4,
            scratch: Vec::new(),
            rng: Random::new(0xdead_beef),
            filter: MemTableFilter::new(arena_capacity),
            last: HEAD,
            last_prev: [HEAD; MAX_HEIGHT],
        }
    }

    #[inline]
    fn word(&self, at: usize) -> u32 {
        let b = &self.towers[at..at + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    #[inline]
    fn set_word(&mut self, at: usize, v: u32) {
        self.towers[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    #[inline]
    fn next(&self, node: u32, level: usize) -> u32 {
        self.word(node as usize * 4 + TOWER_HEADER + 4 * level)
    }

    /// The internal key of a (non-head) node.
    #[inline]
    fn key(&self, node: u32) -> &[u8] {
        let at = node as usize * 4;
        let klen = self.word(at + 12) as usize;
        let height = self.word(at + 16) as usize;
        let start = at + TOWER_HEADER + 4 * height;
        &self.towers[start..start + klen]
    }

    /// Prefetches what the next two forward steps after `node` read: the value of the node
    /// after it (whose tower the step before asked for) and the tower of the node after
    /// that. A merged scan reads a memtable entry only every few dozen entries (the rest come
    /// from tables), so each would be a cold miss on a tower and another on a value, in
    /// insertion order; asked for a step ahead they arrive meanwhile (3B's sequential read
    /// right after a random fill spent 17% of its time in `MemTableIterator::load` before).
    #[inline]
    fn prefetch_following(&self, node: u32) {
        let next = self.next(node, 0);
        if next == NIL {
            return;
        }
        let at = next as usize * 4;
        let off = self.word(at) as usize | ((self.word(at + 4) as u64) << 32) as usize;
        prefetch(&self.values, off);
        let after = self.next(next, 0);
        if after != NIL {
            let at = after as usize * 4;
            prefetch(&self.towers, at);
            prefetch(&self.towers, at + 64);
        }
    }

    fn value(&self, node: u32) -> &[u8] {
        let at = node as usize * 4;
        let off = self.word(at) as usize | ((self.word(at + 4) as u64) << 32) as usize;
        let vlen = self.word(at + 8) as usize;
        &self.values[off..off + vlen]
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

    /// Whether `key` goes right after the node inserted last; if so, fills `prev` with its
    /// predecessors at every level, as `find_greater_or_equal` would: that node below its
    /// height (nothing lies between it and `key`), and its own predecessors above it (no node
    /// of those levels lies between them and it). One or two comparisons, on lines the last
    /// insert left in the cache.
    fn follows_last(&self, key: &[u8], prev: &mut [u32; MAX_HEIGHT]) -> bool {
        let last = self.last;
        if last == HEAD || compare_internal_keys(self.key(last), key) != Ordering::Less {
            return false;
        }
        let next = self.next(last, 0);
        if next != NIL && compare_internal_keys(self.key(next), key) == Ordering::Less {
            return false;
        }
        let height = self.word(last as usize * 4 + 16) as usize;
        *prev = self.last_prev;
        prev[..height].fill(last);
        true
    }

    fn random_height(&mut self) -> usize {
        let mut h = 1;
        while h < MAX_HEIGHT && self.rng.one_in(BRANCHING) {
            h += 1;
        }
        h
    }

    fn insert(&mut self, seq: SequenceNumber, t: ValueType, user_key: &[u8], value: &[u8]) {
        let klen = user_key.len() + 8;
        let mut ikey = std::mem::take(&mut self.scratch);
        ikey.clear();
        append_internal_key(&mut ikey, user_key, seq, t);
        let mut prev = [HEAD; MAX_HEIGHT];
        if !self.follows_last(&ikey, &mut prev) {
            self.find_greater_or_equal(&ikey, Some(&mut prev));
        }
        let height = self.random_height();
        if height > self.height {
            for p in prev.iter_mut().take(height).skip(self.height) {
                *p = HEAD;
            }
            self.height = height;
        }
        let value_off = self.values.len() as u64;
        self.values.extend_from_slice(value);
        debug_assert_eq!(self.towers.len() % 4, 0);
        let at = self.towers.len();
        // MemTable::reserve kept every node number below NIL.
        debug_assert!(((at / 4) as u64) < NIL as u64);
        let node = (at / 4) as u32;
        self.towers.extend_from_slice(&value_off.to_le_bytes());
        self.towers
            .extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.towers.extend_from_slice(&(klen as u32).to_le_bytes());
        self.towers
            .extend_from_slice(&(height as u32).to_le_bytes());
        for (level, &p) in prev.iter().enumerate().take(height) {
            let succ = self.next(p, level);
            self.towers.extend_from_slice(&succ.to_le_bytes());
        }
        self.towers.extend_from_slice(&ikey);
        self.scratch = ikey;
        self.towers.resize(self.towers.len().next_multiple_of(4), 0);
        for (level, &p) in prev.iter().enumerate().take(height) {
            self.set_word(p as usize * 4 + TOWER_HEADER + 4 * level, node);
        }
        self.filter.add(user_key);
        self.last = node;
        self.last_prev = prev;
        self.len += 1;
        // LevelDB's count: the encoded entry (varint lengths, key, value), an 8-byte node
        // and 4 bytes a link, as the layouts before this one counted it too.
        self.usage += varint_length(klen as u64)
            + klen
            + varint_length(value.len() as u64)
            + value.len()
            + 8
            + (2 + height) * 4;
    }

    /// Bytes in use, as LevelDB's arena counts them: not the vectors' capacities, which
    /// double (a memtable of 100 KB values was declared full at ~2/3 of the write buffer).
    fn memory_usage(&self) -> usize {
        // Counted as in LevelDB's and the earlier layouts, so memtables fill and flush at
        // exactly the same entries as before.
        self.usage
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

    /// Makes room for `entries` more entries with `user_key_bytes` of user keys and
    /// `value_bytes` of values in all, the longest key `longest_key` bytes, so inserting them
    /// allocates nothing (the insert's key buffer included). The write path
    /// reserves a whole batch before it logs any of it: a batch that does not fit is refused
    /// whole, with an error instead of an abort, and leaves the database usable.
    ///
    /// Refused with `InvalidArgument` when node numbers would pass NIL (towers over 16 GiB:
    /// only a memtable that is never flushed, a read-only open replaying a huge log, could get
    /// there), with `OutOfMemory` when the allocator cannot grow an arena (in wasm, the
    /// instance's 4 GiB).
    pub fn reserve(
        &self,
        entries: u64,
        user_key_bytes: u64,
        value_bytes: u64,
        longest_key: u64,
    ) -> Result<()> {
        let mut list = self.list.write().unwrap();
        let towers = tower_bytes_below_nil(list.towers.len(), entries, user_key_bytes)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "a memtable holds at most 16 GiB of keys and links: a batch of {entries} entries ({user_key_bytes} bytes of keys) does not fit"
                ))
            })?;
        let no_memory = |what: &str, bytes: u64, have: usize| {
            Error::out_of_memory(format!(
                "the memtable's {what} could not grow by {bytes} bytes (it holds {have}): a batch of {entries} entries refused whole; close other databases or write smaller batches"
            ))
        };
        let list = &mut *list;
        let (t, tt) = (list.towers_target, list.values_target);
        let additional = usize::try_from(towers).unwrap_or(usize::MAX);
        try_grow(&mut list.towers, additional, t)
            .map_err(|_| no_memory("keys", towers, list.towers.len()))?;
        let additional = usize::try_from(value_bytes).unwrap_or(usize::MAX);
        try_grow(&mut list.values, additional, tt)
            .map_err(|_| no_memory("values", value_bytes, list.values.len()))?;
        // The insert builds each internal key (user key + 8) in `scratch` first.
        let key = usize::try_from(longest_key.saturating_add(8)).unwrap_or(usize::MAX);
        if list.scratch.capacity() < key {
            list.scratch.clear();
            list.scratch
                .try_reserve_exact(key)
                .map_err(|_| no_memory("key buffer", key as u64, 0))?;
        }
        let filter_bytes = list.filter.size_bytes() as u64;
        list.filter
            .try_allocate()
            .map_err(|_| no_memory("key filter", filter_bytes, 0))?;
        Ok(())
    }

    /// Capacities of the tower and value arenas (for tests of `reserve`).
    #[cfg(test)]
    fn capacities(&self) -> (usize, usize) {
        let list = self.list.read().unwrap();
        (list.towers.capacity(), list.values.capacity())
    }

    /// The newest entry for `key.user_key()` with sequence <= the key's sequence.
    pub fn get(&self, key: &LookupKey) -> MemGet {
        let mut value = Vec::new();
        match self.get_into(key, &mut value) {
            Lookup::Found => MemGet::Found(value),
            Lookup::Deleted => MemGet::Deleted,
            Lookup::Missing => MemGet::Missing,
        }
    }

    /// `get`, with a value found copied into `value` (replacing its contents, keeping its
    /// capacity); `value` is left as it was otherwise.
    pub fn get_into(&self, key: &LookupKey, value: &mut Vec<u8>) -> Lookup {
        let list = self.list.read().unwrap();
        if !list.filter.may_contain(key.user_key()) {
            return Lookup::Missing;
        }
        let node = list.find_greater_or_equal(key.internal_key(), None);
        if node == NIL {
            return Lookup::Missing;
        }
        match parse_internal_key(list.key(node)) {
            Some(p) if p.user_key == key.user_key() => match p.value_type {
                ValueType::Value => {
                    value.clear();
                    value.extend_from_slice(list.value(node));
                    Lookup::Found
                }
                ValueType::Deletion => Lookup::Deleted,
            },
            _ => Lookup::Missing,
        }
    }

    /// False only if no entry for `user_key` was ever added (the memtable's filter).
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.list.read().unwrap().filter.may_contain(user_key)
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
        load_entry(list, node, &mut self.node, &mut self.key, &mut self.value);
    }
}

/// Makes `node` (HEAD: none) the iterator's entry: its number into `at`, copies of its key and
/// value into `key` and `value`.
fn load_entry(list: &SkipList, node: u32, at: &mut u32, key: &mut Vec<u8>, value: &mut Vec<u8>) {
    *at = if node == HEAD { NIL } else { node };
    if *at != NIL {
        key.clear();
        key.extend_from_slice(list.key(node));
        value.clear();
        value.extend_from_slice(list.value(node));
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
        // The fields apart: the list is read through `mem` while the entry is copied into
        // the others (no clone of the Arc, two atomic operations a step, as `load` needs).
        let MemTableIterator {
            mem,
            node,
            key,
            value,
        } = self;
        let list = mem.list.read().unwrap();
        let following = list.next(*node, 0);
        load_entry(&list, following, node, key, value);
        if *node != NIL {
            list.prefetch_following(*node);
        }
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

    fn may_hold(&self, user_key: &[u8]) -> bool {
        self.mem.may_contain(user_key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::make_internal_key;
    use std::collections::BTreeMap;

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    /// Every entry from the first forward, and from the last backward (put back in order).
    fn both_ways(it: &mut MemTableIterator) -> (Entries, Entries) {
        it.seek_to_first();
        let mut forward = Vec::new();
        while it.valid() {
            forward.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.seek_to_last();
        let mut backward = Vec::new();
        while it.valid() {
            backward.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        backward.reverse();
        (forward, backward)
    }

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
    fn a_write_buffer_of_keys_is_found_through_the_filter_and_absent_keys_are_not() {
        // db_bench's shape at flush: ~29,000 entries of 16-byte keys in a 4 MiB memtable,
        // every other key a deletion; lookups pass the filter for held keys only (and its
        // false positives still search the list and miss).
        let mem = MemTable::with_capacity(4 << 20);
        let key = |i: u64| format!("{:016}", i).into_bytes();
        for i in 0..29_000u64 {
            let t = if i % 2 == 0 {
                ValueType::Value
            } else {
                ValueType::Deletion
            };
            mem.add(i + 1, t, &key(i * 3), &i.to_le_bytes());
        }
        let mut value = Vec::new();
        for i in 0..29_000u64 {
            let found = mem.get_into(&LookupKey::new(&key(i * 3), 1 << 40), &mut value);
            if i % 2 == 0 {
                assert_eq!((found, &value[..]), (Lookup::Found, &i.to_le_bytes()[..]));
            } else {
                assert_eq!(found, Lookup::Deleted);
            }
            // Not yet written at the sequence before its own.
            let before = mem.get_into(&LookupKey::new(&key(i * 3), i), &mut value);
            assert_eq!(before, Lookup::Missing);
            for absent in [i * 3 + 1, i * 3 + 2] {
                let got = mem.get_into(&LookupKey::new(&key(absent), 1 << 40), &mut value);
                assert_eq!(got, Lookup::Missing);
            }
        }
    }

    #[test]
    fn keys_and_values_of_any_length_against_a_model_and_leveldbs_memory_count() {
        // Keys of 0 to 300 bytes (binary, shared prefixes), values of 0 to 2,000: every get and
        // both iteration orders match a model, and memory_usage is LevelDB's arena count to
        // the byte (so memtables flush at the same entries as LevelDB's and earlier layouts).
        let mem = Arc::new(MemTable::new());
        let mut rng = Random::new(77);
        let mut heights = Random::new(0xdead_beef);
        let mut model = BTreeMap::new();
        let mut usage = 8 + (2 + MAX_HEIGHT) * 4;
        assert_eq!(mem.approximate_memory_usage(), usage);
        for seq in 1..=2000u64 {
            let klen = match rng.uniform(4) {
                0 => rng.uniform(4),
                1 => rng.uniform(300),
                _ => 8 + rng.uniform(20),
            } as usize;
            let k: Vec<u8> = (0..klen)
                .map(|i| (rng.uniform(3) as u8) ^ (i as u8 & 1))
                .collect();
            let vlen = if rng.one_in(3) {
                rng.uniform(2000)
            } else {
                rng.uniform(40)
            } as usize;
            let v: Vec<u8> = (0..vlen).map(|_| rng.uniform(256) as u8).collect();
            let t = if rng.one_in(6) {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            mem.add(seq, t, &k, &v);
            let mut h = 1;
            while h < MAX_HEIGHT && heights.one_in(BRANCHING) {
                h += 1;
            }
            usage += varint_length(klen as u64 + 8)
                + klen
                + 8
                + varint_length(vlen as u64)
                + vlen
                + 8
                + (2 + h) * 4;
            assert_eq!(mem.approximate_memory_usage(), usage, "after entry {seq}");
            model.insert((k.clone(), std::cmp::Reverse(seq)), (t, v));
        }
        assert_eq!(mem.len(), 2000);
        // Gets at the newest sequence and at a middle one.
        for at in [2000u64, 1000] {
            let mut newest: BTreeMap<&[u8], (ValueType, &[u8])> = BTreeMap::new();
            for ((k, std::cmp::Reverse(seq)), (t, v)) in model.iter().rev() {
                if *seq <= at {
                    newest.insert(k, (*t, v));
                }
            }
            for (k, (t, v)) in &newest {
                let want = match t {
                    ValueType::Value => MemGet::Found(v.to_vec()),
                    ValueType::Deletion => MemGet::Deleted,
                };
                assert_eq!(mem.get(&LookupKey::new(k, at)), want);
            }
            assert_eq!(mem.get(&LookupKey::new(&[9u8; 5], at)), MemGet::Missing);
        }
        // A key whose every version is newer than the snapshot is missing at it.
        let mut late = 0;
        for (k, _) in model.keys() {
            let first = model
                .range((k.clone(), std::cmp::Reverse(u64::MAX))..)
                .take_while(|((k2, _), _)| k2 == k)
                .map(|((_, std::cmp::Reverse(seq)), _)| *seq)
                .min()
                .unwrap();
            if first > 1000 {
                assert_eq!(mem.get(&LookupKey::new(k, 1000)), MemGet::Missing);
                late += 1;
            }
        }
        assert!(late > 100, "{late} keys first written after entry 1000");
        let expected: Vec<_> = model
            .iter()
            .map(|((k, std::cmp::Reverse(seq)), (t, v))| {
                (make_internal_key(k, *seq, *t), v.clone())
            })
            .collect();
        let mut it = mem.iter();
        let (forward, backward) = both_ways(&mut it);
        assert_eq!(forward, expected);
        assert_eq!(backward, expected);
        // Seeks to every key at several sequences, and to keys between them, land on the first
        // entry at or after the target.
        for (ikey, _) in expected.iter().step_by(7) {
            let user = &ikey[..ikey.len() - 8];
            for seq in [0u64, 999, u64::from(u32::MAX)] {
                for target in [
                    make_internal_key(user, seq, ValueType::Value),
                    make_internal_key(&[user, &[0u8][..]].concat(), seq, ValueType::Value),
                ] {
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
    }

    #[test]
    fn reserve_keeps_node_numbers_below_nil_to_the_byte() {
        // A new memtable's towers: the head's header and MAX_HEIGHT links.
        let head = (TOWER_HEADER + 4 * MAX_HEIGHT) as u64;
        assert_eq!(head, 68);
        assert_eq!(
            MemTable::new().list.read().unwrap().towers.len() as u64,
            head
        );
        let h = head as usize;
        let limit = NIL as u64 * 4 - head;
        assert_eq!(tower_bytes_below_nil(h, 0, limit - 1), Some(limit - 1));
        assert_eq!(tower_bytes_below_nil(h, 0, limit), None);
        assert_eq!(TOWER_MOST, 79);
        assert_eq!(tower_bytes_below_nil(h, 1, limit - 1 - 79), Some(limit - 1));
        assert_eq!(tower_bytes_below_nil(h, 1, limit - 79), None);
        assert_eq!(tower_bytes_below_nil(h, u64::MAX, 0), None);
        assert_eq!(tower_bytes_below_nil(h, 1, u64::MAX), None);
        assert_eq!(
            tower_bytes_below_nil(h, 1_000_000, 16_000_000),
            Some(95_000_000)
        );
        // Through reserve: refused whole, as an invalid argument, before any allocation.
        let mem = MemTable::new();
        let e = mem.reserve(1, limit - 79, 0, 0).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::InvalidArgument);
        assert!(e.message().contains("16 GiB"), "{e}");
    }

    #[test]
    fn reserve_fails_cleanly_when_memory_runs_out_and_the_memtable_stays_usable() {
        let mem = Arc::new(MemTable::with_capacity(1 << 20));
        mem.add(1, ValueType::Value, b"before", b"v1");
        // 2^60 bytes of values: beyond any address space, so the allocator refuses.
        let e = mem.reserve(1, 5, 1 << 60, 5).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::OutOfMemory);
        assert!(
            e.message()
                .contains("values could not grow by 1152921504606846976 bytes"),
            "{e}"
        );
        // The towers stop at 16 GiB (an invalid argument first, tested above); an arena the
        // allocator refuses is an error, not an abort, and leaves the vector as it was.
        let mut v = vec![1u8, 2, 3];
        assert!(try_grow(&mut v, 1 << 60, 1 << 20).is_err());
        assert_eq!(v, [1, 2, 3]);
        // The insert's key buffer too (user key + 8 bytes, built before the tower).
        let e = mem.reserve(1, 0, 0, 1 << 60).unwrap_err();
        assert_eq!(e.kind(), crate::error::ErrorKind::OutOfMemory);
        assert!(
            e.message()
                .contains("key buffer could not grow by 1152921504606846984 bytes"),
            "{e}"
        );
        mem.reserve(1, 0, 0, 300).unwrap();
        assert!(mem.list.read().unwrap().scratch.capacity() >= 308);
        // The key filter is allocated by the reserve, not by the insert after it.
        let fresh = MemTable::with_capacity(1 << 20);
        assert_eq!(fresh.list.read().unwrap().filter.memory(), 0);
        fresh.reserve(1, 5, 2, 5).unwrap();
        assert_eq!(fresh.list.read().unwrap().filter.memory(), 2048 * 8);
        // Nothing changed: the entry before is there, and inserts go on.
        assert_eq!(mem.len(), 1);
        mem.reserve(1, 5, 2, 5).unwrap();
        mem.add(2, ValueType::Value, b"after", b"v2");
        assert_eq!(
            mem.get(&LookupKey::new(b"before", 9)),
            MemGet::Found(b"v1".to_vec())
        );
        assert_eq!(
            mem.get(&LookupKey::new(b"after", 9)),
            MemGet::Found(b"v2".to_vec())
        );
    }

    #[test]
    fn reserved_arenas_grow_by_doubling_and_stop_at_their_targets() {
        // Doubling from FIRST_GROWTH, held at the target while the need is within it.
        let mut v = Vec::new();
        try_grow(&mut v, 10, 1 << 20).unwrap();
        assert_eq!(v.capacity(), FIRST_GROWTH);
        v.resize(FIRST_GROWTH, 0);
        try_grow(&mut v, 1, 1 << 20).unwrap();
        assert_eq!(v.capacity(), 2 * FIRST_GROWTH);
        v.resize(700_000, 0);
        try_grow(&mut v, 300_000, 1 << 20).unwrap();
        assert_eq!(v.capacity(), 1 << 20); // 1,048,576, not 2^21
        v.resize(1 << 20, 0);
        try_grow(&mut v, 1, 1 << 20).unwrap();
        assert_eq!(v.capacity(), 1 << 21); // past the target: doubling again
        try_grow(&mut v, 5 << 20, 1 << 20).unwrap();
        assert_eq!(v.capacity(), 6 << 20); // a need beyond doubling: exactly the need
                                           // A memtable reserved at 3 MB: native builds hold it all from the start, wasm builds
                                           // start at FIRST_GROWTH and reach the same capacities as the entries come.
        let mem = MemTable::with_capacity(3 << 20);
        let head = TOWER_HEADER + 4 * MAX_HEIGHT;
        let (towers, values) = mem.capacities();
        if cfg!(target_arch = "wasm32") {
            assert_eq!((towers, values), (head + FIRST_GROWTH, FIRST_GROWTH));
        } else {
            assert_eq!((towers, values), (head + (2 << 20), 3 << 20));
        }
        let value = [7u8; 1000];
        for seq in 1..=3000u64 {
            let key = format!("key{seq:06}");
            let k = key.len() as u64;
            mem.reserve(1, k, value.len() as u64, k).unwrap();
            mem.add(seq, ValueType::Value, key.as_bytes(), &value);
        }
        // 3,000,000 bytes of values fit the 3 MiB target; the towers never reached 2 MiB.
        assert_eq!(mem.capacities(), (head + (2 << 20), 3 << 20));
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
        let (forward, backward) = both_ways(&mut it);
        assert_eq!(forward, expected);
        assert_eq!(backward, expected);
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

    /// Every level's links of `list`, checked: each level is in strictly ascending internal
    /// key order and holds exactly the nodes at least that tall. Returns level 0's keys.
    fn checked_levels(list: &SkipList) -> Vec<Vec<u8>> {
        let mut heights = Vec::new();
        let mut keys = Vec::new();
        let mut x = list.next(HEAD, 0);
        while x != NIL {
            heights.push(list.word(x as usize * 4 + 16) as usize);
            keys.push(list.key(x).to_vec());
            x = list.next(x, 0);
        }
        for level in 0..MAX_HEIGHT {
            let mut at_level = Vec::new();
            let mut x = list.next(HEAD, level);
            while x != NIL {
                at_level.push(list.key(x).to_vec());
                x = list.next(x, level);
            }
            for pair in at_level.windows(2) {
                assert_eq!(
                    compare_internal_keys(&pair[0], &pair[1]),
                    Ordering::Less,
                    "level {level} out of order"
                );
            }
            let tall: Vec<_> = keys
                .iter()
                .zip(&heights)
                .filter(|(_, &h)| h > level)
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(at_level, tall, "level {level}");
        }
        keys
    }

    #[test]
    fn inserts_after_the_last_one_link_every_level_as_a_search_would() {
        // Ascending runs (the shortcut), descending runs and random keys (the search), a
        // key equal to the last but newer (sorts before it: the search), and runs that
        // start right after the last key but overtake a later node (the search again).
        let mem = MemTable::new();
        let mut model = BTreeMap::new();
        let mut rng = Random::new(77);
        let mut seq = 0u64;
        let mut add = |k: Vec<u8>, model: &mut BTreeMap<_, _>| {
            seq += 1;
            mem.add(seq, ValueType::Value, &k, b"v");
            model.insert(
                (k.clone(), std::cmp::Reverse(seq)),
                make_internal_key(&k, seq, ValueType::Value),
            );
        };
        for round in 0..40u32 {
            let base = rng.uniform(100_000);
            match round % 4 {
                0 => {
                    (0..500).for_each(|i| add(format!("k{:07}", base + i).into_bytes(), &mut model))
                }
                1 => (0..200)
                    .rev()
                    .for_each(|i| add(format!("k{:07}", base + i).into_bytes(), &mut model)),
                2 => (0..300).for_each(|_| {
                    add(
                        format!("k{:07}", rng.uniform(100_000)).into_bytes(),
                        &mut model,
                    )
                }),
                _ => (0..100).for_each(|i| {
                    let k = format!("k{:07}", base + i / 2).into_bytes();
                    add(k, &mut model)
                }),
            }
        }
        let list = mem.list.read().unwrap();
        assert_eq!(list.len, 40 / 4 * (500 + 200 + 300 + 100));
        let keys = checked_levels(&list);
        let expected: Vec<_> = model.into_values().collect();
        assert_eq!(keys, expected);
        // Levels above one were built too: the shortcut linked towers, not only level 0.
        assert!(list.height >= 5, "height {}", list.height);
    }
}
