//! The memtable's key filter: a bloom filter over the user keys a memtable holds, so a point
//! lookup for a key it does not hold (most lookups, once tables hold most of the data) reads
//! one 64-bit word instead of searching the skiplist (RocksDB's memtable whole-key filtering).
//! A memtable's towers leave the CPU cache while lookups read table blocks, and each of the
//! search's ~20 steps was then a cache miss: 10% of db_bench's readmissing with a 1 MB memtable.
//!
//! Register-blocked: a key sets `PROBES` bits of one word, chosen by its hash, so a query
//! touches one cache line. The filter lives inside the skiplist, behind the memtable's lock,
//! and is written by every insert before the entry is visible; it only answers "not here" for
//! a key never added. Its size follows the write buffer (one word per `BYTES_PER_WORD` bytes:
//! ~18 bits per db_bench entry); a memtable filled past that with tiny entries only answers
//! "maybe" more often. The write path allocates it with the arenas (`try_allocate`, from
//! `MemTable::reserve`: no memory is an error, not an abort); an insert without a reserve
//! allocates it itself. An idle memtable holds none.

use std::collections::TryReserveError;
use std::hash::BuildHasher;

use foldhash::fast::FixedState;

/// Bits set per key, within one word.
const PROBES: u32 = 4;
/// Write buffer bytes per filter word.
const BYTES_PER_WORD: usize = 512;
/// The smallest and largest filters, in words (8 KiB and 8 MiB).
const MIN_WORDS: usize = 1 << 10;
const MAX_WORDS: usize = 1 << 20;
const SEED: u64 = 0x6d65_6d66_696c_7472;

pub struct MemTableFilter {
    words: Vec<u64>,
    /// Words the filter has once allocated (a power of two).
    size: usize,
}

/// The word and the bits of `user_key`.
#[inline]
fn probe(user_key: &[u8], size: usize) -> (usize, u64) {
    // foldhash's 64 bits, mixed once more by splitmix64's finalizer (its word index and bit
    // positions come from separate bits).
    let mut z = FixedState::with_seed(SEED).hash_one(user_key);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let word = (z >> 32) as usize & (size - 1);
    let bits = (0..PROBES).fold(0u64, |b, i| b | 1 << ((z >> (6 * i)) & 63));
    (word, bits)
}

impl MemTableFilter {
    /// A filter for a memtable of `write_buffer` bytes (0: unknown, the smallest filter).
    pub fn new(write_buffer: usize) -> MemTableFilter {
        let size = (write_buffer / BYTES_PER_WORD)
            .next_power_of_two()
            .clamp(MIN_WORDS, MAX_WORDS);
        MemTableFilter {
            words: Vec::new(),
            size,
        }
    }

    /// Allocates the filter if it is not yet, refusing instead of aborting when the allocator
    /// cannot (a wasm instance's 4 GiB).
    pub fn try_allocate(&mut self) -> Result<(), TryReserveError> {
        if self.words.is_empty() {
            let mut words = Vec::new();
            words.try_reserve_exact(self.size)?;
            words.resize(self.size, 0);
            self.words = words;
        }
        Ok(())
    }

    /// Bytes the filter holds once allocated.
    pub fn size_bytes(&self) -> usize {
        self.size * 8
    }

    /// Records `user_key` as held.
    #[inline]
    pub fn add(&mut self, user_key: &[u8]) {
        if self.words.is_empty() {
            self.words = vec![0; self.size];
        }
        let (word, bits) = probe(user_key, self.size);
        self.words[word] |= bits;
    }

    /// False only if `user_key` was never added.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let (word, bits) = probe(user_key, self.size);
        self.words[word] & bits == bits
    }

    /// Heap bytes held.
    pub fn memory(&self) -> usize {
        self.words.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_keys_always_match_and_others_rarely() {
        // db_bench's shape: a 4 MiB write buffer holds ~29,000 entries of 16-byte keys.
        let mut f = MemTableFilter::new(4 << 20);
        assert_eq!(f.memory(), 0, "nothing allocated before the first key");
        assert!(!f.may_contain(b"0000000000000001"));
        let key = |i: u32| format!("{:016}", i).into_bytes();
        for i in 0..29_000 {
            f.add(&key(i * 2));
        }
        assert_eq!(f.memory(), 8192 * 8);
        assert!((0..29_000).all(|i| f.may_contain(&key(i * 2))));
        let false_positives = (0..100_000)
            .filter(|i| f.may_contain(&key(i * 2 + 1)))
            .count();
        assert!(
            false_positives < 1_000,
            "{false_positives} of 100,000 (under 1% expected)"
        );
        assert!(
            false_positives > 0,
            "a filter this full answers maybe sometimes"
        );
    }

    #[test]
    fn every_key_shape_matches_once_added() {
        let mut f = MemTableFilter::new(0);
        let keys: Vec<Vec<u8>> = (0..5_000u32)
            .map(|i| match i % 4 {
                0 => Vec::new(),
                1 => i.to_le_bytes().to_vec(),
                2 => vec![(i % 256) as u8; (i % 300) as usize],
                _ => format!("key{i}").repeat(3).into_bytes(),
            })
            .collect();
        for k in &keys {
            f.add(k);
        }
        assert_eq!(f.memory(), MIN_WORDS * 8);
        assert!(keys.iter().all(|k| f.may_contain(k)));
    }

    #[test]
    fn sizes_follow_the_write_buffer() {
        for (buffer, words) in [
            (0, MIN_WORDS),
            (1 << 20, 2048),
            (4 << 20, 8192),
            (64 << 20, 131_072),
            (usize::MAX / 2, MAX_WORDS),
        ] {
            let mut f = MemTableFilter::new(buffer);
            assert_eq!((f.memory(), f.size_bytes()), (0, words * 8));
            f.try_allocate().unwrap();
            assert_eq!(f.memory(), words * 8, "buffer {buffer}");
            f.add(b"k");
            f.try_allocate().unwrap();
            assert_eq!(f.memory(), words * 8, "allocated once");
            assert!(f.may_contain(b"k"));
        }
    }
}
