//! Where threads meet, with the interleavings forced by sync points (`strata::util::sync_point`)
//! rather than left to the scheduler, each test under a watchdog:
//! - the readahead pool: the reader waits for a run a worker is decoding; a worker that panics
//!   fails the scan with an error at that run (never a hang, never wrong figures) and the pool
//!   keeps working;
//! - the background thread against `flush`, `compact_range`, writers stalled on a full memtable,
//!   and `Db` being dropped while a compaction runs;
//! - a panic in background work becomes the sticky error every waiter gets, not a hang; one
//!   while a MANIFEST edit is written unlocked also leaves no later edit waiting for it;
//! - writers and readers go on while a flush's edit is written and synced to the MANIFEST
//!   (the state lock is released there, as LevelDB releases it);
//! - snapshots released while iterators that read through them run across compactions;
//! - the table cache under eviction (one open table allowed) while compactions replace tables.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::watchdog::{watchdog, FailOnPanic};
use common::Rng;
use strata::db::WriteBatch;
use strata::storage::{MemStorage, Storage};
use strata::util::sync_point::{self, thread_name, Latch};
use strata::{CompressionType, Db, ErrorKind, Options, ReadOptions, ScanStats, WriteOptions};

const STEP: Duration = Duration::from_secs(30);
const LIMIT: Duration = Duration::from_secs(120);

fn no_progress() -> String {
    String::from("(see the latch counts in the failure)")
}

/// 60,000 entries over a few dozen raw-deflate tables below level 0.
fn build(readahead_threads: usize) -> Db {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        compression: CompressionType::ZlibRaw,
        block_size: 2048,
        write_buffer_size: 256 * 1024,
        max_file_size: 64 * 1024,
        readahead_threads,
        ..Options::google().create()
    };
    let db = Db::open(storage, "db", options).unwrap();
    for b in 0..60u64 {
        let mut batch = WriteBatch::new();
        for i in 0..1000u64 {
            let key = format!("key{:08}", (b * 7919 + i * 104_729) % 1_000_003);
            batch.put(
                key.as_bytes(),
                format!("value {b} {i} ").repeat(4).as_bytes(),
            );
        }
        db.write(&WriteOptions::default(), batch).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db
}

fn plain_figures(db: &Db) -> ScanStats {
    let mut it = db.iter(&ReadOptions::default());
    let mut stats = ScanStats::default();
    it.seek_to_first();
    while it.valid() {
        stats.add(it.key(), it.value());
        it.next();
    }
    it.status().unwrap();
    stats
}

#[test]
fn the_reader_waits_for_a_run_a_worker_is_decoding() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let l = latch.clone();
    watchdog("reader waits for a worker", LIMIT, no_progress, move || {
        let db = build(1);
        let plain = plain_figures(&db);
        let pool = db.table_cache().readahead().unwrap().clone();
        let before = pool.stats();
        {
            let l1 = l.clone();
            sync_point::set_callback("Readahead::worker:decode", move || {
                l1.signal("decode");
                // Hold the first run a worker starts until the reader waits for it.
                if l1.count("decode") == 1 {
                    assert!(
                        l1.wait_for("reader waits", 1, STEP),
                        "the reader never waited"
                    );
                }
            });
            let l2 = l.clone();
            sync_point::set_callback("Readahead::consumer:wait", move || {
                l2.signal("reader waits")
            });
        }
        let scanned = db.scan().unwrap();
        sync_point::clear();
        assert_eq!(scanned, plain);
        assert_eq!(plain.entries, 60_000 - duplicates_in_build());
        assert!(l.count("reader waits") >= 1);
        let after = pool.stats();
        assert!(after.runs_by_workers > before.runs_by_workers);
    });
    assert!(latch.count("decode") >= 1);
}

/// Keys written twice by `build` (its key formula wraps around 1,000,003).
fn duplicates_in_build() -> u64 {
    let mut keys = std::collections::BTreeSet::new();
    for b in 0..60u64 {
        for i in 0..1000u64 {
            keys.insert((b * 7919 + i * 104_729) % 1_000_003);
        }
    }
    60_000 - keys.len() as u64
}

#[test]
fn a_panicking_readahead_worker_fails_the_scan_and_the_pool_lives_on() {
    let _x = sync_point::exclusive();
    watchdog("readahead worker panics", LIMIT, no_progress, || {
        let db = build(2);
        let plain = plain_figures(&db);
        let latch = Latch::new();
        let l = latch.clone();
        sync_point::set_callback("Readahead::worker:decode", move || {
            l.signal("decode");
            if l.count("decode") == 3 {
                panic!("injected: a worker's third run");
            }
        });
        let err = db
            .scan()
            .expect_err("the scan must report the worker's failure");
        assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
        assert!(
            err.to_string().contains("readahead worker panicked"),
            "{err}"
        );
        assert!(latch.count("decode") >= 3);
        sync_point::clear();
        // The same pool, the same workers: exact figures again.
        assert_eq!(db.scan().unwrap(), plain);
        let stats = db.table_cache().readahead().unwrap().stats();
        assert!(stats.runs_by_workers > 0);
    });
}

fn small_buffer_options() -> Options {
    Options {
        write_buffer_size: 64 * 1024,
        max_file_size: 64 * 1024,
        background_thread: true,
        ..Options::google().create()
    }
}

fn value(i: u64, round: u64) -> Vec<u8> {
    format!("{i:06} round {round} ").repeat(6).into_bytes()
}

/// Reopens the database and checks it holds exactly keys `k000000..` (`count` of them, in
/// order) with `round`'s values, and that its files agree (`verify`).
fn assert_reopens_with(storage: Arc<dyn Storage>, count: u64, round: u64) {
    let db = Db::open(storage, "db", small_buffer_options()).unwrap();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut i = 0u64;
    while it.valid() {
        assert_eq!(it.key(), format!("k{i:06}").as_bytes());
        assert_eq!(it.value(), &value(i, round)[..]);
        i += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(i, count);
    db.verify().unwrap();
}

#[test]
fn background_work_held_while_writers_stall_flush_compact_and_close() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let progress = {
        let l = latch.clone();
        move || {
            [
                "flush held",
                "writer stalled",
                "compaction held",
                "dropping",
            ]
            .iter()
            .map(|e| format!("{e}={}", l.count(e)))
            .collect::<Vec<_>>()
            .join(", ")
        }
    };
    let l = latch.clone();
    watchdog("background vs foreground", LIMIT, progress, move || {
        let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
        let db = Arc::new(Db::open(storage.clone(), "db", small_buffer_options()).unwrap());
        let release_flush = Arc::new(AtomicBool::new(false));
        {
            let (l1, release) = (l.clone(), release_flush.clone());
            sync_point::set_callback("DbInner::compact_memtable:build", move || {
                if !release.load(Ordering::SeqCst) {
                    l1.signal("flush held");
                    assert!(
                        l1.wait_for("release flush", 1, STEP),
                        "flush never released"
                    );
                }
            });
            let l2 = l.clone();
            sync_point::set_callback("DbInner::make_room:wait", move || {
                l2.signal("writer stalled")
            });
        }
        // Phase 1: the first flush is held; the writer fills the next memtable and stalls;
        // `flush` and `compact_range` queue up behind it.
        let writer = {
            let db = db.clone();
            std::thread::spawn(move || -> u64 {
                let mut n = 0;
                for i in 0..3000u64 {
                    db.put(
                        &WriteOptions::default(),
                        format!("k{i:06}").as_bytes(),
                        &value(i, 1),
                    )
                    .unwrap();
                    n += 1;
                }
                n
            })
        };
        assert!(l.wait_for("flush held", 1, STEP), "no flush started");
        assert!(
            l.wait_for("writer stalled", 1, STEP),
            "the writer never stalled"
        );
        let flusher = {
            let db = db.clone();
            std::thread::spawn(move || db.flush())
        };
        let compactor = {
            let db = db.clone();
            std::thread::spawn(move || db.compact_range(None, None))
        };
        release_flush.store(true, Ordering::SeqCst);
        l.signal("release flush");
        assert_eq!(writer.join().expect("writer panicked"), 3000);
        flusher.join().expect("flush panicked").unwrap();
        compactor.join().expect("compact_range panicked").unwrap();
        sync_point::clear();

        // Phase 2: an automatic compaction is held while the last handle is dropped; the drop
        // waits for it and the database reopens with every write.
        {
            let l3 = l.clone();
            sync_point::set_callback("DbInner::background_compaction:run", move || {
                if l3.count("compaction held") == 0 {
                    l3.signal("compaction held");
                    assert!(l3.wait_for("dropping", 1, STEP), "drop never started");
                }
            });
            let l4 = l.clone();
            sync_point::set_callback("Db::drop:shutting_down", move || l4.signal("dropping"));
        }
        // Overwrite every key until level 0 has enough files for a compaction to start.
        let mut n = 0u64;
        while n < 3000 || l.count("compaction held") == 0 {
            let i = n % 3000;
            db.put(
                &WriteOptions::default(),
                format!("k{i:06}").as_bytes(),
                &value(i, 2),
            )
            .unwrap();
            n += 1;
            assert!(n < 200_000, "no automatic compaction started");
        }
        // Whole rounds only, so every key holds round 2.
        while !n.is_multiple_of(3000) {
            let i = n % 3000;
            db.put(
                &WriteOptions::default(),
                format!("k{i:06}").as_bytes(),
                &value(i, 2),
            )
            .unwrap();
            n += 1;
        }
        let db = Arc::try_unwrap(db).unwrap_or_else(|_| panic!("a handle is still shared"));
        drop(db);
        assert_eq!(l.count("dropping"), 1);
        sync_point::clear();

        assert_reopens_with(storage, 3000, 2);
    });
}

/// The counts of `events` in `latch`, for a watchdog's failure message.
fn latch_counts(latch: &Latch, events: &'static [&'static str]) -> impl Fn() -> String {
    let l = latch.clone();
    move || {
        events
            .iter()
            .map(|e| format!("{e}={}", l.count(e)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Puts `k000000`, `k000001`, ... until this thread's put switches the memtable (signalled
/// as "switched"), so the next memtable is empty; returns the number of keys put. Writing on
/// could fill the next memtable and stall behind held background work, however slow the
/// machine.
fn put_until_switched(db: &Db, l: &Latch) -> u64 {
    let mut n = 0u64;
    while l.count("switched") == 0 {
        db.put(
            &WriteOptions::default(),
            format!("k{n:06}").as_bytes(),
            &value(n, 1),
        )
        .unwrap();
        n += 1;
        assert!(n < 100_000, "the memtable never switched");
    }
    n
}

/// While background work is held at `during`: 200 more puts after the first `n` keys and a
/// get of every key so far. Returns the number of keys put.
fn put_and_read_while_held(db: &Db, n: u64, during: &str) -> u64 {
    let more = 200u64;
    for i in n..n + more {
        db.put(
            &WriteOptions::default(),
            format!("k{i:06}").as_bytes(),
            &value(i, 1),
        )
        .unwrap();
    }
    for i in 0..n + more {
        assert_eq!(
            db.get(&ReadOptions::default(), format!("k{i:06}").as_bytes())
                .unwrap()
                .as_deref(),
            Some(&value(i, 1)[..]),
            "k{i:06} during {during}"
        );
    }
    n + more
}

#[test]
fn writers_and_readers_go_on_while_a_flush_writes_the_manifest() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let progress = latch_counts(&latch, &["switched", "manifest held", "puts done"]);
    let l = latch.clone();
    watchdog("puts during a MANIFEST write", LIMIT, progress, move || {
        let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
        let db = Arc::new(Db::open(storage.clone(), "db", small_buffer_options()).unwrap());
        {
            let l0 = l.clone();
            sync_point::set_callback("DbInner::make_room:switched", move || l0.signal("switched"));
            let l1 = l.clone();
            sync_point::set_callback("DbInner::log_and_apply:write", move || {
                if l1.count("manifest held") == 0 {
                    l1.signal("manifest held");
                    // Held until the foreground has written and read with the edit unwritten:
                    // with the state lock held here (as before), those calls would wait for
                    // this and the wait below would time out.
                    assert!(
                        l1.wait_for("puts done", 1, STEP),
                        "the foreground's puts never finished while the MANIFEST write was held"
                    );
                }
            });
        }
        // Switch the memtable, then wait for the flush to reach its MANIFEST write.
        let n = put_until_switched(&db, &l);
        assert!(
            l.wait_for("manifest held", 1, STEP),
            "the flush never reached its MANIFEST write"
        );
        let flushes_before = db.properties().flushes;
        // The flush is held with its edit unwritten.
        let total = put_and_read_while_held(&db, n, "the held MANIFEST write");
        assert_eq!(
            db.properties().flushes,
            flushes_before,
            "the flush was installed before its MANIFEST write was released"
        );
        l.signal("puts done");
        db.flush().unwrap();
        assert!(db.properties().flushes > flushes_before);
        sync_point::clear();
        let db = Arc::try_unwrap(db).unwrap_or_else(|_| panic!("a handle is still shared"));
        drop(db);
        // Everything is there after a reopen, in order, and the files agree.
        assert_reopens_with(storage, total, 1);
    });
}

/// The background thread lists the folder for obsolete files with the state lock released
/// (it was held: every put met a flush's listing and slept behind it): while a listing is
/// held, the foreground puts and reads, and everything is there after the reopen.
#[test]
fn writers_and_readers_go_on_while_obsolete_files_are_listed() {
    let _x = sync_point::exclusive();
    let latch = Latch::new();
    let progress = latch_counts(&latch, &["switched", "listing held", "puts done"]);
    let l = latch.clone();
    watchdog("puts during a listing", LIMIT, progress, move || {
        let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
        let db = Arc::new(Db::open(storage.clone(), "db", small_buffer_options()).unwrap());
        {
            let l0 = l.clone();
            sync_point::set_callback("DbInner::make_room:switched", move || l0.signal("switched"));
            let l1 = l.clone();
            sync_point::set_callback("DbInner::delete_obsolete_files:listing", move || {
                if thread_name() == "strata-compaction"
                    && l1.count("switched") > 0
                    && l1.count("listing held") == 0
                {
                    l1.signal("listing held");
                    assert!(
                        l1.wait_for("puts done", 1, STEP),
                        "the foreground's puts never finished while the listing was held"
                    );
                }
            });
        }
        let n = put_until_switched(&db, &l);
        assert!(
            l.wait_for("listing held", 1, STEP),
            "the flush never listed the folder"
        );
        let total = put_and_read_while_held(&db, n, "the held listing");
        l.signal("puts done");
        db.flush().unwrap();
        sync_point::clear();
        let db = Arc::try_unwrap(db).unwrap_or_else(|_| panic!("a handle is still shared"));
        drop(db);
        assert_reopens_with(storage, total, 1);
    });
}

/// A database holding keys `k000000..k000099` (round 1), whose background thread panics with
/// `message` when it reaches sync point `point`.
fn open_with_100_writes_then_panic_at(
    point: &'static str,
    message: &'static str,
) -> (Arc<dyn Storage>, Db) {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let db = Db::open(storage.clone(), "db", small_buffer_options()).unwrap();
    for i in 0..100u64 {
        db.put(
            &WriteOptions::default(),
            format!("k{i:06}").as_bytes(),
            &value(i, 1),
        )
        .unwrap();
    }
    sync_point::set_callback(point, move || {
        if thread_name() == "strata-compaction" {
            panic!("{message}");
        }
    });
    (storage, db)
}

#[test]
fn a_panic_in_background_work_becomes_the_sticky_error_not_a_hang() {
    let _x = sync_point::exclusive();
    watchdog("background panic", LIMIT, no_progress, || {
        let (storage, db) = open_with_100_writes_then_panic_at(
            "DbInner::compact_memtable:build",
            "injected: the flush panics",
        );
        let err = db.flush().expect_err("the flush must fail");
        assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
        assert!(
            err.to_string().contains("injected: the flush panics"),
            "{err}"
        );
        // Every later write gets the same error at once; reads still work.
        let err = db.put(&WriteOptions::default(), b"late", b"x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Internal);
        assert_eq!(
            db.get(&ReadOptions::default(), b"k000042").unwrap(),
            Some(value(42, 1))
        );
        assert_eq!(db.close().unwrap_err().kind(), ErrorKind::Internal);
        sync_point::clear();
        // Every acknowledged write is still in the log.
        let db = Db::open(storage, "db", small_buffer_options()).unwrap();
        assert_eq!(db.scan().unwrap().entries, 100);
        assert_eq!(db.get(&ReadOptions::default(), b"late").unwrap(), None);
    });
}

#[test]
fn a_panic_while_a_manifest_edit_is_written_unlocked_fails_later_work_instead_of_hanging_it() {
    let _x = sync_point::exclusive();
    watchdog("MANIFEST write panic", LIMIT, no_progress, || {
        let (storage, db) = open_with_100_writes_then_panic_at(
            "DbInner::log_and_apply:write",
            "injected: the MANIFEST write panics",
        );
        let err = db.flush().expect_err("the flush must fail");
        assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
        assert!(
            err.to_string().contains("writing a MANIFEST edit panicked"),
            "{err}"
        );
        sync_point::clear();
        // The MANIFEST may hold part of an edit: no later edit is written, every later call
        // that needs one gets the error at once (none waits for the edit that never ended).
        for _ in 0..2 {
            assert_eq!(db.flush().unwrap_err().kind(), ErrorKind::Internal);
            assert_eq!(
                db.compact_range(None, None).unwrap_err().kind(),
                ErrorKind::Internal
            );
            let err = db.put(&WriteOptions::default(), b"late", b"x").unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Internal);
        }
        assert_eq!(
            db.get(&ReadOptions::default(), b"k000042").unwrap(),
            Some(value(42, 1))
        );
        assert_eq!(db.close().unwrap_err().kind(), ErrorKind::Internal);
        // The edit never became current: the reopened database recovers every acknowledged
        // write from the log, and its files agree.
        assert_reopens_with(storage, 100, 1);
    });
}

#[test]
fn snapshots_released_while_their_iterators_run_across_compactions() {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let db = Db::open(storage, "db", small_buffer_options()).unwrap();
    for round in 1..=3u64 {
        for i in 0..2000u64 {
            db.put(
                &WriteOptions::default(),
                format!("k{i:06}").as_bytes(),
                &value(i, round),
            )
            .unwrap();
        }
    }
    let snap = db.snapshot();
    let ro = ReadOptions {
        snapshot: Some(snap.sequence()),
        ..ReadOptions::default()
    };
    let mut it = db.iter(&ro);
    it.seek_to_first();
    // Newer versions of every key, then the snapshot goes away and compactions drop what it
    // protected: the running iterator still reads round 3, in full.
    for i in 0..2000u64 {
        db.put(
            &WriteOptions::default(),
            format!("k{i:06}").as_bytes(),
            &value(i, 4),
        )
        .unwrap();
    }
    drop(snap);
    db.compact_range(None, None).unwrap();
    let mut i = 0u64;
    while it.valid() {
        assert_eq!(it.key(), format!("k{i:06}").as_bytes());
        assert_eq!(it.value(), &value(i, 3)[..], "key {i}");
        i += 1;
        if i == 1000 {
            db.compact_range(None, None).unwrap();
        }
        it.next();
    }
    it.status().unwrap();
    assert_eq!(i, 2000);
    drop(it);
    assert_eq!(
        db.get(&ReadOptions::default(), b"k001999").unwrap(),
        Some(value(1999, 4))
    );
}

#[test]
fn the_table_cache_under_eviction_while_compactions_replace_tables() {
    let storage: Arc<dyn Storage> = Arc::new(MemStorage::new());
    let options = Options {
        max_open_files: 1,
        ..small_buffer_options()
    };
    let db = Db::open(storage, "db", options).unwrap();
    let mut want = BTreeMap::new();
    for i in 0..6000u64 {
        let v = value(i, 1);
        db.put(&WriteOptions::default(), format!("k{i:06}").as_bytes(), &v)
            .unwrap();
        want.insert(i, v);
    }
    db.flush().unwrap();
    assert!(db.version().all_files().count() >= 4);
    let gets = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let stress = std::env::var("STRATA_STRESS").is_ok_and(|v| v == "1");
    let rounds = if stress { 40 } else { 6 };
    std::thread::scope(|s| {
        let readers: Vec<_> = (0..4u64)
            .map(|r| {
                let (db, want, gets, failed, stop) = (&db, &want, &gets, &failed, &stop);
                s.spawn(move || {
                    let _f = FailOnPanic(failed);
                    let mut rng = Rng(0x7AB1E + r);
                    while !stop.load(Ordering::Relaxed) && !failed.load(Ordering::Relaxed) {
                        let i = rng.below(6000);
                        let got = db
                            .get(&ReadOptions::default(), format!("k{i:06}").as_bytes())
                            .unwrap();
                        assert_eq!(got.as_ref(), want.get(&i), "key {i}");
                        gets.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        let mut panicked = None;
        {
            let _f = FailOnPanic(&failed);
            for _ in 0..rounds {
                if failed.load(Ordering::Relaxed) {
                    break;
                }
                // New overlapping tables (the same values), then rewrite them: the readers'
                // open tables are evicted and deleted under them.
                for i in (0..6000u64).step_by(4) {
                    let k = format!("k{i:06}");
                    if let Err(e) = db.put(&WriteOptions::default(), k.as_bytes(), &want[&i]) {
                        panicked.get_or_insert_with(|| format!("put: {e}"));
                    }
                }
                if let Err(e) = db.compact_range(None, None) {
                    failed.store(true, Ordering::SeqCst);
                    panicked.get_or_insert_with(|| format!("compact_range: {e}"));
                }
            }
        }
        stop.store(true, Ordering::SeqCst);
        for h in readers {
            if h.join().is_err() {
                panicked.get_or_insert_with(|| "a reader panicked".to_string());
            }
        }
        assert!(panicked.is_none(), "{panicked:?}");
    });
    assert!(gets.load(Ordering::Relaxed) > 0);
    assert_eq!(db.scan().unwrap().entries, 6000);
}
