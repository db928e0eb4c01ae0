//! Writes a table: data blocks cut at `block_size`, an index entry per block keyed by the
//! shortest separator, a bloom filter block over user keys, the metaindex, and the footer.
//! A block is stored compressed only if that saves at least 1/8 of its size (LevelDB's rule).
//! Keys must be added in increasing internal-key order.

use super::block_builder::BlockBuilder;
use super::filter_block::FilterBlockBuilder;
use super::format::{BlockHandle, Footer};
use crate::compress::{compress, CompressionType};
use crate::error::Result;
use crate::filter::{BloomFilterPolicy, BLOOM_FILTER_NAME};
use crate::key::{extract_user_key, internal_short_successor, internal_shortest_separator};
use crate::storage::WritableFile;
use crate::util::crc;

/// Table-writing settings (taken from `Options`).
#[derive(Clone, Debug)]
pub struct TableBuilderOptions {
    pub block_size: usize,
    pub block_restart_interval: usize,
    pub compression: CompressionType,
    /// 0 = no filter block.
    pub bloom_bits_per_key: u32,
}

impl From<&crate::options::Options> for TableBuilderOptions {
    fn from(o: &crate::options::Options) -> Self {
        TableBuilderOptions {
            block_size: o.block_size,
            block_restart_interval: o.block_restart_interval,
            compression: o.compression,
            bloom_bits_per_key: o.bloom_bits_per_key,
        }
    }
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
    /// Set after a data block is written, until the next key tells the separator to use.
    pending_index_entry: Option<BlockHandle>,
    compressed: Vec<u8>,
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
            pending_index_entry: None,
            compressed: Vec::new(),
        }
    }

    /// Adds an entry; `key` is an internal key greater than every key added before.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(handle) = self.pending_index_entry.take() {
            let sep = internal_shortest_separator(&self.last_key, key);
            let mut h = Vec::new();
            handle.encode_to(&mut h);
            self.index_block.add(&sep, &h);
        }
        if let Some(f) = &mut self.filter {
            f.add_key(extract_user_key(key));
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
        self.data_block.add(key, value);
        if self.data_block.current_size_estimate() >= self.options.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let mut block = std::mem::replace(&mut self.data_block, BlockBuilder::new(1));
        let handle = self.write_block(&mut block)?;
        block.reset();
        self.data_block = block;
        self.pending_index_entry = Some(handle);
        if let Some(f) = &mut self.filter {
            f.start_block(self.offset);
        }
        Ok(())
    }

    fn write_block(&mut self, block: &mut BlockBuilder) -> Result<BlockHandle> {
        let raw = block.finish();
        let kind = self.options.compression;
        let mut compressed = std::mem::take(&mut self.compressed);
        let use_compressed = kind != CompressionType::None
            && compress(kind, raw, &mut compressed)
            && compressed.len() < raw.len() - raw.len() / 8;
        let handle = if use_compressed {
            self.write_raw_block(&compressed, kind.id())?
        } else {
            self.write_raw_block(raw, 0)?
        };
        self.compressed = compressed;
        Ok(handle)
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

    /// Bytes written so far (the table's size if finished now, less the tail).
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Writes the filter, metaindex and index blocks and the footer; syncs nothing.
    /// Returns the file (for syncing) and the table's size.
    pub fn finish(mut self) -> Result<(Box<dyn WritableFile>, u64)> {
        self.flush_data_block()?;
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
            let mut h = Vec::new();
            handle.encode_to(&mut h);
            self.index_block.add(&succ, &h);
        }
        let mut index_block = std::mem::replace(&mut self.index_block, BlockBuilder::new(1));
        let index = self.write_block(&mut index_block)?;
        let footer = Footer { metaindex, index }.encode();
        self.file.append(&footer)?;
        self.offset += footer.len() as u64;
        self.file.flush()?;
        Ok((self.file, self.offset))
    }
}
