//! Builds a block: prefix-compressed keys with a full key every `restart_interval` entries.
//! Keys must be added in increasing order; `finish` appends the restart array.

use crate::util::coding::{put_fixed32, put_varint32};

pub struct BlockBuilder {
    restart_interval: usize,
    buffer: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    last_key: Vec<u8>,
    finished: bool,
}

impl BlockBuilder {
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            restart_interval: restart_interval.max(1),
            buffer: Vec::new(),
            restarts: vec![0],
            counter: 0,
            last_key: Vec::new(),
            finished: false,
        }
    }

    pub fn reset(&mut self) {
        self.buffer.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.finished = false;
    }

    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Size of the block if it were finished now.
    pub fn current_size_estimate(&self) -> usize {
        self.buffer.len() + self.restarts.len() * 4 + 4
    }

    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished);
        let mut shared = 0;
        if self.counter < self.restart_interval {
            shared = self
                .last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
        }
        let non_shared = key.len() - shared;
        put_varint32(&mut self.buffer, shared as u32);
        put_varint32(&mut self.buffer, non_shared as u32);
        put_varint32(&mut self.buffer, value.len() as u32);
        self.buffer.extend_from_slice(&key[shared..]);
        self.buffer.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
    }

    /// Finishes the block and hands its bytes over, leaving the builder reset to build the
    /// next block in `buffer` (cleared; passed in so a writer can recycle its allocations).
    pub fn take_finished(&mut self, mut buffer: Vec<u8>) -> Vec<u8> {
        self.finish();
        buffer.clear();
        let block = std::mem::replace(&mut self.buffer, buffer);
        self.reset();
        block
    }

    /// Appends the restart array and returns the block's bytes.
    pub fn finish(&mut self) -> &[u8] {
        for &r in &self.restarts {
            put_fixed32(&mut self.buffer, r);
        }
        put_fixed32(&mut self.buffer, self.restarts.len() as u32);
        self.finished = true;
        &self.buffer
    }
}
