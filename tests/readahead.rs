//! Scan readahead at the database level: a level of many files is read with blocks decoded
//! ahead on worker threads, across file boundaries (handoffs), with exactly the entries and
//! figures of the plain iterator, and every block delivered once.

mod common;

use std::sync::Arc;

use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::{CompressionType, Db, Options, ReadOptions, ScanStats, WriteOptions};

fn build() -> Db {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        compression: CompressionType::ZlibRaw,
        block_size: 2048,
        write_buffer_size: 256 * 1024,
        max_file_size: 64 * 1024,
        readahead_threads: 2,
        ..Options::google().create()
    };
    let db = Db::open(storage, "db", options).unwrap();
    let mut rng = common::Rng(0x5ca_11ed);
    for b in 0..60u64 {
        let mut batch = WriteBatch::new();
        for i in 0..1000u64 {
            let key = format!("key{:08}", (b * 7919 + i * 104_729) % 1_000_003);
            let len = 40 + (rng.next() % 160) as usize;
            let value: Vec<u8> = (0..len)
                .map(|j| b"abcdefgh"[(j / 5 + i as usize) % 8])
                .collect();
            batch.put(key.as_bytes(), &value);
        }
        db.write(&WriteOptions::default(), batch).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db
}

fn figures(db: &Db, options: &ReadOptions) -> ScanStats {
    let mut it = db.iter(options);
    let mut stats = ScanStats::default();
    it.seek_to_first();
    while it.valid() {
        stats.add(it.key(), it.value());
        it.next();
    }
    it.status().unwrap();
    stats
}

/// The data blocks of every live table, each table holding at least `at_least`.
fn data_blocks(db: &Db, at_least: u64) -> u64 {
    let version = db.version();
    let mut blocks = 0u64;
    for (_, f) in version.all_files() {
        let t = db.table_cache().table(f.number, f.file_size).unwrap();
        let n = t.data_handles().unwrap().len() as u64;
        assert!(n >= at_least, "{n} blocks");
        blocks += n;
    }
    blocks
}

/// Default read options without the cache, so that every block read is decoded (cached ones
/// do not count toward auto readahead), and the same with auto readahead off.
fn uncached_and_off() -> (ReadOptions, ReadOptions) {
    let uncached = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    let off = ReadOptions {
        auto_readahead: false,
        ..uncached.clone()
    };
    (uncached, off)
}

#[test]
fn scans_read_ahead_across_files_and_match_the_plain_iterator() {
    let db = build();
    let version = db.version();
    let files: Vec<_> = version.all_files().collect();
    let deep: Vec<_> = files.iter().filter(|(level, _)| *level >= 1).collect();
    let levels: std::collections::BTreeSet<usize> = deep.iter().map(|(l, _)| *l).collect();
    assert!(deep.len() >= 10, "{} files below level 0", deep.len());
    let blocks: u64 = files
        .iter()
        .map(|(_, f)| {
            let t = db.table_cache().table(f.number, f.file_size).unwrap();
            t.data_handles().unwrap().len() as u64
        })
        .sum();

    let plain = figures(&db, &ReadOptions::default());
    let pool = db
        .table_cache()
        .readahead()
        .expect("readahead pool")
        .clone();
    let before = pool.stats();
    let scanned = db.scan().unwrap();
    let after = pool.stats();
    assert_eq!(scanned, plain);
    assert!(plain.entries > 50_000, "{} entries", plain.entries);
    // Every data block came through a run exactly once; each file after the first of its
    // level had its first runs scheduled before its iterator existed; nothing was wasted.
    assert_eq!(after.blocks_delivered - before.blocks_delivered, blocks);
    let files_below_0 = (files.len() - files.iter().filter(|(l, _)| *l == 0).count()) as u64;
    assert_eq!(
        after.handoffs_adopted - before.handoffs_adopted,
        files_below_0 - levels.len() as u64
    );
    assert_eq!(after.runs_cancelled, before.runs_cancelled);
    assert_eq!(
        after.runs_scheduled - before.runs_scheduled,
        (after.runs_by_workers + after.runs_by_reader)
            - (before.runs_by_workers + before.runs_by_reader)
    );
}

/// An iterator with the default options starts readahead by itself: each level's first file
/// after its first `AUTO_READAHEAD_BLOCKS - 1` blocks, every later file of the level from its
/// first block (the handoff its predecessor scheduled), with the plain iterator's figures.
#[test]
fn default_iterators_read_ahead_by_themselves_across_files() {
    use strata::table::readahead::AUTO_READAHEAD_BLOCKS;
    let db = build();
    let version = db.version();
    let files: Vec<_> = version.all_files().collect();
    assert!(files.iter().all(|(level, _)| *level >= 1));
    let levels: std::collections::BTreeSet<usize> = files.iter().map(|(l, _)| *l).collect();
    let blocks = data_blocks(&db, AUTO_READAHEAD_BLOCKS as u64);
    let (uncached, off) = uncached_and_off();
    let pool = db.table_cache().readahead().unwrap().clone();
    let before = pool.stats();
    let plain = figures(&db, &off);
    assert_eq!(pool.stats(), before, "auto readahead off: no run");
    let auto = figures(&db, &uncached);
    let after = pool.stats();
    assert_eq!(auto, plain);
    let cold = levels.len() as u64;
    assert_eq!(
        after.blocks_delivered - before.blocks_delivered,
        blocks - cold * (AUTO_READAHEAD_BLOCKS as u64 - 1)
    );
    assert_eq!(
        after.handoffs_adopted - before.handoffs_adopted,
        files.len() as u64 - cold
    );
    assert_eq!(after.runs_cancelled, before.runs_cancelled);
}

/// A reverse scan with the default options reads ahead backward by itself: each file decodes
/// its last `AUTO_READAHEAD_BLOCKS - 1` blocks alone (no handoff crosses backward into the file
/// before) and gets every other block from a run, with the plain reverse iterator's figures
/// and nothing cancelled.
#[test]
fn reverse_scans_read_ahead_backward_within_each_file() {
    use strata::table::readahead::AUTO_READAHEAD_BLOCKS;
    let db = build();
    let version = db.version();
    let files: Vec<_> = version.all_files().collect();
    assert!(files.len() >= 10, "{} files", files.len());
    let blocks = data_blocks(&db, 1);
    let reverse = |options: &ReadOptions| {
        let mut it = db.iter(options);
        let mut stats = ScanStats::default();
        it.seek_to_last();
        while it.valid() {
            stats.add(it.key(), it.value());
            it.prev();
        }
        it.status().unwrap();
        stats
    };
    let (uncached, off) = uncached_and_off();
    let pool = db.table_cache().readahead().unwrap().clone();
    let before = pool.stats();
    let plain = reverse(&off);
    assert_eq!(pool.stats(), before, "auto readahead off: no run");
    let auto = reverse(&uncached);
    let after = pool.stats();
    assert_eq!(auto, plain);
    assert_eq!(auto.entries, figures(&db, &off).entries);
    assert_eq!(
        after.blocks_delivered - before.blocks_delivered,
        blocks - files.len() as u64 * (AUTO_READAHEAD_BLOCKS as u64 - 1)
    );
    assert_eq!(after.handoffs_adopted, before.handoffs_adopted);
    assert_eq!(after.runs_cancelled, before.runs_cancelled);
}

#[test]
fn scans_stopped_midway_cancel_their_handoffs_and_leave_the_pool_usable() {
    let db = build();
    let plain = figures(&db, &ReadOptions::default());
    let ahead = ReadOptions {
        readahead: true,
        fill_cache: false,
        ..ReadOptions::default()
    };
    for stop in [1u64, 777, 20_000, plain.entries - 1] {
        let mut it = db.iter(&ahead);
        it.seek_to_first();
        for _ in 0..stop {
            it.next();
        }
        assert!(it.valid());
        // Seek back and forth: the readahead restarts where the cursor goes.
        let key = it.key().to_vec();
        it.seek(b"key00500000");
        assert!(it.valid());
        it.seek(&key);
        assert_eq!(it.key(), &key[..]);
    }
    assert_eq!(figures(&db, &ahead), plain);
    assert_eq!(db.scan().unwrap(), plain);
}
