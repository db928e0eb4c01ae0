//! A byte-bounded, sharded cache (the role of LevelDB's util/cache.cc, ShardedLRUCache), used
//! for uncompressed blocks (charge = block size) and for open tables (charge = 1).
//!
//! Keys are `(id, offset)` pairs: a table's cache id plus a block offset, or a file number and
//! 0. Values are cheap to clone (`Arc`s); a value evicted while a reader still holds a clone
//! stays alive until that clone is dropped. Each shard has its own mutex, so readers on
//! different cores rarely contend.
//!
//! Recency is CLOCK (second chance), not an LRU list: a hit only sets its slot's `referenced`
//! flag, and eviction sweeps a hand over the slab, clearing set flags and evicting the first
//! entry found clear. An LRU hit relinks its entry at the list's head, writing its two
//! neighbours and the old head, lines that are cold in a large cache; and a hit reads the
//! value from the map's bucket, not from a slab entry it points to. With a 120 MB cache a
//! point read's lookups (a table and a block per file it checks) were a quarter of
//! readrandom, nearly all of it cache misses.
//!
//! Admission (`seen_recently`): a client that can serve an entry without the cache (a table
//! block borrowed from the file's map) offers it only on its second read within a short
//! window, remembered in a direct-mapped array of key hashes (one slot per 32 KiB of
//! capacity, lock-free, a heuristic: a race or a collision only changes what gets cached).
//!
//! Invariants: `map` and the slab's live slots hold the same keys, each `Held` naming its
//! slot; `usage` is the sum of the live slots' charges; an insert leaves `usage <= capacity`
//! unless the new entry alone exceeds it (it is kept, everything else evicted).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const SHARD_BITS: u32 = 4;
const SHARDS: usize = 1 << SHARD_BITS;

pub type CacheKey = (u64, u64);

/// A live entry's value, and its slot in the clock's slab: a hit reads only the map's bucket
/// (no slab entry, one cache line fewer per lookup).
struct Held<V> {
    value: V,
    slot: usize,
}

/// A slab slot: the key and charge of a live entry (`live`), or free (its index in `free`).
struct Slot {
    key: CacheKey,
    charge: usize,
    live: bool,
}

struct Shard<V> {
    /// foldhash, seeded per process: std's SipHash was 2.4% of a cache-missing readrandom.
    map: HashMap<CacheKey, Held<V>, foldhash::fast::RandomState>,
    slab: Vec<Slot>,
    /// Per slot: used since the hand last passed (the hand clears it once before evicting).
    /// Dense, so that a hit's write lands in a line the shard's other hits keep warm.
    referenced: Vec<bool>,
    free: Vec<usize>,
    /// The clock hand: the slab index the next eviction sweep starts from.
    hand: usize,
    usage: usize,
    capacity: usize,
}

impl<V: Clone> Shard<V> {
    fn new(capacity: usize) -> Self {
        Shard {
            map: HashMap::default(),
            slab: Vec::new(),
            referenced: Vec::new(),
            free: Vec::new(),
            hand: 0,
            usage: 0,
            capacity,
        }
    }

    fn remove_slot(&mut self, i: usize) {
        let slot = &mut self.slab[i];
        self.map.remove(&slot.key);
        self.usage -= slot.charge;
        slot.live = false;
        self.free.push(i);
    }

    fn get(&mut self, key: &CacheKey) -> Option<V> {
        let held = self.map.get(key)?;
        self.referenced[held.slot] = true;
        Some(held.value.clone())
    }

    fn insert(&mut self, key: CacheKey, value: V, charge: usize) {
        if let Some(slot) = self.map.get(&key).map(|h| h.slot) {
            self.remove_slot(slot);
        }
        if self.capacity == 0 {
            return;
        }
        let slot = Slot {
            key,
            charge,
            live: true,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slab[i] = slot;
                self.referenced[i] = false;
                i
            }
            None => {
                self.slab.push(slot);
                self.referenced.push(false);
                self.slab.len() - 1
            }
        };
        self.map.insert(key, Held { value, slot: i });
        self.usage += charge;
        self.evict_beyond_capacity(i);
    }

    /// Sweeps the hand until usage fits the capacity, never evicting `keep` (the entry just
    /// inserted). Ends: each pass over the slab either evicts or clears every bit it meets,
    /// so the second pass evicts, and the sweep stops when `keep` is the only entry left.
    fn evict_beyond_capacity(&mut self, keep: usize) {
        while self.usage > self.capacity && self.map.len() > 1 {
            if self.hand >= self.slab.len() {
                self.hand = 0;
            }
            let h = self.hand;
            self.hand += 1;
            if h == keep || !self.slab[h].live {
                continue;
            }
            if self.referenced[h] {
                self.referenced[h] = false;
            } else {
                self.remove_slot(h);
            }
        }
    }

    fn erase(&mut self, key: &CacheKey) {
        if let Some(slot) = self.map.get(key).map(|h| h.slot) {
            self.remove_slot(slot);
        }
    }
}

/// A sharded CLOCK cache bounded by total charge.
pub struct Cache<V> {
    shards: Vec<Mutex<Shard<V>>>,
    next_id: AtomicU64,
    /// Hashes of keys seen once lately (`seen_recently`), one per slot, 0 for none; a power
    /// of two long, or empty for a cache under `BYTES_PER_RECENT` (a table cache counting
    /// open files).
    recent: Box<[AtomicU64]>,
}

/// Capacity per slot of `recent`: the window is an eighth of the 4 KiB blocks the cache
/// holds. A block read again within it is kept; a uniform random read over a database much
/// larger than the cache comes back within it rarely, and each such admission (a copy, an
/// insert, an eviction) cost more than the reads it then served: with one slot per 4 KiB,
/// 3B-style random reads without compression ran ~10% slower, with one per 32 KiB as before,
/// and readhot gained nearly as much either way (1.1-1.8 -> 0.7-0.9 us, 1 M entries, 8 MiB).
const BYTES_PER_RECENT: usize = 32 << 10;

/// Most slots `recent` gets (8 MiB of hashes, for a cache of 32 GiB and more).
const MAX_RECENT: usize = 1 << 20;

/// `key` mixed into 64 bits (shard choice: the top bits).
#[inline]
fn mix(key: &CacheKey) -> u64 {
    key.0
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(key.1.wrapping_mul(0xc2b2_ae3d_27d4_eb4f))
}

impl<V: Clone> Cache<V> {
    /// A cache holding at most about `capacity` total charge.
    pub fn new(capacity: usize) -> Self {
        let per_shard = capacity.div_ceil(SHARDS);
        let slots = match capacity / BYTES_PER_RECENT {
            0 => 0,
            n => n.next_power_of_two().min(MAX_RECENT),
        };
        Cache {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Shard::new(per_shard)))
                .collect(),
            next_id: AtomicU64::new(1),
            recent: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn shard(&self, key: &CacheKey) -> &Mutex<Shard<V>> {
        &self.shards[(mix(key) >> (64 - SHARD_BITS)) as usize]
    }

    /// Whether `key` was seen lately, not cached: true on its second sighting within about as
    /// many sightings of other keys as `recent` has slots (its slot then forgets it: the
    /// caller caches it now); otherwise records it and returns false. Always false for a
    /// cache under `BYTES_PER_RECENT`. A uniform random read over many more blocks than that
    /// comes back within the window rarely (about slots / blocks of the time), a hot one
    /// at once.
    pub fn seen_recently(&self, key: &CacheKey) -> bool {
        if self.recent.is_empty() {
            return false;
        }
        // Murmur3's finalizer: the slot comes from the low bits, which `mix` leaves weak.
        let mut h = mix(key);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        let tag = h | 1; // never the empty slot's 0
        let slot = &self.recent[(h >> 1) as usize & (self.recent.len() - 1)];
        if slot.load(Ordering::Relaxed) == tag {
            slot.store(0, Ordering::Relaxed);
            true
        } else {
            slot.store(tag, Ordering::Relaxed);
            false
        }
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
    fn evicts_unreferenced_entries_first_within_a_shard() {
        let mut s: Shard<u32> = Shard::new(3);
        s.insert((0, 1), 1, 1);
        s.insert((0, 2), 2, 1);
        s.insert((0, 3), 3, 1);
        assert_eq!(s.get(&(0, 1)), Some(1)); // 1 gets a second chance
        s.insert((0, 4), 4, 1); // the hand passes 1 (clearing its bit) and evicts 2
        assert_eq!(s.get(&(0, 2)), None);
        assert_eq!(s.get(&(0, 1)), Some(1));
        assert_eq!(s.get(&(0, 3)), Some(3));
        assert_eq!(s.get(&(0, 4)), Some(4));
        // Every entry referenced: the hand (past 1's slot) clears 3, 4 and 1, skips the new
        // entry in 2's old slot, and evicts 3 on its second pass.
        s.insert((0, 5), 5, 1);
        assert_eq!(s.usage, 3);
        assert_eq!(s.map.len(), 3);
        assert_eq!(s.get(&(0, 3)), None);
        assert_eq!(s.get(&(0, 1)), Some(1));
        assert_eq!(s.get(&(0, 4)), Some(4));
        assert_eq!(s.get(&(0, 5)), Some(5));
        s.insert((0, 6), 6, 3); // evicts everything else, keeps the new entry
        assert_eq!(s.usage, 3);
        assert_eq!(s.map.len(), 1);
        assert_eq!(s.get(&(0, 6)), Some(6));
        s.insert((0, 7), 7, 5); // larger than the capacity alone: kept, the rest evicted
        assert_eq!((s.usage, s.map.len()), (5, 1));
        assert_eq!(s.get(&(0, 7)), Some(7));
    }

    /// Checks the shard's invariants (module comment) against its own slab.
    fn check_invariants(s: &Shard<u64>) {
        let live: Vec<usize> = (0..s.slab.len()).filter(|&i| s.slab[i].live).collect();
        assert_eq!(live.len(), s.map.len());
        assert_eq!(live.len() + s.free.len(), s.slab.len());
        for (key, held) in &s.map {
            assert!(s.slab[held.slot].live);
            assert_eq!(s.slab[held.slot].key, *key);
        }
        let charged: usize = live.iter().map(|&i| s.slab[i].charge).sum();
        assert_eq!(s.usage, charged);
        assert!(
            s.usage <= s.capacity || s.map.len() == 1,
            "{} over {}",
            s.usage,
            s.capacity
        );
    }

    #[test]
    fn random_operations_keep_the_invariants_and_the_latest_values() {
        let mut s: Shard<u64> = Shard::new(100);
        let mut rnd = crate::util::random::Random::new(301);
        // The value each key was last given, while not erased since (the cache may have
        // evicted it: a hit must return exactly this value, a miss is allowed).
        let mut latest: HashMap<CacheKey, u64> = HashMap::new();
        let (mut hits, mut evictions_seen) = (0u32, 0u32);
        for step in 0..20_000u64 {
            let key = (rnd.uniform(3) as u64, rnd.uniform(40) as u64);
            match rnd.uniform(10) {
                0..=3 => {
                    let charge = 1 + rnd.uniform(if step % 1000 == 0 { 150 } else { 12 }) as usize;
                    s.insert(key, step, charge);
                    latest.insert(key, step);
                }
                4 => {
                    s.erase(&key);
                    latest.remove(&key);
                    assert_eq!(s.get(&key), None);
                }
                _ => match s.get(&key) {
                    Some(v) => {
                        assert_eq!(Some(&v), latest.get(&key));
                        hits += 1;
                    }
                    None => evictions_seen += u32::from(latest.contains_key(&key)),
                },
            }
            check_invariants(&s);
        }
        // Both outcomes happened: the test exercised hits and evictions.
        assert!(
            hits > 1000 && evictions_seen > 1000,
            "{hits} hits, {evictions_seen} evicted"
        );
    }

    #[test]
    fn a_key_seen_twice_within_the_window_is_admitted_once() {
        let c: Cache<u32> = Cache::new(64 << 20);
        assert_eq!(c.recent.len(), 2048);
        let key = (3, 4096);
        assert!(!c.seen_recently(&key)); // first sighting: recorded
        assert!(c.seen_recently(&key)); // second: admitted, and forgotten
        assert!(!c.seen_recently(&key));
        assert!(c.seen_recently(&key));
        // Seen once, then pushed out by a stream of other first reads many times the window.
        assert!(!c.seen_recently(&key));
        let admitted = (0..100_000u64)
            .filter(|&i| c.seen_recently(&(7, i * 4096)))
            .count();
        assert_eq!(admitted, 0, "each of the other keys was seen once");
        assert!(!c.seen_recently(&key), "forgotten after 100,000 other keys");
        // A hot set smaller than the window: every key admitted on its second read, bar the
        // few that share a slot with another (each such pair evicts the other's record): the
        // hash is fixed, and 10 of these 200 share (about 200^2 / (2 * 2048) pairs expected).
        let hot: Vec<CacheKey> = (0..200u64).map(|i| (9, i * 4096)).collect();
        hot.iter().for_each(|k| assert!(!c.seen_recently(k)));
        let admitted = hot.iter().filter(|k| c.seen_recently(k)).count();
        assert_eq!(admitted, 190, "{admitted} of 200");
        // A cache under 32 KiB (open tables, counted) keeps no record and admits nothing.
        let files: Cache<u32> = Cache::new(32767);
        assert!(files.recent.is_empty());
        assert!(!files.seen_recently(&key) && !files.seen_recently(&key));
        // The slot count follows the capacity, in powers of two, capped.
        assert_eq!(Cache::<u32>::new(32 << 10).recent.len(), 1);
        assert_eq!(Cache::<u32>::new(8 << 20).recent.len(), 256);
        assert_eq!(Cache::<u32>::new(120 << 20).recent.len(), 4096);
        assert_eq!(Cache::<u32>::new(usize::MAX).recent.len(), MAX_RECENT);
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
