//! Writes a table: data blocks cut at `block_size`, an index entry per block keyed by the
//! shortest separator, a bloom filter block over user keys, the metaindex, and the footer.
//! A block is stored compressed only if that saves at least 1/8 of its size (LevelDB's rule).
//! Keys must be added in increasing internal-key order.
//!
//! With a `CompressionPool`, cut data blocks are gathered into runs of `RUN_BYTES` that the
//! pool's workers compress while the next ones are built (see `compress_pool`). Blocks are
//! written strictly in order, the oldest as soon as the blocks in flight pass
//! `pipeline_bytes` raw bytes (a quarter of the target table size, at most 1 MiB), so which block is written when (and so where a compaction cuts
//! its outputs, by `file_size`) is a function of the entries alone, never of thread timing.
//! A block's filter keys and index entry wait with it, since both need its final offset.
//! Without a pool (wasm, `compression_threads` 0) every block is compressed and written as it
//! is cut, as LevelDB does.
//!
//! A compaction may hand over a block already stored (`add_copied`: one entry that fills a
//! block alone, in this table's codec); it takes its place in the order like any cut block,
//! with nothing left to compress, and its bytes are those the entry's own block would get.

use std::collections::VecDeque;
use std::sync::Arc;

use super::block_builder::BlockBuilder;
use super::compress_pool::{compress_block, CompressedBlock, CompressionPool, Job};
use super::filter_block::FilterBlockBuilder;
use super::format::{BlockHandle, Footer};
use crate::compress::CompressionType;
use crate::error::Result;
use crate::filter::{BloomFilterPolicy, BLOOM_FILTER_NAME};
use crate::key::{extract_user_key, internal_short_successor, internal_shortest_separator};
use crate::storage::WritableFile;
use crate::util::crc;

/// Raw bytes of cut blocks handed to a worker at once (one run), at least.
pub const RUN_BYTES: usize = 64 << 10;
/// Raw bytes of one table's blocks in flight with a pool, at most (beyond a single block):
/// a quarter of the table size a compaction aims at (`pipeline_bytes`), so `file_size`'s
/// estimate of the blocks in flight moves a compaction's cut by little, and never more.
pub const PIPELINE_BYTES: usize = 1 << 20;

/// The pipeline for tables cut at `max_file_size`: a quarter of it, at most `PIPELINE_BYTES`.
pub fn pipeline_bytes(max_file_size: u64) -> usize {
    (max_file_size / 4).min(PIPELINE_BYTES as u64) as usize
}

/// Table-writing settings (taken from `Options`).
#[derive(Clone, Debug)]
pub struct TableBuilderOptions {
    pub block_size: usize,
    pub block_restart_interval: usize,
    pub compression: CompressionType,
    /// 0 = no filter block.
    pub bloom_bits_per_key: u32,
    /// Workers that compress data blocks; `None` compresses each block as it is cut.
    pub compression_pool: Option<Arc<CompressionPool>>,
    /// Raw bytes of cut blocks in flight with a pool, at most (beyond a single block).
    pub pipeline_bytes: usize,
    /// Whether `add_copied` takes stored blocks (`Options::copy_stored_blocks`).
    pub copy_stored_blocks: bool,
}

impl From<&crate::options::Options> for TableBuilderOptions {
    fn from(o: &crate::options::Options) -> Self {
        TableBuilderOptions {
            block_size: o.block_size,
            block_restart_interval: o.block_restart_interval,
            compression: o.compression,
            bloom_bits_per_key: o.bloom_bits_per_key,
            compression_pool: None,
            pipeline_bytes: pipeline_bytes(o.max_file_size),
            copy_stored_blocks: o.copy_stored_blocks,
        }
    }
}

/// Memory held by a pending block's filter keys.
fn key_bytes(keys: &[u8], key_ends: &[usize]) -> usize {
    keys.len() + std::mem::size_of_val(key_ends)
}

/// A cut data block not yet written.
struct PendingBlock {
    job: Arc<Job>,
    raw_len: usize,
    /// The block's user keys end to end, and where each ends, for the filter.
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    /// The index key between this block and the next, once the next key is known.
    separator: Option<Vec<u8>>,
}

pub struct TableBuilder {
    options: TableBuilderOptions,
    file: Box<dyn WritableFile>,
    offset: u64,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    last_key: Vec<u8>,
    num_entries: u64,
    filter: Option<FilterBlockBuilder>,
    /// User keys of `data_block` (for the filter), end to end, and where each ends.
    block_keys: Vec<u8>,
    block_key_ends: Vec<usize>,
    /// Cut blocks waiting to be written, oldest first, and their raw bytes in total.
    pending: VecDeque<PendingBlock>,
    pending_raw: usize,
    /// Bytes of the pending blocks' filter keys (held whole, unlike in the blocks).
    pending_keys: usize,
    /// The run taking cut blocks until it reaches `RUN_BYTES` (with a pool), and its bytes.
    open_run: Option<(Arc<Job>, usize)>,
    /// Set after a data block is written, until the next key tells the separator to use.
    pending_index_entry: Option<BlockHandle>,
    /// Buffers of written blocks, for the next blocks.
    spare: Vec<Vec<u8>>,
}

impl TableBuilder {
    pub fn new(options: TableBuilderOptions, file: Box<dyn WritableFile>) -> Self {
        let filter = (options.bloom_bits_per_key > 0).then(|| {
            let mut f = FilterBlockBuilder::new(BloomFilterPolicy::new(options.bloom_bits_per_key));
            f.start_block(0);
            f
        });
        TableBuilder {
            data_block: BlockBuilder::new(options.block_restart_interval),
            index_block: BlockBuilder::new(1),
            options,
            file,
            offset: 0,
            last_key: Vec::new(),
            num_entries: 0,
            filter,
            block_keys: Vec::new(),
            block_key_ends: Vec::new(),
            pending: VecDeque::new(),
            pending_raw: 0,
            pending_keys: 0,
            open_run: None,
            pending_index_entry: None,
            spare: Vec::new(),
        }
    }

    /// Adds an entry; `key` is an internal key greater than every key added before.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.start_entry(key);
        self.data_block.add(key, value);
        if self.data_block.current_size_estimate() >= self.options.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Whether the entry of a stored one-entry block (compression id `compression_id`,
    /// decoding to `decoded_len` bytes) may be copied here (`add_copied`), as far as is known
    /// before its bytes are read: copies are on, the entry is cut as a block of its own here
    /// (the data block is empty and the entry alone reaches `block_size`: a one-entry block's
    /// size is `current_size_estimate` after its `add`), and the id is this table's codec's.
    pub fn may_copy(&self, compression_id: u8, decoded_len: usize) -> bool {
        self.options.copy_stored_blocks
            && self.data_block.is_empty()
            && decoded_len >= self.options.block_size
            && compression_id == self.options.compression.written_id()
    }

    /// Adds `key`, the only entry of a block stored elsewhere as `stored` with compression id
    /// `type_id` and decoding to `decoded_len` bytes (laid out as `BlockBuilder` lays out one
    /// entry: `BlockIter::is_sole_entry`), by writing those bytes as they are: the block `add`
    /// would build here, cut and store, without compressing it again. Refused (false, nothing
    /// added; the caller `add`s the entry) unless `may_copy` holds, the bytes are in this
    /// table's codec, and a compressed block saves the eighth `compress_block` asks for.
    /// Bytes this build compressed are the bytes a rebuild writes; another writer's stay as
    /// that writer compressed them (the same block, decoded).
    pub fn add_copied(
        &mut self,
        key: &[u8],
        decoded_len: usize,
        stored: Vec<u8>,
        type_id: u8,
    ) -> Result<bool> {
        let pays = type_id == 0 || stored.len() < decoded_len - decoded_len / 8;
        if !self.may_copy(type_id, decoded_len)
            || !self.options.compression.stored_as(type_id, &stored)
            || !pays
        {
            return Ok(false);
        }
        self.start_entry(key);
        let stored_len = stored.len();
        let block = CompressedBlock {
            data: stored,
            type_id,
            spare: Vec::new(),
        };
        self.queue_block(Job::ready(self.options.compression, block), stored_len)?;
        Ok(true)
    }

    /// An entry's bookkeeping before its bytes go in a block: the index entry of the block
    /// before it (whose separator needed this key), its filter key, the last key, the count.
    fn start_entry(&mut self, key: &[u8]) {
        if let Some(handle) = self.pending_index_entry.take() {
            let sep = internal_shortest_separator(&self.last_key, key);
            self.add_index_entry(&sep, handle);
        } else if let Some(block) = self.pending.back_mut() {
            if block.separator.is_none() {
                block.separator = Some(internal_shortest_separator(&self.last_key, key));
            }
        }
        if self.filter.is_some() {
            self.block_keys.extend_from_slice(extract_user_key(key));
            self.block_key_ends.push(self.block_keys.len());
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
    }

    fn add_index_entry(&mut self, separator: &[u8], handle: BlockHandle) {
        let mut h = Vec::new();
        handle.encode_to(&mut h);
        self.index_block.add(separator, &h);
    }

    /// Cuts the current data block: adds it to the open run (handed to the pool when full)
    /// or compresses it here, then writes the blocks the pipeline no longer holds.
    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let buffer = self.spare.pop().unwrap_or_default();
        let raw = self.data_block.take_finished(buffer);
        let raw_len = raw.len();
        let scratch = self.spare.pop().unwrap_or_default();
        let job = match (&self.options.compression_pool, self.open_run.take()) {
            (Some(pool), open) => {
                let (job, bytes) = match open {
                    Some((job, bytes)) => match job.push(raw, scratch) {
                        Ok(()) => (job, bytes + raw_len),
                        // The writer already compressed that run: start another.
                        Err((raw, scratch)) => (self.new_run(raw, scratch), raw_len),
                    },
                    None => (self.new_run(raw, scratch), raw_len),
                };
                if bytes >= RUN_BYTES {
                    pool.submit(job.clone());
                } else {
                    self.open_run = Some((job.clone(), bytes));
                }
                job
            }
            (None, _) => self.new_run(raw, scratch),
        };
        self.queue_block(job, raw_len)
    }

    /// Queues a cut block (in `job`, of `raw_len` bytes at most once stored) with the filter
    /// keys gathered for it, then writes the blocks the pipeline no longer holds.
    fn queue_block(&mut self, job: Arc<Job>, raw_len: usize) -> Result<()> {
        let keys = std::mem::take(&mut self.block_keys);
        let key_ends = std::mem::take(&mut self.block_key_ends);
        self.pending_keys += key_bytes(&keys, &key_ends);
        self.pending.push_back(PendingBlock {
            job,
            raw_len,
            keys,
            key_ends,
            separator: None,
        });
        self.pending_raw += raw_len;
        let pooled = self.options.compression_pool.is_some();
        while !self.pending.is_empty()
            && (!pooled
                || (self.pending.len() > 1
                    && self.pending_raw + self.pending_keys > self.options.pipeline_bytes))
        {
            self.write_oldest()?;
        }
        Ok(())
    }

    fn new_run(&self, raw: Vec<u8>, scratch: Vec<u8>) -> Arc<Job> {
        let job = Job::new(self.options.compression);
        // A new run is not started by anyone yet: the push cannot fail.
        let _ = job.push(raw, scratch);
        job
    }

    /// Writes the oldest cut block (waiting for its compression), its filter keys and, when
    /// the next key is known, its index entry.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(mut block) = self.pending.pop_front() else {
            return Ok(());
        };
        self.pending_raw -= block.raw_len;
        self.pending_keys -= key_bytes(&block.keys, &block.key_ends);
        if self
            .open_run
            .as_ref()
            .is_some_and(|(job, _)| Arc::ptr_eq(job, &block.job))
        {
            // Compressed here, now: the run takes no more blocks.
            self.open_run = None;
        }
        let compressed = match &self.options.compression_pool {
            Some(pool) => pool.next_block(&block.job)?,
            None => block.job.next_block(&mut false)?,
        };
        let CompressedBlock {
            data,
            type_id,
            spare,
        } = compressed;
        // `reached` bounds a block in flight by its raw size: `compress_block` stores the raw
        // bytes whenever compressing would not save an eighth.
        debug_assert!(
            data.len() <= block.raw_len,
            "a stored block outgrew its raw size"
        );
        let handle = self.write_raw_block(&data, type_id)?;
        self.recycle(data);
        self.recycle(spare);
        if let Some(f) = &mut self.filter {
            let mut begin = 0;
            for &end in &block.key_ends {
                f.add_key(&block.keys[begin..end]);
                begin = end;
            }
            f.start_block(self.offset);
        }
        match block.separator.take() {
            Some(sep) => self.add_index_entry(&sep, handle),
            None => self.pending_index_entry = Some(handle),
        }
        // The key buffers go back for the next block's keys when those are still empty.
        if self.block_keys.is_empty() && self.block_keys.capacity() < block.keys.capacity() {
            block.keys.clear();
            block.key_ends.clear();
            self.block_keys = block.keys;
            self.block_key_ends = block.key_ends;
        }
        Ok(())
    }

    fn recycle(&mut self, mut buffer: Vec<u8>) {
        if self.spare.len() < 4 && buffer.capacity() > 0 {
            buffer.clear();
            self.spare.push(buffer);
        }
    }

    /// Writes a meta block (filter index, index), compressed on this thread.
    fn write_block(&mut self, block: &mut BlockBuilder) -> Result<BlockHandle> {
        let raw = block.take_finished(Vec::new());
        let b = compress_block(self.options.compression, raw, Vec::new());
        self.write_raw_block(&b.data, b.type_id)
    }

    fn write_raw_block(&mut self, contents: &[u8], type_id: u8) -> Result<BlockHandle> {
        let handle = BlockHandle {
            offset: self.offset,
            size: contents.len() as u64,
        };
        self.file.append(contents)?;
        let c = crc::mask(crc::extend(crc::value(contents), &[type_id]));
        let mut trailer = [0u8; 5];
        trailer[0] = type_id;
        trailer[1..].copy_from_slice(&c.to_le_bytes());
        self.file.append(&trailer)?;
        self.offset += contents.len() as u64 + 5;
        Ok(handle)
    }

    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// Bytes written so far (LevelDB's `FileSize()`): blocks still being compressed are not
    /// counted. Where a compaction cuts, ask `reached`.
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Whether the table has reached `limit` bytes, as LevelDB's `FileSize() >= limit` says
    /// with every cut block compressed as it is cut. While the blocks in flight could reach
    /// the limit (each is stored at most at its raw size, plus its 5-byte trailer), they are
    /// written first and the exact offset answers: cut points are LevelDB's whatever the
    /// pool, and only a table's last stretch before the limit is compressed as cut.
    pub fn reached(&mut self, limit: u64) -> Result<bool> {
        let bound = self
            .offset
            .saturating_add(self.pending_raw as u64)
            .saturating_add(5 * self.pending.len() as u64);
        if bound < limit {
            return Ok(false);
        }
        while !self.pending.is_empty() {
            self.write_oldest()?;
        }
        Ok(self.offset >= limit)
    }

    /// Writes the filter, metaindex and index blocks and the footer; syncs nothing.
    /// Returns the file (for syncing) and the table's size.
    pub fn finish(mut self) -> Result<(Box<dyn WritableFile>, u64)> {
        self.flush_data_block()?;
        while !self.pending.is_empty() {
            self.write_oldest()?;
        }
        let mut meta = BlockBuilder::new(1);
        if let Some(f) = self.filter.take() {
            let data = f.finish();
            let h = self.write_raw_block(&data, 0)?;
            let mut v = Vec::new();
            h.encode_to(&mut v);
            meta.add(format!("filter.{BLOOM_FILTER_NAME}").as_bytes(), &v);
        }
        let metaindex = self.write_block(&mut meta)?;
        if let Some(handle) = self.pending_index_entry.take() {
            let succ = internal_short_successor(&self.last_key);
            self.add_index_entry(&succ, handle);
        }
        let mut index_block = std::mem::replace(&mut self.index_block, BlockBuilder::new(1));
        let index = self.write_block(&mut index_block)?;
        let footer = Footer { metaindex, index }.encode();
        self.file.append(&footer)?;
        self.offset += footer.len() as u64;
        self.file.flush()?;
        let file = std::mem::replace(&mut self.file, Box::new(Finished));
        Ok((file, self.offset))
    }
}

impl Drop for TableBuilder {
    /// A table given up on (an error, a compaction cut short) cancels its blocks not yet
    /// started, so no worker compresses them for nothing.
    fn drop(&mut self) {
        for block in &self.pending {
            block.job.cancel();
        }
        if let Some((job, _)) = &self.open_run {
            job.cancel();
        }
    }
}

/// Stands in for the file `finish` handed back.
struct Finished;

impl WritableFile for Finished {
    fn append(&mut self, _: &[u8]) -> Result<()> {
        Err(crate::error::Error::internal("table already finished"))
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
}
