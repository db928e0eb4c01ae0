//! Reading a table: footer → index block (+ metaindex → filter block) at open; data blocks on
//! demand through the shared block cache. Every block's checksum is verified unless the read
//! options say otherwise; errors name the table file and the block offset.
//!
//! A `Table` is immutable and shared (`Arc`) by the table cache, iterators and scans.

use std::sync::{Arc, OnceLock};

use super::block::{Block, BlockIter};
use super::filter_block::FilterBlockReader;
use super::format::{
    check_handle, check_trailer, decode_block, decode_block_slice, read_block, BlockHandle, Footer,
    BLOCK_TRAILER_SIZE, FOOTER_SIZE,
};
use super::readahead::{Readahead, ReadaheadPool, Successor, AUTO_READAHEAD_BLOCKS};
use super::two_level_iterator::{InnerOpener, TwoLevelIterator};
use crate::cache::Cache;
use crate::error::{Error, Result};
use crate::filter::BLOOM_FILTER_NAME;
use crate::iterator::InternalIterator;
use crate::key::extract_user_key;
use crate::options::ReadOptions;
use crate::storage::{read_exact_at, read_exact_into, RandomAccessFile};
use crate::util::buffer_pool;

/// A stored data block holding exactly one entry, the one an iterator stands on, laid out as
/// a `BlockBuilder` lays it out (`InternalIterator::sole_entry_block`): where it lies, its
/// compression id and its decoded size.
#[derive(Clone)]
pub struct SoleEntryBlock {
    pub table: Arc<Table>,
    pub handle: BlockHandle,
    /// The compression id in the block's trailer, as it was read and decoded.
    pub compression_id: u8,
    /// Bytes of the decoded block (its entry, one restart point and the restart count).
    pub decoded_len: usize,
}

impl SoleEntryBlock {
    /// The block as stored (`read_stored_block`).
    pub fn read(&self) -> Result<(Vec<u8>, u8)> {
        self.table.read_stored_block(self.handle)
    }
}

/// Settings a table reader needs from the database.
#[derive(Clone)]
pub struct TableSettings {
    pub block_cache: Option<Arc<Cache<Arc<Block>>>>,
    pub max_block_size: usize,
    /// Verify the index and filter blocks read at open (always on by default).
    pub verify_checksums: bool,
    /// Workers that decompress data blocks ahead of iterators whose read options ask for
    /// readahead; `None` reads every block on the iterating thread.
    pub readahead: Option<Arc<ReadaheadPool>>,
}

pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    /// The file's memory map, when the storage maps it: point reads and user iterators
    /// borrow uncompressed data blocks from it (`Block::mapped`) and decompress the others
    /// straight out of it.
    map: Option<bytes::Bytes>,
    name: String,
    size: u64,
    settings: TableSettings,
    cache_id: u64,
    index: Arc<Block>,
    index_offset: u64,
    filter: Option<FilterBlockReader>,
    /// Compression ids of the index block (data blocks are seen as they are read).
    index_compression: u8,
    /// Every data block's handle in order, decoded from the index on first use (readahead).
    data_handles: OnceLock<Result<Vec<BlockHandle>>>,
}

impl Table {
    /// Opens the table in `file` (`size` bytes), named `name` in errors.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        name: impl Into<String>,
        size: u64,
        settings: TableSettings,
    ) -> Result<Table> {
        let name = name.into();
        Self::open_inner(file, &name, size, settings).map_err(|e| e.in_file(name))
    }

    fn open_inner(
        file: Arc<dyn RandomAccessFile>,
        name: &str,
        size: u64,
        settings: TableSettings,
    ) -> Result<Table> {
        if size < FOOTER_SIZE as u64 {
            return Err(Error::corruption("file is too short to be a table").at_offset(0));
        }
        let footer_offset = size - FOOTER_SIZE as u64;
        let footer_bytes = read_exact_at(&*file, footer_offset, FOOTER_SIZE)?;
        let footer = Footer::decode(&footer_bytes).map_err(|e| e.at_offset(footer_offset))?;
        let verify = settings.verify_checksums;
        let max = settings.max_block_size;
        let index_contents = read_block(&*file, size, footer.index, verify, max)?;
        let index_compression = index_contents.compression_id;
        let index = Arc::new(
            Block::new(index_contents.data)
                .map_err(|e| e.at_offset(footer.index.offset))?
                .with_restart_prefixes(),
        );

        // The filter is an optimization: a table whose metaindex or filter is damaged still
        // opens and answers reads (from the checksummed data blocks), only slower.
        let filter = read_block(&*file, size, footer.metaindex, verify, max)
            .ok()
            .and_then(|m| Block::new(m.data).ok())
            .and_then(|meta| {
                let meta = Arc::new(meta);
                let mut it = meta.iter();
                it.seek_to_first();
                let wanted = format!("filter.{BLOOM_FILTER_NAME}");
                while it.valid() {
                    if it.key() == wanted.as_bytes() {
                        return BlockHandle::decode(it.value()).map(|(h, _)| h);
                    }
                    it.next();
                }
                None
            })
            .and_then(|h| read_block(&*file, size, h, verify, max).ok())
            .map(|c| FilterBlockReader::new(c.data));

        let cache_id = settings.block_cache.as_ref().map_or(0, |c| c.new_id());
        Ok(Table {
            map: file.mapped_shared(),
            file,
            name: name.to_string(),
            size,
            settings,
            cache_id,
            index,
            index_offset: footer.index.offset,
            filter,
            index_compression,
            data_handles: OnceLock::new(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn file_size(&self) -> u64 {
        self.size
    }

    pub fn index_compression(&self) -> u8 {
        self.index_compression
    }

    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// An iterator over the index block: keys are separators, values are block handles.
    pub fn index_iter(&self) -> BlockIter {
        self.index.iter()
    }

    /// Reads (or finds in the cache) the data block named by an index value.
    pub fn block(&self, index_value: &[u8], options: &ReadOptions) -> Result<Arc<Block>> {
        let (handle, _) = BlockHandle::decode(index_value).ok_or_else(|| {
            Error::corruption("bad block handle in index block").in_file(self.name.clone())
        })?;
        self.block_at(handle, options)
    }

    pub fn block_at(&self, handle: BlockHandle, options: &ReadOptions) -> Result<Arc<Block>> {
        Ok(self.block_at_counted(handle, options, true)?.0)
    }

    /// `block_at`, and whether the block was decoded for this read: not a cache hit, not
    /// borrowed from the file's map (what auto readahead counts). `admit`: a block lent from
    /// the map may be offered to the cache (below); a scan's step to the next block passes
    /// false.
    pub fn block_at_counted(
        &self,
        handle: BlockHandle,
        options: &ReadOptions,
        admit: bool,
    ) -> Result<(Arc<Block>, bool)> {
        let key = (self.cache_id, handle.offset);
        let cache = self.settings.block_cache.as_ref();
        if let Some(b) = cache.and_then(|c| c.get(&key)) {
            return Ok((b, false));
        }
        // Reads that fill the cache are point reads and user iterators: they use the file's
        // map. Bulk reads (fill_cache off) read with pread.
        //
        // A block borrowed from the map is not cached on its first read (as in LevelDB):
        // borrowing it again costs less than a cache entry's insert and eviction (3B random
        // reads without compression, 1 M: 2.6-2.7 us/op uncached, 2.95 cached), and a cached
        // borrow would keep its table mapped (and, once compacted away, its disk space) while
        // cached. Read again soon after (`Cache::seen_recently`), it is copied, its checksum
        // verified on the copy, and the copy cached: a borrow verifies the block's checksum at
        // every read, and a hot block's 4 KiB CRC was half of readhot without compression.
        let own = || admit && options.fill_cache && cache.is_some_and(|c| c.seen_recently(&key));
        let block =
            self.read_block_via(handle, options.verify_checksums, options.fill_cache, &own)?;
        let block = Arc::new(block.0);
        let decoded = !block.is_mapped();
        if options.fill_cache && decoded {
            if let Some(cache) = cache {
                cache.insert(key, block.clone(), block.charge());
            }
        }
        Ok((block, decoded))
    }

    /// Reads and decodes one block without the cache: `(block, compression id)`.
    pub fn read_block_uncached(&self, handle: BlockHandle, verify: bool) -> Result<(Block, u8)> {
        self.read_block_via(handle, verify, false, &|| false)
    }

    /// `read_block_uncached`, through the file's map when it has one and `use_map` is set;
    /// an uncompressed block from the map is borrowed unless `own` says to copy it.
    fn read_block_via(
        &self,
        handle: BlockHandle,
        verify: bool,
        use_map: bool,
        own: &dyn Fn() -> bool,
    ) -> Result<(Block, u8)> {
        if let Some(map) = self.map.as_ref().filter(|_| use_map) {
            if let Some(read) = self.read_mapped(map, handle, verify, own) {
                return read.map_err(|e| e.in_file(self.name.clone()).at_offset(handle.offset));
            }
        }
        let contents = read_block(
            &*self.file,
            self.size,
            handle,
            verify,
            self.settings.max_block_size,
        )
        .map_err(|e| e.in_file(self.name.clone()))?;
        let id = contents.compression_id;
        let block = Block::new(contents.data)
            .map_err(|e| e.in_file(self.name.clone()).at_offset(handle.offset))?
            .stored_as(id);
        Ok((block, id))
    }

    /// Asks the CPU to cache `len` bytes of the file's map from `offset` (nothing without a
    /// map; clipped to it): the block a forward scan reads next, whose checksum is then
    /// computed from the cache instead of memory (3B's first sequential read spent 40% of its
    /// time opening blocks, most of it the CRC's first touch of each).
    pub fn prefetch_mapped(&self, offset: u64, len: u64) {
        let Some(map) = &self.map else { return };
        let (Ok(start), Ok(len)) = (usize::try_from(offset), usize::try_from(len)) else {
            return;
        };
        crate::util::prefetch::prefetch_range(map, start, start.saturating_add(len));
    }

    /// The block at `handle` out of the file's map: an uncompressed block is borrowed (no
    /// copy, as LevelDB reads its mapped tables) unless `own()` (asked only then) says to
    /// copy it, a compressed one decompressed from it. A copy's checksum is verified on the
    /// copy: the bytes kept are the bytes checked. `None` when the block lies beyond the
    /// mapped length (a file shorter than the MANIFEST says: the read path reports it).
    fn read_mapped(
        &self,
        map: &bytes::Bytes,
        handle: BlockHandle,
        verify: bool,
        own: &dyn Fn() -> bool,
    ) -> Option<Result<(Block, u8)>> {
        let max = self.settings.max_block_size;
        if let Err(e) = check_handle(handle, self.size, max) {
            return Some(Err(e));
        }
        // check_handle bounded offset + size + trailer by the file's size; a host whose usize
        // cannot hold them (never mapped today) takes the read path.
        let start = usize::try_from(handle.offset).ok()?;
        let n = usize::try_from(handle.size).ok()?;
        let raw = map.get(start..start.checked_add(n + BLOCK_TRAILER_SIZE)?)?;
        Some((|| {
            if raw[n] != 0 {
                let contents = decode_block_slice(raw, verify, max)?;
                let id = contents.compression_id;
                return Ok((Block::new(contents.data)?.stored_as(id), id));
            }
            if own() {
                let mut copy = buffer_pool::take(raw.len());
                copy.copy_from_slice(raw);
                let contents = decode_block(copy, verify, max)?;
                return Ok((Block::new(contents.data)?.stored_as(0), 0));
            }
            check_trailer(raw, verify)?;
            Ok((Block::mapped(map.slice(start..start + n))?.stored_as(0), 0))
        })())
    }

    /// The block at `handle` as stored, without its trailer, and its compression id: the
    /// bytes a compaction copies into a new table (`TableBuilder::add_copied`). Its checksum
    /// is always verified, since a copy would carry damage on under a fresh trailer.
    pub fn read_stored_block(&self, handle: BlockHandle) -> Result<(Vec<u8>, u8)> {
        (|| {
            check_handle(handle, self.size, self.settings.max_block_size)?;
            let n = handle.size as usize; // check_handle: size + trailer fits in a usize
            let mut raw = read_exact_at(&*self.file, handle.offset, n + BLOCK_TRAILER_SIZE)?;
            check_trailer(&raw, true)?;
            let type_id = raw[n];
            raw.truncate(n);
            Ok((raw, type_id))
        })()
        .map_err(|e: Error| e.in_file(self.name.clone()).at_offset(handle.offset))
    }

    /// Reads bytes of the file as they are, unchecked (what `dialect::detect` looks at).
    pub fn read_raw_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.file.read_at(offset, buf)
    }

    /// Every data block's handle, in file order (decoded from the index once).
    pub fn data_handles(&self) -> Result<&[BlockHandle]> {
        let decoded = self.data_handles.get_or_init(|| {
            let mut out = Vec::new();
            let mut it = self.index.iter();
            it.seek_to_first();
            while it.valid() {
                let (h, _) = BlockHandle::decode(it.value()).ok_or_else(|| {
                    Error::corruption("bad block handle in index block")
                        .in_file(self.name.clone())
                        .at_offset(self.index_offset)
                })?;
                out.push(h);
                it.next();
            }
            it.status().map_err(|e| e.in_file(self.name.clone()))?;
            Ok(out)
        });
        match decoded {
            Ok(h) => Ok(h),
            Err(e) => Err(e.clone()),
        }
    }

    /// How many data blocks from index `first` make a readahead run of about `bytes`
    /// compressed bytes (at least one; only blocks laid end to end, so one read covers them).
    pub fn run_length(&self, first: usize, bytes: u64) -> usize {
        let Ok(handles) = self.data_handles() else {
            return 1;
        };
        let mut total = 0u64;
        let mut count = 0;
        for (i, h) in handles.iter().enumerate().skip(first) {
            // (Checked: the handles come from the file, and may be anything.)
            let contiguous = i == first
                || handles[i - 1]
                    .offset
                    .checked_add(handles[i - 1].size)
                    .and_then(|e| e.checked_add(BLOCK_TRAILER_SIZE as u64))
                    == Some(h.offset);
            if count > 0 && (!contiguous || total.saturating_add(h.size) > bytes) {
                break;
            }
            total = total.saturating_add(h.size.saturating_add(BLOCK_TRAILER_SIZE as u64));
            count += 1;
        }
        count.max(1)
    }

    /// How many data blocks ending just before index `end` make a readahead run of about
    /// `bytes` compressed bytes, for a cursor moving backward: the run is blocks
    /// `end - count..end` (at least one when `end` > 0; only blocks laid end to end).
    pub fn run_length_back(&self, end: usize, bytes: u64) -> usize {
        let Ok(handles) = self.data_handles() else {
            return end.min(1);
        };
        let end = end.min(handles.len());
        let mut total = 0u64;
        let mut count = 0;
        for i in (0..end).rev() {
            let h = handles[i];
            // (Checked: the handles come from the file, and may be anything.)
            let contiguous = i + 1 == end
                || h.offset
                    .checked_add(h.size)
                    .and_then(|e| e.checked_add(BLOCK_TRAILER_SIZE as u64))
                    == Some(handles[i + 1].offset);
            if count > 0 && (!contiguous || total.saturating_add(h.size) > bytes) {
                break;
            }
            total = total.saturating_add(h.size.saturating_add(BLOCK_TRAILER_SIZE as u64));
            count += 1;
        }
        count
    }

    /// Reads and decodes data blocks `first..first + count` (laid end to end) with one read;
    /// each block's result carries its own error, as `block_at` would report it.
    pub fn read_run(&self, first: usize, count: usize, verify: bool) -> Vec<Result<Arc<Block>>> {
        let handles = match self.data_handles() {
            Ok(h) if first + count <= h.len() => &h[first..first + count],
            Ok(_) => return Vec::new(),
            Err(e) => return vec![Err(e)],
        };
        let max = self.settings.max_block_size;
        let checked = handles
            .iter()
            .try_for_each(|h| check_handle(*h, self.size, max));
        let span_start = handles[0].offset;
        let last = handles[handles.len() - 1];
        let span = last
            .offset
            .saturating_add(last.size)
            .saturating_add(BLOCK_TRAILER_SIZE as u64)
            .saturating_sub(span_start);
        // The run's bytes are only decoded: they go to this thread's scratch buffer.
        let mut bytes = buffer_pool::take_scratch();
        let read = checked
            .and_then(|()| run_span(span, span_start))
            .and_then(|span| read_exact_into(&*self.file, span_start, span, &mut bytes));
        if let Err(e) = read {
            buffer_pool::give_scratch(bytes);
            // Report the failure at the first block; the iterator stops there.
            return vec![Err(e.in_file(self.name.clone()))];
        }
        let blocks = handles
            .iter()
            .map(|h| {
                let start = (h.offset - span_start) as usize;
                let raw = &bytes[start..start + h.size as usize + BLOCK_TRAILER_SIZE];
                decode_block_slice(raw, verify, max)
                    .and_then(|c| Ok(Block::new(c.data)?.stored_as(c.compression_id)))
                    .map(Arc::new)
                    .map_err(|e| e.in_file(self.name.clone()).at_offset(h.offset))
            })
            .collect();
        buffer_pool::give_scratch(bytes);
        blocks
    }

    /// The raw bytes of data blocks `first..first + count` (laid end to end, trailers
    /// included) with one read, and each block's length in them: a run for an outside decoder
    /// (`readahead::decode_run`). Refused for a run holding a block over `max_block_size`.
    pub fn read_run_raw(&self, first: usize, count: usize) -> Result<(Vec<u8>, Vec<u32>)> {
        let handles = match self.data_handles()? {
            h if count > 0 && first + count <= h.len() => &h[first..first + count],
            _ => {
                return Err(Error::internal(
                    "a readahead run outside its table's blocks",
                ))
            }
        };
        let max = self.settings.max_block_size;
        for h in handles {
            check_handle(*h, self.size, max).map_err(|e| e.in_file(self.name.clone()))?;
            // A block past the limit (a large value) is not lent: its bytes and its decoded
            // contents would cross between the engine and the decoder through copies that
            // cannot fail softly. The cursor reads it, reserving its memory fallibly.
            if h.size + BLOCK_TRAILER_SIZE as u64 > max as u64 {
                return Err(Error::not_supported(format!(
                    "a block of {} bytes is not lent to a decoder (over {max})",
                    h.size
                ))
                .in_file(self.name.clone())
                .at_offset(h.offset));
            }
        }
        let span_start = handles[0].offset;
        let last = handles[handles.len() - 1];
        let span = last
            .offset
            .saturating_add(last.size)
            .saturating_add(BLOCK_TRAILER_SIZE as u64)
            .saturating_sub(span_start);
        let span = run_span(span, span_start).map_err(|e| e.in_file(self.name.clone()))?;
        let raw = read_exact_at(&*self.file, span_start, span)
            .map_err(|e| e.in_file(self.name.clone()))?;
        let sizes = handles
            .iter()
            .map(|h| (h.size + BLOCK_TRAILER_SIZE as u64) as u32)
            .collect();
        Ok((raw, sizes))
    }

    /// The largest decoded block this table's reader accepts.
    pub fn max_block_size(&self) -> usize {
        self.settings.max_block_size
    }

    /// An iterator over all entries (internal keys).
    pub fn iter(self: &Arc<Self>, options: ReadOptions) -> TableIterator {
        self.iter_then(options, None)
    }

    /// An iterator over all entries; with readahead, `successor` opens the next file of the
    /// level so that blocks are decoded ahead across the file boundary too.
    pub fn iter_then(
        self: &Arc<Self>,
        options: ReadOptions,
        successor: Option<Successor>,
    ) -> TableIterator {
        let mut opener = BlockOpener {
            table: self.clone(),
            options,
            readahead: None,
            auto: None,
            next_offset: None,
            last_offset: None,
        };
        if let Some(pool) = &self.settings.readahead {
            let o = &opener.options;
            if o.readahead {
                opener.start_readahead(pool.clone(), successor);
            } else if o.auto_readahead && !pool.is_external() {
                // Runs the level's previous file handed to this one are adopted now, before
                // that file's iterator is dropped (which cancels them); they are kept only if
                // the first block read is the table's first (`BlockOpener::open`).
                let handed = pool.has_handoff(self, o.lend_filter);
                opener.auto = Some(AutoReadahead {
                    pool: pool.clone(),
                    successor: None,
                    run: 0,
                    run_back: 0,
                    last_offset: None,
                    next_offset: None,
                });
                if handed {
                    opener.start_readahead(pool.clone(), successor);
                } else if let Some(auto) = &mut opener.auto {
                    auto.successor = successor;
                }
            }
        }
        TwoLevelIterator::new(
            AnnotatedBlockIter {
                inner: self.index.iter(),
                table: self.clone(),
                handle: BlockHandle {
                    offset: self.index_offset,
                    size: 0,
                },
                data: false,
            },
            opener,
        )
    }

    /// The first entry with key >= `ikey` in the block that may hold it, if the filter does not
    /// rule the user key out: `(internal key, value)`.
    pub fn internal_get(
        &self,
        options: &ReadOptions,
        ikey: &[u8],
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.internal_get_with(options, ikey, |k, v| (k.to_vec(), v.to_vec()))
    }

    /// `internal_get`, handing the entry to `saver` where it lies in its block (LevelDB's
    /// `InternalGet` with its saver): nothing is copied unless `saver` copies it.
    pub fn internal_get_with<R>(
        &self,
        options: &ReadOptions,
        ikey: &[u8],
        saver: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut index = self.index.iter();
        index.seek(ikey);
        index.status().map_err(|e| e.in_file(self.name.clone()))?;
        if !index.valid() {
            return Ok(None);
        }
        let (handle, _) = BlockHandle::decode(index.value()).ok_or_else(|| {
            Error::corruption("bad block handle in index block").in_file(self.name.clone())
        })?;
        if let Some(filter) = &self.filter {
            if !filter.key_may_match(handle.offset, extract_user_key(ikey)) {
                return Ok(None);
            }
        }
        let block = self.block_at(handle, options)?;
        let mut it = block.iter();
        it.seek(ikey);
        it.status()
            .map_err(|e| e.in_file(self.name.clone()).at_offset(handle.offset))?;
        if it.valid() {
            return Ok(Some(saver(it.key(), it.value())));
        }
        Ok(None)
    }

    /// Approximate file offset of `ikey` (start of the block that would hold it).
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let mut index = self.index.iter();
        index.seek(ikey);
        if index.valid() {
            if let Some((h, _)) = BlockHandle::decode(index.value()) {
                return h.offset;
            }
        }
        self.size
    }
}

/// Opens data blocks for a table iterator.
pub struct BlockOpener {
    table: Arc<Table>,
    options: ReadOptions,
    readahead: Option<Readahead>,
    /// Watching for a forward run of blocks to start readahead (`ReadOptions::auto_readahead`).
    auto: Option<AutoReadahead>,
    /// Where the block after the last one opened starts: a block opened there continues a
    /// forward run, and the one after it is prefetched (`Table::prefetch_mapped`).
    next_offset: Option<u64>,
    /// Where the last block opened starts: a block ending there continues a backward run.
    last_offset: Option<u64>,
}

/// Auto readahead (`ReadOptions::auto_readahead`): a table iterator counts the consecutive
/// blocks it decodes itself going forward, and those going backward, and starts readahead in
/// that direction at `AUTO_READAHEAD_BLOCKS`; a jump (a seek elsewhere, a turn) ends the
/// readahead and the counts start over. Blocks from the cache or borrowed from the file's map
/// cost nothing to decode and do not count. A table whose level's previous file handed it runs
/// (a forward scan crossing files) reads ahead from its first block; a seek into it elsewhere
/// drops them.
struct AutoReadahead {
    pool: Arc<ReadaheadPool>,
    /// The level's next file, for the readahead to hand runs to (given once).
    successor: Option<Successor>,
    /// Consecutive blocks decoded going forward.
    run: usize,
    /// Consecutive blocks decoded going backward.
    run_back: usize,
    /// Where the last block opened starts (none before the first).
    last_offset: Option<u64>,
    /// Where the block after the last one opened starts (none before the first).
    next_offset: Option<u64>,
}

impl BlockOpener {
    fn start_readahead(&mut self, pool: Arc<ReadaheadPool>, successor: Option<Successor>) {
        self.readahead = Some(Readahead::new(
            pool,
            self.table.clone(),
            self.options.verify_checksums,
            self.options.lend_filter,
            successor,
        ));
    }
}

impl InnerOpener for BlockOpener {
    type Inner = AnnotatedBlockIter;
    fn open(
        &mut self,
        index_value: &[u8],
        recycled: Option<AnnotatedBlockIter>,
    ) -> Result<AnnotatedBlockIter> {
        let (handle, _) = BlockHandle::decode(index_value).ok_or_else(|| {
            Error::corruption("bad block handle in index block").in_file(self.table.name.clone())
        })?;
        let mut counting = false;
        if let Some(auto) = &mut self.auto {
            let first = auto.next_offset.is_none();
            let forward = auto.next_offset == Some(handle.offset);
            let end = handle
                .offset
                .saturating_add(handle.size)
                .saturating_add(BLOCK_TRAILER_SIZE as u64);
            let backward = !first && auto.last_offset == Some(end);
            auto.next_offset = Some(end);
            auto.last_offset = Some(handle.offset);
            if let Some(readahead) = &self.readahead {
                // Going on: the next block its way, or the table's first after adopting a
                // handoff.
                let keep = if readahead.is_backward() {
                    backward
                } else if first {
                    handle.offset == 0
                } else {
                    forward
                };
                if !keep {
                    // A jump ends the scan: its runs are cancelled, the counts start again.
                    self.readahead = None;
                    auto.run = 0;
                    auto.run_back = 0;
                    counting = true;
                }
            } else {
                if !forward {
                    auto.run = 0;
                }
                if !backward {
                    auto.run_back = 0;
                }
                counting = true;
            }
        }
        let end = handle
            .offset
            .saturating_add(handle.size)
            .saturating_add(BLOCK_TRAILER_SIZE as u64);
        let run_goes_on = self.next_offset == Some(handle.offset);
        // A scan stepping to the next block (either way) does not offer a lent block to the
        // cache on a second read: a rescan would otherwise fill it with copies.
        let steps_on = run_goes_on || self.last_offset == Some(end);
        self.next_offset = Some(end);
        self.last_offset = Some(handle.offset);
        let from_readahead = self.readahead.as_mut().and_then(|r| r.block(handle));
        let block = match from_readahead {
            Some(block) => block?,
            None => {
                let (block, decoded) =
                    self.table
                        .block_at_counted(handle, &self.options, !steps_on)?;
                if counting {
                    if let Some(auto) = &mut self.auto {
                        auto.run = if decoded { auto.run + 1 } else { 0 };
                        auto.run_back = if decoded { auto.run_back + 1 } else { 0 };
                        if auto.run >= AUTO_READAHEAD_BLOCKS - 1 {
                            // From the next block on.
                            let pool = auto.pool.clone();
                            let successor = auto.successor.take();
                            self.start_readahead(pool, successor);
                        } else if auto.run_back >= AUTO_READAHEAD_BLOCKS - 1 {
                            // From the block before this one on.
                            self.readahead = Some(Readahead::backward(
                                auto.pool.clone(),
                                self.table.clone(),
                                self.options.verify_checksums,
                                self.options.lend_filter,
                            ));
                        }
                    }
                }
                block
            }
        };
        if run_goes_on && block.is_mapped() {
            // A forward run of blocks borrowed from the file's map, read on this thread: the
            // next block (about this one's size, stored right after it) is asked into the CPU
            // cache while this one is read. (Mapping the pages ahead in one call,
            // MADV_POPULATE_READ over 256 KiB, was tried with it: slower than the page faults,
            // 0.087-0.095 us an entry against 0.082-0.094 in 3B's first sequential read.)
            self.table
                .prefetch_mapped(end, handle.size + BLOCK_TRAILER_SIZE as u64);
        }
        Ok(AnnotatedBlockIter {
            inner: block.iter_reusing(recycled.map(|r| r.inner)),
            table: self.table.clone(),
            handle,
            data: true,
        })
    }
}

/// A block iterator whose errors name the table file and block offset.
pub struct AnnotatedBlockIter {
    inner: BlockIter,
    /// The table (its name for errors) and where the block lies (its offset for errors).
    table: Arc<Table>,
    handle: BlockHandle,
    /// A data block (not the index): one `sole_entry_block` may report.
    data: bool,
}

impl InternalIterator for AnnotatedBlockIter {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target)
    }
    fn next(&mut self) {
        self.inner.next()
    }
    fn prev(&mut self) {
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn sole_entry_block(&self) -> Option<SoleEntryBlock> {
        if !self.data {
            return None;
        }
        // Only a block decoded whole from its stored bytes (never a decode worker's, which
        // may hold some of the entries only).
        let compression_id = self.inner.block_compression_id()?;
        self.inner.is_sole_entry().then(|| SoleEntryBlock {
            table: self.table.clone(),
            handle: self.handle,
            compression_id,
            decoded_len: self.inner.block_size(),
        })
    }
    fn status(&self) -> Result<()> {
        self.inner.status().map_err(|e| {
            e.in_file(self.table.name.clone())
                .at_offset(self.handle.offset)
        })
    }
}

/// Iterator over a whole table.
pub type TableIterator = TwoLevelIterator<AnnotatedBlockIter, BlockOpener>;

/// A run's span of `span` bytes as a length to read: `OutOfMemory` where the host's memory
/// cannot hold it (blocks of gigabytes on a 32-bit host).
fn run_span(span: u64, offset: u64) -> Result<usize> {
    usize::try_from(span).map_err(|_| {
        Error::out_of_memory(format!(
            "a run of blocks of {span} bytes cannot be held in this host's memory"
        ))
        .at_offset(offset)
    })
}
