//! The filter meta block: one bloom filter for the keys of the data blocks that start in each
//! 2 KiB range of table offsets, then the filters' offsets (fixed32 each), the offset of that
//! array (fixed32) and `lg(base)` = 11 (one byte). Keys are user keys.
//!
//! The reader treats a damaged filter block as "may match" (the data blocks, which carry their
//! own checksums, then decide), so damage there can only cost time, never answers.

use crate::filter::{key_may_match, BloomFilterPolicy};
use crate::util::coding::{decode_fixed32, put_fixed32};

const FILTER_BASE_LG: u8 = 11;
const FILTER_BASE: u64 = 1 << FILTER_BASE_LG;

pub struct FilterBlockBuilder {
    policy: BloomFilterPolicy,
    keys: Vec<u8>,
    starts: Vec<usize>,
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
}

impl FilterBlockBuilder {
    pub fn new(policy: BloomFilterPolicy) -> Self {
        FilterBlockBuilder {
            policy,
            keys: Vec::new(),
            starts: Vec::new(),
            result: Vec::new(),
            filter_offsets: Vec::new(),
        }
    }

    /// Called before the keys of a data block starting at `block_offset` are added.
    pub fn start_block(&mut self, block_offset: u64) {
        let index = block_offset / FILTER_BASE;
        while index > self.filter_offsets.len() as u64 {
            self.generate_filter();
        }
    }

    pub fn add_key(&mut self, user_key: &[u8]) {
        self.starts.push(self.keys.len());
        self.keys.extend_from_slice(user_key);
    }

    pub fn finish(mut self) -> Vec<u8> {
        if !self.starts.is_empty() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for &o in &self.filter_offsets {
            put_fixed32(&mut self.result, o);
        }
        put_fixed32(&mut self.result, array_offset);
        self.result.push(FILTER_BASE_LG);
        self.result
    }

    fn generate_filter(&mut self) {
        self.filter_offsets.push(self.result.len() as u32);
        if self.starts.is_empty() {
            return;
        }
        let mut keys: Vec<&[u8]> = Vec::with_capacity(self.starts.len());
        for (i, &s) in self.starts.iter().enumerate() {
            let e = self.starts.get(i + 1).copied().unwrap_or(self.keys.len());
            keys.push(&self.keys[s..e]);
        }
        self.policy.create_filter(&keys, &mut self.result);
        self.keys.clear();
        self.starts.clear();
    }
}

/// Reads a filter block.
pub struct FilterBlockReader {
    data: Vec<u8>,
    /// Offset of the offset array; 0 with `num == 0` for a block that did not parse.
    offsets: usize,
    num: usize,
    base_lg: u8,
}

impl FilterBlockReader {
    pub fn new(data: Vec<u8>) -> Self {
        let n = data.len();
        let mut r = FilterBlockReader {
            data,
            offsets: 0,
            num: 0,
            base_lg: 0,
        };
        if n < 5 {
            return r;
        }
        let base_lg = r.data[n - 1];
        let last_word = decode_fixed32(&r.data[n - 5..]) as usize;
        if last_word > n - 5 || base_lg >= 64 {
            return r;
        }
        r.base_lg = base_lg;
        r.offsets = last_word;
        r.num = (n - 5 - last_word) / 4;
        r
    }

    /// Whether `user_key` may be in the data block starting at `block_offset`.
    pub fn key_may_match(&self, block_offset: u64, user_key: &[u8]) -> bool {
        let index = (block_offset >> self.base_lg) as usize;
        if index < self.num {
            let at = self.offsets + index * 4;
            let start = decode_fixed32(&self.data[at..]) as usize;
            let limit = decode_fixed32(&self.data[at + 4..]) as usize;
            if start <= limit && limit <= self.offsets {
                return key_may_match(user_key, &self.data[start..limit]);
            } else if start == limit {
                // An empty filter matches nothing.
                return false;
            }
        }
        true // damaged or missing: let the data block decide
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_builder_gives_leveldbs_bytes() {
        let b = FilterBlockBuilder::new(BloomFilterPolicy::new(10));
        assert_eq!(b.finish(), vec![0, 0, 0, 0, 11]);
    }

    #[test]
    fn filters_follow_block_offsets() {
        let mut b = FilterBlockBuilder::new(BloomFilterPolicy::new(10));
        b.start_block(100);
        b.add_key(b"foo");
        b.add_key(b"bar");
        b.add_key(b"box");
        b.start_block(200);
        b.add_key(b"box");
        b.start_block(300);
        b.add_key(b"hello");
        // Second filter: blocks starting at 3100 (index 1 is empty).
        b.start_block(3100);
        b.add_key(b"foox");
        b.start_block(9000);
        b.add_key(b"box");
        b.add_key(b"hello");
        let r = FilterBlockReader::new(b.finish());
        for k in [&b"foo"[..], b"bar", b"box", b"hello"] {
            assert!(r.key_may_match(100, k));
        }
        assert!(!r.key_may_match(100, b"missing"));
        assert!(!r.key_may_match(100, b"other"));
        assert!(!r.key_may_match(2100, b"foo")); // empty filter
        assert!(r.key_may_match(3100, b"foox"));
        assert!(!r.key_may_match(3100, b"foo"));
        assert!(r.key_may_match(9000, b"box"));
        assert!(!r.key_may_match(9000, b"foo"));
        // Offsets past the last filter: no information, so "may match".
        assert!(r.key_may_match(1 << 20, b"anything"));
    }

    #[test]
    fn damaged_blocks_answer_may_match() {
        for data in [vec![], vec![1, 2, 3], vec![0xff; 9]] {
            let r = FilterBlockReader::new(data);
            assert!(r.key_may_match(0, b"k"));
        }
    }
}
