//! LevelDB's built-in bloom filter (util/bloom.cc), policy name `leveldb.BuiltinBloomFilter2`.
//!
//! A filter is `bits ‖ k`: k probes by double hashing from LevelDB's `Hash(key, 0xbc9f1d34)`
//! with delta = rotate-right(h, 17). Filters with k > 30 are reserved encodings and match
//! everything; a filter shorter than 2 bytes matches nothing.

use crate::util::hash::hash;

/// Name under which tables record this filter in their metaindex (with a "filter." prefix).
pub const BLOOM_FILTER_NAME: &str = "leveldb.BuiltinBloomFilter2";

#[inline]
fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, 0xbc9f_1d34)
}

/// A bloom filter policy with a fixed number of bits per key.
#[derive(Clone, Copy, Debug)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    k: usize,
}

impl BloomFilterPolicy {
    pub fn new(bits_per_key: u32) -> Self {
        // 0.69 ~= ln(2) minimizes the false-positive rate; rounded down as LevelDB does.
        let k = ((bits_per_key as f64 * 0.69) as usize).clamp(1, 30);
        BloomFilterPolicy {
            bits_per_key: bits_per_key as usize,
            k,
        }
    }

    /// Appends a filter for `keys` to `dst`.
    pub fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let bits = (keys.len() * self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k as u8);
        let array = &mut dst[start..start + bytes];
        for key in keys {
            let mut h = bloom_hash(key);
            let delta = h.rotate_right(17);
            for _ in 0..self.k {
                let pos = h as usize % bits;
                array[pos / 8] |= 1 << (pos % 8);
                h = h.wrapping_add(delta);
            }
        }
    }
}

/// Whether `key` may be in the set `filter` was built from (false = certainly not).
pub fn key_may_match(key: &[u8], filter: &[u8]) -> bool {
    let len = filter.len();
    if len < 2 {
        return false;
    }
    let k = filter[len - 1] as usize;
    if k > 30 {
        return true;
    }
    let array = &filter[..len - 1];
    let bits = array.len() * 8;
    let mut h = bloom_hash(key);
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let pos = h as usize % bits;
        if array[pos / 8] & (1 << (pos % 8)) == 0 {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 4] {
        i.to_le_bytes()
    }

    #[test]
    fn empty_filter_matches_nothing() {
        let p = BloomFilterPolicy::new(10);
        let mut f = Vec::new();
        p.create_filter(&[], &mut f);
        assert_eq!(f.len(), 9);
        assert!(!key_may_match(b"hello", &f));
        assert!(!key_may_match(b"", &[]));
    }

    #[test]
    fn small_filter_matches_its_keys_only() {
        let p = BloomFilterPolicy::new(10);
        let mut f = Vec::new();
        p.create_filter(&[b"hello", b"world"], &mut f);
        assert!(key_may_match(b"hello", &f));
        assert!(key_may_match(b"world", &f));
        assert!(!key_may_match(b"x", &f));
        assert!(!key_may_match(b"foo", &f));
    }

    #[test]
    fn false_positive_rate_is_as_in_leveldb() {
        // LevelDB's bloom_test VaryingLengths: every key matches, FP rate <= 2%.
        let p = BloomFilterPolicy::new(10);
        let mut mediocre = 0;
        let mut good = 0;
        let mut length = 1;
        while length <= 10_000 {
            let keys: Vec<[u8; 4]> = (0..length).map(key).collect();
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut f = Vec::new();
            p.create_filter(&refs, &mut f);
            assert!(f.len() <= (length as usize * 10 / 8) + 40);
            for k in &keys {
                assert!(key_may_match(k, &f));
            }
            let fp = (0..10_000)
                .filter(|&i| key_may_match(&key(i + 1_000_000_000), &f))
                .count() as f64
                / 10_000.0;
            assert!(fp <= 0.02, "length {length}: rate {fp}");
            if fp > 0.0125 {
                mediocre += 1;
            } else {
                good += 1;
            }
            length = if length < 10 {
                length + 1
            } else if length < 100 {
                length + 10
            } else if length < 1000 {
                length + 100
            } else {
                length + 1000
            };
        }
        assert!(mediocre * 5 <= good, "{mediocre} mediocre vs {good} good");
    }

    #[test]
    fn bit_layout_matches_leveldb() {
        // k = 6 for 10 bits/key; one key "hello" in a 64-bit filter.
        let p = BloomFilterPolicy::new(10);
        let mut f = Vec::new();
        p.create_filter(&[b"hello"], &mut f);
        assert_eq!(f[8], 6);
        let mut h = bloom_hash(b"hello");
        let delta = h.rotate_right(17);
        let mut expected = [0u8; 8];
        for _ in 0..6 {
            let pos = h as usize % 64;
            expected[pos / 8] |= 1 << (pos % 8);
            h = h.wrapping_add(delta);
        }
        assert_eq!(&f[..8], &expected);
    }
}
