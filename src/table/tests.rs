//! Block and table round trips against a sorted model, in every codec, both directions.

use std::cmp::Ordering;
use std::sync::Arc;

use super::block::Block;
use super::block_builder::BlockBuilder;
use super::compress_pool::CompressionPool;
use super::readahead::ReadaheadPool;
use super::table::TableSettings;
use super::table_builder::{TableBuilder, TableBuilderOptions};
use super::Table;
use crate::cache::Cache;
use crate::compress::CompressionType;
use crate::iterator::InternalIterator;
use crate::key::{compare_internal_keys, make_internal_key, ValueType};
use crate::options::ReadOptions;
use crate::storage::{MemStorage, Storage};
use crate::util::random::Random;

fn model(n: usize, seed: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = Random::new(seed);
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| {
            let klen = rng.skewed(5) as usize;
            let mut user = format!("k{:05}", rng.uniform(n as u32 * 2)).into_bytes();
            let mut extra = vec![0u8; klen];
            rng.fill(&mut extra);
            user.extend_from_slice(&extra);
            let t = if rng.one_in(4) {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let key = make_internal_key(&user, i as u64 + 1, t);
            let vlen = rng.skewed(12) as usize;
            let value: Vec<u8> = (0..vlen).map(|j| b"abcdefgh"[(j / 7) % 8]).collect();
            (key, value)
        })
        .collect();
    entries.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
    entries
}

fn check_iterator(it: &mut dyn InternalIterator, entries: &[(Vec<u8>, Vec<u8>)], rng: &mut Random) {
    it.seek_to_first();
    for (k, v) in entries {
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), &v[..]);
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, v) in entries.iter().rev() {
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), &v[..]);
        it.prev();
    }
    assert!(!it.valid());
    it.status().unwrap();
    // Random seeks, then steps either way.
    for _ in 0..200 {
        let target = if entries.is_empty() || rng.one_in(3) {
            let mut t = vec![0u8; 1 + rng.uniform(12) as usize];
            rng.fill(&mut t);
            t
        } else {
            entries[rng.uniform(entries.len() as u32) as usize]
                .0
                .clone()
        };
        it.seek(&target);
        let mut pos =
            entries.partition_point(|(k, _)| compare_internal_keys(k, &target) == Ordering::Less);
        // Mostly short walks; some long ones cross restart intervals and blocks both ways.
        let steps = if rng.one_in(4) { 60 } else { 4 };
        for _ in 0..steps {
            if pos < entries.len() {
                assert!(it.valid());
                assert_eq!(it.key(), &entries[pos].0[..]);
            } else {
                assert!(!it.valid());
                break;
            }
            if rng.one_in(2) {
                it.next();
                pos += 1;
            } else {
                it.prev();
                if pos == 0 {
                    assert!(!it.valid());
                    break;
                }
                pos -= 1;
            }
        }
    }
}

/// Steps `it` from where it stands to the end (`forward`) or the start, and returns how many
/// entries it passed; its status must be clean.
fn walk(it: &mut dyn InternalIterator, forward: bool) -> usize {
    let mut n = 0;
    while it.valid() {
        n += 1;
        if forward {
            it.next()
        } else {
            it.prev()
        }
    }
    it.status().unwrap();
    n
}

/// Steps `it` like `walk` and returns the entries it passed, in key order either way.
fn entries_from(it: &mut dyn InternalIterator, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        if forward {
            it.next()
        } else {
            it.prev()
        }
    }
    it.status().unwrap();
    if !forward {
        out.reverse();
    }
    out
}

/// A block of `entries` with restarts every `interval` entries.
fn block_of(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    b.finish().to_vec()
}

#[test]
fn blocks_round_trip_at_every_restart_interval() {
    let mut rng = Random::new(11);
    for interval in [1, 2, 16, 1000] {
        for n in [0, 1, 2, 17, 500] {
            let entries = model(n, 100 + n as u32);
            let block = Arc::new(Block::new(block_of(&entries, interval)).unwrap());
            check_iterator(&mut block.iter(), &entries, &mut rng);
            // Restart prefixes only where every entry is a restart point; the same answers.
            let block = Block::new(block_of(&entries, interval)).unwrap();
            let block = Arc::new(block.with_restart_prefixes());
            assert_eq!(
                block.has_restart_prefixes(),
                n > 0 && (interval == 1 || n == 1)
            );
            check_iterator(&mut block.iter(), &entries, &mut rng);
        }
    }
}

/// An iterator reused for the next block (`Block::iter_reusing`, as a scan moving from block
/// to block does) reads that block exactly, whatever state it was left in: mid-way back
/// through a restart interval (its key named in the interval's parse, not copied), at the end,
/// or after damage. Buffers grown by huge keys are not kept.
#[test]
fn a_reused_block_iterator_reads_its_next_block_exactly() {
    let mut rng = Random::new(23);
    let a_entries = model(500, 1);
    let b_entries = model(300, 2);
    let a = Arc::new(Block::new(block_of(&a_entries, 16)).unwrap());
    let b = Arc::new(Block::new(block_of(&b_entries, 16)).unwrap());
    for left_back in [0, 1, 5, 15, 40] {
        let mut it = a.iter();
        it.seek_to_last();
        for _ in 0..left_back {
            it.prev();
        }
        let at = a_entries.len() - 1 - left_back;
        assert_eq!(it.key(), &a_entries[at].0[..]);
        assert_eq!(it.value(), &a_entries[at].1[..]);
        // One step forward out of the interval's parse rebuilds the next key from this one.
        if left_back > 0 {
            it.next();
            assert_eq!(it.key(), &a_entries[at + 1].0[..]);
            it.prev();
            it.prev();
            assert_eq!(it.key(), &a_entries[at - 1].0[..]);
        }
        let mut reused = b.iter_reusing(Some(it));
        assert!(!reused.valid());
        check_iterator(&mut reused, &b_entries, &mut rng);
        // And back again, from wherever the walk left it.
        let mut again = a.iter_reusing(Some(reused));
        check_iterator(&mut again, &a_entries, &mut rng);
    }
    // From a damaged block: its error stays behind.
    let mut damaged = block_of(&a_entries, 16);
    damaged[0] = 5; // the first entry shares 5 bytes with no key before it
    let damaged = Arc::new(Block::new(damaged).unwrap());
    let mut it = damaged.iter();
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert!(it.status().is_err());
    let mut reused = b.iter_reusing(Some(it));
    check_iterator(&mut reused, &b_entries, &mut rng);
    // Huge keys: walking back through them grows the buffers past what is kept.
    let huge: Vec<(Vec<u8>, Vec<u8>)> = (0..8u64)
        .map(|i| {
            let user = format!("{i:02}").repeat(20_000).into_bytes();
            (
                make_internal_key(&user, i + 1, ValueType::Value),
                vec![7u8; 3],
            )
        })
        .collect();
    let h = Arc::new(Block::new(block_of(&huge, 16)).unwrap());
    let mut it = h.iter();
    check_iterator(&mut it, &huge, &mut rng);
    it.seek_to_last();
    it.prev();
    assert!(it.kept_capacity() > 4 * 40_000);
    let reused = b.iter_reusing(Some(it));
    assert!(
        reused.kept_capacity() < 64 * 1024,
        "{}",
        reused.kept_capacity()
    );
}

/// An index block as a table writer makes one: separators of db_bench's 16-digit keys, then
/// the last key's short successor (`1`), one entry per restart point. Seeks through restart
/// prefixes land where the model says, for every key and the ones between.
#[test]
fn index_blocks_seek_through_restart_prefixes() {
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = (0..900u64)
        .map(|i| {
            let user = format!("{:015}", 4_761_900 + i * 36);
            let key = make_internal_key(user.as_bytes(), u64::MAX >> 8, ValueType::Value);
            (key, (i * 4096).to_le_bytes().to_vec())
        })
        .collect();
    entries.push((
        make_internal_key(b"1", u64::MAX >> 8, ValueType::Value),
        b"last".to_vec(),
    ));
    let block = Arc::new(
        Block::new(block_of(&entries, 1))
            .unwrap()
            .with_restart_prefixes(),
    );
    assert!(block.has_restart_prefixes());
    check_iterator(&mut block.iter(), &entries, &mut Random::new(8));
    let mut it = block.iter();
    for u in (47_619_000..47_944_000u64).step_by(7) {
        let target = make_internal_key(format!("{u:016}").as_bytes(), 77, ValueType::Value);
        let pos =
            entries.partition_point(|(k, _)| compare_internal_keys(k, &target) == Ordering::Less);
        it.seek(&target);
        assert!(it.valid());
        assert_eq!(it.key(), &entries[pos].0[..], "target {u}");
        assert_eq!(it.value(), &entries[pos].1[..]);
    }
    let max = u64::MAX >> 8;
    for (t, seq, pos) in [
        (&b"0"[..], 5, 0),
        (b"", 5, 0),
        (b"1", max, 900),
        (b"00000000", 5, 0),
    ] {
        it.seek(&make_internal_key(t, seq, ValueType::Value));
        assert!(it.valid());
        assert_eq!(it.key(), &entries[pos].0[..]);
    }
    // Past the last key: `1` at an older sequence, and `2`.
    for (t, seq) in [(&b"1"[..], 5), (b"2", max)] {
        it.seek(&make_internal_key(t, seq, ValueType::Value));
        assert!(!it.valid());
    }
    it.status().unwrap();
}

#[test]
fn damaged_blocks_never_panic() {
    let entries = model(300, 5);
    let mut rng = Random::new(3);
    for round in 0..4000 {
        // Half the blocks index-shaped (one entry per restart), searched through prefixes
        // wherever the damage leaves the keys in order.
        let prefixed = round % 2 == 1;
        let mut bad = block_of(&entries, if prefixed { 1 } else { 16 });
        for _ in 0..1 + rng.uniform(4) {
            let i = rng.uniform(bad.len() as u32) as usize;
            bad[i] = rng.next_u32() as u8;
        }
        if rng.one_in(4) {
            bad.truncate(rng.uniform(bad.len() as u32) as usize);
        }
        let Ok(block) = Block::new(bad) else { continue };
        let block = Arc::new(if prefixed {
            block.with_restart_prefixes()
        } else {
            block
        });
        let mut it = block.iter();
        let mut steps = 0;
        it.seek_to_first();
        while it.valid() && steps < 10_000 {
            it.next();
            steps += 1;
        }
        it.seek_to_last();
        while it.valid() && steps < 20_000 {
            it.prev();
            steps += 1;
        }
        for i in [0, 150, 299] {
            it.seek(&entries[i].0);
        }
        it.seek(b"zzzzzzzzzz");
    }
}

fn build_table(
    entries: &[(Vec<u8>, Vec<u8>)],
    compression: CompressionType,
    block_size: usize,
) -> (MemStorage, u64) {
    let s = MemStorage::new();
    let size = write_table(&s, "t.ldb", entries, compression, block_size);
    (s, size)
}

/// The tests' table settings: restart interval 16, a 10-bit bloom filter.
fn test_options(
    compression: CompressionType,
    block_size: usize,
    pool: Option<Arc<CompressionPool>>,
    pipeline_bytes: usize,
) -> TableBuilderOptions {
    TableBuilderOptions {
        block_size,
        block_restart_interval: 16,
        compression,
        bloom_bits_per_key: 10,
        compression_pool: pool,
        pipeline_bytes,
        copy_stored_blocks: true,
    }
}

/// Writes table `name` of `entries` into `s` with the tests' settings; its size.
fn write_table(
    s: &MemStorage,
    name: &str,
    entries: &[(Vec<u8>, Vec<u8>)],
    compression: CompressionType,
    block_size: usize,
) -> u64 {
    let options = test_options(compression, block_size, None, 0);
    let mut b = TableBuilder::new(options, s.create(name).unwrap());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    let (_, size) = b.finish().unwrap();
    assert_eq!(s.file_size(name).unwrap(), size);
    size
}

fn open_table(s: &MemStorage, size: u64) -> Arc<Table> {
    open_table_as(s, "t.ldb", size, None)
}

fn open_table_as(
    s: &MemStorage,
    name: &str,
    size: u64,
    readahead: Option<Arc<ReadaheadPool>>,
) -> Arc<Table> {
    open_table_in(s, name, size, &Arc::new(Cache::new(1 << 20)), readahead)
}

/// Table `name` of `storage` with the tests' settings, reading through `cache`.
fn open_table_in(
    storage: &dyn Storage,
    name: &str,
    size: u64,
    cache: &Arc<Cache<Arc<Block>>>,
    readahead: Option<Arc<ReadaheadPool>>,
) -> Arc<Table> {
    Arc::new(
        Table::open(
            storage.open_random(name).unwrap(),
            name,
            size,
            TableSettings {
                block_cache: Some(cache.clone()),
                max_block_size: 1 << 24,
                verify_checksums: true,
                readahead,
            },
        )
        .unwrap(),
    )
}

fn readahead_options() -> ReadOptions {
    ReadOptions {
        readahead: true,
        fill_cache: false,
        ..ReadOptions::default()
    }
}

#[test]
fn tables_round_trip_in_every_codec() {
    let mut rng = Random::new(77);
    for compression in [
        CompressionType::None,
        CompressionType::Snappy,
        CompressionType::Zlib,
        CompressionType::ZlibRaw,
    ] {
        for (n, block_size) in [
            (0, 4096),
            (1, 4096),
            (3000, 256),
            (3000, 4096),
            (3000, 160 * 1024),
        ] {
            let entries = model(n, n as u32 + block_size as u32);
            let (s, size) = build_table(&entries, compression, block_size);
            let table = open_table(&s, size);
            assert!(table.has_filter());
            let mut it = table.iter(ReadOptions::default());
            check_iterator(&mut it, &entries, &mut rng);
            // Point lookups find every entry; the filter rules out absent user keys.
            for (k, v) in entries.iter().step_by(7) {
                let (fk, fv) = table
                    .internal_get(&ReadOptions::default(), k)
                    .unwrap()
                    .unwrap();
                assert_eq!((&fk, &fv), (k, v));
            }
            let mut ruled_out = 0;
            for i in 0..1000 {
                let probe =
                    make_internal_key(format!("absent{i}").as_bytes(), 1 << 40, ValueType::Value);
                if table
                    .internal_get(&ReadOptions::default(), &probe)
                    .unwrap()
                    .is_none()
                {
                    ruled_out += 1;
                }
            }
            assert!(n == 0 || ruled_out >= 950, "{compression:?}: {ruled_out}");
        }
    }
}

#[test]
fn compressed_blocks_follow_the_one_eighth_rule() {
    // Incompressible values: blocks are stored raw (id 0) even with a codec configured.
    let mut rng = Random::new(9);
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..200u32)
        .map(|i| {
            let mut v = vec![0u8; 100];
            rng.fill(&mut v);
            (
                make_internal_key(format!("{i:05}").as_bytes(), 1, ValueType::Value),
                v,
            )
        })
        .collect();
    let (s, size) = build_table(&entries, CompressionType::Snappy, 1024);
    let table = open_table(&s, size);
    let mut index = table.index_iter();
    index.seek_to_first();
    while index.valid() {
        let (h, _) = super::format::BlockHandle::decode(index.value()).unwrap();
        let (_, id) = table.read_block_uncached(h, true).unwrap();
        assert_eq!(id, 0);
        index.next();
    }
}

/// Default read options start readahead by themselves: a forward pass decodes its first
/// `AUTO_READAHEAD_BLOCKS - 1` blocks alone and gets every later one from a run, and so does a
/// backward pass; seeks with a step or two and options that turn it off never schedule a run;
/// a jump ends a started readahead; cached blocks do not count toward starting one.
#[test]
fn auto_readahead_starts_on_a_forward_run_of_decoded_blocks_only() {
    use super::readahead::AUTO_READAHEAD_BLOCKS;
    const ALONE: u64 = AUTO_READAHEAD_BLOCKS as u64 - 1;
    let mut rng = Random::new(17);
    let pool = ReadaheadPool::new(2);
    let entries = model(4000, 4242);
    let (s, size) = build_table(&entries, CompressionType::Snappy, 1024);
    let table = open_table_as(&s, "t.ldb", size, pool.clone());
    let blocks = table.data_handles().unwrap().len() as u64;
    assert!(blocks > 50, "{blocks} blocks");
    let stats = || pool.as_ref().unwrap().stats();
    // The default options but the cache, so that every block read is decoded.
    let uncached = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };

    // A forward pass.
    let before = stats();
    let mut it = table.iter(uncached.clone());
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
    drop(it);
    let after = stats();
    assert_eq!(
        after.blocks_delivered - before.blocks_delivered,
        blocks - ALONE
    );
    assert_eq!(after.runs_cancelled, before.runs_cancelled);

    // A backward pass: the same, from the last block toward the first.
    let before = stats();
    let mut it = table.iter(uncached.clone());
    it.seek_to_last();
    assert_eq!(entries_from(&mut it, false), entries);
    drop(it);
    let after = stats();
    assert_eq!(
        after.blocks_delivered - before.blocks_delivered,
        blocks - ALONE
    );
    assert_eq!(after.runs_cancelled, before.runs_cancelled);
    assert_eq!(
        after.runs_scheduled - before.runs_scheduled,
        (after.runs_by_workers + after.runs_by_reader)
            - (before.runs_by_workers + before.runs_by_reader)
    );

    // Seeks followed by a few steps either way (at most two blocks each), and both passes
    // with auto readahead off: no run.
    let before = stats();
    let mut it = table.iter(uncached.clone());
    for i in 0..500 {
        let (k, _) = &entries[rng.uniform(entries.len() as u32) as usize];
        it.seek(k);
        for _ in 0..3 {
            if it.valid() {
                if i % 2 == 0 {
                    it.next();
                } else {
                    it.prev();
                }
            }
        }
    }
    it.status().unwrap();
    let off = ReadOptions {
        auto_readahead: false,
        ..uncached.clone()
    };
    let mut it = table.iter(off.clone());
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
    let mut it = table.iter(off);
    it.seek_to_last();
    assert_eq!(walk(&mut it, false), entries.len());
    assert_eq!(stats(), before);

    // A pass from a seek in the middle: readahead from its fourth block on, the model's
    // entries.
    let mid = entries.len() / 2;
    let before = stats();
    let mut it = table.iter(uncached.clone());
    it.seek(&entries[mid].0);
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(got, entries[mid..].to_vec());
    let handles = table.data_handles().unwrap();
    let block_of = |key: &[u8]| {
        let mut index = table.index_iter();
        index.seek(key);
        let (h, _) = super::format::BlockHandle::decode(index.value()).unwrap();
        handles.iter().position(|x| *x == h).unwrap()
    };
    let from = block_of(&entries[mid].0) as u64;
    assert_eq!(
        stats().blocks_delivered - before.blocks_delivered,
        blocks - from - ALONE
    );

    // A jump ends a started readahead: half a pass, then seeks going backward (never to the
    // block after the last one read) with a step each schedule nothing more.
    let mut it = table.iter(uncached.clone());
    it.seek_to_first();
    for _ in 0..entries.len() / 2 {
        it.next();
    }
    let started = stats();
    assert!(started.runs_scheduled > before.runs_scheduled);
    let mut i = entries.len() / 2;
    let mut last_block = usize::MAX;
    while i >= 200 {
        i -= 200;
        let b = block_of(&entries[i].0);
        assert!(b < last_block, "seeks go back");
        last_block = b;
        it.seek(&entries[i].0);
        it.next();
        assert_eq!(it.key(), &entries[i + 1].0[..]);
    }
    it.status().unwrap();
    assert_eq!(stats().runs_scheduled, started.runs_scheduled);
    // The same iterator scanning forward again starts readahead again.
    let before = stats();
    it.seek(&entries[mid].0);
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    drop(it);
    assert_eq!(n, entries.len() - mid);
    assert_eq!(
        stats().blocks_delivered - before.blocks_delivered,
        blocks - from - ALONE
    );

    // Cached blocks cost no decoding and do not count: a pass with the cache filled keeps its
    // first blocks there (the ones it read alone); the next pass starts readahead three
    // decoded blocks after them.
    let cached = ReadOptions::default();
    let mut it = table.iter(cached.clone());
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
    drop(it);
    let before = stats();
    let mut it = table.iter(cached);
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
    drop(it);
    assert_eq!(
        stats().blocks_delivered - before.blocks_delivered,
        blocks - 2 * ALONE
    );
}

/// Blocks that compress 1000 to 1 (a Bedrock 1.26 world's tables of repeated sub-chunks come
/// near it): runs are cut by their decoded size, not only their compressed bytes, so a run of
/// `RUN_BYTES` compressed bytes does not decode to many megabytes, and what is scheduled ahead
/// stays within the pool's budget.
#[test]
fn readahead_runs_are_bounded_by_decoded_bytes_on_blocks_that_compress_far() {
    use super::readahead::{AHEAD_BYTES, RUN_BYTES, RUN_DECODED};
    const BLOCK: usize = 200 * 1024;
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..1200u32)
        .map(|i| {
            let key = make_internal_key(format!("k{i:06}").as_bytes(), 1, ValueType::Value);
            (key, vec![(i % 7) as u8; 8 * 1024])
        })
        .collect();
    let (s, size) = build_table(&entries, CompressionType::ZlibRaw, BLOCK);
    let pool = ReadaheadPool::new(1);
    let table = open_table_as(&s, "t.ldb", size, pool.clone());
    let handles = table.data_handles().unwrap().to_vec();
    let blocks = handles.len() as u64;
    assert_eq!(blocks, 48, "~200 KiB blocks of 8 KiB values");
    let compressed: u64 = handles.iter().map(|h| h.size + 5).sum();
    assert!(
        compressed < RUN_BYTES,
        "the whole table is {compressed} bytes compressed"
    );
    let mut it = table.iter(readahead_options());
    it.seek_to_first();
    assert!(
        entries_from(&mut it, true) == entries,
        "the entries read back"
    );
    drop(it);
    let stats = pool.as_ref().unwrap().stats();
    assert_eq!(stats.blocks_delivered, blocks);
    // Under compressed bytes alone this table was one run of all 48 blocks (9.6 MB).
    let most = RUN_DECODED / BLOCK as u64;
    assert!(
        (1..=most).contains(&stats.largest_run),
        "a run of {} blocks",
        stats.largest_run
    );
    assert!(stats.runs_scheduled >= blocks.div_ceil(most));
    assert!(
        stats.peak_ahead_bytes <= AHEAD_BYTES,
        "{} bytes ahead",
        stats.peak_ahead_bytes
    );
}

#[test]
fn readahead_iterators_match_the_model() {
    let mut rng = Random::new(91);
    for threads in [1, 2, 5] {
        let pool = ReadaheadPool::new(threads);
        for (compression, block_size) in [
            (CompressionType::ZlibRaw, 256),
            (CompressionType::Snappy, 4096),
            (CompressionType::None, 1024),
            (CompressionType::Zlib, 160 * 1024),
        ] {
            let entries = model(4000, threads as u32 * 1000 + block_size as u32);
            let (s, size) = build_table(&entries, compression, block_size);
            let table = open_table_as(&s, "t.ldb", size, pool.clone());
            let blocks = table.data_handles().unwrap().len() as u64;
            assert!(blocks >= 3, "{compression:?}/{block_size}: {blocks} blocks");
            // One forward pass: every block comes through a run, exactly once.
            let before = pool.as_ref().unwrap().stats();
            let mut it = table.iter(readahead_options());
            it.seek_to_first();
            let mut n = 0;
            while it.valid() {
                n += 1;
                it.next();
            }
            it.status().unwrap();
            drop(it);
            assert_eq!(n, entries.len());
            let after = pool.as_ref().unwrap().stats();
            assert_eq!(after.blocks_delivered - before.blocks_delivered, blocks);
            let decoded = (after.runs_by_workers + after.runs_by_reader)
                - (before.runs_by_workers + before.runs_by_reader);
            let cancelled = after.runs_cancelled - before.runs_cancelled;
            assert_eq!(
                after.runs_scheduled - before.runs_scheduled,
                decoded + cancelled
            );
            assert_eq!(cancelled, 0, "a full pass cancels nothing");
            // Forward, reverse and random seeks through the readahead path.
            let mut it = table.iter(readahead_options());
            check_iterator(&mut it, &entries, &mut rng);
            // Two interleaved full forward passes over the same table share the pool.
            let mut a = table.iter(readahead_options());
            let mut b = table.iter(readahead_options());
            a.seek_to_first();
            b.seek_to_first();
            for (k, v) in &entries {
                for it in [&mut a, &mut b] {
                    assert!(it.valid());
                    assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
                    it.next();
                }
            }
            assert!(!a.valid() && !b.valid());
            a.status().unwrap();
            b.status().unwrap();
        }
    }
}

/// Auto readahead under walks that keep a direction for a while and then turn or seek (long
/// backward runs start backward readahead, long forward ones forward readahead, a turn or a
/// seek ends either): every step is the model's entry, and every scheduled run is decoded or
/// cancelled once the workers are done.
#[test]
fn auto_readahead_walks_both_ways_match_the_model() {
    let mut rng = Random::new(2024);
    let uncached = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    for threads in [1, 2, 5] {
        let pool = ReadaheadPool::new(threads).unwrap();
        for (compression, block_size) in [
            (CompressionType::Snappy, 512),
            (CompressionType::ZlibRaw, 256),
            (CompressionType::None, 1024),
        ] {
            let entries = model(3000, 77 + threads as u32 + block_size as u32);
            let n = entries.len();
            let (s, size) = build_table(&entries, compression, block_size);
            let table = open_table_as(&s, "t.ldb", size, Some(pool.clone()));
            let before = pool.stats();
            let mut it = table.iter(uncached.clone());
            let mut pos = rng.uniform(n as u32) as usize;
            it.seek(&entries[pos].0);
            let (mut forward_runs, mut backward_runs) = (0, 0);
            for _ in 0..60 {
                let forward = rng.one_in(2);
                let steps = 1 + rng.uniform(500) as usize;
                let mut moved = 0;
                while moved < steps {
                    assert!(it.valid());
                    assert_eq!(
                        (it.key(), it.value()),
                        (&entries[pos].0[..], &entries[pos].1[..])
                    );
                    if forward && pos + 1 < n {
                        it.next();
                        pos += 1;
                    } else if !forward && pos > 0 {
                        it.prev();
                        pos -= 1;
                    } else {
                        break;
                    }
                    moved += 1;
                }
                if moved >= 300 {
                    if forward {
                        forward_runs += 1;
                    } else {
                        backward_runs += 1;
                    }
                }
                if rng.one_in(5) {
                    pos = rng.uniform(n as u32) as usize;
                    it.seek(&entries[pos].0);
                }
            }
            it.status().unwrap();
            drop(it);
            assert!(
                forward_runs > 0 && backward_runs > 0,
                "long walks both ways"
            );
            // Runs a worker was decoding when the iterator went are counted when it finishes.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            loop {
                let after = pool.stats();
                let scheduled = after.runs_scheduled - before.runs_scheduled;
                let ended = (after.runs_by_workers + after.runs_by_reader + after.runs_cancelled)
                    - (before.runs_by_workers + before.runs_by_reader + before.runs_cancelled);
                if scheduled == ended {
                    assert!(
                        after.blocks_delivered > before.blocks_delivered,
                        "{compression:?}/{block_size}: readahead delivered nothing"
                    );
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{scheduled} runs scheduled, {ended} decoded or cancelled"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}

#[test]
fn readahead_stops_at_a_damaged_block_like_the_plain_iterator() {
    let entries = model(5000, 5);
    let (s, size) = build_table(&entries, CompressionType::ZlibRaw, 512);
    let pool = ReadaheadPool::new(2);
    let good = open_table_as(&s, "t.ldb", size, None);
    let handles = good.data_handles().unwrap().to_vec();
    assert!(handles.len() > 40, "{} blocks", handles.len());
    // Entries in the blocks before the damaged one, counted block by block.
    let damaged = handles.len() / 2;
    let entries_in = |b: &Arc<Block>| {
        let mut it = b.iter();
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        n
    };
    let before: usize = good
        .read_run(0, damaged, true)
        .iter()
        .map(|b| entries_in(b.as_ref().unwrap()))
        .sum();
    // Entries in the blocks after it (what a backward pass sees before it).
    let after =
        entries.len() - before - entries_in(good.read_run(damaged, 1, true)[0].as_ref().unwrap());
    let mut bytes = s.contents("t.ldb").unwrap();
    bytes[handles[damaged].offset as usize + 3] ^= 0x40;
    crate::storage::write_all(&s, "bad.ldb", &bytes).unwrap();

    for readahead in [None, pool.clone()] {
        let ahead = readahead.is_some();
        let table = open_table_as(&s, "bad.ldb", size, readahead);
        let mut it = table.iter(readahead_options());
        it.seek_to_first();
        let mut seen = 0;
        while it.valid() {
            assert_eq!(it.key(), &entries[seen].0[..]);
            seen += 1;
            it.next();
        }
        assert_eq!(seen, before, "readahead {ahead}");
        let err = it.status().unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert_eq!(err.file(), Some("bad.ldb"));
        assert_eq!(err.offset(), Some(handles[damaged].offset));
        // Backward, with auto readahead started well before the damaged block: it stops at
        // the entry after that block, with the same error.
        let uncached = ReadOptions {
            fill_cache: false,
            ..ReadOptions::default()
        };
        let delivered = || pool.as_ref().unwrap().stats().blocks_delivered;
        let delivered_before = delivered();
        let mut it = table.iter(uncached);
        it.seek_to_last();
        let mut seen = 0;
        while it.valid() {
            assert_eq!(it.key(), &entries[entries.len() - 1 - seen].0[..]);
            seen += 1;
            it.prev();
        }
        assert_eq!(seen, after, "backward, readahead {ahead}");
        let err = it.status().unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert_eq!(err.file(), Some("bad.ldb"));
        assert_eq!(err.offset(), Some(handles[damaged].offset));
        assert_eq!(
            delivered() > delivered_before,
            ahead,
            "backward readahead ran: {ahead}"
        );
    }
}

#[test]
fn readahead_iterators_dropped_midway_leave_the_pool_usable() {
    let entries = model(3000, 8);
    let (s, size) = build_table(&entries, CompressionType::ZlibRaw, 256);
    let pool = ReadaheadPool::new(2);
    let table = open_table_as(&s, "t.ldb", size, pool);
    for stop in [0, 1, 17, 500, 2999] {
        let mut it = table.iter(readahead_options());
        it.seek_to_first();
        for _ in 0..stop {
            it.next();
        }
        assert_eq!(it.key(), &entries[stop].0[..]);
        // A seek backwards abandons the runs ahead; the iterator stays correct.
        it.seek(&entries[stop / 2].0);
        assert_eq!(it.key(), &entries[stop / 2].0[..]);
        drop(it);
    }
    let mut it = table.iter(readahead_options());
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
}

/// Readahead workers run under `SCHED_BATCH` (their wake-ups never preempt the reader on its
/// core): every worker this pool started says so, as the kernel reports its policy back to
/// it. (A worker counts itself once it has set the policy, just after it starts: the test
/// waits for that, up to a deadline, rather than racing it.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn readahead_workers_never_preempt_on_wake_up() {
    let entries = model(3000, 9);
    let (s, size) = build_table(&entries, CompressionType::ZlibRaw, 256);
    let pool = ReadaheadPool::new(2).unwrap();
    let table = open_table_as(&s, "t.ldb", size, Some(pool.clone()));
    let mut it = table.iter(readahead_options());
    it.seek_to_first();
    assert_eq!(walk(&mut it, true), entries.len());
    assert!(pool.stats().runs_scheduled > 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (started, batched) = pool.workers_batched();
        if started >= 1 && batched == started as u64 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{started} workers started, {batched} under SCHED_BATCH (refused by this system?)"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A memory-mapped table lends its uncompressed data blocks (no copy, not cached on a first
/// read; a second read soon after caches a verified copy) and decompresses the others out of
/// the map; every read answers as with `pread`. A lent block outlives its table, its file
/// handle and the file's name; damage in a lent block is reported with the table's name and
/// the block's offset, and a block damaged after its first read is refused on its second.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn mapped_tables_lend_uncompressed_blocks() {
    use crate::storage::FsStorage;
    let dir = tempfile::tempdir().unwrap();
    let entries = model(3000, 31);
    let mut rng = Random::new(3);
    let open = |fs: &FsStorage, path: &str, size: u64, cache: &Arc<Cache<Arc<Block>>>| {
        open_table_in(fs, path, size, cache, None)
    };
    for compression in [CompressionType::None, CompressionType::Snappy] {
        let (s, size) = build_table(&entries, compression, 1024);
        let path = dir.path().join(format!("{compression:?}.ldb"));
        let path = path.to_str().unwrap().to_string();
        std::fs::write(&path, s.contents("t.ldb").unwrap()).unwrap();
        // Tables are mapped on 64-bit hosts (and never by `without_mmap`).
        let maps = cfg!(target_pointer_width = "64");
        for (fs, mapped) in [(FsStorage::new(), maps), (FsStorage::without_mmap(), false)] {
            let cache = Arc::new(Cache::new(64 << 20));
            let table = open(&fs, &path, size, &cache);
            let handles = table.data_handles().unwrap().to_vec();
            assert!(handles.len() > 50, "{} blocks", handles.len());
            let lent = mapped && compression == CompressionType::None;
            let read = |h| table.block_at(h, &ReadOptions::default()).unwrap();
            // First reads: lent blocks are not cached; every other block read is (each at
            // least its stored size: a decompressed block is larger).
            let firsts: Vec<Arc<Block>> = handles.iter().map(|&h| read(h)).collect();
            assert!(firsts.iter().all(|b| b.is_mapped() == lent));
            let stored: usize = handles.iter().map(|h| h.size as usize).sum();
            if lent {
                assert_eq!(cache.usage(), 0);
            } else {
                assert!(cache.usage() >= stored, "{} < {stored}", cache.usage());
            }
            // Read again, a lent block is copied (its checksum verified on the copy) and the
            // copy cached; a third read is the cache's.
            let usage = cache.usage();
            let again = read(handles[7]);
            assert!(!again.is_mapped());
            assert!(Arc::ptr_eq(&again, &read(handles[7])));
            if lent {
                assert_eq!(cache.usage(), again.charge());
                assert!(again.charge() >= handles[7].size as usize);
            } else {
                assert!(Arc::ptr_eq(&again, &firsts[7]));
                assert_eq!(cache.usage(), usage);
            }
            let entries_of = |b: &Arc<Block>| {
                let mut bi = b.iter();
                bi.seek_to_first();
                entries_from(&mut bi, true)
            };
            let held = entries_of(&again);
            assert!(!held.is_empty());
            assert_eq!(held, entries_of(&firsts[7]));
            drop(firsts);
            if lent {
                // Scans: a rescan's steps from block to block are not offered to the cache,
                // only where each scan starts (read by both scans: cached as a copy).
                let cache = Arc::new(Cache::new(64 << 20));
                let table = open(&fs, &path, size, &cache);
                let scan = |forward: bool| {
                    let mut it = table.iter(ReadOptions::default());
                    if forward {
                        it.seek_to_first();
                    } else {
                        it.seek_to_last();
                    }
                    assert_eq!(walk(&mut it, forward), entries.len());
                };
                scan(true);
                scan(true);
                let start = table.block_at(handles[0], &ReadOptions::default()).unwrap();
                assert!(!start.is_mapped());
                assert_eq!(cache.usage(), start.charge());
                scan(false);
                scan(false);
                let end = *handles.last().unwrap();
                let end = table.block_at(end, &ReadOptions::default()).unwrap();
                assert!(!end.is_mapped());
                assert_eq!(cache.usage(), start.charge() + end.charge());
            }
            let mut it = table.iter(ReadOptions::default());
            check_iterator(&mut it, &entries, &mut rng);
            for (k, v) in entries.iter().step_by(5) {
                let (fk, fv) = table
                    .internal_get(&ReadOptions::default(), k)
                    .unwrap()
                    .unwrap();
                assert_eq!((&fk, &fv), (k, v));
            }
            // Bulk reads (cache off) read with pread: a whole-database pass through the map
            // would make the database resident.
            let bulk = ReadOptions {
                fill_cache: false,
                ..ReadOptions::default()
            };
            let b = table.block_at(handles[8], &bulk).unwrap();
            assert!(!b.is_mapped());
            let mut bi = b.iter();
            bi.seek_to_first();
            assert!(entries.iter().any(|(k, _)| k == bi.key()));
            // The block outlives the table, its file and the file's name.
            drop(it);
            drop(table);
            let copy = format!("{path}.gone.ldb");
            std::fs::copy(&path, &copy).unwrap();
            let t2 = open(&fs, &copy, size, &Arc::new(Cache::new(0)));
            let b2 = t2.block_at(handles[9], &ReadOptions::default()).unwrap();
            drop(t2);
            // (Unix lets a mapped file's name go; Windows refuses while a view is open.)
            #[cfg(unix)]
            std::fs::remove_file(&copy).unwrap();
            let mut bi = b2.iter();
            bi.seek_to_first();
            let first = entries.iter().position(|(k, _)| k == bi.key()).unwrap();
            let mut n = 0;
            while bi.valid() {
                assert_eq!(bi.key(), &entries[first + n].0[..]);
                assert_eq!(bi.value(), &entries[first + n].1[..]);
                n += 1;
                bi.next();
            }
            bi.status().unwrap();
            assert!(n > 0);
            assert_eq!(b2.is_mapped(), lent);
        }
        // Damage inside block 20's payload: found by the checksum, named by file and offset,
        // through the map and through pread alike.
        let (_, size) = build_table(&entries, compression, 1024);
        let mut bytes = std::fs::read(&path).unwrap();
        let cache = Arc::new(Cache::new(1 << 20));
        let handles = open(&FsStorage::new(), &path, size, &cache)
            .data_handles()
            .unwrap()
            .to_vec();
        let target = handles[20];
        bytes[target.offset as usize + 5] ^= 0x10;
        let bad = format!("{path}.bad.ldb");
        std::fs::write(&bad, &bytes).unwrap();
        for fs in [FsStorage::new(), FsStorage::without_mmap()] {
            let table = open(&fs, &bad, size, &cache);
            let err = table
                .block_at(target, &ReadOptions::default())
                .err()
                .expect("a damaged block is refused");
            assert!(err.is_corruption(), "{err}");
            assert!(err.to_string().contains("checksum"), "{err}");
            assert_eq!(err.file(), Some(bad.as_str()));
            assert_eq!(err.offset(), Some(target.offset));
            // Its neighbours still read.
            table
                .block_at(handles[19], &ReadOptions::default())
                .unwrap();
            table
                .block_at(handles[21], &ReadOptions::default())
                .unwrap();
        }
        // Damaged after its first read (written in place, under the map): the second read's
        // copy is checked, refused, and not cached; the read after it is refused too.
        if cfg!(target_pointer_width = "64") && compression == CompressionType::None {
            use std::io::{Seek, SeekFrom, Write};
            let later = format!("{path}.later.ldb");
            std::fs::copy(&path, &later).unwrap();
            let cache = Arc::new(Cache::new(1 << 20));
            let table = open(&FsStorage::new(), &later, size, &cache);
            let first = table.block_at(target, &ReadOptions::default()).unwrap();
            assert!(first.is_mapped());
            drop(first);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(&later)
                .unwrap();
            f.seek(SeekFrom::Start(target.offset + 5)).unwrap();
            f.write_all(&[bytes[target.offset as usize + 5]]).unwrap();
            drop(f);
            for _ in 0..2 {
                let err = table
                    .block_at(target, &ReadOptions::default())
                    .err()
                    .expect("a block damaged since its first read is refused");
                assert!(err.to_string().contains("checksum"), "{err}");
                assert_eq!(err.offset(), Some(target.offset));
            }
            assert_eq!(cache.usage(), 0);
        }
    }
}

/// User keys whose 7th byte is odd: the filter of the lent-run tests (the model's user keys
/// are "k" and five digits, then random bytes).
fn odd_sixth(user_key: &[u8]) -> bool {
    user_key.get(5).is_some_and(|b| b % 2 == 1)
}

const ODD_SIXTH: super::readahead::LendFilter = super::readahead::LendFilter {
    code: 7,
    keeps: odd_sixth,
};

/// An external pool (wasm's): runs lent between steps, decoded outside the iterator as a
/// decode worker does (`decode_run`, then `filter_block` for a filtered reader) and
/// delivered. A filtered reader sees every entry the filter keeps, in order, with its value
/// (entries of runs it decoded itself come too, and are passed over as the reader would); an
/// unfiltered reader interleaved with it on the same pool sees every entry.
#[test]
fn lent_runs_decode_outside_and_filtered_runs_keep_what_the_reader_reads() {
    use super::readahead::{decode_run, filter_block};
    for (compression, block_size) in [
        (CompressionType::ZlibRaw, 512),
        (CompressionType::Snappy, 4096),
        (CompressionType::None, 1024),
    ] {
        let entries = model(6000, block_size as u32 + 3);
        let (s, size) = build_table(&entries, compression, block_size);
        let pool = ReadaheadPool::external();
        let table = open_table_as(&s, "t.ldb", size, Some(pool.clone()));
        let kept: Vec<_> = entries
            .iter()
            .filter(|(k, _)| odd_sixth(&k[..k.len() - 8]))
            .collect();
        assert!(kept.len() > 1000 && kept.len() < entries.len() - 1000);
        let filtered_options = ReadOptions {
            lend_filter: Some(ODD_SIXTH),
            ..readahead_options()
        };
        let mut f = table.iter(filtered_options);
        let mut all = table.iter(readahead_options());
        f.seek_to_first();
        all.seek_to_first();
        let (mut fi, mut ai) = (0usize, 0usize);
        let mut lent_filtered = 0;
        let mut steps = 0;
        while f.valid() || all.valid() {
            // What a host does between steps: lend what is queued, decode it outside, deliver.
            for run in pool.lend(3) {
                let mut blocks = decode_run(&run.raw, &run.sizes, run.verify, 1 << 24).unwrap();
                if run.filter == ODD_SIXTH.code {
                    lent_filtered += 1;
                    blocks = blocks
                        .into_iter()
                        .map(|b| filter_block(b, odd_sixth).unwrap())
                        .collect();
                } else {
                    assert_eq!(run.filter, 0);
                }
                // Every other run is delivered late or not at all: the cursor decodes it.
                if run.id % 3 != 2 {
                    pool.deliver(run.id, blocks);
                } else {
                    pool.abandon(run.id);
                }
            }
            for _ in 0..40 {
                if f.valid() {
                    let k = f.key();
                    if odd_sixth(&k[..k.len() - 8]) {
                        assert_eq!((k, f.value()), (&kept[fi].0[..], &kept[fi].1[..]));
                        fi += 1;
                    }
                    f.next();
                }
                if all.valid() {
                    let (k, v) = &entries[ai];
                    assert_eq!((all.key(), all.value()), (&k[..], &v[..]));
                    ai += 1;
                    all.next();
                }
            }
            steps += 1;
        }
        f.status().unwrap();
        all.status().unwrap();
        assert_eq!((fi, ai), (kept.len(), entries.len()), "{compression:?}");
        let stats = pool.stats();
        assert!(
            lent_filtered > 0 && stats.runs_by_workers > 0,
            "{compression:?}: {stats:?}, {steps} steps"
        );
    }
}

/// A value past `max_block_size` (one block of its own) is never lent to a decoder: a stored
/// block of it is not lent at all, a compressed one is lent (its stored bytes are small) but
/// the decoder refuses to make more than `max_block_size` of it, and the cursor reads it
/// itself. Either way the reader sees every entry, the large value byte-exact.
#[test]
fn blocks_past_the_limit_stay_with_the_cursor() {
    use super::readahead::decode_run;
    const MAX: usize = 1 << 24;
    for compression in [CompressionType::None, CompressionType::Snappy] {
        let mut entries = model(3000, 17);
        let big: Vec<u8> = match compression {
            // Noise: a stored block of 20 MiB.
            CompressionType::None => {
                let mut v = vec![0u8; 20 << 20];
                Random::new(5).fill(&mut v);
                v
            }
            // One byte: ~1 MiB of Snappy that makes 20 MiB.
            _ => vec![7u8; 20 << 20],
        };
        let at = 1500;
        entries[at].1 = big.clone();
        let (s, size) = build_table(&entries, compression, 4096);
        let pool = ReadaheadPool::external();
        let table = open_table_as(&s, "t.ldb", size, Some(pool.clone()));
        // The stored block is refused for lending as such; the Snappy one is small enough.
        let handles = table.data_handles().unwrap();
        let big_block = handles.iter().position(|h| h.size > 1 << 16).unwrap();
        match table.read_run_raw(big_block, 1) {
            Err(e) if compression == CompressionType::None => {
                assert_eq!(e.kind(), crate::error::ErrorKind::NotSupported, "{e}")
            }
            Ok((raw, sizes)) if compression != CompressionType::None => {
                assert!(raw.len() < MAX && sizes.len() == 1)
            }
            other => panic!("{compression:?}: {:?}", other.map(|(r, _)| r.len())),
        }
        let mut it = table.iter(readahead_options());
        it.seek_to_first();
        let (mut seen, mut lent, mut refused, mut delivered) = (0usize, 0, 0, 0);
        while it.valid() {
            for run in pool.lend(4) {
                lent += 1;
                assert!(
                    run.sizes.iter().all(|&n| (n as usize) <= MAX),
                    "{compression:?}"
                );
                match decode_run(&run.raw, &run.sizes, run.verify, MAX) {
                    Ok(blocks) => {
                        delivered += 1;
                        pool.deliver(run.id, blocks);
                    }
                    Err(e) => {
                        assert!(e.is_corruption(), "{e}");
                        assert!(e.message().contains("limit"), "{e}");
                        refused += 1;
                        pool.abandon(run.id);
                    }
                }
            }
            let (k, v) = &entries[seen];
            assert_eq!(it.key(), &k[..], "{compression:?} entry {seen}");
            if seen == at {
                assert_eq!(it.value().len(), big.len());
                assert!(
                    it.value() == &big[..],
                    "{compression:?}: the large value differs"
                );
            } else {
                assert_eq!(it.value(), &v[..]);
            }
            seen += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(seen, entries.len(), "{compression:?}");
        assert!(lent > 0 && delivered > 0, "{compression:?}: {lent} lent");
        // The stored block is never lent; the Snappy one is, and its decoder refuses it.
        let expect_refused = if compression == CompressionType::None {
            0
        } else {
            1
        };
        assert_eq!(refused, expect_refused, "{compression:?}");
    }
}

#[test]
fn filter_block_keeps_exactly_the_kept_entries() {
    let entries = model(300, 17);
    let raw = block_of(&entries, 16);
    let mut rng = Random::new(23);
    let mut check = |keeps: fn(&[u8]) -> bool, expect: Vec<&(Vec<u8>, Vec<u8>)>| {
        let out = super::readahead::filter_block(raw.clone(), keeps).unwrap();
        let block = Arc::new(Block::new(out.clone()).unwrap());
        let expect: Vec<_> = expect.into_iter().cloned().collect();
        check_iterator(&mut block.iter(), &expect, &mut rng);
        out
    };
    // All kept: the very block.
    assert_eq!(check(|_| true, entries.iter().collect()), raw);
    // None kept: an empty block that iterates to nothing.
    check(|_| false, Vec::new());
    check(
        odd_sixth,
        entries
            .iter()
            .filter(|(k, _)| odd_sixth(&k[..k.len() - 8]))
            .collect(),
    );
    // A key too short to hold a user key is kept (the reader reports it).
    let short = block_of(&[(b"short".to_vec(), b"v".to_vec())], 16);
    let out = super::readahead::filter_block(short, |_| false).unwrap();
    let block = Arc::new(Block::new(out).unwrap());
    let mut it = block.iter();
    it.seek_to_first();
    assert_eq!(it.key(), b"short");
    // Not a block: an error, never a panic.
    for junk in [&[][..], &[1, 2, 3][..], &[0xff; 9][..]] {
        assert!(super::readahead::filter_block(junk.to_vec(), |_| true).is_err());
    }
}

/// A filtered reader's runs of the next file (its handoff, scheduled as it nears the end of
/// its file) are not adopted by an unfiltered reader that opens that file first: it schedules
/// its own runs and reads every entry, even when the filtered runs came back filtered.
#[test]
fn an_unfiltered_reader_never_adopts_a_filtered_readers_handoff() {
    use super::readahead::{decode_run, filter_block};
    let pool = ReadaheadPool::external();
    let first = model(3000, 41);
    let second = model(3000, 42);
    let s = MemStorage::new();
    let sizes = [("a.ldb", &first), ("b.ldb", &second)]
        .map(|(name, entries)| write_table(&s, name, entries, CompressionType::ZlibRaw, 512));
    let cache = Arc::new(Cache::new(1 << 20));
    let a = open_table_in(&s, "a.ldb", sizes[0], &cache, Some(pool.clone()));
    let b = open_table_in(&s, "b.ldb", sizes[1], &cache, Some(pool.clone()));
    // The filtered reader goes through `a` until it has scheduled `b`'s first runs.
    let next = b.clone();
    let mut f = a.iter_then(
        ReadOptions {
            lend_filter: Some(ODD_SIXTH),
            ..readahead_options()
        },
        Some(Box::new(move || Some(next))),
    );
    f.seek_to_first();
    for _ in 0..first.len() - 5 {
        f.next();
    }
    assert!(f.valid());
    // The unfiltered reader opens `b` now; every queued run (`b`'s handoff among them) is lent,
    // decoded outside, filtered as its reader asked, and delivered.
    let mut all = b.iter(readahead_options());
    all.seek_to_first();
    let mut filtered = 0;
    for run in pool.lend(usize::MAX) {
        let mut blocks = decode_run(&run.raw, &run.sizes, run.verify, 1 << 24).unwrap();
        if run.filter == ODD_SIXTH.code {
            filtered += 1;
            blocks = blocks
                .into_iter()
                .map(|b| filter_block(b, odd_sixth).unwrap())
                .collect();
        }
        pool.deliver(run.id, blocks);
    }
    assert!(filtered > 0, "the filtered reader scheduled runs of b");
    for (n, (k, v)) in second.iter().enumerate() {
        assert!(all.valid(), "entry {n} of b missing");
        assert_eq!((all.key(), all.value()), (&k[..], &v[..]));
        all.next();
    }
    assert!(!all.valid());
    all.status().unwrap();
}

/// Builds `entries` into a table with `pool` (holding its demand when `demand`); the table's
/// bytes and `file_size` after every entry.
fn pooled_table(
    entries: &[(Vec<u8>, Vec<u8>)],
    compression: CompressionType,
    block_size: usize,
    pool: Option<Arc<CompressionPool>>,
    demand: bool,
) -> (Vec<u8>, Vec<u64>) {
    let s = MemStorage::new();
    let _demand = pool.as_ref().filter(|_| demand).map(|p| p.demand());
    let pipeline = super::table_builder::PIPELINE_BYTES;
    let options = test_options(compression, block_size, pool.clone(), pipeline);
    let mut b = TableBuilder::new(options, s.create("t.ldb").unwrap());
    let mut sizes = Vec::with_capacity(entries.len());
    for (k, v) in entries {
        b.add(k, v).unwrap();
        sizes.push(b.file_size());
    }
    let (_, size) = b.finish().unwrap();
    let f = s.open_random("t.ldb").unwrap();
    (
        crate::storage::read_exact_at(&*f, 0, size as usize).unwrap(),
        sizes,
    )
}

#[test]
fn pooled_compression_writes_the_same_bytes_whatever_the_timing() {
    super::compress_pool::within_a_minute("pooled compression", pooled_same_bytes);
}

fn pooled_same_bytes() {
    // Values up to 4 KiB in 1 KiB blocks: many runs, and more than PIPELINE_BYTES in flight.
    let entries = model(6000, 77);
    for compression in [CompressionType::Snappy, CompressionType::ZlibRaw] {
        let (plain, plain_sizes) = pooled_table(&entries, compression, 1024, None, false);
        let mut rng = Random::new(5);
        let size = plain.len() as u64;
        let s = MemStorage::new();
        let mut w = s.create("t.ldb").unwrap();
        w.append(&plain).unwrap();
        w.sync().unwrap();
        drop(w);
        check_iterator(
            &mut open_table(&s, size).iter(ReadOptions::default()),
            &entries,
            &mut rng,
        );
        let mut sizes_seen = None;
        for (threads, demand) in [(1, true), (2, true), (3, true), (2, false)] {
            let pool = CompressionPool::new(threads).unwrap();
            let (bytes, sizes) =
                pooled_table(&entries, compression, 1024, Some(pool.clone()), demand);
            // The table is the same bytes as LevelDB's write-as-you-cut order gives.
            assert_eq!(
                bytes.len(),
                plain.len(),
                "{compression:?} x{threads} {demand}"
            );
            assert!(bytes == plain, "{compression:?} x{threads} {demand}");
            // file_size (the bytes written) after each entry depends on the entries alone:
            // blocks are written when the pipeline bound says, whenever compression finishes.
            assert_eq!(*sizes_seen.get_or_insert_with(|| sizes.clone()), sizes);
            let st = pool.stats();
            if demand {
                assert!(st.runs_by_workers + st.runs_by_writers > 20, "{st:?}");
            } else {
                assert_eq!(st.runs_by_workers, 0, "{st:?}");
            }
        }
        // Without a pool, file_size is exactly the bytes written, as in LevelDB.
        assert!(plain_sizes.windows(2).all(|w| w[0] <= w[1]));
    }
}

/// Splits `entries` into tables as a compaction does (a new table once the one being built
/// reaches `limit`): each table's bytes. With a pool, the cut is `reached`; without one,
/// LevelDB's `file_size() >= limit`.
fn cut_tables(
    entries: &[(Vec<u8>, Vec<u8>)],
    compression: CompressionType,
    block_size: usize,
    limit: u64,
    pool: Option<Arc<CompressionPool>>,
) -> Vec<Vec<u8>> {
    let s = MemStorage::new();
    let _demand = pool.as_ref().map(|p| p.demand());
    let pipeline = super::table_builder::pipeline_bytes(limit);
    let mut tables = Vec::new();
    let mut builder: Option<TableBuilder> = None;
    let finish = |b: TableBuilder, tables: &mut Vec<Vec<u8>>| {
        let name = format!("{}.ldb", tables.len());
        let (mut f, size) = b.finish().unwrap();
        f.sync().unwrap();
        drop(f);
        let f = s.open_random(&name).unwrap();
        tables.push(crate::storage::read_exact_at(&*f, 0, size as usize).unwrap());
    };
    for (k, v) in entries {
        let b = builder.get_or_insert_with(|| {
            let options = test_options(compression, block_size, pool.clone(), pipeline);
            TableBuilder::new(options, s.create(&format!("{}.ldb", tables.len())).unwrap())
        });
        b.add(k, v).unwrap();
        let cut = if pool.is_some() {
            b.reached(limit).unwrap()
        } else {
            b.file_size() >= limit
        };
        if cut {
            finish(builder.take().unwrap(), &mut tables);
        }
    }
    if let Some(b) = builder.take() {
        finish(b, &mut tables);
    }
    tables
}

#[test]
fn pooled_compression_cuts_tables_where_leveldb_does() {
    super::compress_pool::within_a_minute("pooled cut points", pooled_cut_points);
}

fn pooled_cut_points() {
    // Tables from 4 KiB (the first block is still in flight when the limit is reached) to
    // 32 KiB, in 1 KiB and 4 KiB blocks. Before `reached`, the pooled 4 KiB tables held one
    // block each (about 650 bytes against LevelDB's 4,900).
    let entries = model(6000, 79);
    for compression in [CompressionType::Snappy, CompressionType::ZlibRaw] {
        for (block_size, limit) in [
            (4096, 4096),
            (1024, 4096),
            (4096, 16 << 10),
            (1024, 32 << 10),
        ] {
            let plain = cut_tables(&entries, compression, block_size, limit, None);
            assert!(
                plain.len() > 3,
                "{compression:?} {block_size} {limit}: {} tables",
                plain.len()
            );
            for threads in [1, 2, 3] {
                let pool = CompressionPool::new(threads).unwrap();
                let pooled = cut_tables(&entries, compression, block_size, limit, Some(pool));
                assert_eq!(
                    pooled.iter().map(Vec::len).collect::<Vec<_>>(),
                    plain.iter().map(Vec::len).collect::<Vec<_>>(),
                    "{compression:?} {block_size} {limit} x{threads}"
                );
                assert!(
                    pooled == plain,
                    "{compression:?} {block_size} {limit} x{threads}"
                );
            }
        }
    }
}

#[test]
fn a_pooled_writer_dropped_midway_leaves_the_pool_usable() {
    super::compress_pool::within_a_minute("pooled writer dropped", pooled_writer_dropped);
}

fn pooled_writer_dropped() {
    let entries = model(4000, 78);
    let pool = CompressionPool::new(2).unwrap();
    let _demand = pool.demand();
    let s = MemStorage::new();
    for round in 0..3 {
        let options = test_options(CompressionType::ZlibRaw, 512, Some(pool.clone()), 64 << 10);
        let mut b = TableBuilder::new(options, s.create(&format!("{round}.ldb")).unwrap());
        for (k, v) in &entries[..2000] {
            b.add(k, v).unwrap();
        }
        drop(b);
    }
    let (bytes, _) = pooled_table(
        &entries,
        CompressionType::ZlibRaw,
        512,
        Some(pool.clone()),
        true,
    );
    let (plain, _) = pooled_table(&entries, CompressionType::ZlibRaw, 512, None, false);
    assert!(bytes == plain);
}

/// A block's only entry is reported only in the layout `BlockBuilder` gives it alone (one
/// restart point at 0, minimal varints): a copy of it is then the block a rebuild makes.
#[test]
fn a_sole_entry_is_reported_only_in_a_builders_layout() {
    let key = make_internal_key(b"alone", 7, ValueType::Value);
    let value = vec![b'v'; 300];
    let sole = |data: Vec<u8>| {
        let block = Arc::new(Block::new(data).unwrap().stored_as(1));
        let mut it = block.iter();
        it.seek_to_first();
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&key[..], &value[..]));
        let first = it.is_sole_entry();
        it.next();
        (first, it.valid())
    };
    let mut b = BlockBuilder::new(16);
    b.add(&key, &value);
    let canonical = b.finish().to_vec();
    assert_eq!(sole(canonical.clone()), (true, false));
    // Two restart points (both 0): the same entry, a longer block.
    let mut two = canonical[..canonical.len() - 4].to_vec();
    two.extend_from_slice(&0u32.to_le_bytes());
    two.extend_from_slice(&2u32.to_le_bytes());
    assert_eq!(sole(two), (false, false));
    // `shared` as a two-byte varint (0x80 0x00).
    let mut padded = vec![0x80, 0x00];
    padded.extend_from_slice(&canonical[1..]);
    assert_eq!(sole(padded), (false, false));
    // Two entries: neither is alone.
    let mut b = BlockBuilder::new(16);
    b.add(&key, &value);
    b.add(&make_internal_key(b"alone", 6, ValueType::Value), b"x");
    let block = Arc::new(Block::new(b.finish().to_vec()).unwrap().stored_as(1));
    let mut it = block.iter();
    it.seek_to_first();
    assert!(!it.is_sole_entry());
    it.next();
    assert!(it.valid() && !it.is_sole_entry());
}

/// `add_copied` takes a stored block only where a rebuild would store those very bytes.
#[test]
fn add_copied_refuses_what_a_rebuild_would_store_otherwise() {
    let s = MemStorage::new();
    let key = |i: u64| make_internal_key(format!("k{i:03}").as_bytes(), i, ValueType::Value);
    let value = vec![b'v'; 6_000];
    let mut raw = BlockBuilder::new(16);
    raw.add(&key(1), &value);
    let raw = raw.finish().to_vec();
    let decoded = raw.len();
    let mut snappy = Vec::new();
    assert!(crate::compress::compress(
        CompressionType::Snappy,
        &raw,
        &mut snappy
    ));
    assert!(snappy.len() < decoded / 8);
    let mut b = TableBuilder::new(
        test_options(CompressionType::Snappy, 4096, None, 0),
        s.create("t.ldb").unwrap(),
    );
    // Another codec's id; a raw block (Snappy might compress it); too little saved.
    assert!(!b.add_copied(&key(1), decoded, raw.clone(), 0).unwrap());
    assert!(!b.add_copied(&key(1), decoded, snappy.clone(), 4).unwrap());
    let short = vec![0u8; decoded - decoded / 8];
    assert!(!b.add_copied(&key(1), decoded, short, 1).unwrap());
    // A block under `block_size` would share its block with the next entry.
    assert!(!b.add_copied(&key(1), 4095, snappy.clone(), 1).unwrap());
    assert_eq!(b.num_entries(), 0);
    assert!(b.add_copied(&key(1), decoded, snappy.clone(), 1).unwrap());
    // Behind a small entry the data block is not empty.
    b.add(&key(2), b"small").unwrap();
    assert!(!b.add_copied(&key(3), decoded, snappy.clone(), 1).unwrap());
    assert_eq!(b.num_entries(), 2);
    let (_, size) = b.finish().unwrap();

    // The table reads back: the copied entry, then the small one.
    let table = open_table(&s, size);
    let mut it = table.iter(ReadOptions::default());
    it.seek_to_first();
    assert_eq!((it.key(), it.value()), (&key(1)[..], &value[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&key(2)[..], &b"small"[..]));
    it.next();
    assert!(!it.valid());
    it.status().unwrap();

    // Copies off: nothing is taken.
    let mut off = test_options(CompressionType::Snappy, 4096, None, 0);
    off.copy_stored_blocks = false;
    let mut b = TableBuilder::new(off, s.create("u.ldb").unwrap());
    assert!(!b.add_copied(&key(1), decoded, snappy, 1).unwrap());
}
