//! A byte-bounded, sharded LRU cache (LevelDB's util/cache.cc, ShardedLRUCache), used for
//! uncompressed blocks (charge = block size) and for open tables (charge = 1).
//!
//! Keys are `(id, offset)` pairs: a table's cache id plus a block offset, or a file number and
//! 0. Values are cheap to clone (`Arc`s); a value evicted while a reader still holds a clone
//! stays alive until that clone is dropped. Each shard has its own mutex, so readers on
//! different cores rarely contend. Recency is kept in an index-linked list over a slab, so
//! lookups and inserts are O(1) without unsafe code.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;
const NONE: usize = usize::MAX;

pub type CacheKey = (u64, u64);

struct Entry<V> {
    key: CacheKey,
    value: Option<V>,
    charge: usize,
    prev: usize,
    next: usize,
}

struct Shard<V> {
    /// foldhash, seeded per process: std's SipHash was 2.4% of a cache-missing readrandom.
    map: HashMap<CacheKey, usize, foldhash::fast::RandomState>,
    slab: Vec<Entry<V>>,
    free: Vec<usize>,
    /// Most recently used.
    head: usize,
    /// Least recently used.
    tail: usize,
    usage: usize,
    capacity: usize,
}

impl<V: Clone> Shard<V> {
    fn new(capacity: usize) -> Self {
        Shard {
            map: HashMap::default(),
            slab: Vec::new(),
            free: Vec::new(),
            head: NONE,
            tail: NONE,
            usage: 0,
            capacity,
        }
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.slab[i].prev, self.slab[i].next);
        if prev != NONE {
            self.slab[prev].next = next;
        } else {
            self.head = next;
        }
        if next != NONE {
            self.slab[next].prev = prev;
        } else {
            self.tail = prev;
        }
    }

    fn push_front(&mut self, i: usize) {
        self.slab[i].prev = NONE;
        self.slab[i].next = self.head;
        if self.head != NONE {
            self.slab[self.head].prev = i;
        }
        self.head = i;
        if self.tail == NONE {
            self.tail = i;
        }
    }

    fn remove_index(&mut self, i: usize) {
        self.unlink(i);
        self.map.remove(&self.slab[i].key);
        self.usage -= self.slab[i].charge;
        self.slab[i].value = None;
        self.free.push(i);
    }

    fn get(&mut self, key: &CacheKey) -> Option<V> {
        let i = *self.map.get(key)?;
        self.unlink(i);
        self.push_front(i);
        self.slab[i].value.clone()
    }

    fn insert(&mut self, key: CacheKey, value: V, charge: usize) {
        if let Some(&i) = self.map.get(&key) {
            self.remove_index(i);
        }
        if self.capacity == 0 {
            return;
        }
        let entry = Entry {
            key,
            value: Some(value),
            charge,
            prev: NONE,
            next: NONE,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i] = entry;
                i
            }
            None => {
                self.slab.push(entry);
                self.slab.len() - 1
            }
        };
        self.map.insert(key, i);
        self.usage += charge;
        self.push_front(i);
        while self.usage > self.capacity && self.tail != NONE && self.tail != i {
            let t = self.tail;
            self.remove_index(t);
        }
    }

    fn erase(&mut self, key: &CacheKey) {
        if let Some(&i) = self.map.get(key) {
            self.remove_index(i);
        }
    }
}

/// A sharded LRU cache bounded by total charge.
pub struct Cache<V> {
    shards: Vec<Mutex<Shard<V>>>,
    next_id: AtomicU64,
}

impl<V: Clone> Cache<V> {
    /// A cache holding at most about `capacity` total charge.
    pub fn new(capacity: usize) -> Self {
        let per_shard = capacity.div_ceil(SHARDS);
        Cache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard::new(per_shard)))
                .collect(),
            next_id: AtomicU64::new(1),
        }
    }

    fn shard(&self, key: &CacheKey) -> &Mutex<Shard<V>> {
        let h = key
            .0
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(key.1.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
        &self.shards[(h >> (64 - SHARD_BITS)) as usize]
    }

    pub fn get(&self, key: &CacheKey) -> Option<V> {
        self.shard(key).lock().unwrap().get(key)
    }

    pub fn insert(&self, key: CacheKey, value: V, charge: usize) {
        self.shard(&key).lock().unwrap().insert(key, value, charge)
    }

    pub fn erase(&self, key: &CacheKey) {
        self.shard(key).lock().unwrap().erase(key)
    }

    /// A fresh id for a client that shares this cache (one per open table).
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Total charge currently held.
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().usage).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_misses_and_replacement() {
        let c: Cache<u32> = Cache::new(1000);
        assert_eq!(c.get(&(1, 1)), None);
        c.insert((1, 1), 101, 1);
        c.insert((1, 2), 102, 1);
        assert_eq!(c.get(&(1, 1)), Some(101));
        c.insert((1, 1), 201, 1);
        assert_eq!(c.get(&(1, 1)), Some(201));
        assert_eq!(c.usage(), 2);
        c.erase(&(1, 1));
        assert_eq!(c.get(&(1, 1)), None);
        assert_eq!(c.usage(), 1);
    }

    #[test]
    fn evicts_least_recently_used_within_a_shard() {
        let mut s: Shard<u32> = Shard::new(3);
        s.insert((0, 1), 1, 1);
        s.insert((0, 2), 2, 1);
        s.insert((0, 3), 3, 1);
        assert_eq!(s.get(&(0, 1)), Some(1)); // 1 is now the most recent
        s.insert((0, 4), 4, 1); // evicts 2
        assert_eq!(s.get(&(0, 2)), None);
        assert_eq!(s.get(&(0, 1)), Some(1));
        assert_eq!(s.get(&(0, 3)), Some(3));
        assert_eq!(s.get(&(0, 4)), Some(4));
        s.insert((0, 5), 5, 3); // evicts everything else
        assert_eq!(s.usage, 3);
        assert_eq!(s.map.len(), 1);
    }

    #[test]
    fn usage_stays_bounded_under_churn() {
        let c: Cache<u64> = Cache::new(16 * 100);
        for i in 0..10_000u64 {
            c.insert((i % 7, i), i, 10);
            assert!(c.usage() <= 16 * 100 + 10 * 16);
        }
    }
}
