//! A decoded block: entries `varint32 shared ‖ varint32 non_shared ‖ varint32 value_len ‖
//! key_suffix ‖ value`, then `fixed32` restart offsets and a `fixed32` restart count. A restart
//! entry stores its whole key (shared = 0), so seeks binary-search the restart points.
//!
//! Blocks come from disk and may be damaged: every offset and length is checked, and a bad
//! entry makes the iterator invalid with a `Corruption` status instead of panicking.
//!
//! A `BlockIter` rebuilds each key from the one before it (prefix compression), so its `key`
//! buffer always holds the current key, except after a step back inside a restart interval:
//! the key is then the range of the interval's parse that `key_in_prev_keys` names, and `key`
//! is made whole again before any step that shares its prefix. Its buffers pass from one
//! block's iterator to the next (`Block::iter_reusing`), each kept up to `MAX_KEPT_BYTES`.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iterator::InternalIterator;
use crate::key::compare_internal_keys;
use crate::table::restart_prefixes::RestartPrefixes;
use crate::util::coding::{decode_fixed32, get_varint32, varint_length};

/// An immutable, shareable block.
pub struct Block {
    data: BlockData,
    /// Offset of the restart array.
    restarts: usize,
    num_restarts: u32,
    /// The compression id of the stored block this was decoded from, where the reader knows
    /// it (a whole data block read from its table); `None` for blocks built otherwise (a
    /// decode worker's, possibly filtered, or an index block).
    compression_id: Option<u8>,
    /// The restart keys as `u64` prefixes for seeks (`with_restart_prefixes`: index blocks).
    restart_prefixes: Option<RestartPrefixes>,
}

/// Where a block's bytes live.
enum BlockData {
    /// Decoded into a buffer of this thread's pool (decompressed, or read with `pread`).
    Owned(Vec<u8>),
    /// Borrowed from a table's memory map (an uncompressed block): no copy; the slice keeps
    /// the mapping alive.
    Mapped(bytes::Bytes),
}

impl BlockData {
    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            BlockData::Owned(v) => v,
            BlockData::Mapped(b) => b,
        }
    }
}

impl Block {
    /// Validates the restart array of `data`.
    pub fn new(data: Vec<u8>) -> Result<Block> {
        Self::with_data(BlockData::Owned(data))
    }

    /// A block that borrows `data`, an uncompressed block inside a table's memory map.
    pub fn mapped(data: bytes::Bytes) -> Result<Block> {
        Self::with_data(BlockData::Mapped(data))
    }

    fn with_data(data: BlockData) -> Result<Block> {
        let bytes = data.bytes();
        if bytes.len() < 4 {
            return Err(Error::corruption(
                "block is too short for its restart count",
            ));
        }
        let num_restarts = decode_fixed32(&bytes[bytes.len() - 4..]);
        let max = (bytes.len() - 4) / 4;
        if num_restarts as usize > max {
            return Err(Error::corruption(format!(
                "block claims {num_restarts} restart points, room for {max}"
            )));
        }
        let restarts = bytes.len() - (1 + num_restarts as usize) * 4;
        Ok(Block {
            data,
            restarts,
            num_restarts,
            compression_id: None,
            restart_prefixes: None,
        })
    }

    /// This block, its seeks searching its restart keys' prefixes (`RestartPrefixes`) and
    /// going straight to the entry found: for blocks searched often while they are out of the
    /// CPU cache (a table's index). Only a block whose every entry is a restart point (index
    /// blocks: LevelDB, Mojang's fork and Strata write them so) with keys in order gets them;
    /// any other keeps the plain search, which reports damage where it meets it.
    pub fn with_restart_prefixes(mut self) -> Block {
        let n = self.num_restarts;
        let entry_per_restart = (0..n).all(|i| {
            let offset = self.restart_point(i);
            let next = if i + 1 < n {
                self.restart_point(i + 1)
            } else {
                self.restarts
            };
            (i > 0 || offset == 0)
                && decode_entry(self.data.bytes(), offset, self.restarts).is_some_and(
                    |(_, non_shared, value_len, header)| {
                        offset + header + non_shared + value_len == next
                    },
                )
        });
        if entry_per_restart {
            self.restart_prefixes = RestartPrefixes::build((0..n).map(|i| self.restart_key(i)));
        }
        self
    }

    /// Whether seeks search restart prefixes first.
    pub fn has_restart_prefixes(&self) -> bool {
        self.restart_prefixes.is_some()
    }

    /// The full key stored at restart point `i`, or `None` if it is damaged.
    fn restart_key(&self, i: u32) -> Option<&[u8]> {
        let offset = self.restart_point(i);
        let (shared, non_shared, _, n) = decode_entry(self.data.bytes(), offset, self.restarts)?;
        if shared != 0 {
            return None;
        }
        Some(&self.data.bytes()[offset + n..offset + n + non_shared])
    }

    /// This block, as decoded whole from a stored block with compression id `id`.
    pub fn stored_as(mut self, id: u8) -> Block {
        self.compression_id = Some(id);
        self
    }

    /// The compression id of the stored block this was decoded from whole, if known.
    pub fn compression_id(&self) -> Option<u8> {
        self.compression_id
    }

    /// The block's bytes, given up (a mapped block's copied).
    pub fn into_vec(mut self) -> Vec<u8> {
        match &mut self.data {
            BlockData::Owned(v) => std::mem::take(v),
            BlockData::Mapped(b) => b.to_vec(),
        }
    }

    /// Size of the uncompressed block in bytes.
    pub fn size(&self) -> usize {
        self.data.bytes().len()
    }

    /// Whether the block borrows a table's memory map (`Block::mapped`).
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, BlockData::Mapped(_))
    }

    /// Memory the block holds, for the block cache: a pooled buffer may be larger than the
    /// block (`util::buffer_pool` hands out at most twice the size asked for). A mapped block
    /// is never cached (`Table::block_at` caches an owned copy of one read again); its charge
    /// is its length.
    pub fn charge(&self) -> usize {
        match &self.data {
            BlockData::Owned(v) => v.capacity(),
            BlockData::Mapped(b) => b.len(),
        }
    }

    fn restart_point(&self, i: u32) -> usize {
        decode_fixed32(&self.data.bytes()[self.restarts + 4 * i as usize..]) as usize
    }

    /// Asks the CPU for the block's cache lines, its first `MAX_PREFETCH_BYTES` (`util::
    /// prefetch`: a hint, nothing observable changes). A 4 KiB block is asked whole; a
    /// Bedrock world's large blocks only as far as the next steps read, not so far that the
    /// hints push out the block being read.
    pub fn prefetch(&self) {
        crate::util::prefetch::prefetch_range(self.data.bytes(), 0, MAX_PREFETCH_BYTES);
    }

    /// An iterator over the block, ordered by the internal key comparator.
    pub fn iter(self: &Arc<Self>) -> BlockIter {
        self.iter_reusing(None)
    }

    /// An iterator over this block that keeps the buffers of `old` (an iterator over the
    /// block before it, done with): a scan moving from block to block allocates its key and
    /// backward-step buffers once, not once per block (a reverse scan grew `prev_entries` and
    /// `prev_keys` anew in every block).
    pub fn iter_reusing(self: &Arc<Self>, old: Option<BlockIter>) -> BlockIter {
        let (mut key, mut prev_entries, mut prev_keys) = match old {
            Some(old) => (old.key, old.prev_entries, old.prev_keys),
            None => Default::default(),
        };
        // A block of huge keys, or of long restart intervals of tiny entries, must not pin
        // its buffers for the rest of the scan.
        if prev_keys.capacity() > MAX_KEPT_BYTES {
            prev_keys = Vec::new();
        }
        if prev_entries.capacity() * std::mem::size_of::<ParsedEntry>() > MAX_KEPT_BYTES {
            prev_entries = Vec::new();
        }
        if key.capacity() > MAX_KEPT_BYTES {
            key = Vec::new();
        }
        key.clear();
        prev_entries.clear();
        prev_keys.clear();
        BlockIter {
            block: self.clone(),
            current: self.restarts,
            restart_index: self.num_restarts,
            next_restart: usize::MAX,
            key,
            key_in_prev_keys: None,
            value: (0, 0),
            error: None,
            prev_entries,
            prev_keys,
        }
    }
}

/// Bytes of each buffer a reused iterator keeps (`Block::iter_reusing`).
const MAX_KEPT_BYTES: usize = 64 * 1024;

/// Most restart keys a seek asks for before its binary search (`prefetch_restart_keys`): a 4
/// KiB data block at LevelDB's interval has fewer; a block with more is searched unhinted.
const MAX_PREFETCHED_RESTARTS: u32 = 16;

/// Bytes of a block `Block::prefetch` asks for: two db_bench blocks' worth.
const MAX_PREFETCH_BYTES: usize = 8 * 1024;

/// One entry of the restart interval a backward step parsed: where it starts, its full key
/// (a range of `prev_keys`) and its value.
#[derive(Clone, Copy)]
struct ParsedEntry {
    offset: usize,
    key_end: usize,
    value: (usize, usize),
}

impl Drop for Block {
    /// The decoded bytes go back to this thread's buffer pool for the next block.
    fn drop(&mut self) {
        if let BlockData::Owned(v) = &mut self.data {
            crate::util::buffer_pool::give(std::mem::take(v));
        }
    }
}

/// Decodes the entry header at `offset`: `(shared, non_shared, value_len, header_len)`,
/// checking that the entry fits before `limit`.
#[inline]
fn decode_entry(data: &[u8], offset: usize, limit: usize) -> Option<(usize, usize, usize, usize)> {
    let p = data.get(offset..limit)?;
    if p.len() < 3 {
        return None;
    }
    let (shared, non_shared, value_len, n) = if (p[0] | p[1] | p[2]) < 0x80 {
        (p[0] as u32, p[1] as u32, p[2] as u32, 3)
    } else {
        let (a, n1) = get_varint32(p)?;
        let (b, n2) = get_varint32(&p[n1..])?;
        let (c, n3) = get_varint32(&p[n1 + n2..])?;
        (a, b, c, n1 + n2 + n3)
    };
    let (non_shared, value_len) = (non_shared as usize, value_len as usize);
    if p.len() - n < non_shared + value_len {
        return None;
    }
    Some((shared as usize, non_shared, value_len, n))
}

/// Appends `from[..n]` to `key`. A short suffix (a scan's usual step: a few bytes past the
/// prefix shared with the key before) is appended as a fixed 16 or 32 bytes, cut back to `n`,
/// when `from` has them: a copy of a length known only at run time is a call to `memmove`,
/// and that call was 6% of a merged scan's reader.
#[inline(always)]
fn append_short(key: &mut Vec<u8>, from: &[u8], n: usize) {
    let len = key.len();
    if n <= 16 && from.len() >= 16 {
        key.extend_from_slice(&from[..16]);
    } else if n <= 32 && from.len() >= 32 {
        key.extend_from_slice(&from[..32]);
    } else {
        key.extend_from_slice(&from[..n]);
        return;
    }
    key.truncate(len + n);
}

/// Iterator over one block. Holds the block alive; the key is rebuilt in its own buffer.
pub struct BlockIter {
    block: Arc<Block>,
    /// Offset of the current entry; `restarts` when not valid.
    current: usize,
    /// Restart block the current entry is in.
    restart_index: u32,
    /// Offset of restart point `restart_index + 1` (`usize::MAX` past the last), so a step
    /// forward compares offsets instead of decoding the restart array each entry.
    next_restart: usize,
    /// The current key, rebuilt entry by entry (unless `key_in_prev_keys` names it).
    key: Vec<u8>,
    /// After a step back within a restart interval: the current key is `prev_keys[start..end]`
    /// (already whole there; `(start, end)`), not copied into `key`, which is then stale.
    key_in_prev_keys: Option<(usize, usize)>,
    /// (offset, length) of the current value.
    value: (usize, usize),
    error: Option<Error>,
    /// Backward iteration: the entries of the current restart interval before the current
    /// one, as the last `prev` parsed them forward from the restart point. Each further `prev`
    /// inside the interval pops one instead of parsing the interval again (LevelDB re-parses
    /// up to 15 entries per step). Empty unless the last move was `prev`.
    prev_entries: Vec<ParsedEntry>,
    /// The full keys of `prev_entries`, end to end.
    prev_keys: Vec<u8>,
}

impl BlockIter {
    /// Whether the current entry is the block's only entry, in the block a `BlockBuilder`
    /// makes of it alone: it starts the block, its value ends at the restart array, the one
    /// restart point is 0 and every varint is minimal (the block is exactly as long as that
    /// layout). A block laid out otherwise (another writer's) is not reported, so a copy of
    /// it is always the block a rebuild would make.
    pub fn is_sole_entry(&self) -> bool {
        let (key, value) = (self.current_key().len(), self.value.1);
        self.current == 0
            && self.valid()
            && self.next_entry_offset() == self.block.restarts
            && self.block.restart_point(0) == 0
            && self.block.size()
                == 1 + varint_length(key as u64) + varint_length(value as u64) + key + value + 8
    }

    /// The decoded block's size in bytes.
    pub fn block_size(&self) -> usize {
        self.block.size()
    }

    /// The compression id of the stored block this block was decoded from whole, if known.
    pub fn block_compression_id(&self) -> Option<u8> {
        self.block.compression_id
    }

    fn next_entry_offset(&self) -> usize {
        self.value.0 + self.value.1
    }

    fn corrupt(&mut self, what: &str) {
        self.current = self.block.restarts;
        self.restart_index = self.block.num_restarts;
        self.next_restart = usize::MAX;
        self.key.clear();
        self.key_in_prev_keys = None;
        self.value = (0, 0);
        if self.error.is_none() {
            self.error = Some(Error::corruption(format!("bad entry in block: {what}")));
        }
    }

    /// Offset of the restart point after `index`, `usize::MAX` past the last.
    fn restart_after(&self, index: u32) -> usize {
        if index + 1 < self.block.num_restarts {
            self.block.restart_point(index + 1)
        } else {
            usize::MAX
        }
    }

    fn seek_to_restart_point(&mut self, index: u32) {
        self.key.clear();
        self.key_in_prev_keys = None;
        self.restart_index = index;
        self.next_restart = self.restart_after(index);
        // `current` is fixed up by parse_next_key; set the value so that
        // next_entry_offset() is the restart point.
        let offset = self.block.restart_point(index);
        self.value = (offset, 0);
    }

    /// Bytes held by the reusable buffers (`Block::iter_reusing`), for tests.
    #[cfg(test)]
    pub(crate) fn kept_capacity(&self) -> usize {
        self.key.capacity()
            + self.prev_keys.capacity()
            + self.prev_entries.capacity() * std::mem::size_of::<ParsedEntry>()
    }

    /// The current key (see `key_in_prev_keys`).
    #[inline]
    fn current_key(&self) -> &[u8] {
        match self.key_in_prev_keys {
            Some((start, end)) => &self.prev_keys[start..end],
            None => &self.key,
        }
    }

    /// Moves to the entry at `next_entry_offset()`. Returns false at the end or on damage.
    /// `key` must hold the current key (not `key_in_prev_keys`): the next one shares its prefix.
    fn parse_next_key(&mut self) -> bool {
        self.current = self.next_entry_offset();
        let restarts = self.block.restarts;
        if self.current >= restarts {
            self.current = restarts;
            self.restart_index = self.block.num_restarts;
            self.next_restart = usize::MAX;
            return false;
        }
        let Some((shared, non_shared, value_len, n)) =
            decode_entry(self.block.data.bytes(), self.current, restarts)
        else {
            self.corrupt("entry runs past the restart array");
            return false;
        };
        if self.key.len() < shared {
            self.corrupt("shared prefix longer than the previous key");
            return false;
        }
        let p = self.current + n;
        self.key.truncate(shared);
        append_short(&mut self.key, &self.block.data.bytes()[p..], non_shared);
        self.value = (p + non_shared, value_len);
        while self.next_restart < self.current {
            self.restart_index += 1;
            self.next_restart = self.restart_after(self.restart_index);
        }
        true
    }

    /// Parses restart interval `index` forward up to the entry whose successor starts at or
    /// after `limit`; that entry becomes current and the ones before it are kept in
    /// `prev_entries` for the next steps back.
    fn parse_interval_until(&mut self, index: u32, limit: usize) {
        self.prev_entries.clear();
        self.prev_keys.clear();
        self.seek_to_restart_point(index);
        while self.parse_next_key() && self.next_entry_offset() < limit {
            self.prev_keys.extend_from_slice(&self.key);
            self.prev_entries.push(ParsedEntry {
                offset: self.current,
                key_end: self.prev_keys.len(),
                value: self.value,
            });
        }
        if !self.valid() {
            // Damage inside the interval: parse_next_key made the iterator invalid.
            self.prev_entries.clear();
        }
    }

    /// The full key stored at restart point `i`, or `None` if it is damaged.
    fn restart_key(&self, i: u32) -> Option<&[u8]> {
        self.block.restart_key(i)
    }

    /// Asks for the cache lines of the restart keys a seek's binary search may read (a data
    /// block has a few: 3 in a db_bench block), all at once: each would otherwise miss in
    /// turn, the next address known only once the step before it compared.
    fn prefetch_restart_keys(&self) {
        if self.block.num_restarts > MAX_PREFETCHED_RESTARTS {
            return; // a large block's search reads few of its many restart keys
        }
        let bytes = self.block.data.bytes();
        for i in 0..self.block.num_restarts {
            crate::util::prefetch::prefetch(bytes, self.block.restart_point(i));
        }
    }

    /// Asks for the cache lines of the restart interval a seek is about to parse (at most
    /// `MAX_PREFETCH_BYTES`), right after `seek_to_restart_point`. A point lookup in a block
    /// that has left the CPU cache otherwise misses on each entry in turn, one miss waiting
    /// for the last (`decode_entry` was a third of a cached readrandom, nearly all of it on
    /// an entry's first byte); asked together, the misses overlap.
    fn prefetch_interval(&self) {
        let start = self.value.0;
        let end = self.next_restart.min(self.block.restarts);
        let end = end.min(start + MAX_PREFETCH_BYTES);
        crate::util::prefetch::prefetch_range(self.block.data.bytes(), start, end);
    }
}

impl InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.current < self.block.restarts
    }

    fn seek_to_first(&mut self) {
        self.prev_entries.clear();
        self.key_in_prev_keys = None;
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        self.seek_to_restart_point(0);
        self.parse_next_key();
    }

    fn seek_to_last(&mut self) {
        self.prev_entries.clear();
        self.key_in_prev_keys = None;
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        // The whole last interval is parsed anyway: keep it for the steps back.
        self.parse_interval_until(self.block.num_restarts - 1, self.block.restarts);
    }

    fn seek(&mut self, target: &[u8]) {
        self.prev_entries.clear();
        self.key_in_prev_keys = None;
        if self.block.num_restarts == 0 {
            self.current = self.block.restarts;
            return;
        }
        if let Some(prefixes) = &self.block.restart_prefixes {
            // Every entry is a restart point; keys before `lo` are < target and those from
            // `hi` on are > target, so the first entry >= target is the first of `[lo, hi)`
            // (usually empty) that is, or `hi`: no other key is read.
            let (lo, hi) = prefixes.candidates(target);
            let (mut lo, mut hi) = (lo as u32, hi as u32);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let Some(mid_key) = self.restart_key(mid) else {
                    self.corrupt("bad restart point");
                    return;
                };
                if compare_internal_keys(mid_key, target) == Ordering::Less {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if lo < self.block.num_restarts {
                self.seek_to_restart_point(lo);
            } else {
                self.value = (self.block.restarts, 0); // past the last entry
            }
            self.parse_next_key();
            return;
        }
        // Binary search for the last restart point whose key is < target (0 if none is).
        self.prefetch_restart_keys();
        let (mut left, mut right) = (0u32, self.block.num_restarts - 1);
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let Some(mid_key) = self.restart_key(mid) else {
                self.corrupt("bad restart point");
                return;
            };
            if compare_internal_keys(mid_key, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        self.seek_to_restart_point(left);
        self.prefetch_interval();
        loop {
            if !self.parse_next_key() {
                return;
            }
            if compare_internal_keys(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if let Some((start, end)) = self.key_in_prev_keys.take() {
            // The next key shares its prefix with this one: make it whole in `key` first.
            self.key.clear();
            self.key.extend_from_slice(&self.prev_keys[start..end]);
        }
        self.prev_entries.clear();
        self.parse_next_key();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if let Some(e) = self.prev_entries.pop() {
            // The entry's key stays where the interval's parse left it (no copy); the keys of
            // the entries popped before it, after it in `prev_keys`, are no longer needed.
            let key_start = self.prev_entries.last().map_or(0, |p| p.key_end);
            self.current = e.offset;
            self.key_in_prev_keys = Some((key_start, e.key_end));
            self.value = e.value;
            return;
        }
        let original = self.current;
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                // Off the block's first entry: invalid, with no key and nothing after it (a
                // stray `next` stays at the end). An interval's parse below resets the key.
                self.current = self.block.restarts;
                self.restart_index = self.block.num_restarts;
                self.next_restart = usize::MAX;
                self.key_in_prev_keys = None;
                self.key.clear();
                self.value = (self.block.restarts, 0);
                return;
            }
            self.restart_index -= 1;
        }
        self.parse_interval_until(self.restart_index, original);
    }

    fn key(&self) -> &[u8] {
        self.current_key()
    }

    fn value(&self) -> &[u8] {
        &self.block.data.bytes()[self.value.0..self.value.0 + self.value.1]
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
